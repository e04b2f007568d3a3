package logreg

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/noise"
)

// objConfig is testConfig with MethodObjective and δ = 0.
func objConfig(d, k, n int, eps float64) Config {
	cfg := testConfig(d, k, n, eps, 0)
	cfg.Method = MethodObjective
	return cfg
}

// TestObjectiveScales checks the plan by hand: β = 2g₁/ε_b with g₁ = √F·κ̂
// (binary) or 2√F·κ̂ (multinomial), ε_J = r·log1p(t/(rΛ)), the split
// ε_b + ε_J + 2η + ε_out = ε, the events, the output scale √D·2r/ε_out and
// the default ridge rule.
func TestObjectiveScales(t *testing.T) {
	for _, c := range []struct{ d, k, n int }{{3, 2, 1000}, {10, 5, 5000}, {40, 20, 10000}, {10, 2, 100000}} {
		tr := mustPlan(t, objConfig(c.d, c.k, c.n, 1))
		p := tr.obj
		f := float64(c.d + 1)
		kp, g1, tr1, rank := 1.0, math.Sqrt(f)*kappaHat, kappaHat*kappaHat/4, 1
		if c.k > 2 {
			kp, g1, tr1, rank = float64(c.k), 2*math.Sqrt(f)*kappaHat, (1-1/float64(c.k))*kappaHat*kappaHat, c.k-1
		}
		D := kp * f
		if p.d != int(D) {
			t.Fatalf("D = %d, want %v", p.d, D)
		}
		if !near(p.beta, 2*g1/p.epsB, 1e-12) {
			t.Errorf("%+v: β = %v, want %v", c, p.beta, 2*g1/p.epsB)
		}
		wantJ := float64(rank) * math.Log1p(tr1/(float64(rank)*p.lambda))
		if !near(p.epsJ, wantJ, 1e-12) || p.epsJ > ObjectiveJacobianShare*1*(1+1e-9) {
			t.Errorf("%+v: ε_J = %v, want %v (≤ %v)", c, p.epsJ, wantJ, ObjectiveJacobianShare)
		}
		slack := 8 * D * noise.CoupledNormalRatio
		if p.slack != slack {
			t.Errorf("slack %v, want %v", p.slack, slack)
		}
		if sum := p.epsB + p.epsJ + p.slack + p.step.Epsilon; !near(sum, 1, 1e-12) {
			t.Errorf("%+v: split sums to %v", c, sum)
		}
		if !near(p.step.Epsilon, ObjectiveOutputShare, 1e-15) || p.step.Gaussian {
			t.Errorf("output step %+v", p.step)
		}
		if !near(p.step.Scale, math.Sqrt(D)*2*p.step.Radius/p.step.Epsilon, 1e-12) {
			t.Errorf("output scale %v", p.step.Scale)
		}
		if p.step.Radius != p.rSolve+p.rNoise || !(p.rSolve > 0) || !(p.rNoise > 0) {
			t.Errorf("radius %v ≠ %v + %v", p.step.Radius, p.rSolve, p.rNoise)
		}
		// The output noise is a small fraction of the objective noise β/Λ.
		if p.step.Scale > 0.01*p.beta/p.lambda {
			t.Errorf("%+v: output scale %v vs objective noise %v", c, p.step.Scale, p.beta/p.lambda)
		}
		ev := tr.Events()
		if len(ev) != 2 || ev[0].Kind != budget.Laplace || ev[1].Kind != budget.Laplace ||
			!near(ev[0].Epsilon+ev[1].Epsilon, 1, 1e-12) {
			t.Errorf("events %+v", ev)
		}
		// Default ridge: max(Λ_J, √D·β₀/√F), raised by 1.25× steps until the
		// work fits.
		epsB0 := 1 - ObjectiveOutputShare - ObjectiveJacobianShare - slack
		base := math.Max(tr1/(float64(rank)*math.Expm1(ObjectiveJacobianShare/float64(rank))), ObjectiveRidgeScale*math.Sqrt(D)*2*g1/epsB0/math.Sqrt(f))
		ratio := math.Log(p.lambda/base) / math.Log(1.25)
		if math.Abs(ratio-math.Round(ratio)) > 1e-6 || ratio < -1e-9 {
			t.Errorf("%+v: Λ = %v is not base %v · 1.25^k", c, p.lambda, base)
		}
		if float64(p.steps)*float64(c.n)*D > ObjectiveWork {
			t.Errorf("%+v: work %v", c, float64(p.steps)*float64(c.n)*D)
		}
		if got := tr.Config().Lambda; !near(got, p.lambda/float64(c.n), 1e-15) {
			t.Errorf("Config().Lambda = %v", got)
		}
		t.Logf("%+v: Λ=%.4g β=%.4g ε_J=%.3g T=%d r=%.3g out=%.3g", c, p.lambda, p.beta, p.epsJ, p.steps, p.step.Radius, p.step.Scale)
	}
}

