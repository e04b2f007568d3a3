package linreg

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/agg"
)

func privateConfig(d, n int, eps, delta float64) Config {
	c := synthConfig(d, n, eps, delta)
	c.Bounds = BoundsPrivate
	return c
}

// TestPrivateBoundsRule: bounds=auto follows n·ε ≥ MinPrivateNEps; the
// choice is recorded in the plan; unknown modes are refused at Plan; the
// one-pass paths refuse a private plan with a public error.
func TestPrivateBoundsRule(t *testing.T) {
	for _, c := range []struct {
		n    int
		eps  float64
		want bool
	}{{999, 1, false}, {1000, 1, true}, {10000, 0.1, true}, {353, 1, false}, {353, 10, true}, {1 << 30, 1e-5, false}} {
		if got := UsePrivateBounds(c.n, c.eps); got != c.want {
			t.Fatalf("UsePrivateBounds(%d, %v) = %v, want %v", c.n, c.eps, got, c.want)
		}
		if c.eps < 1e-4 {
			continue // n·ε ≥ 1000 but the quantiles' ε below the sampler's range
		}
		cfg := synthConfig(3, c.n, c.eps, 1e-6)
		cfg.Bounds = BoundsAuto
		tr := mustPlan(t, cfg)
		// Below the rule's n·ε, §14's label centre or intercept-only
		// model (TestCentreRule) keeps the declared feature boxes.
		got := tr.Config().Bounds
		if c.want != (got == BoundsPrivate) || (!c.want && got != BoundsCentre && got != BoundsMean) || (tr.priv != nil) != c.want {
			t.Fatalf("n=%d ε=%v: plan bounds %q", c.n, c.eps, got)
		}
	}
	cfg := synthConfig(3, 10, 1, 1e-6)
	cfg.Bounds = "data"
	if _, err := Plan(cfg); err == nil {
		t.Fatal("bounds=data accepted")
	}
	tr := mustPlan(t, privateConfig(3, 10, 1, 1e-6))
	if _, err := tr.TrainStream(func(func([]float64) error) error { return nil }); !errors.Is(err, errNeedsRows) {
		t.Fatalf("TrainStream on a private plan: %v", err)
	}
	if _, err := tr.TrainSums(make([]float64, 16), make([]float64, 4), 10); !errors.Is(err, errNeedsRows) {
		t.Fatalf("TrainSums on a private plan: %v", err)
	}
}

