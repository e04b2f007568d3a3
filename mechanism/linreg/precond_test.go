package linreg

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/mechanism"
)

// TestPrecondRule: the public rule switches preconditioning on for
// private-bounds plans with one zCDP event (δ > 0) and d ≥
// PrecondMinFeatures, and the first stage's ratio r₁, AdaSSP's
// r₂ and the quantiles' ε compose to the charged ratio R:
// r₁² + r₂² + ε_C² + ε_y² (+ 2d·ε_b², §13) ≤ R², with
// r₁² = PrecondShare·(R² − ε_C² − ε_y² (− 2d·ε_b²)).
func TestPrecondRule(t *testing.T) {
	for _, c := range []struct {
		d, n       int
		eps, delta float64
		bounds     string
		want       bool
	}{
		{50, 10000, 1, 1e-6, BoundsPrivate, true},
		{50, 10000, 1, 1e-6, BoundsAuto, true},
		{10, 10000, 1, 1e-6, BoundsAuto, true},
		{50, 100000, 1, 1e-6, BoundsAuto, true},
		{10, 100000, 1, 1e-6, BoundsAuto, true},
		{9, 100000, 1, 1e-6, BoundsAuto, false},
		{10, 1000, 0.1, 1e-6, BoundsAuto, false},
		{10, 1000, 1e4, 1e-6, BoundsPrivate, false},
		{50, 10000, 1, 1e-6, BoundsPublic, false},
		{50, 10000, 1, 0, BoundsPrivate, false},
		{10, 1000, 1, 1e-6, BoundsAuto, true},
	} {
		cfg := privateConfig(c.d, c.n, c.eps, c.delta)
		cfg.Bounds = c.bounds
		tr := mustPlan(t, cfg)
		if got := tr.pre != nil; got != c.want {
			t.Fatalf("%+v: precondition %v, want %v", c, got, c.want)
		}
		if tr.pre == nil {
			if tr.params["precondition"] != 0 {
				t.Fatalf("%+v: params record precondition", c)
			}
			continue
		}
		unit, err := mechanism.GaussianSigma(1, c.eps, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		R := 1 / unit
		eq := tr.priv.epsNorm*tr.priv.epsNorm + tr.priv.epsRad*tr.priv.epsRad
		if b := tr.priv.box; b != nil { // §13's 2d box quantiles (auto at large n·ε_b)
			eq += float64(2*c.d) * b.eps * b.eps
		}
		r := math.Sqrt(R*R-eq) * (1 - 1e-12)
		r1, r2 := tr.pre.ratio, tr.gauss.ratio
		if tr.ref != nil { // §15 takes RefineShare of the rest
			if !near(r2*r2, (1-RefineShare)*(1-PrecondShare)*r*r, 1e-9) {
				t.Fatalf("r₂² = %v, want %v", r2*r2, (1-RefineShare)*(1-PrecondShare)*r*r)
			}
		}
		if !near(r1*r1, PrecondShare*r*r, 1e-12) {
			t.Fatalf("r₁² = %v, want %v", r1*r1, PrecondShare*r*r)
		}
		if tot := stageRatio2(tr) + eq; tot > R*R || tot < R*R*(1-1e-9) {
			t.Fatalf("r₁² + r₂² + r_ref² + ε_q² = %v, want R² = %v", tot, R*R)
		}
		ev := tr.Events()
		if len(ev) != 1 || ev[0].Ratio != R || ev[0].Epsilon != c.eps || ev[0].Delta != c.delta {
			t.Fatalf("events %+v, want one Gaussian event of ratio %v", ev, R)
		}
		// Exact scale of the first stage: σ₁ = (√2·κ̂² + 2t_A)/r₁.
		tA, _ := roundingBounds(c.n, tr.depth())
		if want := (math.Sqrt2*kappaHat*kappaHat + 2*tA) / r1; tr.pre.sigma != want {
			t.Fatalf("σ₁ = %v, want %v", tr.pre.sigma, want)
		}
		// AdaSSP is the plan of ratio r₂.
		g2, err := planGaussianRatio(r2, c.eps, c.delta, c.n, tr.f, tr.depth(), Kappa)
		if err != nil {
			t.Fatal(err)
		}
		if *tr.gauss != g2 {
			t.Fatalf("AdaSSP plan %+v, want %+v", *tr.gauss, g2)
		}
		f := float64(tr.f)
		if want := g2.sigmaA * (math.Sqrt(2*f) + math.Sqrt(2*math.Log(1/Failure))); tr.noiseNorm != want {
			t.Fatalf("E = %v, want %v", tr.noiseNorm, want)
		}
	}
}

// TestPrecondNoiseMatchesPlan: the first stage's empirical noise per
// coordinate has standard deviation σ₁ (times the sampler's 1 + 2⁻¹⁰).
func TestPrecondNoiseMatchesPlan(t *testing.T) {
	tr := mustPlan(t, privateConfig(50, 10000, 1, 1e-6))
	d := tr.f - 1
	requireNoiseSD(t, 20, d*(d+1)/2, func(v []float64) error { return addPrecondNoise(tr, v) }, tr.pre.sigma)
}

// TestPrecondSensitivity: on adversarial neighbours through the real
// private pass (corner rows, NULL rows, rows inside the radius, small and
// large radii) the first stage's vector moves by at most √2·κ̂², and the
// pair of orthogonal corner rows comes within d/F of it (the intercept
// takes 1/F of a unit row's norm).
func TestPrecondSensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	bound := math.Sqrt2 * kappaHat * kappaHat
	nan := math.NaN()
	for _, d := range []int{3, 8} {
		tr := mustPlan(t, privateConfig(d, 4, 1, 1e-6))
		base := dataset{y: []float64{0.01, -0.02, 0, 0.01}}
		for i := 0; i < 4; i++ {
			base.x = append(base.x, randBall(rng, d, 0.02))
		}
		rows := append(cornerRows(d), make([]float64, d+1))
		nanRow := make([]float64, d+1)
		for j := range nanRow {
			nanRow[j] = nan
		}
		rows = append(rows, nanRow)
		for k := 0; k < 20; k++ {
			r := append(randBall(rng, d, 1), 2*rng.Float64()-1)
			rows = append(rows, r)
		}
		worst := 0.0
		for _, c := range []float64{0.01, 0.3, math.Sqrt(float64(d))} {
			clip := newPrivClip(d, c, 0.02)
			for _, r0 := range rows[:min(len(rows), 12)] {
				for _, r := range rows {
					b, nb := replaceRow(base, r0), replaceRow(base, r)
					sb := sufficientStats(b.x, b.y, tr.prep, -1, 1, 1, clip)
					sn := sufficientStats(nb.x, nb.y, tr.prep, -1, 1, 1, clip)
					v := math.Sqrt(sqDist(packFeat(sb.a, tr.f), packFeat(sn.a, tr.f)))
					if v > bound {
						t.Fatalf("d=%d C=%v: rows %v → %v move the first stage by %v > %v", d, c, r0, r, v, bound)
					}
					worst = math.Max(worst, v)
				}
			}
		}
		if want := math.Sqrt2 * float64(d) / float64(d+1); d%2 == 0 && worst < 0.99*want {
			t.Fatalf("d=%d: adversarial neighbours reach %v, want ≈ %v", d, worst, want)
		}
	}
}

