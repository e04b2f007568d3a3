package linreg

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Tests of §14: the label centre, the intercept-only model and the
// unpenalised intercept of private-bounds plans.

func centreConfig(d, n int, eps, delta float64) Config {
	c := synthConfig(d, n, eps, delta)
	c.Bounds = BoundsCentre
	return c
}

// TestCentreRule: bounds=auto is the intercept-only model below
// MeanOnlyNEps, the label centre up to MinPrivateNEps, private radii (with
// the unpenalised intercept) above; the modes are recorded, need rows in
// memory, and refuse the one-pass paths with a public error.
func TestCentreRule(t *testing.T) {
	for _, c := range []struct {
		n    int
		eps  float64
		want string
	}{{299, 1, BoundsMean}, {300, 1, BoundsCentre}, {353, 0.1, BoundsMean}, {405, 1, BoundsCentre}, {999, 1, BoundsCentre},
		{1000, 1, BoundsPrivate}, {10000, 0.02, BoundsMean}} {
		cfg := synthConfig(3, c.n, c.eps, 1e-6)
		cfg.Bounds = BoundsAuto
		tr := mustPlan(t, cfg)
		if got := tr.Config().Bounds; got != c.want {
			t.Fatalf("n=%d ε=%v: bounds %q, want %q", c.n, c.eps, got, c.want)
		}
		if tr.PrivateBounds() != (c.want != BoundsPublic) || tr.centredSolve != (c.want == BoundsPrivate) {
			t.Fatalf("n=%d ε=%v: PrivateBounds %v centredSolve %v", c.n, c.eps, tr.PrivateBounds(), tr.centredSolve)
		}
		if c.want == BoundsPublic {
			continue
		}
		if _, err := tr.TrainStream(func(func([]float64) error) error { return nil }); !errors.Is(err, errNeedsRows) {
			t.Fatalf("TrainStream on %q: %v", c.want, err)
		}
		if _, err := tr.TrainSums(make([]float64, 16), make([]float64, 4), c.n); !errors.Is(err, errNeedsRows) {
			t.Fatalf("TrainSums on %q: %v", c.want, err)
		}
	}
	// δ = 0: the intercept-only model up to n·ε = 1000, private radii
	// without the unpenalised intercept above.
	for _, c := range []struct {
		n    int
		want string
	}{{999, BoundsMean}, {1000, BoundsPrivate}} {
		cfg := synthConfig(3, c.n, 1, 0)
		cfg.Bounds = BoundsAuto
		if tr := mustPlan(t, cfg); tr.Config().Bounds != c.want || tr.centredSolve {
			t.Fatalf("δ = 0, n=%d: bounds %q, centredSolve %v", c.n, tr.Config().Bounds, tr.centredSolve)
		}
	}
	// bounds=public is kept as given.
	cfg := synthConfig(3, 100, 1, 1e-6)
	cfg.Bounds = BoundsPublic
	if tr := mustPlan(t, cfg); tr.PrivateBounds() || tr.centredSolve {
		t.Fatal("bounds=public planned with a private map")
	}
	// A re-plan for another n with the recorded Config keeps the events
	// (the centre's ε is recorded, not recomputed from n).
	cfg = synthConfig(3, 400, 1, 1e-6)
	cfg.Bounds = BoundsAuto
	first := mustPlan(t, cfg)
	re := first.Config()
	re.N = 450
	if a, b := first.Events(), mustPlan(t, re).Events(); len(a) != len(b) || a[0] != b[0] || a[1] != b[1] {
		t.Fatalf("re-plan changed the events: %+v → %+v", a, b)
	}
	// Re-planning with the recorded mode gives the same plan (the SQL
	// adapter re-plans with tr.Config().Bounds when n changed).
	for _, b := range []string{BoundsCentre, BoundsMean} {
		cfg := synthConfig(3, 500, 1, 1e-6)
		cfg.Bounds = b
		if tr := mustPlan(t, cfg); tr.Config().Bounds != b {
			t.Fatalf("bounds=%q planned as %q", b, tr.Config().Bounds)
		}
	}
}