// TestObjectivePlanErrors: the public refusals.
func TestObjectivePlanErrors(t *testing.T) {
	bad := []func(*Config){
		func(c *Config) { c.Delta = 1e-6 },
		func(c *Config) { c.Steps = 10 },
		func(c *Config) { c.Clip = 0.5 },
		func(c *Config) { c.Lambda = 1e-9 }, // below the Jacobian cap
		func(c *Config) { c.Lambda = math.NaN() },
		func(c *Config) { c.Method = "newton" },
		func(c *Config) { c.Method = MethodGD; c.Lambda = 0.1 },
	}
	for i, mod := range bad {
		cfg := objConfig(3, 2, 1000, 1)
		mod(&cfg)
		if _, err := Plan(cfg); err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
}

// TestObjectiveLaplaceNoise: the coordinates of b̂/β follow the standard
// Laplace law (Kolmogorov–Smirnov at level 10⁻⁶).
func TestObjectiveLaplaceNoise(t *testing.T) {
	tr := mustPlan(t, objConfig(9, 2, 1000, 1))
	var v []float64
	for len(v) < 20000 {
		for _, b := range tr.obj.laplaceNoise() {
			v = append(v, b/tr.obj.beta)
		}
	}
	sort.Float64s(v)
	cdf := func(x float64) float64 {
		if x < 0 {
			return 0.5 * math.Exp(x)
		}
		return 1 - 0.5*math.Exp(-x)
	}
	var ks float64
	for i, x := range v {
		n := float64(len(v))
		ks = math.Max(ks, math.Max(math.Abs(float64(i+1)/n-cdf(x)), math.Abs(float64(i)/n-cdf(x))))
	}
	crit := math.Sqrt(-math.Log(0.5e-6) / (2 * float64(len(v))))
	if ks > crit {
		t.Fatalf("KS %v > %v", ks, crit)
	}
	t.Logf("KS %.4f (critical %.4f, %d draws)", ks, crit, len(v))
}

// hessian returns A_D(θ) = Σᵢ∇²ℓ(θ; zᵢ) + ΛI in exact form (float64).
func hessian(tr *Trainer, prob *problem, theta []float64, lam float64) *mat.SymDense {
	f, kp := tr.f, tr.kp
	D := f * kp
	h := mat.NewSymDense(D, nil)
	for i := 0; i < prob.n; i++ {
		x := prob.x[i*f : (i+1)*f]
		s := make([]float64, kp)
		for k := 0; k < kp; k++ {
			for j := 0; j < f; j++ {
				s[k] += theta[k*f+j] * x[j]
			}
		}
		var w [][]float64 // K′×K′ weight matrix
		if tr.binary {
			sg := 1 / (1 + math.Exp(-s[0]))
			w = [][]float64{{sg * (1 - sg)}}
		} else {
			m := s[0]
			for _, v := range s {
				m = math.Max(m, v)
			}
			var z float64
			p := make([]float64, kp)
			for k := range p {
				p[k] = math.Exp(s[k] - m)
				z += p[k]
			}
			w = make([][]float64, kp)
			for a := range w {
				w[a] = make([]float64, kp)
				for b := range w[a] {
					w[a][b] = -p[a] / z * p[b] / z
				}
				w[a][a] += p[a] / z
			}
		}
		for a := 0; a < kp; a++ {
			for b := a; b < kp; b++ {
				for j := 0; j < f; j++ {
					for l := 0; l < f; l++ {
						r, c := a*f+j, b*f+l
						if r <= c {
							h.SetSym(r, c, h.At(r, c)+w[a][b]*x[j]*x[l])
						} else if a != b {
							h.SetSym(c, r, h.At(c, r)+w[a][b]*x[j]*x[l])
						}
					}
				}
			}
		}
	}
	for j := 0; j < D; j++ {
		h.SetSym(j, j, h.At(j, j)+lam)
	}
	return h
}

// noiseOf returns b_D(θ) = −(G_D(θ) + Λθ), the unique noise for which θ is
// the minimiser of J on table D.
func noiseOf(tr *Trainer, X [][]float64, y []int, theta []float64) []float64 {
	g := gradOfObj(tr, X, y, theta)
	for j := range g {
		g[j] = -(g[j] + tr.obj.lambda*theta[j])
	}
	return g
}

// gradOfObj is gradOf without clipping.
func gradOfObj(tr *Trainer, X [][]float64, y []int, theta []float64) []float64 {
	p := newProblem(X, y, tr.prep, tr.kp, tr.binary, 1, math.Inf(1))
	g := make([]float64, tr.kp*tr.f)
	slots := make([][]float64, (p.n+chunkRows-1)/chunkRows)
	for c := range slots {
		slots[c] = make([]float64, len(g))
	}
	p.gradSum(theta, g, slots)
	return g
}

// idealLoss is the ideal mechanism's privacy loss at output θ between
// tables 0 and 1: Laplace density of b_0(θ) vs b_1(θ) plus log det A_0/A_1.
func idealLoss(tr *Trainer, X0, X1 [][]float64, y0, y1 []int, theta []float64) (noiseLoss, jacLoss float64) {
	b0, b1 := noiseOf(tr, X0, y0, theta), noiseOf(tr, X1, y1, theta)
	for j := range b0 {
		noiseLoss += (math.Abs(b1[j]) - math.Abs(b0[j])) / tr.obj.beta
	}
	var c0, c1 mat.Cholesky
	c0.Factorize(hessian(tr, newProblem(X0, y0, tr.prep, tr.kp, tr.binary, 1, math.Inf(1)), theta, tr.obj.lambda))
	c1.Factorize(hessian(tr, newProblem(X1, y1, tr.prep, tr.kp, tr.binary, 1, math.Inf(1)), theta, tr.obj.lambda))
	return noiseLoss, c0.LogDet() - c1.LogDet()
}

// TestObjectiveSensitivity: on adversarial neighbours (corner rows, label
// flips, a row whose scores are saturated against one at the decision
// boundary) and many θ, the noise term of the ideal privacy loss is at
// most ε_b and the Jacobian term at most ε_J, with the ridge at its
// smallest allowed value; the worst pairs reach a large part of both
// bounds (the bounds are not vacuous).
func TestObjectiveSensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{2, 3, 6} {
		d := 3
		cfg := objConfig(d, k, 4, 1)
		tr := mustPlan(t, cfg)
		// Smallest ridge the Jacobian cap allows.
		cfg.Lambda = tr.obj.hessTrace / (float64(tr.obj.hessRank) * math.Expm1(ObjectiveJacobianShare/float64(tr.obj.hessRank))) * (1 + 1e-9) / 4
		tr = mustPlan(t, cfg)
		p := tr.obj
		var worstB, worstJ float64
		for trial := 0; trial < 400; trial++ {
			X0 := make([][]float64, 4)
			y0 := make([]int, 4)
			for i := range X0 {
				X0[i] = corner(d, rng.IntN(1<<d))
				y0[i] = rng.IntN(k)
			}
			X1 := append([][]float64(nil), X0...)
			y1 := append([]int(nil), y0...)
			X1[3] = corner(d, rng.IntN(1<<d))
			y1[3] = rng.IntN(k)
			theta := make([]float64, tr.kp*tr.f)
			switch trial % 3 {
			case 1:
				for j := range theta {
					theta[j] = rng.NormFloat64() * 30
				}
			case 2: // saturate the replaced row of table 1, keep table 0's at θᵀx = 0
				x1 := make([]float64, tr.f)
				tr.prep.Transform(x1, X1[3])
				for j := range x1 {
					theta[j] = 1e3 * x1[j]
				}
			}
			nb, jb := idealLoss(tr, X0, X1, y0, y1, theta)
			worstB, worstJ = math.Max(worstB, math.Abs(nb)), math.Max(worstJ, math.Abs(jb))
			if math.Abs(nb) > p.epsB*(1+1e-9) || math.Abs(jb) > p.epsJ*(1+1e-9) {
				t.Fatalf("K=%d trial %d: loss (%v, %v) exceeds (ε_b, ε_J) = (%v, %v)", k, trial, nb, jb, p.epsB, p.epsJ)
			}
		}
		t.Logf("K=%d: worst noise loss %.4f of ε_b = %.4f, worst Jacobian loss %.4f of ε_J = %.4f", k, worstB, p.epsB, worstJ, p.epsJ)
		if worstB < 0.4*p.epsB || worstJ < 0.5*p.epsJ {
			t.Errorf("K=%d: the adversarial pairs reach only (%v, %v) of (%v, %v)", k, worstB, worstJ, p.epsB, p.epsJ)
		}
	}
}