// TestPrecondRowsInBall: whatever M the first stage releases (huge,
// rank-deficient, indefinite), every mapped row has ‖x‖ ≤ κ̂, so AdaSSP's
// sensitivities hold unchanged in the second stage.
func TestPrecondRowsInBall(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, d := range []int{1, 3, 50} {
		tr := mustPlan(t, privateConfig(d, 10, 1, 1e-6))
		for trial := 0; trial < 200; trial++ {
			clip := newPrivClip(d, []float64{1e-3, 0.3, math.Sqrt(float64(d))}[trial%3], 0.5)
			m := make([]float64, d*d)
			scale := math.Pow(10, float64(rng.IntN(13)-6))
			for j := range m {
				m[j] = scale * rng.NormFloat64()
				if trial%5 == 0 && j >= d { // rank one
					m[j] = m[j%d]
				}
			}
			clip.m = m
			x := make([]float64, d)
			for j := range x {
				if trial%2 == 0 {
					x[j] = float64(2*rng.IntN(2) - 1)
				} else {
					x[j] = (2*rng.Float64() - 1) * math.Pow(10, -float64(rng.IntN(6)))
				}
			}
			row, _ := clipRow(tr, clip, x, 1)
			var s float64
			for _, v := range row {
				s += v * v
			}
			if math.Sqrt(s) > kappaHat || !finite(row) {
				t.Fatalf("d=%d: ‖x‖ = %v with M scale %v", d, math.Sqrt(s), scale)
			}
		}
	}
}

