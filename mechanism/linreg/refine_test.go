package linreg

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/mechanism"
)

// refineTrainer is a private-bounds plan with §15's refinement switched on
// at the default constants through the same code Plan uses.
func refineTrainer(t testing.TB, cfg Config) *Trainer {
	t.Helper()
	tr := mustPlan(t, cfg)
	if tr.ref == nil {
		if tr.params["joint_zcdp"] != 1 {
			t.Fatalf("plan %+v has no joint zCDP event", cfg)
		}
		if err := tr.planRefineShare(tr.gauss, RefineShare, RefineSteps, RefineClip, RefineStep); err != nil {
			t.Fatal(err)
		}
		tr.setNoiseNorm()
	}
	return tr
}

// stageRatio2 is the squared ratio of the whole Gaussian stage: AdaSSP's
// plus §12's first stage plus §15's gradient steps (zCDP adds them).
func stageRatio2(tr *Trainer) float64 {
	r2 := tr.gauss.ratio * tr.gauss.ratio
	if tr.pre != nil {
		r2 += tr.pre.ratio * tr.pre.ratio
	}
	if tr.ref != nil {
		r2 += tr.ref.totalRatio * tr.ref.totalRatio
	}
	return r2
}

// TestRefineScales: the gradient releases' scale is exactly the
// derivation's, σ_g = Δ_g/r_g with Δ_g = 2κ̂τ(1 + 2u)(1 + n·γ_{n+W+1}) (+ the
// underflow term) and r_g = r_ref/√T; r_ref² = RefineShare·r² and AdaSSP is
// the plan of ratio r_ssp = √(1 − RefineShare)·r, so r_ref² + r_ssp² ≤ r²
// (one zCDP event, unchanged).
func TestRefineScales(t *testing.T) {
	for _, c := range []struct {
		d, n       int
		eps, delta float64
	}{{50, 10000, 1, 1e-6}, {10, 10000, 0.1, 1e-6}, {10, 1000, 10, 1e-5}, {3, 2, 2, 1e-2}, {20, 1 << 20, 1, 1e-9}} {
		base := mustPlan(t, privateConfig(c.d, c.n, c.eps, c.delta))
		if base.ref != nil {
			// Undo Plan's split to compare against the plan without §15.
			t.Logf("%+v: Plan refines already", c)
		}
		tr := refineTrainer(t, privateConfig(c.d, c.n, c.eps, c.delta))
		var r float64
		if base.ref == nil {
			r = base.gauss.ratio
		} else {
			r = math.Sqrt(base.gauss.ratio*base.gauss.ratio + base.ref.totalRatio*base.ref.totalRatio)
		}
		p := tr.ref
		if p.steps != RefineSteps || p.tau != RefineClip || p.step != RefineStep {
			t.Fatalf("%+v: plan %+v", c, p)
		}
		if !near(p.totalRatio*p.totalRatio, RefineShare*r*r, 1e-9) {
			t.Fatalf("%+v: r_ref² = %v, want %v", c, p.totalRatio*p.totalRatio, RefineShare*r*r)
		}
		if tot := p.totalRatio*p.totalRatio + tr.gauss.ratio*tr.gauss.ratio; tot > r*r || tot < r*r*(1-1e-9) {
			t.Fatalf("%+v: r_ref² + r_ssp² = %v, want r² = %v", c, tot, r*r)
		}
		g, err := planGaussianRatio(tr.gauss.ratio, c.eps, c.delta, c.n, tr.f, tr.depth(), Kappa)
		if err != nil {
			t.Fatal(err)
		}
		if *tr.gauss != g {
			t.Fatalf("%+v: AdaSSP plan %+v, want %+v", c, *tr.gauss, g)
		}
		n := float64(c.n)
		term := kappaHat * RefineClip * (1 + 0x1p-52)
		sens := 2*term + 2*(gamma(float64(c.n+tr.workers)+1)*n*term+float64(c.n+2)*underflowUnit*2048)
		if want := sens / p.ratio; p.sigma != want {
			t.Fatalf("%+v: σ_g = %v, want %v", c, p.sigma, want)
		}
		if !near(p.ratio*math.Sqrt(float64(p.steps)), p.totalRatio, 1e-15) {
			t.Fatalf("%+v: per-step ratio %v × √T ≠ %v", c, p.ratio, p.totalRatio)
		}
		ev, bev := tr.Events(), base.Events()
		if len(ev) != 1 || len(bev) != 1 || ev[0] != bev[0] {
			t.Fatalf("%+v: events %+v, want the plan's one event %+v", c, ev, bev)
		}
		f := float64(tr.f)
		if want := tr.gauss.sigmaA * (math.Sqrt(2*f) + math.Sqrt(2*math.Log(1/Failure))); tr.noiseNorm != want {
			t.Fatalf("%+v: E = %v, want %v", c, tr.noiseNorm, want)
		}
	}
	// Refused: no steps, a non-positive clip, a ratio below the sampler's.
	for _, bad := range []struct {
		r     float64
		steps int
		tau   float64
	}{{1, 0, 0.5}, {1, 2, 0}, {1e-7, 2, 0.5}} {
		if _, err := planRefine(bad.r, bad.steps, bad.tau, 1, 100, 2); err == nil {
			t.Fatalf("planRefine(%+v) accepted", bad)
		}
	}
}