// TestPrivateScales: the two quantiles get ScaleShare·ε split
// NormShare / RadiusShare. With δ > 0 the release is one zCDP Gaussian
// event of ratio R = unit ratio of (ε, δ) when that gives AdaSSP a ratio r
// with r² + ε_C² + ε_y² = R² above the basic split's; otherwise (and for
// δ = 0) the quantiles are pure-ε Laplace events and AdaSSP gets the
// rest with exactly the calibration of a public plan at that ε; the events'
// ε add up to ε (basic composition) and δ is AdaSSP's alone.
func TestPrivateScales(t *testing.T) {
	for _, c := range []struct {
		d, n       int
		eps, delta float64
	}{{10, 10000, 1, 1e-5}, {50, 100000, 0.3, 1e-6}, {3, 1000, 10, 0}, {14, 100000, 1, 0}, {5, 1000, 1e4, 1e-6}, {5, 1000, 30, 1e-6}} {
		tr := mustPlan(t, privateConfig(c.d, c.n, c.eps, c.delta))
		ev := tr.Events()
		s := ScaleShare * c.eps
		want := []float64{NormShare * s, s - NormShare*s}
		if !near(tr.priv.epsNorm, want[0], 1e-15) || !near(tr.priv.epsRad, want[1], 1e-15) {
			t.Fatalf("quantile ε %v %v, want %v", tr.priv.epsNorm, tr.priv.epsRad, want)
		}
		// Basic composition, unless one zCDP event gives AdaSSP a larger ratio.
		basic, err := planGaussian(c.eps-want[0]-want[1], math.Max(c.delta, 1e-300), c.n, tr.f, tr.depth(), Kappa)
		if c.delta > 0 && err != nil {
			t.Fatal(err)
		}
		if c.delta > 0 && tr.params["joint_zcdp"] == 1 {
			unit, err := mechanism.GaussianSigma(1, c.eps, c.delta)
			if err != nil {
				t.Fatal(err)
			}
			// §12's first stage and §15's gradient steps take shares of
			// the SSP's r² (TestPrecondRule, TestRefineScales); compare
			// the stage's whole ratio.
			r := math.Sqrt(stageRatio2(tr))
			if len(ev) != 1 || ev[0].Kind != budget.Gaussian || ev[0].Epsilon != c.eps || ev[0].Delta != c.delta || ev[0].Ratio != 1/unit {
				t.Fatalf("joint event %+v, want one Gaussian event of ratio %v", ev, 1/unit)
			}
			if q := r*r + want[0]*want[0] + want[1]*want[1]; q > ev[0].Ratio*ev[0].Ratio || q < ev[0].Ratio*ev[0].Ratio*(1-1e-9) {
				t.Fatalf("r² + ε_C² + ε_y² = %v, want R² = %v", q, ev[0].Ratio*ev[0].Ratio)
			}
			if !(r > basic.ratio) {
				t.Fatalf("joint ratio %v not above basic %v", r, basic.ratio)
			}
			if err := ev[0].Validate(); err != nil {
				t.Fatal(err)
			}
			t.Logf("ε=%v δ=%v: joint zCDP ratio %.4f vs basic %.4f", c.eps, c.delta, r, basic.ratio)
			continue
		}
		for i, w := range want {
			if ev[i].Kind != budget.Laplace || !near(ev[i].Epsilon, w, 1e-15) || ev[i].Delta != 0 {
				t.Fatalf("quantile event %d: %+v, want Laplace ε = %v", i, ev[i], w)
			}
		}
		if tr.priv.norm.Q != NormLevel(c.n, c.eps) || tr.priv.radius.Q != LabelLevel(c.n, c.eps) {
			t.Fatalf("quantile levels %v %v", tr.priv.norm.Q, tr.priv.radius.Q)
		}
		if tr.priv.norm.Scale() != 2/want[0] || tr.priv.radius.Scale() != 2/want[1] {
			t.Fatalf("report-noisy-max scales %v %v", tr.priv.norm.Scale(), tr.priv.radius.Scale())
		}
		var sum, sumD float64
		for _, e := range ev {
			if err := e.Validate(); err != nil {
				t.Fatal(err)
			}
			sum += e.Epsilon
			sumD += e.Delta
		}
		if !near(sum, c.eps, 1e-15) || sumD != c.delta {
			t.Fatalf("events add to (%v, %v), want (%v, %v)", sum, sumD, c.eps, c.delta)
		}
		epsSSP := tr.params["epsilon_ssp"]
		pub := synthConfig(c.d, c.n, epsSSP, c.delta)
		ref := mustPlan(t, pub)
		if c.delta > 0 {
			if *tr.gauss != *ref.gauss || len(ev) != 3 || ev[2] != ref.Events()[0] {
				t.Fatalf("AdaSSP stage %+v %+v, want the public plan at ε = %v: %+v %+v", tr.gauss, ev[2], epsSSP, ref.gauss, ref.Events())
			}
		} else if *tr.lap != *ref.lap || len(ev) != 5 {
			t.Fatalf("AdaSSP stage %+v, want %+v", tr.lap, ref.lap)
		}
		if tr.noiseNorm != ref.noiseNorm || tr.margin != ref.margin {
			t.Fatalf("E, margin %v %v, want %v %v", tr.noiseNorm, tr.margin, ref.noiseNorm, ref.margin)
		}
	}
}

// clipRow maps one raw row as the private pass does.
func clipRow(tr *Trainer, clip *privClip, x []float64, y float64) ([]float64, float64) {
	row := make([]float64, tr.f)
	tr.prep.Transform(row, x)
	return row, clip.apply(row, labelUnit(y, tr.cfg.LabelLo, tr.cfg.LabelHi))
}

