package lsq

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
)

// Exact scales of the centring step: the label mean gets ρε with the
// Laplace scale of mechanism.Mean, the method the rest; the events add up
// to (ε, δ) and validate.
func TestCenterScales(t *testing.T) {
	for _, method := range []string{MethodOutput, MethodObjective} {
		cfg := synthConfig(3, 1000, 2, 1e-6)
		cfg.Method, cfg.Center = method, 0.25
		tr := mustPlan(t, cfg)
		want := (cfg.LabelHi - cfg.LabelLo) / 1000 * mechanism.SumSlack(1000) / 0.5
		if tr.center == nil || !near(tr.center.mean.Scale(), want, 1e-15) || tr.center.mean.Epsilon != 0.5 {
			t.Fatalf("%s: mean plan %+v, want scale %v at ε = 0.5", method, tr.center, want)
		}
		var se, sd float64
		for _, ev := range tr.Events() {
			if err := ev.Validate(); err != nil {
				t.Fatal(err)
			}
			se, sd = se+ev.Epsilon, sd+ev.Delta
		}
		last := tr.Events()[len(tr.Events())-1]
		if last.Kind != budget.Laplace || last.Epsilon != 0.5 || !near(se, 2, 1e-12) || !near(sd, 1e-6, 1e-12) {
			t.Fatalf("%s: events %+v (sum %v, %v)", method, tr.Events(), se, sd)
		}
		if tr.Params()["epsilon_regression"] != 1.5 {
			t.Fatalf("%s: the method got ε = %v, want 1.5", method, tr.Params()["epsilon_regression"])
		}
	}
	// Bad shares and kernels are refused by Plan.
	for _, c := range []float64{1, 1.5, -0.5, math.NaN()} {
		cfg := synthConfig(3, 1000, 1, 0)
		cfg.Center = c
		if _, err := Plan(cfg); err == nil {
			t.Fatalf("center = %v accepted", c)
		}
	}
	cfg := synthConfig(3, 1000, 1, 0)
	cfg.Kernel, cfg.Center = KernelRBF, 0.25
	if _, err := Plan(cfg); err == nil {
		t.Fatal("centring accepted with the rbf kernel")
	}
}

// The default call centres exactly when the label mean's Laplace scale is
// small (public n, ε), and the centred model predicts in label units.
func TestCenterDefaultAndAddBack(t *testing.T) {
	for _, c := range []struct {
		n, f       int
		eps, delta float64
		want       float64
	}{
		{400, 11, 0.1, 0, CenterOff},                // Laplace scale 2/(400·¼·0.1) = 0.2 > 0.05
		{405, 11, 1, 0, CenterShareLaplace},         // 2/(405·¼) ≈ 0.0198
		{405, 11, 1, 1e-6, CenterShareOutput},       // t = 405·0.9/121 ≈ 3 < 15
		{100000, 15, 1, 1e-6, CenterShareObjective}, // t = 10⁵·0.9/225 = 400
		{2017, 11, 1, 1e-6, CenterShareObjective},   // t = 2017·0.9/121 ≈ 15.003
		{2016, 11, 1, 1e-6, CenterShareOutput},      // t ≈ 14.995
	} {
		if got := defaultCenter(c.n, c.f, c.eps, c.delta); got != c.want {
			t.Fatalf("n=%d F=%d ε=%v δ=%v: center %v, want %v", c.n, c.f, c.eps, c.delta, got, c.want)
		}
	}
	// Labels far from the midpoint of a wide declared range: y = −0.7 ±
	// small. With ε large the centred release predicts near −0.7.
	rng := rand.New(rand.NewPCG(3, 4))
	n := 2000
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = []float64{2*rng.Float64() - 1, 2*rng.Float64() - 1}
		y[i] = -0.7 + 0.05*rng.NormFloat64()
	}
	cfg := synthConfig(2, n, 1e4, 0)
	cfg.Method, cfg.Lambda, cfg.Center = MethodOutput, 10, 0.5
	tr := mustPlan(t, cfg)
	m, err := tr.Train(x, y)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Predict([]float64{0.3, -0.2})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(p.Value+0.7) > 0.05 || math.Abs(m.Params["label_mean"]+0.7) > 0.01 {
		t.Fatalf("centred prediction %v, label mean %v; want ≈ −0.7", p.Value, m.Params["label_mean"])
	}
	// Streaming gives the same release law: check it runs two passes and
	// agrees on the mean to within the noise.
	scan := func(emit func([]float64) error) error {
		for i := range x {
			if err := emit(append(append([]float64(nil), x[i]...), y[i])); err != nil {
				return err
			}
		}
		return nil
	}
	ms, err := tr.TrainStream(scan)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(ms.Params["label_mean"]+0.7) > 0.01 {
		t.Fatalf("stream label mean %v", ms.Params["label_mean"])
	}
	// Without centring the same strongly regularised model sits near the
	// midpoint 0 (what centring repairs).
	cfg.Center = CenterOff
	m0, err := mustPlan(t, cfg).Train(x, y)
	if err != nil {
		t.Fatal(err)
	}
	p0, _ := m0.Predict([]float64{0.3, -0.2})
	if !(math.Abs(p0.Value+0.7) > 0.2) {
		t.Fatalf("uncentred prediction %v unexpectedly near the mean", p0.Value)
	}
}

