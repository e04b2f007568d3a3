package lmgc

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism/amp"
)

// TestGaussCalibrationExact checks the δ > 0 calibration (lmgc.md §10)
// against values computed independently with scipy (chi2.isf for the
// subspace quantile, brentq for the noise-margin root; /tmp script quoted in
// docs/results/lmgc.md): q, Δ, 𝒥, ε_b, σ, β_Z, the δ split, the events and
// the Gaussian output step.
func TestGaussCalibrationExact(t *testing.T) {
	cases := []struct {
		name                        string
		eps, dp                     float64
		n, d, classes               int
		h                           float64
		q, delta, jac, epsB, sigma  float64
		betaZ, deltaB, deltaOut, tJ float64
	}{
		{name: "C=2", eps: 1, dp: 1e-5, n: 100, d: 2, classes: 2, h: 0.5,
			q: 4.820432756636702, delta: 0.05767565002245299, jac: 0.2977067493007062, epsB: 0.6522932506992938,
			sigma: 21.191386970752596, betaZ: 0.36742346141747584, deltaB: 9e-06, deltaOut: 1e-06, tJ: 3.2893968730833234},
		{name: "C=3", eps: 2, dp: 1e-6, n: 150, d: 4, classes: 3, h: 0.25,
			q: 5.79656340768499, delta: 0.043670365045459715, jac: 0.9166615494972428, epsB: 0.9833384505027571,
			sigma: 25.3701894815796, betaZ: 0.3872983346207418, deltaB: 9e-07, deltaOut: 1e-07, tJ: 6.254921428118466},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(tc.eps, tc.n, tc.d, tc.classes)
			cfg.H, cfg.Delta = tc.h, tc.dp
			p, err := Plan(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := p.Calibration()
			const rel = 1e-9 // scipy's isf and brentq, not bit-identical bisections
			for _, ch := range []struct {
				name      string
				got, want float64
			}{
				{"q", c.SubspaceQuantile, tc.q}, {"Δ", c.StrongConvexity, tc.delta}, {"𝒥", c.JacobianEpsilon, tc.jac},
				{"ε_b", c.PerturbationEpsilon, tc.epsB}, {"σ", c.PerturbationScale, tc.sigma}, {"β_Z", c.OutputScale, tc.betaZ},
				{"δ_b", c.PerturbationDelta, tc.deltaB}, {"δ_out", c.OutputDelta, tc.deltaOut},
				{"ε_out", c.OutputEpsilon, 0.05 * tc.eps}, {"charged ε", p.ChargedEpsilon(), tc.eps}, {"charged δ", p.ChargedDelta(), tc.dp},
			} {
				if !near(ch.got, ch.want, rel) {
					t.Errorf("%s = %.17g, want %.17g", ch.name, ch.got, ch.want)
				}
			}
			if !c.Gaussian || c.Dim != tc.classes*(tc.d+1)*(tc.d+2)/2 {
				t.Fatalf("calibration %+v is not the Gaussian one", c)
			}
			// σ = S/u solves u·q + u²/2 = ε_b (the privacy-loss bound of §10).
			u := c.Sensitivity / c.PerturbationScale
			if !near(u*c.SubspaceQuantile+u*u/2, c.PerturbationEpsilon, 1e-12) {
				t.Errorf("u·q + u²/2 = %v, want ε_b = %v", u*c.SubspaceQuantile+u*u/2, c.PerturbationEpsilon)
			}
			// Noise-margin rule with E‖b‖ ≈ √m·σ, above the Jacobian cap.
			tt := c.StrongConvexity * float64(tc.n)
			if tt < tc.tJ || math.Sqrt(float64(c.Dim))*c.PerturbationScale/tt > NoiseMargin*float64(tc.d+1)*math.Sqrt(float64(tc.classes))*(1+1e-12) {
				t.Errorf("t = %v (t_J %v) violates the noise margin", tt, tc.tJ)
			}
			// Gaussian output step: σ_out = β_Z·r/r_s (r_b ≪ r_s), ratio 2r/σ_out.
			if p.step.Gaussian != true || !near(p.step.Scale, c.OutputScale*c.ReleaseRadius/c.Radius, 1e-11) {
				t.Errorf("output step %+v, want Gaussian σ = %v", p.step, c.OutputScale)
			}
			if want, _ := amp.GaussianSigma(2*c.ReleaseRadius, c.OutputEpsilon, c.OutputDelta); p.step.Scale != want {
				t.Errorf("output σ %v, want %v", p.step.Scale, want)
			}
			if !(c.SamplingRadius > 0 && c.SamplingRadius < 1e-6*c.Radius) || !(c.CouplingSlack < 1e-15) {
				t.Errorf("r_b = %v (r_s = %v), η = %v", c.SamplingRadius, c.Radius, c.CouplingSlack)
			}
			ev := p.Events()
			if len(ev) != 2 || ev[0].Kind != budget.Generic || ev[1].Kind != budget.Gaussian {
				t.Fatalf("events %+v, want Generic (ε_b+𝒥, δ_b) and a Gaussian output step", ev)
			}
			for _, e := range ev {
				if err := e.Validate(); err != nil {
					t.Errorf("event %+v: %v", e, err)
				}
			}
			if ev[0].Delta != c.PerturbationDelta || ev[1].Delta != c.OutputDelta || ev[0].Epsilon+ev[1].Epsilon != p.ChargedEpsilon() {
				t.Errorf("events %+v do not sum to (%v, %v)", ev, p.ChargedEpsilon(), p.ChargedDelta())
			}
			if !near(c.StartRadius, gaussNormBound(c.Dim, c.PerturbationScale, tc.eps)/tt, 1e-12) {
				t.Errorf("R₀ = %v", c.StartRadius)
			}
		})
	}
}