// TestPrivateRowsInBall: whatever the released radii (the grids' extremes
// included), every mapped row has ‖x‖ ≤ κ̂ and |y″| ≤ 1, so the AdaSSP
// sensitivities hold unchanged; rows inside the radius are scaled by
// exactly √d/C.
func TestPrivateRowsInBall(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	nan := math.NaN()
	for _, d := range []int{1, 3, 50, MaxFeatures} {
		tr := mustPlan(t, privateConfig(d, 10, 1, 1e-6))
		sd := math.Sqrt(float64(d))
		radii := []float64{sd * math.Exp2(-Octaves), sd, 0.3, 1e-3}
		for trial := 0; trial < 400; trial++ {
			c := radii[trial%len(radii)]
			clip := newPrivClip(d, c, math.Exp2(-Octaves*rng.Float64()))
			x := make([]float64, d)
			for j := range x {
				switch trial % 4 {
				case 0:
					x[j] = float64(2*rng.IntN(2) - 1) // corner
				case 1:
					x[j] = 1e-3 * rng.NormFloat64()
				case 2:
					x[j] = []float64{nan, math.Inf(1), -1e300, 0}[rng.IntN(4)]
				default:
					x[j] = 2*rng.Float64() - 1
				}
			}
			row, yv := clipRow(tr, clip, x, []float64{1, -1, nan, 1e300, 0.3}[trial%5])
			var s float64
			for _, v := range row {
				s += v * v
			}
			if math.Sqrt(s) > kappaHat || math.Abs(yv) > 1 || math.IsNaN(yv) {
				t.Fatalf("d=%d C=%v: ‖x‖ = %v, y″ = %v", d, c, math.Sqrt(s), yv)
			}
		}
		// A row strictly inside the radius is scaled linearly (no clipping).
		clip := newPrivClip(d, 0.5, 1)
		x := make([]float64, d)
		x[0] = 0.1
		row, _ := clipRow(tr, clip, x, 0)
		if want := 0.1 * sd / 0.5 / math.Sqrt(float64(d+1)); !near(row[0], want, 1e-12) {
			t.Fatalf("d=%d: inside row scaled to %v, want %v", d, row[0], want)
		}
	}
}

// TestPrivateAdversarialNeighbours: tables that differ in one row — a row
// at the declared box corner (label at its bound) against one inside the
// private radius, or a NULL row — through the real private pass with a
// small released radius: the joint statistic of the computed releases stays
// within J(1, Kappa)·κ̂⁴, and the corner-vs-inside pair comes close to it
// (the radius makes every corner row a unit row, so small C makes the
// worst case easy to reach: the reason σ must not shrink with C).
func TestPrivateAdversarialNeighbours(t *testing.T) {
	const d = 3
	tr := mustPlan(t, privateConfig(d, 4, 1, 1e-6))
	bound := jointA(Kappa) * math.Pow(kappaHat, 4)
	base := dataset{x: [][]float64{{0.01, 0.02, -0.01}, {0.02, 0, 0.01}, {-0.01, 0.01, 0}, {0, -0.02, 0.02}}, y: []float64{0.01, -0.02, 0, 0.01}}
	nan := math.NaN()
	worst := 0.0
	for _, c := range []float64{0.01, 0.05, math.Sqrt(d)} {
		clip := newPrivClip(d, c, 0.02)
		rows := append(cornerRows(d), []float64{0.005, 0.005, 0, -0.02}, []float64{nan, nan, nan, nan})
		for _, r := range rows {
			for _, r0 := range [][]float64{{0.01, 0.02, -0.01, 0.01}, {-1, -1, -1, -1}, {0.004, -0.004, 0, 0.02}} {
				b := replaceRow(base, r0)
				nb := replaceRow(base, r)
				sb := sufficientStats(b.x, b.y, tr.prep, -1, 1, 1, clip)
				sn := sufficientStats(nb.x, nb.y, tr.prep, -1, 1, 1, clip)
				v := sqDist(packA(sb.a, tr.f, true), packA(sn.a, tr.f, true)) + Kappa*sqDist(sb.c, sn.c)
				if v > bound {
					t.Fatalf("C=%v: rows %v → %v move the releases by %v > J = %v", c, r0, r, v, bound)
				}
				worst = math.Max(worst, v)
			}
		}
	}
	if worst < 0.9*jointA(Kappa) {
		t.Fatalf("adversarial neighbours reach only %v of J = %v", worst, jointA(Kappa))
	}
	t.Logf("worst joint statistic %.4f, J = %.4f", worst, jointA(Kappa))
}