// TestRefineRule: the public rule refines private-bounds plans with one
// zCDP event (δ > 0), d ≥ RefineMinFeatures, and n·ε ≥ RefineMinNEps or
// n ≥ RefineMinRowsPerDim·F; δ = 0, the declared boxes, the
// basic-composition branch, d < 10 and small n·ε with small n/F keep
// AdaSSP alone. The model records the steps.
func TestRefineRule(t *testing.T) {
	for _, c := range []struct {
		d, n       int
		eps, delta float64
		bounds     string
		want       bool
	}{
		{50, 10000, 1, 1e-6, BoundsAuto, true},
		{10, 10000, 1, 1e-6, BoundsAuto, true},   // with §13's box
		{10, 1000, 10, 1e-5, BoundsAuto, true},   // n·ε = 10⁴
		{50, 10000, 0.1, 1e-6, BoundsAuto, true}, // n·ε = 1000, n/F ≈ 200
		{10, 1000, 1, 1e-6, BoundsAuto, true},    // n·ε = 1000, n/F ≈ 90
		{50, 3000, 1, 1e-6, BoundsAuto, true},    // n·ε = 3000
		{50, 1000, 1, 1e-6, BoundsAuto, false},   // n·ε = 1000, n/F ≈ 20
		{20, 1000, 1, 1e-6, BoundsAuto, false},   // n/F ≈ 48
		{50, 500, 2, 1e-6, BoundsAuto, false},    // n·ε = 1000, n/F ≈ 10
		{50, 2000, 1, 1e-6, BoundsAuto, false},   // n·ε = 2000, n/F ≈ 39
		{9, 100000, 1, 1e-6, BoundsAuto, false},
		{10, 1000, 0.1, 1e-6, BoundsAuto, false}, // intercept-only (§14)
		{10, 1000, 0.5, 1e-6, BoundsAuto, false}, // label centre, declared boxes
		{10, 1000, 1e4, 1e-6, BoundsPrivate, false},
		{50, 10000, 1, 1e-6, BoundsPublic, false},
		{50, 10000, 1, 0, BoundsPrivate, false},
	} {
		cfg := privateConfig(c.d, c.n, c.eps, c.delta)
		cfg.Bounds = c.bounds
		tr := mustPlan(t, cfg)
		if got := tr.ref != nil; got != c.want {
			t.Fatalf("%+v: refine %v, want %v", c, got, c.want)
		}
		if _, ok := tr.params["refine_steps"]; ok != c.want {
			t.Fatalf("%+v: params %v", c, tr.params)
		}
	}
}

// TestRefineNoiseMatchesPlan: the noise the release adds to a gradient has
// standard deviation σ_g(1 + 2⁻¹⁰) (the discrete Gaussian's inflation).
func TestRefineNoiseMatchesPlan(t *testing.T) {
	tr := refineTrainer(t, privateConfig(50, 10000, 1, 1e-6))
	requireNoiseSD(t, 100, tr.f, tr.addRefineNoise, tr.ref.sigma)
}