// TestGaussLessNoiseThanPure: on a problem with m in the thousands the
// Gaussian perturbation's expected norm (and so Δ) is several times below the
// pure one at the same ε, and δ = 0 keeps the pure calibration bit for bit.
func TestGaussLessNoiseThanPure(t *testing.T) {
	cfg := testConfig(1, 5000, 10, 20) // m = 20·66 = 1320
	pure, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Delta = 1e-6
	g, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pc, gc := pure.Calibration(), g.Calibration()
	m := float64(pc.Dim)
	if ratio := (m * pc.PerturbationScale) / (math.Sqrt(m) * gc.PerturbationScale); ratio < 3 {
		t.Errorf("E‖b‖ pure / Gaussian = %v, want ≥ 3 for m = %v", ratio, m)
	}
	if !(gc.StrongConvexity < pc.StrongConvexity/2) {
		t.Errorf("Δ Gaussian %v, pure %v", gc.StrongConvexity, pc.StrongConvexity)
	}
	cfg.Delta = 0
	again, _ := Plan(cfg)
	if again.Calibration() != calibrate(1, 5000, 20, 11, DefaultH, DefaultLambda, MaxJacobianShare, NoiseMargin) || pure.ChargedDelta() != 0 {
		t.Errorf("δ = 0 does not give the pure calibration")
	}
}

// TestChiSquareEvenQuantile checks the closed-form survival of χ²_{2j}
// against scipy (chi2.sf) and the quantile's defining property.
func TestChiSquareEvenQuantile(t *testing.T) {
	for _, tc := range []struct {
		k       int
		x, want float64
	}{
		{2, 3, 0.22313016014842982},       // e^{−3/2}
		{4, 10, 0.04042768199451279},      // chi2.sf(10, 4)
		{40, 60, 0.02187346844139091},     // chi2.sf(60, 40)
		{200, 300, 5.924540335483916e-06}, // chi2.sf(300, 200)
	} {
		if got := chiSquareEvenSurvival(tc.k, tc.x); !near(got/tc.want, 1, 1e-10) {
			t.Errorf("P(χ²_%d > %v) = %.17g, want %.17g", tc.k, tc.x, got, tc.want)
		}
	}
	for _, k := range []int{2, 4, 18, 100} {
		for _, p := range []float64{1e-3, 1e-6, 1e-12} {
			x := chiSquareEvenQuantile(k, p)
			if chiSquareEvenSurvival(k, x) > p || chiSquareEvenSurvival(k, x*(1-1e-9)) <= p {
				t.Errorf("k=%d p=%v: quantile %v is not the (rounded-up) root", k, p, x)
			}
		}
	}
}