// TestPrivateFold: the folded weights predict, on the public scaling, what
// the clipped model predicts for rows inside the radius: C_y·θᵀx.
func TestPrivateFold(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	const d = 6
	tr := mustPlan(t, privateConfig(d, 10, 1, 1e-6))
	clip := newPrivClip(d, 0.4, 0.3)
	theta := make([]float64, d+1)
	for j := range theta {
		theta[j] = 0.3 * rng.NormFloat64()
	}
	m := &mechanism.Model{Kind: mechanism.KindLinReg, Features: tr.cfg.Features, LabelLo: -1, LabelHi: 1, Scaler: tr.scaler, Weights: [][]float64{clip.fold(theta)}}
	for trial := 0; trial < 100; trial++ {
		x := randBall(rng, d, 0.39*rng.Float64())
		row, _ := clipRow(tr, clip, x, 0)
		var dot float64
		for j, v := range row {
			dot += theta[j] * v
		}
		// The mapped features carry the factor shrink (1 − 2⁻⁴⁰), which the
		// fold ignores: agreement to 10⁻⁹.
		want := mechanism.Clip(clip.cy*dot, -1, 1)
		p, err := m.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		if !near(p.Value, want, 1e-9) && math.Abs(p.Value-want) > 1e-12 {
			t.Fatalf("prediction %v, want %v", p.Value, want)
		}
	}
}

// TestPrivateTrainNeverFails: degenerate tables (all-zero features: norm
// quantile at the grid's smallest positive radius; constant labels: label
// radius at its smallest; NULLs; n = 1; infinities) give a finite model and
// no error, at extreme ε and δ.
func TestPrivateTrainNeverFails(t *testing.T) {
	const d = 4
	nan := math.NaN()
	tables := map[string]dataset{}
	zero, nulls, huge := dataset{}, dataset{}, dataset{}
	for i := 0; i < 40; i++ {
		zero.x, zero.y = append(zero.x, []float64{0, 0, 0, 0}), append(zero.y, 0)
		nulls.x, nulls.y = append(nulls.x, []float64{nan, nan, nan, nan}), append(nulls.y, nan)
		huge.x, huge.y = append(huge.x, []float64{1e300, -1e300, math.Inf(1), math.Inf(-1)}), append(huge.y, math.Inf(-1))
	}
	tables["zero"], tables["nulls"], tables["huge"] = zero, nulls, huge
	tables["one"] = dataset{x: [][]float64{{1, 1, 1, 1}}, y: []float64{1}}
	for _, p := range []struct{ eps, delta float64 }{{1e-3, 1e-12}, {0.01, 0}, {1, 1e-5}, {1e4, 0.5}, {1e4, 0}} {
		for name, ds := range tables {
			tr := mustPlan(t, privateConfig(d, len(ds.x), p.eps, p.delta))
			m, err := tr.Train(ds.x, ds.y)
			if err != nil {
				t.Fatalf("ε=%v δ=%v %s: %v", p.eps, p.delta, name, err)
			}
			if len(m.Weights) != 1 || !finite(m.Weights[0]) || !(m.Params["clip_feature_norm"] > 0) || !(m.Params["clip_label_radius"] > 0) {
				t.Fatalf("ε=%v δ=%v %s: model %+v", p.eps, p.delta, name, m)
			}
		}
	}
}