// requireNoiseSD adds noise to reps zero vectors of dim coordinates and
// requires the empirical standard deviation to be σ(1 + 2⁻¹⁰) (the discrete
// Gaussian's inflation) within four standard errors.
func requireNoiseSD(t *testing.T, reps, dim int, add func([]float64) error, sigma float64) {
	t.Helper()
	var sum, sq float64
	var k int
	for rep := 0; rep < reps; rep++ {
		v := make([]float64, dim)
		if err := add(v); err != nil {
			t.Fatal(err)
		}
		for _, x := range v {
			sum += x
			sq += x * x
			k++
		}
	}
	sd := math.Sqrt(sq/float64(k) - (sum/float64(k))*(sum/float64(k)))
	want := sigma * (1 + 0x1p-10)
	if math.Abs(sd/want-1) > 4/math.Sqrt(2*float64(k)) {
		t.Fatalf("empirical σ %v, want %v (%d draws)", sd, want, k)
	}
}

// TestRefineSensitivity: replace-one neighbours through the real gradient
// pass — corners, label flips, NULL rows, rows far outside the bounds,
// random rows — under tight and loose radii, a preconditioner and θ from
// tiny to huge (residuals clipped or not, xᵀθ overflowing) never move the
// clipped-residual gradient by more than Δ_g, and the label flip of a
// clipped corner row attains 2τ.
func TestRefineSensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	nan, inf := math.NaN(), math.Inf(1)
	for _, d := range []int{3, 8} {
		tr := refineTrainer(t, privateConfig(d, 5, 1, 1e-6))
		bound := refineSensitivity(5, tr.workers, tr.ref.tau)
		base := dataset{y: []float64{0.01, -0.02, 0, 0.01, 0.3}}
		for i := 0; i < 5; i++ {
			base.x = append(base.x, randBall(rng, d, 0.5))
		}
		rows := cornerRows(d)
		far := make([]float64, d+1)
		for j := range far {
			far[j] = inf
			if j%2 == 1 {
				far[j] = -1e300
			}
		}
		nanRow := make([]float64, d+1)
		for j := range nanRow {
			nanRow[j] = nan
		}
		rows = append(rows, far, nanRow, make([]float64, d+1))
		for k := 0; k < 20; k++ {
			rows = append(rows, append(randBall(rng, d, 1.5), 2*rng.Float64()-1))
		}
		thetas := [][]float64{make([]float64, d+1)}
		for _, s := range []float64{0.1, 1, 10, 1e300} {
			thetas = append(thetas, randBall(rng, d+1, s))
		}
		m := make([]float64, d*d)
		for j := range m {
			m[j] = rng.NormFloat64()
		}
		worst := 0.0
		for _, c := range []float64{0.01, 0.3, math.Sqrt(float64(d))} {
			for _, pre := range []bool{false, true} {
				clip := newPrivClip(d, c, 0.02)
				if pre {
					clip.m = m
				}
				for _, th := range thetas {
					for _, r0 := range rows[:min(len(rows), 10)] {
						for _, r := range rows {
							b, nb := replaceRow(base, r0), replaceRow(base, r)
							g0 := tr.residualGradient(b.x, b.y, clip, th, tr.ref.tau)
							g1 := tr.residualGradient(nb.x, nb.y, clip, th, tr.ref.tau)
							if !finite(g0) || !finite(g1) {
								t.Fatalf("d=%d: non-finite gradient", d)
							}
							v := math.Sqrt(sqDist(g0, g1))
							if v > bound {
								t.Fatalf("d=%d C=%v pre=%v θ=%v: rows %v → %v move the gradient by %v > %v", d, c, pre, th, r0, r, v, bound)
							}
							worst = math.Max(worst, v)
						}
					}
				}
			}
		}
		if worst < 0.999*2*tr.ref.tau {
			t.Fatalf("d=%d: adversarial neighbours reach %v, want ≈ 2τ = %v", d, worst, 2*tr.ref.tau)
		}
	}
}

// TestRefineTrainNeverFails: degenerate tables (zero, NULL, ±∞, n = 1,
// corners) at extreme (ε, δ) give a finite model with the refinement's
// params and no error.
func TestRefineTrainNeverFails(t *testing.T) {
	for _, d := range []int{3, 10} {
		for name, ds := range degenerateTables(d) {
			for _, p := range []struct{ eps, delta float64 }{{1, 1e-5}, {0.05, 1e-9}, {20, 0.1}} {
				tr := refineTrainer(t, privateConfig(d, len(ds.x), p.eps, p.delta))
				m, err := tr.Train(ds.x, ds.y)
				if err != nil {
					t.Fatalf("d=%d %s ε=%v: %v", d, name, p.eps, err)
				}
				if !finite(m.Weights[0]) || m.Params["refine_steps"] != RefineSteps {
					t.Fatalf("d=%d %s ε=%v: model %+v", d, name, p.eps, m)
				}
			}
		}
	}
}