// TestGradientDifferenceSubspace checks the fact the Gaussian proof rests
// on (§10): for adversarial neighbours the difference of the two rows' loss
// gradients lies in U = {u⊗P̂ + u′⊗P̂′ : Σu = Σu′ = 0} — every class block is
// in span{P̂, P̂′} and the blocks sum to zero — and has norm ≤ S.
func TestGradientDifferenceSubspace(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, classes := range []int{2, 3, 7} {
		for _, d := range []int{1, 4} {
			D := d + 1
			dd := D * D
			g1, g2 := make([]float64, classes*dd), make([]float64, classes*dd)
			for trial := 0; trial < 200; trial++ {
				phi := randomPhi(r, classes, D, []float64{0, 0.3, 3}[trial%3], trial%4 != 3)
				x1 := scaledRow(r, d, trial%2 == 0)
				x2 := x1
				if trial%3 != 0 {
					x2 = scaledRow(r, d, trial%5 == 0)
				}
				y1, y2 := r.IntN(classes), r.IntN(classes)
				h := []float64{0.1, 1, 5}[trial%3]
				rowGradient(phi, classes, D, x1, y1, h, g1)
				rowGradient(phi, classes, D, x2, y2, h, g2)
				v := make([]float64, len(g1))
				for i := range v {
					v[i] = g1[i] - g2[i]
				}
				if nv := norm2(v); nv > sensitivity(classes)*(1+1e-12) {
					t.Fatalf("‖v‖ = %v > S", nv)
				}
				p1, p2 := outer(x1), outer(x2)
				sum := make([]float64, dd)
				for c := 0; c < classes; c++ {
					blk := v[c*dd : (c+1)*dd]
					if res := residualSpan(blk, p1, p2); res > 1e-12*(1+norm2(blk)) {
						t.Fatalf("C=%d d=%d trial %d: class block %d is %v outside span{P̂, P̂′}", classes, d, trial, c, res)
					}
					for i := range sum {
						sum[i] += blk[i]
					}
				}
				if norm2(sum) > 1e-12 {
					t.Fatalf("C=%d d=%d trial %d: blocks sum to %v, want 0", classes, d, trial, norm2(sum))
				}
			}
		}
	}
}

func outer(x []float64) []float64 {
	p := make([]float64, len(x)*len(x))
	for i := range x {
		for j := range x {
			p[i*len(x)+j] = x[i] * x[j]
		}
	}
	return p
}