// Sensitivity: given the released mean, the method runs on labels shifted
// and clipped back into the public range, so the pair's shifted labels
// still differ in one row only and stay in [−1, 1]; the output method's
// ‖w − w′‖ stays within Δ₂ for every shift (adversarial flip pairs).
func TestCenterShiftKeepsSensitivity(t *testing.T) {
	cfg := synthConfig(1, 20, 1, 0)
	cfg.Method, cfg.Lambda = MethodOutput, 1
	tr := mustPlan(t, cfg)
	x, y, x2, y2 := labelFlipPair()
	for _, shift := range []float64{-1.9, -1, -0.3, 0, 0.5, 1, 1.9} {
		ys, ys2 := make([]float64, len(y)), make([]float64, len(y2))
		for i := range y {
			ys[i], ys2[i] = y[i]-shift, y2[i]-shift
			if u := tr.lm.unit(ys[i]); u < -1 || u > 1 {
				t.Fatalf("shifted label %v maps outside [−1, 1]", u)
			}
		}
		d := 0.0
		w0, w1 := mustFit(t, tr, x, ys), mustFit(t, tr, x2, ys2)
		for j := range w0 {
			d += (w0[j] - w1[j]) * (w0[j] - w1[j])
		}
		if math.Sqrt(d) > tr.out.delta2 {
			t.Fatalf("shift %v: ‖w − w′‖ = %v > Δ₂ = %v", shift, math.Sqrt(d), tr.out.delta2)
		}
	}
}

// Audit of the centred release on the label-flip pair. The released mean
// (Params["label_mean"]) alone is a ρε-DP release: claimed at ρε it
// passes, and with the noise of a 4ρε mean it is caught. The whole release
// (a prediction of the final model, which depends on both steps) passes at
// ε.
func TestCenterAudit(t *testing.T) {
	const eps, rho = 1, 0.5
	cfg := synthConfig(1, 20, eps, 0)
	cfg.Method, cfg.Lambda, cfg.Center = MethodOutput, 1, rho
	tr := mustPlan(t, cfg)
	x, y, x2, y2 := labelFlipPair()
	mean := func(tr *Trainer) audit.Sampler {
		return func(nb int) float64 { return trainNeighbour(t, tr, nb, x, y, x2, y2).Params["label_mean"] }
	}
	cfgA := audit.Config{N: 30000}
	audit.RequirePass(t, mean(tr), rho*eps, cfgA)
	broken := mustPlan(t, cfg)
	broken.center.mean.Epsilon = 4 * rho * eps
	audit.RequireCatch(t, mean(broken), rho*eps, cfgA)
	pred := func(nb int) float64 {
		m := trainNeighbour(t, tr, nb, x, y, x2, y2)
		p, err := m.Predict([]float64{-1})
		if err != nil {
			t.Fatal(err)
		}
		return p.Value
	}
	audit.RequirePass(t, pred, eps, cfgA)
}