// TestRefineFixedPoint: with negligible noise the steps move AdaSSP's
// floor-shrunk estimate towards least squares (the refinement's purpose):
// on well-conditioned rows whose residuals stay inside τ, each step
// contracts the distance to the least-squares θ.
func TestRefineFixedPoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	const d, n = 5, 4000
	beta := synthBeta(rng, d)
	ds := synthLinear(rng, beta, n, 0.02)
	tr := mustPlan(t, synthConfig(d, n, 1, 1e-6))
	ls, err := tr.fitExact(ds.x, ds.y, 0)
	if err != nil {
		t.Fatal(err)
	}
	st := tr.stats(ds.x, ds.y)
	r := noisy{a: unpackA(packA(st.a, tr.f, true), tr.f, true, tr.interceptEntry()), c: st.c}
	// A heavy floor: the exact-statistics solve is shrunk far from ls.
	tr.noiseNorm = float64(n) / float64(tr.f)
	theta0 := solveFloor(r.a, r.c, tr.noiseNorm)
	tr.ref = &refinePlan{steps: 1, tau: 0.5, step: 1, sigma: 1e-9}
	prev := math.Sqrt(sqDist(theta0, ls))
	th := theta0
	for s := 0; s < 4; s++ {
		if th, err = tr.refine(r, 0, th, ds.x, ds.y, nil); err != nil {
			t.Fatal(err)
		}
		dist := math.Sqrt(sqDist(th, ls))
		if !(dist < 0.8*prev) {
			t.Fatalf("step %d: distance to least squares %v, was %v", s, dist, prev)
		}
		prev = dist
	}
}

// refineStepSampler audits one gradient release through the real pass and
// noise at its calibrated bound: the pair whose gradient moves by 2τ (the
// same clipped corner row, label flipped, residual +τ against −τ) with the
// step planned at the whole audit ratio R of (2, 10⁻²). sigmaDiv divides σ_g
// (the must-fail variant).
func refineStepSampler(t testing.TB, sigmaDiv float64) audit.Sampler {
	const d = 3
	tr := refineTrainer(t, privateConfig(d, 2, auditEps, auditDelta))
	unit, err := mechanism.GaussianSigma(1, auditEps, auditDelta)
	if err != nil {
		t.Fatal(err)
	}
	p, err := planRefine(1/unit, 1, RefineClip, 1, 2, tr.workers)
	if err != nil {
		t.Fatal(err)
	}
	tr.ref = &p
	tr.ref.sigma /= sigmaDiv
	clip := newPrivClip(d, 0.5, 0.5)
	d0 := dataset{x: [][]float64{{0.01, 0, 0}, {1, 1, 1}}, y: []float64{0, 1}}
	d1 := dataset{x: [][]float64{{0.01, 0, 0}, {1, 1, 1}}, y: []float64{0, -1}}
	th := make([]float64, tr.f)
	g0 := tr.residualGradient(d0.x, d0.y, clip, th, p.tau)
	g1 := tr.residualGradient(d1.x, d1.y, clip, th, p.tau)
	if v := math.Sqrt(sqDist(g0, g1)); !near(v, 2*p.tau, 1e-9) {
		t.Fatalf("audit pair moves the gradient by %v, want 2τ = %v", v, 2*p.tau)
	}
	sigma := tr.ref.sigma
	return func(side int) float64 {
		o := append([]float64(nil), g0...)
		if side == 1 {
			copy(o, g1)
		}
		if err := tr.addRefineNoise(o); err != nil {
			t.Fatal(err)
		}
		return (sqDist(o, g0) - sqDist(o, g1)) / (2 * sigma * sigma)
	}
}

// TestAuditRefineStep: one gradient release at its bound passes at
// (2, 10⁻²) when planned at that claim's ratio.
func TestAuditRefineStep(t *testing.T) {
	audit.RequirePass(t, refineStepSampler(t, 1), auditEps, audit.Config{N: 60000, Delta: auditDelta})
}

// TestAuditRefineStepSensitivityHalvedCaught is an expected failure: σ_g
// calibrated to τ instead of 2τ (the residual clip counted once).
func TestAuditRefineStepSensitivityHalvedCaught(t *testing.T) {
	audit.RequireCatch(t, refineStepSampler(t, 2), auditEps, audit.Config{N: 60000, Delta: auditDelta})
}