func dotf(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// residualSpan is the norm of v minus its projection on span{a, b}
// (Gram–Schmidt, so nearly parallel a, b stay well conditioned).
func residualSpan(v, a, b []float64) float64 {
	res := append([]float64(nil), v...)
	var basis [][]float64
	for _, w := range [][]float64{a, b} {
		u := append([]float64(nil), w...)
		for _, e := range basis {
			c := dotf(u, e)
			for i := range u {
				u[i] -= c * e[i]
			}
		}
		if nu := norm2(u); nu > 1e-8*norm2(w) {
			for i := range u {
				u[i] /= nu
			}
			basis = append(basis, u)
		}
	}
	for _, e := range basis {
		c := dotf(res, e)
		for i := range res {
			res[i] -= c * e[i]
		}
	}
	return norm2(res)
}

// gaussAuditNeighbours is the extremal pair of the pure audit with δ > 0.
func gaussAuditNeighbours(t testing.TB, eps, delta float64) (*Trainer, [][]float64, [2][]int) {
	t.Helper()
	cfg := testConfig(eps, 1, 1, 3)
	cfg.H, cfg.Delta = 0.5, delta
	p, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p, [][]float64{{1}}, [2][]int{{0}, {1}}
}

// gaussPerturbationSampler is perturbationSampler for the Gaussian law: o =
// b + G_side with the plan's own sampler, statistic the exact privacy loss
// (‖o − G′‖² − ‖o − G‖²)/(2σ²).
func gaussPerturbationSampler(t testing.TB, p *Trainer, x [][]float64, ys [2][]int) audit.Sampler {
	D := p.dim
	xs := p.scaler.Transform(nil, x[0])
	var grads [2][]float64
	for side := range grads {
		prob := newProblem(p.classes, D, xs, ys[side], p.cfg.H, p.cfg.Lambda, p.cal.StrongConvexity, nil)
		grads[side] = make([]float64, prob.size())
		prob.eval(make([]float64, prob.size()), grads[side])
	}
	if shift := diffNorm(grads[0], grads[1]); !near(shift, p.cal.Sensitivity, 1e-12) {
		t.Fatalf("neighbours shift the gradient by %v, want S = %v", shift, p.cal.Sensitivity)
	}
	sigma := p.cal.PerturbationScale
	o := make([]float64, len(grads[0]))
	return func(side int) float64 {
		b := p.objectiveNoise()
		for i := range o {
			o[i] = b[i] + grads[side][i]
		}
		d1, d0 := diffNorm(o, grads[1]), diffNorm(o, grads[0])
		return (d1*d1 - d0*d0) / (2 * sigma * sigma)
	}
}

// gaussAuditEps, gaussAuditDelta: an operating point where the audit has
// power against σ/4 with N = 60 000 (δ = 10⁻³ so that the tail is visible).
const gaussAuditEps, gaussAuditDelta = 3.5, 1e-3

// TestAuditGaussPerturbation: the Gaussian perturbation passes at its
// (ε_b, δ_b); the same law with σ/8 is caught.
func TestAuditGaussPerturbation(t *testing.T) {
	p, x, ys := gaussAuditNeighbours(t, gaussAuditEps, gaussAuditDelta)
	c := p.Calibration()
	cfgA := audit.Config{N: 60000, Delta: c.PerturbationDelta}
	audit.RequirePass(t, gaussPerturbationSampler(t, p, x, ys), c.PerturbationEpsilon, cfgA)

	broken, _, _ := gaussAuditNeighbours(t, gaussAuditEps, gaussAuditDelta)
	broken.cal.PerturbationScale /= 8
	audit.RequireCatch(t, gaussPerturbationSampler(t, broken, x, ys), c.PerturbationEpsilon, cfgA)
}

// TestAuditGaussReleasePath audits the whole δ > 0 release (Gaussian
// perturbation, fixed-count solver, Gaussian output step, projection) at the
// charged (ε, δ), and catches noise scales ten times too small.
func TestAuditGaussReleasePath(t *testing.T) {
	p, x, ys := gaussAuditNeighbours(t, 1, gaussAuditDelta)
	cfgA := audit.Config{N: 8000, Delta: p.ChargedDelta()}
	audit.RequirePass(t, releaseSampler(t, p, x, ys), p.ChargedEpsilon(), cfgA)

	broken, _, _ := gaussAuditNeighbours(t, 1, gaussAuditDelta)
	broken.cal.PerturbationScale /= 10
	broken.step.Scale /= 10
	audit.RequireCatch(t, releaseSampler(t, broken, x, ys), broken.ChargedEpsilon(), cfgA)
}

// TestGaussNoDataDependentFailure: with δ > 0, analyst-chosen λ, h, ε, δ
// from tiny to huge give either a Plan error (public inputs) or releases on
// adversarial neighbouring tables that succeed, are finite and run exactly
// the plan's T iterations (a short version of TestLMGCNoDataDependentFailure).
func TestGaussNoDataDependentFailure(t *testing.T) {
	rng := rand.New(rand.NewPCG(211, 212))
	planned, refused := 0, 0
	for _, lambda := range []float64{1e-12, 1e6} {
		for _, h := range []float64{1e-6, 1, 1e6} {
			for _, eps := range []float64{0.01, 100} { // short: CI also runs it under -race
				for _, dp := range []float64{1e-300, 0.5} {
					d, classes, n := 1+rng.IntN(3), 2+rng.IntN(3), 20+rng.IntN(60)
					cfg := testConfig(eps, n, d, classes)
					cfg.Lambda, cfg.H, cfg.Delta = lambda, h, dp
					p, err := Plan(cfg)
					if err != nil {
						refused++
						continue
					}
					planned++
					for k, pair := range lmgcPairs(rng, n, d, classes) {
						for side := 0; side < 2; side++ {
							m, sol, err := p.train(pair.x[side], pair.y[side], trainOptions{})
							if err != nil {
								t.Fatalf("λ=%g h=%g ε=%g δ=%g pair %d side %d: release failed after reading the rows: %v", lambda, h, eps, dp, k, side, err)
							}
							if sol.iterations != p.cal.Iterations {
								t.Fatalf("pair %d side %d: %d iterations, plan %d", k, side, sol.iterations, p.cal.Iterations)
							}
							for _, blk := range m.Phi {
								for _, v := range blk {
									if math.IsNaN(v) || math.IsInf(v, 0) {
										t.Fatalf("pair %d side %d: non-finite Φ", k, side)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	t.Logf("planned %d, refused by Plan %d", planned, refused)
	if planned < 10 {
		t.Fatalf("only %d configurations planned: the search is vacuous", planned)
	}
}

// TestGaussPlanErrors: an invalid δ is refused by Plan.
func TestGaussPlanErrors(t *testing.T) {
	for _, dp := range []float64{-1e-9, 1, 2, math.NaN(), math.Inf(1)} {
		cfg := testConfig(1, 100, 2, 3)
		cfg.Delta = dp
		if _, err := Plan(cfg); err == nil {
			t.Errorf("δ = %v: want an error", dp)
		}
	}
}

// TestLatticeLMGCGauss is TestLatticeLMGC for the δ > 0 release: b̂ = σ·ĝ
// with ĝ on the coupled sampler's lattice 2⁻⁴⁰ℤ^m, so svec(b̂) is (up to
// rounding) on σ·2⁻⁴⁰ℤ^m; the release path (fixed-count solver, Gaussian
// output step last) passes the lattice statistic for that grid and for the
// grid of noise.AddGaussianVec at σ, and the gridded variant (b on the
// lattice, exact unconstrained minimiser, no output step) is caught.
func TestLatticeLMGCGauss(t *testing.T) {
	const n = 20
	cfg := testConfig(1, n, 1, 2)
	cfg.Delta = 1e-3
	p, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	x := make([][]float64, n)
	y0, y1 := make([]int, n), make([]int, n)
	for i := range x {
		x[i] = []float64{1}
	}
	y1[n-1] = 1
	ys := [2][]int{y0, y1}
	D := p.dim
	xs := make([]float64, n*D)
	for i, row := range x {
		p.scaler.Transform(xs[i*D:(i+1)*D], row)
	}
	cfgA := audit.Config{N: 2500, Delta: p.ChargedDelta()}
	for _, g := range []float64{p.cal.PerturbationScale * 0x1p-40, gridOf(p.cal.PerturbationScale, p.cal.Dim)} {
		t.Logf("release path, grid %.3g:", g)
		audit.RequirePass(t, func(side int) float64 {
			m, _, err := p.train(x, ys[side], trainOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var phi []float64
			for _, blk := range m.Phi {
				phi = append(phi, blk...)
			}
			return lmgcLatticeStat(p, xs, ys[0], phi, g)
		}, p.ChargedEpsilon(), cfgA)
	}
	g := gridOf(p.cal.PerturbationScale, p.cal.Dim)
	t.Log("gridded variant:")
	audit.RequireCatch(t, func(side int) float64 {
		return lmgcLatticeStat(p, xs, ys[0], griddedRelease(t, p, xs, ys[side]), g)
	}, p.ChargedEpsilon(), cfgA)
}