// TestPreconditioner: a spiked spectrum is flattened to τ = median + edge,
// the rest kept, and the mean square norm restored; a flat spectrum (all
// below τ) gives M = I; a non-positive one gives I.
func TestPreconditioner(t *testing.T) {
	const d = 6
	rng := rand.New(rand.NewPCG(45, 46))
	q := mat.NewDense(d, d, nil)
	for j := 0; j < d; j++ {
		for k := 0; k < d; k++ {
			q.Set(j, k, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(q)
	var v mat.Dense
	qr.QTo(&v)
	build := func(w []float64) []float64 {
		a := make([]float64, (d+1)*(d+1))
		for j := 0; j < d; j++ {
			for k := 0; k < d; k++ {
				var s float64
				for c := 0; c < d; c++ {
					s += v.At(j, c) * w[c] * v.At(k, c)
				}
				a[j*(d+1)+k] = s
			}
		}
		return packFeat(a, d+1)
	}
	w := []float64{1000, 400, 10, 10, 10, 10}
	m := preconditioner(build(w), d, 5)
	tau := 15.0
	p := []float64{math.Sqrt(tau / 1000), math.Sqrt(tau / 400), 1, 1, 1, 1}
	var num, den float64
	for k := range w {
		num += p[k] * p[k] * w[k]
		den += w[k]
	}
	s := math.Sqrt(num / den)
	for c := 0; c < d; c++ {
		// M v_c = p_c/s · v_c.
		for j := 0; j < d; j++ {
			var mv float64
			for k := 0; k < d; k++ {
				mv += m[j*d+k] * v.At(k, c)
			}
			if math.Abs(mv-p[c]/s*v.At(j, c)) > 1e-9 {
				t.Fatalf("eigenvector %d: M v = %v, want %v", c, mv, p[c]/s*v.At(j, c))
			}
		}
	}
	for _, flat := range [][]float64{{10, 11, 12, 10, 11, 12}, {-1, -2, -3, -1, -2, -1}} {
		m := preconditioner(build(flat), d, 5)
		for j := 0; j < d; j++ {
			for k := 0; k < d; k++ {
				want := 0.0
				if j == k {
					want = 1
				}
				if math.Abs(m[j*d+k]-want) > 1e-9 {
					t.Fatalf("spectrum %v: M[%d,%d] = %v, want %v", flat, j, k, m[j*d+k], want)
				}
			}
		}
	}
}

// TestPrecondFold: with a preconditioner the folded weights still predict,
// on the public scaling, what the model on the mapped rows predicts for
// rows inside both radii.
func TestPrecondFold(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	const d = 6
	tr := mustPlan(t, privateConfig(d, 10, 1, 1e-6))
	clip := newPrivClip(d, 0.4, 0.3)
	clip.m = make([]float64, d*d)
	for j := 0; j < d; j++ {
		for k := j; k < d; k++ {
			v := 0.3 * rng.NormFloat64()
			clip.m[j*d+k], clip.m[k*d+j] = v, v
		}
		clip.m[j*d+j] += 0.2
	}
	theta := make([]float64, d+1)
	for j := range theta {
		theta[j] = 0.3 * rng.NormFloat64()
	}
	m := &mechanism.Model{Kind: mechanism.KindLinReg, Features: tr.cfg.Features, LabelLo: -1, LabelHi: 1, Scaler: tr.scaler, Weights: [][]float64{clip.fold(theta)}}
	checked := 0
	for trial := 0; trial < 200; trial++ {
		x := randBall(rng, d, 0.39*rng.Float64())
		row, _ := clipRow(tr, clip, x, 0)
		var s float64
		for _, v := range row[:d] {
			s += v * v
		}
		if math.Sqrt(s) >= 0.999*math.Sqrt(float64(d)/float64(d+1)) {
			continue // clipped by the second norm bound: predicted linearly
		}
		checked++
		var dot float64
		for j, v := range row {
			dot += theta[j] * v
		}
		want := mechanism.Clip(clip.cy*dot, -1, 1)
		p, err := m.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		if !near(p.Value, want, 1e-9) && math.Abs(p.Value-want) > 1e-12 {
			t.Fatalf("prediction %v, want %v", p.Value, want)
		}
	}
	if checked < 50 {
		t.Fatalf("only %d rows inside the radii", checked)
	}
}

// TestPrecondTrainNeverFails: degenerate tables with d = 10 (the first
// stage on): all-zero features (a zero spectrum: M = I), NULLs,
// infinities, one row — a finite model and no error.
func TestPrecondTrainNeverFails(t *testing.T) {
	const d = 10
	for name, ds := range degenerateTables(d) {
		for _, p := range []struct{ eps, delta float64 }{{1, 1e-5}, {0.05, 1e-9}, {20, 0.1}} {
			tr := mustPlan(t, privateConfig(d, len(ds.x), p.eps, p.delta))
			if tr.pre == nil {
				t.Fatalf("%s ε=%v: no first stage", name, p.eps)
			}
			m, err := tr.Train(ds.x, ds.y)
			if err != nil {
				t.Fatalf("%s ε=%v: %v", name, p.eps, err)
			}
			if !finite(m.Weights[0]) || m.Params["precondition"] != 1 {
				t.Fatalf("%s ε=%v: model %+v", name, p.eps, m)
			}
		}
	}
}

// degenerateTables are tables of d features that stress the release: all
// zero (a zero spectrum), all NULL, ±∞ alternating, one row, and 200
// identical corner rows with the opposite label.
func degenerateTables(d int) map[string]dataset {
	nan := math.NaN()
	mk := func(n int, v, y float64) dataset {
		var ds dataset
		for i := 0; i < n; i++ {
			row := make([]float64, d)
			for j := range row {
				row[j] = v
				if math.IsInf(v, 0) && j%2 == 1 {
					row[j] = -v
				}
			}
			ds.x, ds.y = append(ds.x, row), append(ds.y, y)
		}
		return ds
	}
	return map[string]dataset{"zero": mk(40, 0, 0), "nulls": mk(40, nan, nan), "huge": mk(40, math.Inf(1), math.Inf(-1)), "one": mk(1, 1, 1), "corner": mk(200, 1, -1)}
}

// addPrecondNoise adds the first stage's noise to v (tests).
func addPrecondNoise(tr *Trainer, v []float64) error {
	return addGaussianFeat(v, tr.pre.sigma)
}

// precondLLR runs the whole release with preconditioning on the audit pair
// (clipPair) — quantiles, first stage, M, AdaSSP on the mapped rows — and
// returns 4·[C ≥ 0.1] plus the Gaussian log-likelihood ratios of the first
// stage and of AdaSSP given the released radii and M (the most powerful
// statistic of the Gaussian stages). sigmaDiv divides σ₁ (the must-fail
// variant).
func precondLLR(t testing.TB, tr *Trainer) audit.Sampler {
	d0, d1 := clipPair()
	lo, hi := tr.cfg.LabelLo, tr.cfg.LabelHi
	return func(side int) float64 {
		clip := sideClip(t, tr, side, d0, d1)
		s0 := sufficientStats(d0.x, d0.y, tr.prep, lo, hi, 1, clip)
		s1 := sufficientStats(d1.x, d1.y, tr.prep, lo, hi, 1, clip)
		st := s0
		if side == 1 {
			st = s1
		}
		v := packFeat(st.a, tr.f)
		if err := addGaussianFeat(v, tr.pre.sigma); err != nil {
			t.Fatal(err)
		}
		sig := tr.pre.sigma
		llr := (sqDist(v, packFeat(s0.a, tr.f)) - sqDist(v, packFeat(s1.a, tr.f))) / (2 * sig * sig)
		clip.m = preconditioner(v, tr.f-1, tr.pre.edge)
		p0 := sufficientStats(d0.x, d0.y, tr.prep, lo, hi, 1, clip)
		p1 := sufficientStats(d1.x, d1.y, tr.prep, lo, hi, 1, clip)
		llr += releaseLLR(t, tr, side, p0, p1)
		if clip.c >= 0.1 {
			llr += 4
		}
		return llr
	}
}

// precondAuditTrainer is auditClipTrainer (d = 3) with the first stage
// switched on as Plan does from PrecondMinFeatures features: the same
// split of the joint ratio, the same code.
func precondAuditTrainer(t testing.TB) *Trainer {
	tr := auditClipTrainer(t)
	if tr.pre != nil || tr.params["joint_zcdp"] != 1 {
		t.Fatalf("audit plan: precondition %v, joint %v", tr.pre != nil, tr.params["joint_zcdp"])
	}
	if err := tr.planPrecond(tr.gauss); err != nil {
		t.Fatal(err)
	}
	f := float64(tr.f)
	tr.noiseNorm = tr.gauss.sigmaA * (math.Sqrt(2*f) + math.Sqrt(2*math.Log(1/Failure)))
	tr.margin = tr.gauss.sigmaL * normalQuantile(1-Failure)
	return tr
}

// TestAuditPrecondRelease: the release with preconditioning on the pair
// whose norm quantile moves most must not show ε > 2 at δ = 10⁻².
func TestAuditPrecondRelease(t *testing.T) {
	tr := precondAuditTrainer(t)
	audit.RequirePass(t, precondLLR(t, tr), auditEps, audit.Config{N: 20000, Delta: auditDelta})
}

// TestAuditPrecondUndernoisedCaught is an expected failure: the first
// stage with σ₁/16 (its ratio 16r₁, the whole release ≈ 5R).
func TestAuditPrecondUndernoisedCaught(t *testing.T) {
	tr := precondAuditTrainer(t)
	tr.pre.sigma /= 16
	audit.RequireCatch(t, precondLLR(t, tr), auditEps, audit.Config{N: 8000, Delta: auditDelta})
}