// TestObjectiveSolverRadius: the computed minimiser is within the planned
// a-priori radius of a much longer run of the same solver (whose
// stationarity residual is checked), for binary and multinomial problems
// and several noise draws.
func TestObjectiveSolverRadius(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, k := range []int{2, 4} {
		ds := synthMixture(rng, 11, 300, k, 3, 1.5)
		cfg := ds.config(len(ds.x), 1, 0)
		cfg.Method = MethodObjective
		tr := mustPlan(t, cfg)
		p := tr.obj
		prob := newProblem(ds.x, ds.y, tr.prep, tr.kp, tr.binary, 1, math.Inf(1))
		for rep := 0; rep < 3; rep++ {
			b := p.laplaceNoise()
			th, err := p.minimize(prob, b)
			if err != nil {
				t.Fatal(err)
			}
			long := *p
			long.steps = 4 * p.steps
			ref, err := long.minimize(prob, b)
			if err != nil {
				t.Fatal(err)
			}
			res := noiseOf(tr, ds.x, ds.y, ref)
			var r2, e2 float64
			for j := range res {
				r2 += (res[j] - b[j]) * (res[j] - b[j])
				e2 += (th[j] - ref[j]) * (th[j] - ref[j])
			}
			// ‖θ_ref − θ*‖ ≤ ‖∇J(θ_ref)‖/Λ.
			refErr := math.Sqrt(r2) / p.lambda
			if math.Sqrt(e2)+refErr > p.rSolve {
				t.Errorf("K=%d: ‖θ̂ − θ_ref‖ = %v (+ %v) exceeds r = %v", k, math.Sqrt(e2), refErr, p.rSolve)
			}
			t.Logf("K=%d T=%d: ‖θ̂ − θ_ref‖ = %.3g, ref residual/Λ = %.3g, planned r_solve = %.3g", k, p.steps, math.Sqrt(e2), refErr, p.rSolve)
		}
	}
}