// TestCentreScales: the centre is DP_MEAN of y′ ∈ [−1, 1] at ε_m =
// min(CentreShare·ε, CentreNEps/n) (Laplace scale 2·SumSlack(n)/(n·ε_m)), AdaSSP gets exactly a
// public plan's calibration at ε − ε_m, and the events add up to (ε, δ);
// the intercept-only model is one Laplace event of ε.
func TestCentreScales(t *testing.T) {
	for _, c := range []struct {
		d, n       int
		eps, delta float64
	}{{10, 500, 1, 1e-6}, {3, 300, 2, 0}, {50, 999, 1, 1e-5}} {
		tr := mustPlan(t, centreConfig(c.d, c.n, c.eps, c.delta))
		em := centreShare(c.n, c.eps, CentreShare, CentreNEps) * c.eps
		if tr.centre.Epsilon != em || !near(tr.centre.Scale(), 2*mechanism.SumSlack(int64(c.n))/(float64(c.n)*em), 1e-15) {
			t.Fatalf("centre ε %v scale %v", tr.centre.Epsilon, tr.centre.Scale())
		}
		ev := tr.Events()
		if ev[0] != (budget.Event{Kind: budget.Laplace, Epsilon: em}) {
			t.Fatalf("first event %+v, want Laplace ε = %v", ev[0], em)
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
			t.Fatalf("events %+v add to (%v, %v), want (%v, %v)", ev, sum, sumD, c.eps, c.delta)
		}
		ref := mustPlan(t, synthConfig(c.d, c.n, c.eps-em, c.delta))
		if c.delta > 0 {
			if *tr.gauss != *ref.gauss || len(ev) != 2 || ev[1] != ref.Events()[0] {
				t.Fatalf("AdaSSP stage %+v, want the public plan at ε = %v: %+v", tr.gauss, c.eps-em, ref.gauss)
			}
		} else if *tr.lap != *ref.lap || len(ev) != 1+len(ref.Events()) {
			t.Fatalf("AdaSSP stage %+v, want %+v", tr.lap, ref.lap)
		}
		if tr.noiseNorm != ref.noiseNorm || tr.margin != ref.margin {
			t.Fatalf("E, margin %v %v, want %v %v", tr.noiseNorm, tr.margin, ref.noiseNorm, ref.margin)
		}
		cfg := synthConfig(c.d, c.n, c.eps, c.delta)
		cfg.Bounds = BoundsMean
		mo := mustPlan(t, cfg)
		if ev := mo.Events(); len(ev) != 1 || ev[0] != (budget.Event{Kind: budget.Laplace, Epsilon: c.eps}) || mo.gauss != nil || mo.lap != nil {
			t.Fatalf("intercept-only events %+v", ev)
		}
	}
}

// TestCentreRowsInBall: whatever the released centre m ∈ [−1, 1], the
// features are mapped exactly as the declared boxes map them and |y″| ≤ 1,
// so §3's sensitivities and §5's rounding hold unchanged.
func TestCentreRowsInBall(t *testing.T) {
	const d = 4
	tr := mustPlan(t, centreConfig(d, 10, 1, 1e-6))
	nan := math.NaN()
	for _, m := range []float64{-1, -0.3, 0, 0.7, 1, math.Nextafter(1, 0)} {
		for _, rescale := range []bool{false, true} {
			clip := newCentreClip(d, m, rescale)
			for _, y := range []float64{1, -1, nan, 1e300, -1e300, math.Inf(1), math.Inf(-1), 0.3} {
				x := []float64{1, -1, nan, 0.2}
				row, yv := clipRow(tr, clip, x, y)
				want := make([]float64, tr.f)
				tr.prep.Transform(want, x)
				for j := range row {
					if row[j] != want[j] {
						t.Fatalf("m=%v: feature %d mapped to %v, want %v", m, j, row[j], want[j])
					}
				}
				if !(math.Abs(yv) <= 1) {
					t.Fatalf("m=%v y=%v: y″ = %v", m, y, yv)
				}
			}
		}
	}
}