// TestPrivateUtility: on box-loose data (features ~ N(0, 0.2²) in a box
// [−1, 1], n = 2·10⁴, ε = 1) private clipping is far better than the
// declared box and close to the non-private fit.
func TestPrivateUtility(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const d, n = 10, 20000
	beta := synthBeta(rng, d)
	mk := func(m int) dataset {
		ds := dataset{x: make([][]float64, m), y: make([]float64, m)}
		for i := range ds.x {
			ds.x[i] = make([]float64, d)
			v := beta[d] * 0.2
			for j := range ds.x[i] {
				ds.x[i][j] = 0.2 * rng.NormFloat64()
				v += 0.2 * beta[j] * ds.x[i][j] / 0.2
			}
			ds.y[i] = v + 0.05*rng.NormFloat64()
		}
		return ds
	}
	train, test := mk(n), mk(5000)
	pub := mustPlan(t, synthConfig(d, n, 1, 1e-6))
	priv := mustPlan(t, privateConfig(d, n, 1, 1e-6))
	ols := olsRMSE(t, pub, train, test)
	var rp, rq []float64
	for k := 0; k < 3; k++ {
		rp = append(rp, trainRMSE(t, pub, train, test))
		rq = append(rq, trainRMSE(t, priv, train, test))
	}
	mp, mq := slices.Min(rp), slices.Max(rq)
	if !(mq-ols < 0.25*(mp-ols)) || !(mq < 1.02*ols) {
		t.Fatalf("private %v vs public %v, OLS %v", rq, rp, ols)
	}
	t.Logf("OLS %.4f, public %v, private %v", ols, rp, rq)
}

// auditClipTrainer is a private plan at the audits' (2, 10⁻²) whose
// quantile grids have 5 points (the mechanism with a coarser public grid;
// report-noisy-max's guarantee does not depend on K), to keep the audit
// fast.
func auditClipTrainer(t testing.TB) *Trainer {
	tr := mustPlan(t, privateConfig(3, 2, auditEps, auditDelta))
	p := tr.priv
	var err error
	if p.norm, err = agg.NewQuantile(p.norm.Lo, p.norm.Hi, NormQuantile, p.epsNorm, 5); err != nil {
		t.Fatal(err)
	}
	if p.radius, err = agg.NewQuantile(p.radius.Lo, p.radius.Hi, LabelQuantile, p.epsRad, 5); err != nil {
		t.Fatal(err)
	}
	return tr
}

// exactClip is the broken variant: radii from the non-private quantiles.
func exactClip(tr *Trainer, ds dataset) *privClip {
	d := len(tr.cfg.Features)
	norms := make([]float64, len(ds.x))
	ys := make([]float64, len(ds.y))
	row := make([]float64, tr.f)
	for i, x := range ds.x {
		tr.prep.Transform(row, x)
		var s float64
		for _, v := range row[:d] {
			s += v * v
		}
		norms[i] = math.Sqrt(s) / row[tr.f-1]
		ys[i] = labelUnit(ds.y[i], tr.cfg.LabelLo, tr.cfg.LabelHi)
	}
	q := func(v []float64, p float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		return s[max(int(math.Round(p*float64(len(s))))-1, 0)]
	}
	dev := make([]float64, len(ys))
	for i, v := range ys {
		dev[i] = math.Abs(v)
	}
	return newPrivClip(d, math.Max(q(norms, NormQuantile), 1e-6), math.Max(q(dev, LabelQuantile), 1e-6))
}

// clipPair: two-row tables; D has a small row and a box-corner row with
// the top label, D′ has the corner replaced by another small row with the
// bottom label. The exact 0.75-quantile of the norm (the larger of two) is
// √3 on D and ≈ 0.02 on D′.
func clipPair() (dataset, dataset) {
	small := []float64{0.01, 0.01, 0.01}
	return dataset{x: [][]float64{small, {1, 1, 1}}, y: []float64{0, 1}},
		dataset{x: [][]float64{small, {0.01, -0.01, 0.01}}, y: []float64{0, -1}}
}