// refineLLR runs the whole release with the refinement on §11's audit pair
// (clipPair): quantiles (5-point grids), AdaSSP on the clipped rows, θ₀,
// then each gradient release from the side's own θ_t, and returns
// 4·[C ≥ 0.1] plus the Gaussian log-likelihood ratios of AdaSSP and of every
// gradient release given the released radii and θ_t (a function of earlier
// outputs only, the same for both sides).
func refineLLR(t testing.TB, tr *Trainer) audit.Sampler {
	d0, d1 := clipPair()
	lo, hi := tr.cfg.LabelLo, tr.cfg.LabelHi
	return func(side int) float64 {
		clip := sideClip(t, tr, side, d0, d1)
		l, r := releaseLLRNoisy(t, tr, side, sufficientStats(d0.x, d0.y, tr.prep, lo, hi, 1, clip), sufficientStats(d1.x, d1.y, tr.prep, lo, hi, 1, clip))
		theta, lambda := tr.estimate(r)
		h := tr.refineSolver(r, lambda)
		for s := 0; s < tr.ref.steps; s++ {
			m0 := tr.residualGradient(d0.x, d0.y, clip, theta, tr.ref.tau)
			m1 := tr.residualGradient(d1.x, d1.y, clip, theta, tr.ref.tau)
			o := append([]float64(nil), m0...)
			if side == 1 {
				copy(o, m1)
			}
			if err := tr.addRefineNoise(o); err != nil {
				t.Fatal(err)
			}
			l += gaussLoss(o, m0, m1, tr.ref.sigma)
			theta = h.step(theta, o, tr.ref.step)
		}
		if clip.c >= 0.1 {
			l += 4
		}
		return l
	}
}

// TestAuditRefineRelease: the release with the refinement on the pair whose
// norm quantile moves most must not show ε > 2 at δ = 10⁻².
func TestAuditRefineRelease(t *testing.T) {
	tr := refineTrainer(t, auditClipTrainer(t).cfg)
	tr.priv = auditClipTrainer(t).priv
	audit.RequirePass(t, refineLLR(t, tr), auditEps, audit.Config{N: 20000, Delta: auditDelta})
}

// TestAuditRefineUndernoisedCaught is an expected failure: the gradient
// releases with σ_g/16.
func TestAuditRefineUndernoisedCaught(t *testing.T) {
	tr := refineTrainer(t, auditClipTrainer(t).cfg)
	tr.priv = auditClipTrainer(t).priv
	tr.ref.sigma /= 16
	audit.RequireCatch(t, refineLLR(t, tr), auditEps, audit.Config{N: 8000, Delta: auditDelta})
}

// TestRefineGradientWorkers: the gradient summed by several workers (the
// path of n ≥ 2·minRowsPerWorker) equals the one-worker sum within the
// rounding allowance that refineSensitivity charges on each side.
func TestRefineGradientWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	const d, n = 6, 3 * minRowsPerWorker
	ds := synthLinear(rng, synthBeta(rng, d), n, 0.3)
	tr := mustPlan(t, synthConfig(d, n, 1, 1e-6))
	theta := randBall(rng, d+1, 2)
	tr.workers = 1
	one := tr.residualGradient(ds.x, ds.y, nil, theta, RefineClip)
	tr.workers = 3
	three := tr.residualGradient(ds.x, ds.y, nil, theta, RefineClip)
	allow := refineSensitivity(n, 3, RefineClip) - 2*kappaHat*RefineClip // both sides' rounding terms
	if !finite(three) {
		t.Fatal("non-finite gradient")
	}
	if dist := math.Sqrt(sqDist(one, three)); dist > allow {
		t.Fatalf("3-worker gradient differs from the 1-worker one by %v > %v", dist, allow)
	}
}

// sideClip releases the radii (§11, 5-point grids in the audits) on D
// (side 0) or D′ (side 1).
func sideClip(t testing.TB, tr *Trainer, side int, d0, d1 dataset) *privClip {
	t.Helper()
	ds := d0
	if side == 1 {
		ds = d1
	}
	clip, err := tr.releaseClip(ds.x, ds.y)
	if err != nil {
		t.Fatal(err)
	}
	return clip
}