// TestCentreAdversarialNeighbours: neighbouring tables through the real
// centred pass (corner rows with labels at either bound, NULL rows) move
// the Gaussian releases by at most J(1, Kappa)·κ̂⁴ for every centre, and
// the pairs come close to J (a centre makes a label flip at most as large
// as without it: |y″| ≤ 1 either way).
func TestCentreAdversarialNeighbours(t *testing.T) {
	const d = 3
	tr := mustPlan(t, centreConfig(d, 4, 1, 1e-6))
	bound := jointA(Kappa) * math.Pow(kappaHat, 4)
	base := dataset{x: [][]float64{{0.1, 0.2, -0.1}, {0.2, 0, 0.1}, {-0.1, 0.1, 0}, {0, -0.2, 0.2}}, y: []float64{0.1, -0.2, 0, 0.1}}
	worst := 0.0
	for _, m := range []float64{-1, -0.4, 0, 0.5, 1} {
		clip := newCentreClip(d, m, false)
		rows := cornerRows(d)
		for _, r := range rows {
			for _, r0 := range rows {
				b, nb := replaceRow(base, r0), replaceRow(base, r)
				sb := sufficientStats(b.x, b.y, tr.prep, -1, 1, 1, clip)
				sn := sufficientStats(nb.x, nb.y, tr.prep, -1, 1, 1, clip)
				v := sqDist(packA(sb.a, tr.f, true), packA(sn.a, tr.f, true)) + Kappa*sqDist(sb.c, sn.c)
				if v > bound {
					t.Fatalf("m=%v: rows %v → %v move the releases by %v > J = %v", m, r0, r, v, bound)
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

// TestCentreFold: the folded weights predict, on the public scaling,
// clip(m + C_y·θᵀx, −1, 1) (C_y = 1, or 1 + |m| when rescaled).
func TestCentreFold(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const d = 5
	tr := mustPlan(t, centreConfig(d, 10, 1, 1e-6))
	for _, rescale := range []bool{false, true} {
		for trial := 0; trial < 50; trial++ {
			m := 2*rng.Float64() - 1
			clip := newCentreClip(d, m, rescale)
			theta := make([]float64, d+1)
			for j := range theta {
				theta[j] = 0.3 * rng.NormFloat64()
			}
			model := &mechanism.Model{Kind: mechanism.KindLinReg, Features: tr.cfg.Features, LabelLo: -1, LabelHi: 1, Scaler: tr.scaler, Weights: [][]float64{clip.fold(theta)}}
			x := randBall(rng, d, 0.9)
			row, _ := clipRow(tr, clip, x, 0)
			var dot float64
			for j, v := range row {
				dot += theta[j] * v
			}
			want := mechanism.Clip(m+clip.cy*dot, -1, 1)
			p, err := model.Predict(x)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(p.Value-want) > 1e-12 {
				t.Fatalf("prediction %v, want %v", p.Value, want)
			}
		}
	}
}

// TestCentreTrainNeverFails: degenerate tables give a finite model and no
// error in both §14 modes, at extreme ε and δ; the intercept-only model has
// zero slopes and predicts its released centre.
func TestCentreTrainNeverFails(t *testing.T) {
	const d = 4
	nan := math.NaN()
	zero, nulls, huge := dataset{}, dataset{}, dataset{}
	for i := 0; i < 40; i++ {
		zero.x, zero.y = append(zero.x, []float64{0, 0, 0, 0}), append(zero.y, 0)
		nulls.x, nulls.y = append(nulls.x, []float64{nan, nan, nan, nan}), append(nulls.y, nan)
		huge.x, huge.y = append(huge.x, []float64{1e300, -1e300, math.Inf(1), math.Inf(-1)}), append(huge.y, math.Inf(-1))
	}
	tables := map[string]dataset{"zero": zero, "nulls": nulls, "huge": huge, "one": {x: [][]float64{{1, 1, 1, 1}}, y: []float64{1}}}
	for _, b := range []string{BoundsCentre, BoundsMean} {
		for _, p := range []struct{ eps, delta float64 }{{1e-3, 1e-12}, {0.01, 0}, {1, 1e-5}, {1e4, 0.5}, {1e4, 0}} {
			for name, ds := range tables {
				cfg := synthConfig(d, len(ds.x), p.eps, p.delta)
				cfg.Bounds = b
				tr := mustPlan(t, cfg)
				m, err := tr.Train(ds.x, ds.y)
				if err != nil {
					t.Fatalf("%s ε=%v δ=%v %s: %v", b, p.eps, p.delta, name, err)
				}
				if len(m.Weights) != 1 || !finite(m.Weights[0]) || math.Abs(m.Params["label_centre_unit"]) > 1 {
					t.Fatalf("%s ε=%v δ=%v %s: model %+v", b, p.eps, p.delta, name, m)
				}
				if b == BoundsMean {
					pr, err := m.Predict([]float64{0.3, -0.2, 0.9, nan})
					if err != nil {
						t.Fatal(err)
					}
					if math.Abs(pr.Value-m.Params["label_centre_value"]) > 1e-12 {
						t.Fatalf("intercept-only model predicts %v, centre %v", pr.Value, m.Params["label_centre_value"])
					}
				}
			}
		}
	}
}

// TestCentredSolve: the unpenalised-intercept solve of private plans is a
// post-processing that, on (nearly) noise-free statistics, recovers the
// least-squares fit with intercept, and on an off-centre label the private
// model is no longer pulled to the label midpoint.
func TestCentredSolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const d, n = 5, 4000
	beta := synthBeta(rng, d)
	ds := synthLinear(rng, beta, n, 0.05)
	for i := range ds.y {
		ds.y[i] = 0.6 + 0.3*ds.y[i] // label mean 0.6 in [−1, 1]
	}
	tr := mustPlan(t, privateConfig(d, n, 1, 1e-6))
	clip := newPrivClip(d, math.Sqrt(d), 1)
	st := sufficientStats(ds.x, ds.y, tr.prep, -1, 1, 1, clip)
	a := unpackA(packA(st.a, tr.f, true), tr.f, true, tr.interceptEntry())
	// Negligible noise scales and floor: the exact solve (the shrinkage of
	// ȳ and x̄ uses the plan's noise scales).
	g := *tr.gauss
	g.sigmaA, g.sigmaC = 1e-12, 1e-12
	tr.gauss, tr.noiseNorm = &g, 1e-9
	theta, _ := tr.estimateCentred(noisy{a: a, c: st.c, q: 1e9})
	ref := solveFloor(a, st.c, 1e-9)
	for j := range theta {
		if math.Abs(theta[j]-ref[j]) > 1e-6*(1+math.Abs(ref[j])) {
			t.Fatalf("θ = %v, least squares %v", theta, ref)
		}
	}
	// With the plan's noise: the released model's mean prediction is near
	// the label mean 0.6, not the midpoint 0.
	tr = mustPlan(t, privateConfig(d, n, 0.3, 1e-6))
	m, err := tr.Train(ds.x, ds.y)
	if err != nil {
		t.Fatal(err)
	}
	var s float64
	for _, x := range ds.x[:500] {
		p, err := m.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		s += p.Value
	}
	if mu := s / 500; math.Abs(mu-0.6) > 0.1 {
		t.Fatalf("mean prediction %v, label mean 0.6", mu)
	}
}

// auditCentrePair: two-row tables (d = 3) whose label means differ by the
// most a row can move them (labels 1 against −1) and whose second rows are
// a box corner against a small row.
func auditCentrePair() (dataset, dataset) {
	small := []float64{0.01, 0.01, 0.01}
	return dataset{x: [][]float64{small, {1, 1, 1}}, y: []float64{0, 1}},
		dataset{x: [][]float64{small, {0.01, -0.01, 0.01}}, y: []float64{0, -1}}
}

// centreLLR runs the whole §14 release on D or D′ (the Laplace centre, the
// centred pass, AdaSSP's releases) and returns a statistic of the output:
// the Gaussian stage's log-likelihood ratio given the released centre plus
// 3·[m̃ ≥ 0], a bounded term that sees the centre. With exact, the centre
// is the non-private mean (the must-fail variant).
func centreLLR(t testing.TB, tr *Trainer, exact bool) audit.Sampler {
	d0, d1 := auditCentrePair()
	return func(side int) float64 {
		ds := d0
		if side == 1 {
			ds = d1
		}
		var clip *privClip
		if exact {
			var s float64
			for _, y := range ds.y {
				s += labelUnit(y, tr.cfg.LabelLo, tr.cfg.LabelHi)
			}
			clip = newCentreClip(3, s/float64(len(ds.y)), tr.centreRescale)
		} else {
			var err error
			if clip, err = tr.releaseCentre(ds.y); err != nil {
				t.Fatal(err)
			}
		}
		lo, hi := tr.cfg.LabelLo, tr.cfg.LabelHi
		s0 := sufficientStats(d0.x, d0.y, tr.prep, lo, hi, 1, clip)
		s1 := sufficientStats(d1.x, d1.y, tr.prep, lo, hi, 1, clip)
		v := releaseLLR(t, tr, side, s0, s1)
		if clip.centre >= 0 {
			v += 3
		}
		return v
	}
}

// TestAuditCentreRelease: the §14 release on the pair whose label mean
// moves most must not show ε > 2 at δ = 10⁻² (the plan: Laplace ε_m = ½,
// AdaSSP at (1.5, 10⁻²)).
func TestAuditCentreRelease(t *testing.T) {
	tr := mustPlan(t, centreConfig(3, 2, auditEps, auditDelta))
	audit.RequirePass(t, centreLLR(t, tr, false), auditEps, audit.Config{N: 30000, Delta: auditDelta})
}

// TestAuditCentreExactCaught is an expected failure: a centre taken from
// the non-private mean reveals the moved row.
func TestAuditCentreExactCaught(t *testing.T) {
	tr := mustPlan(t, centreConfig(3, 2, auditEps, auditDelta))
	audit.RequireCatch(t, centreLLR(t, tr, true), auditEps, audit.Config{N: 8000, Delta: auditDelta})
}

// TestAuditMeanOnly: the intercept-only model is DP_MEAN of y′ at ε: on the
// pair above its released centre passes at ε (δ = 0), and the same release
// with the Laplace scale halved is caught.
func TestAuditMeanOnly(t *testing.T) {
	cfg := synthConfig(3, 2, 1, 0)
	cfg.Bounds = BoundsMean
	tr := mustPlan(t, cfg)
	d0, d1 := auditCentrePair()
	sampler := func(halve bool) audit.Sampler {
		return func(side int) float64 {
			ds := d0
			if side == 1 {
				ds = d1
			}
			if halve {
				var s float64
				for _, y := range ds.y {
					s += labelUnit(y, -1, 1)
				}
				v, err := noise.AddLaplace(s/2, tr.centre.Scale()/2)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			m, err := tr.Train(ds.x, ds.y)
			if err != nil {
				t.Fatal(err)
			}
			return m.Params["label_centre_unit"]
		}
	}
	audit.RequirePass(t, sampler(false), 1, audit.Config{N: 30000})
	audit.RequireCatch(t, sampler(true), 1, audit.Config{N: 30000})
}