// privLLR runs the whole two-stage release on D or D′ (the two quantiles
// by report-noisy-max, the private pass with the released radii, the
// AdaSSP releases) and returns a statistic of the full output: the log
// likelihood ratio of the Gaussian stage given the released radii (its
// most powerful test) plus 4·[C ≥ 0.1], a bounded term that sees the
// feature radius. Any function of the output is a valid audit statistic.
// With exact set, the radii are the non-private quantiles (the must-fail
// variant). The statistics of D and D′ under each released clip are cached
// (the grids are finite).
func privLLR(t testing.TB, tr *Trainer, exact bool) audit.Sampler {
	d0, d1 := clipPair()
	type pair struct{ s0, s1 stats }
	cache := map[[2]float64]pair{}
	return func(side int) float64 {
		ds := d0
		if side == 1 {
			ds = d1
		}
		var clip *privClip
		if exact {
			clip = exactClip(tr, ds)
		} else {
			var err error
			if clip, err = tr.releaseClip(ds.x, ds.y); err != nil {
				t.Fatal(err)
			}
		}
		key := [2]float64{clip.c, clip.cy}
		p, ok := cache[key]
		if !ok {
			lo, hi := tr.cfg.LabelLo, tr.cfg.LabelHi
			p = pair{sufficientStats(d0.x, d0.y, tr.prep, lo, hi, 1, clip), sufficientStats(d1.x, d1.y, tr.prep, lo, hi, 1, clip)}
			cache[key] = p
		}
		v := releaseLLR(t, tr, side, p.s0, p.s1)
		if clip.c >= 0.1 {
			v += 4
		}
		return v
	}
}

// TestAuditPrivateBoundsRelease: the two-stage release on the pair whose
// norm quantile moves most must not show ε > 2 at δ = 10⁻².
func TestAuditPrivateBoundsRelease(t *testing.T) {
	tr := auditClipTrainer(t)
	audit.RequirePass(t, privLLR(t, tr, false), auditEps, audit.Config{N: 30000, Delta: auditDelta})
}

// TestAuditPrivateBoundsExactQuantileCaught is an expected failure: radii
// from the non-private quantiles reveal the moved row.
func TestAuditPrivateBoundsExactQuantileCaught(t *testing.T) {
	tr := auditClipTrainer(t)
	audit.RequireCatch(t, privLLR(t, tr, true), auditEps, audit.Config{N: 30000, Delta: auditDelta})
}

// TestPrivateLevels: the clipping levels are the tuned ones up to
// n·ε = 10⁴ and approach 1 as 1 − tail/√(n·ε) beyond, in both modes.
func TestPrivateLevels(t *testing.T) {
	for _, c := range []struct {
		n           int
		eps         float64
		norm, label float64
	}{{1000, 1, 0.75, 0.9}, {10000, 1, 0.75, 0.9}, {1000, 10, 0.75, 0.9}, {100000, 1, 1 - 25/math.Sqrt(1e5), 1 - 10/math.Sqrt(1e5)}, {400, 1000, 1 - 25/math.Sqrt(4e5), 1 - 10/math.Sqrt(4e5)}} {
		if got := NormLevel(c.n, c.eps); math.Abs(got-c.norm) > 1e-15 {
			t.Fatalf("NormLevel(%d, %v) = %v, want %v", c.n, c.eps, got, c.norm)
		}
		if got := LabelLevel(c.n, c.eps); math.Abs(got-c.label) > 1e-15 {
			t.Fatalf("LabelLevel(%d, %v) = %v, want %v", c.n, c.eps, got, c.label)
		}
		tr := mustPlan(t, privateConfig(3, c.n, c.eps, 1e-6))
		if p := tr.Params(); p["norm_quantile_level"] != c.norm && math.Abs(p["norm_quantile_level"]-c.norm) > 1e-15 {
			t.Fatalf("plan records norm level %v, want %v", p["norm_quantile_level"], c.norm)
		}
	}
}