// TestObjectiveUtility: on an isotropic mixture (n = 3000) the pure-ε
// objective release at ε = 1 beats the majority class by a wide margin and
// is within 5 points of the one-step pure-ε gradient release (the noisy
// class-centroid direction, near-optimal on isotropic mixtures; the AUTO
// harness compares them on correlated data).
func TestObjectiveUtility(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, k := range []int{2, 5} {
		ds := synthMixture(rng, 13, 3600, k, 6, 1.0)
		train, test := ds.split(rng, 5.0/6)
		cfg := train.config(len(train.x), 1, 0)
		cfg.Method = MethodObjective
		var accObj, accGD float64
		const runs = 2
		for r := 0; r < runs; r++ {
			m, err := mustPlan(t, cfg).Train(train.x, train.y)
			if err != nil {
				t.Fatal(err)
			}
			accObj += testAccuracy(t, m, test) / runs
			g := cfg
			g.Method, g.Lambda = MethodGD, 0
			m, err = mustPlan(t, g).Train(train.x, train.y)
			if err != nil {
				t.Fatal(err)
			}
			accGD += testAccuracy(t, m, test) / runs
		}
		maj := majorityAcc(train, test)
		t.Logf("K=%d: objective %.3f, gd %.3f, majority %.3f", k, accObj, accGD, maj)
		// Two releases per method with real (crypto) noise: at K = 5 the
		// objective's mean spread is ≈ 0.02 and GD's ≈ 0.07 (0.59–0.64 and
		// 0.48–0.64 measured), so the bars sit several spreads below the
		// expected values (objective ≈ 0.61 against 0.47; the difference to GD
		// ≈ +0.05 against −0.15) — a CI run must not fail by chance, while a
		// release that collapses towards the majority class still does.
		if accObj < maj+0.35*(1-maj) || accObj < accGD-0.15 {
			t.Errorf("K=%d: objective %.3f (gd %.3f, majority %.3f)", k, accObj, accGD, maj)
		}
	}
}

// majorityAcc is the test accuracy of the training split's majority class.
func majorityAcc(train, test dataset) float64 {
	cnt := make([]int, len(train.classes))
	for _, c := range train.y {
		cnt[c]++
	}
	best := 0
	for k := range cnt {
		if cnt[k] > cnt[best] {
			best = k
		}
	}
	ok := 0
	for _, c := range test.y {
		if c == best {
			ok++
		}
	}
	return float64(ok) / float64(len(test.y))
}
