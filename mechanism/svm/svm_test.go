package svm

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
)

// cfgD returns a valid Config with d features in [−1, 1].
func cfgD(d, n int, eps float64, kernel string, classes ...string) Config {
	if len(classes) == 0 {
		classes = []string{"neg", "pos"}
	}
	cfg := Config{Kernel: kernel, Epsilon: eps, N: n, Label: "y", Classes: classes}
	for j := 0; j < d; j++ {
		cfg.Features = append(cfg.Features, fmt.Sprintf("x%d", j))
		cfg.Lo = append(cfg.Lo, -1)
		cfg.Hi = append(cfg.Hi, 1)
	}
	return cfg
}

func mustPlan(t testing.TB, cfg Config) *Trainer {
	t.Helper()
	tr, err := Plan(cfg)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	return tr
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-12*math.Abs(want) }

// TestScaleByHand checks τ, Δ₂ and λ against numbers computed by hand from
// τ = 2η²(LCκ/n)², Δ₂ = 4LCκ/n + 2√(2τ) = 4(1+η)LCκ/n and λ = √F·Δ₂/ε_k,
// η = 1/8, κ = L = 1.
func TestScaleByHand(t *testing.T) {
	cases := []struct {
		name               string
		cfg                Config
		f, k               int
		tau, delta2, scale float64
	}{
		// d = 15 → F = 16 with the intercept; C = 1, n = 1000, ε = 1:
		// τ = 2/64·10⁻⁶ = 3.125e-8, Δ₂ = 0.004 + 2√(6.25e-8) = 0.0045,
		// λ = 4·0.0045 = 0.018.
		{"linear", func() Config { c := cfgD(15, 1000, 1, KernelLinear); c.C = 1; return c }(), 16, 1, 3.125e-8, 0.0045, 0.018},
		// d̂ = 128 → F = 256, C = 1, n = 1000, ε = 2: λ = 16·0.0045/2 = 0.036
		// (= 2^2.5·(1+η)·√128/2000).
		{"rbf", func() Config { c := cfgD(5, 1000, 2, KernelRBF); c.Dim, c.C = 128, 1; return c }(), 256, 1, 3.125e-8, 0.0045, 0.036},
		// Default d̂ = 256 → F = 512, C = 10, n = 500, ε = 0.5:
		// τ = 2/64·(0.02)² = 1.25e-5, Δ₂ = 4.5·0.02 = 0.09,
		// λ = √512·0.09/0.5 = 4.0729350596...
		{"laplacian", func() Config { c := cfgD(3, 500, 0.5, KernelLaplacian); c.C = 10; return c }(), 512, 1, 1.25e-5, 0.09, math.Sqrt(512) * 0.18},
		// d̂ = 8 → F = 16, logistic (L = 1), C = 2, n = 100, ε = 1:
		// τ = 2/64·(0.02)² = 1.25e-5, Δ₂ = 0.09, λ = 0.36.
		{"cauchy-logistic", func() Config { c := cfgD(2, 100, 1, KernelCauchy); c.Dim, c.C, c.Loss = 8, 2, LossLogistic; return c }(), 16, 1, 1.25e-5, 0.09, 0.36},
		// Four classes, one-vs-rest: ε_k = 2/4 = 0.5; d = 3 → F = 4, huber,
		// C = 1, n = 200: Δ₂ = 4.5/200 = 0.0225, λ = 2·0.0225/0.5 = 0.09.
		{"ovr-huber", func() Config {
			c := cfgD(3, 200, 2, KernelLinear, "a", "b", "c", "d")
			c.Loss, c.C = LossHuber, 1
			return c
		}(), 4, 4, 2.0 / 64 * 0.005 * 0.005, 0.0225, 0.09},
		// Huge n: the target 2/64·10⁻¹⁴ is below the floor 2⁻⁴⁴·C, so
		// τ = 2⁻⁴⁴ and Δ₂ = 4·10⁻⁷ + 2√(2⁻⁴³) = 4e-7 + 2^(−20.5);
		// d = 1 → F = 2.
		{"floor", func() Config { c := cfgD(1, 10_000_000, 1, KernelLinear); c.C = 1; return c }(), 2, 1, 0x1p-44, 4e-7 + 0x1p-21*math.Sqrt2, math.Sqrt2 * (4e-7 + 0x1p-21*math.Sqrt2)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := mustPlan(t, c.cfg)
			if tr.Dim() != c.f || tr.Models() != c.k {
				t.Fatalf("F = %d, K = %d; want %d, %d", tr.Dim(), tr.Models(), c.f, c.k)
			}
			if !near(tr.Tolerance(), c.tau) || !near(tr.Sensitivity(), c.delta2) || !near(tr.Scale(), c.scale) {
				t.Fatalf("τ, Δ₂, λ = %v, %v, %v; want %v, %v, %v", tr.Tolerance(), tr.Sensitivity(), tr.Scale(), c.tau, c.delta2, c.scale)
			}
		})
	}
}

// TestScaleMatchesPaper checks that λ/(1+η) is exactly the paper's
// 4LCκ√F/(εn) (Theorem 7) and 2^2.5·LC√d̂/(εn) (Corollary 9) whenever τ is
// not floored (the only change is the optimisation-error share η), and
// strictly larger when it is.
func TestScaleMatchesPaper(t *testing.T) {
	check := func(name string, got, paper float64, floored bool) {
		t.Helper()
		if floored && !(got > paper) || !floored && !near(got, paper) {
			t.Errorf("%s: λ/(1+η) = %v, paper %v (τ floored: %v)", name, got, paper, floored)
		}
	}
	floors := 0
	for _, n := range []int{50, 569, 10_000, 1_000_000} {
		for _, c := range []float64{0.5, 1, 100} {
			for _, eps := range []float64{0.1, 1, 10} {
				floored := 2*Eta*Eta*(c/float64(n))*(c/float64(n)) < TauFloor*c
				if floored {
					floors++
				}
				lin := cfgD(30, n, eps, KernelLinear)
				lin.C = c
				tl := mustPlan(t, lin)
				check(fmt.Sprintf("linear n=%d C=%v ε=%v", n, c, eps), tl.Scale()/(1+Eta), 4*c*math.Sqrt(31)/(eps*float64(n)), floored)
				rbf := cfgD(30, n, eps, KernelRBF)
				rbf.C, rbf.Dim = c, 100
				tk := mustPlan(t, rbf)
				check(fmt.Sprintf("rbf n=%d C=%v ε=%v", n, c, eps), tk.Scale()/(1+Eta), math.Pow(2, 2.5)*c*math.Sqrt(100)/(eps*float64(n)), floored)
			}
		}
	}
	if floors == 0 {
		t.Fatal("no case exercised the τ floor")
	}
}

func TestEvents(t *testing.T) {
	bin := mustPlan(t, cfgD(2, 10, 0.7, KernelLinear))
	if ev := bin.Events(); len(ev) != 1 || ev[0] != (budget.Event{Kind: budget.Laplace, Epsilon: 0.7}) {
		t.Fatalf("binary events %+v", ev)
	}
	ovr := mustPlan(t, cfgD(2, 10, 1.5, KernelRBF, "a", "b", "c"))
	ev := ovr.Events()
	var sum float64
	for _, e := range ev {
		if e.Kind != budget.Laplace || e.Delta != 0 || !near(e.Epsilon, 0.5) {
			t.Fatalf("one-vs-rest event %+v", e)
		}
		sum += e.Epsilon
	}
	if len(ev) != 3 || !near(sum, 1.5) {
		t.Fatalf("one-vs-rest: %d events summing to %v, want 3 summing to 1.5", len(ev), sum)
	}
}

func TestPlanDefaults(t *testing.T) {
	tr := mustPlan(t, cfgD(4, 100, 1, ""))
	c := tr.Config()
	if c.Kernel != KernelLinear || c.Loss != LossHinge || c.C != DefaultC || c.Dim != 0 || c.Gamma != 0 || c.HuberH != 0 {
		t.Fatalf("linear defaults: %+v", c)
	}
	cfg := cfgD(4, 100, 1, KernelRBF)
	cfg.Loss = LossHuber
	c = mustPlan(t, cfg).Config()
	if c.Dim != DefaultDim || c.Gamma != DefaultGamma || c.HuberH != DefaultHuberH || c.C != DefaultC {
		t.Fatalf("rbf/huber defaults: %+v", c)
	}
	rt := mustPlan(t, cfg)
	if rt.rff == nil || len(rt.rff.Omega) != DefaultDim || len(rt.rff.Omega[0]) != 4 || rt.rff.Gamma != DefaultGamma {
		t.Fatalf("RFF not drawn as configured")
	}
}

func TestPlanRejectsBadInput(t *testing.T) {
	mod := func(f func(*Config)) Config {
		c := cfgD(3, 100, 1, KernelRBF)
		f(&c)
		return c
	}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"unknown kernel", mod(func(c *Config) { c.Kernel = "poly" }), "unknown kernel"},
		{"unknown loss", mod(func(c *Config) { c.Loss = "squared" }), "unknown loss"},
		{"zero epsilon", mod(func(c *Config) { c.Epsilon = 0 }), "epsilon"},
		{"negative epsilon", mod(func(c *Config) { c.Epsilon = -1 }), "epsilon"},
		{"NaN epsilon", mod(func(c *Config) { c.Epsilon = math.NaN() }), "epsilon"},
		{"Inf epsilon", mod(func(c *Config) { c.Epsilon = math.Inf(1) }), "epsilon"},
		{"tiny epsilon per model", mod(func(c *Config) { c.Epsilon = 1e-9 }), "minimum"},
		{"negative C", mod(func(c *Config) { c.C = -1 }), "C must be positive"},
		{"NaN C", mod(func(c *Config) { c.C = math.NaN() }), "C must be positive"},
		{"Inf C", mod(func(c *Config) { c.C = math.Inf(1) }), "C must be positive"},
		{"negative dim", mod(func(c *Config) { c.Dim = -4 }), "dim must be in"},
		{"absurd dim", mod(func(c *Config) { c.Dim = mechanism.MaxRFFDim + 1 }), "dim must be in"},
		{"negative gamma", mod(func(c *Config) { c.Gamma = -1 }), "gamma must be positive"},
		{"NaN gamma", mod(func(c *Config) { c.Gamma = math.NaN() }), "gamma must be positive"},
		{"dim for linear", mod(func(c *Config) { c.Kernel, c.Dim = KernelLinear, 10 }), "only apply"},
		{"gamma for linear", mod(func(c *Config) { c.Kernel, c.Gamma = KernelLinear, 1 }), "only apply"},
		{"huber h for hinge", mod(func(c *Config) { c.HuberH = 0.3 }), "only applies"},
		{"negative huber h", mod(func(c *Config) { c.Loss, c.HuberH = LossHuber, -0.3 }), "half-width"},
		{"n zero", mod(func(c *Config) { c.N = 0 }), "row count"},
		{"no features", mod(func(c *Config) { c.Features, c.Lo, c.Hi = nil, nil, nil }), "no feature"},
		{"missing bounds", mod(func(c *Config) { c.Hi = c.Hi[:2] }), "bounds"},
		{"no bounds at all", mod(func(c *Config) { c.Lo, c.Hi = nil, nil }), "bounds"},
		{"inverted bounds", mod(func(c *Config) { c.Lo[1], c.Hi[1] = 2, 1 }), "lower < upper"},
		{"infinite bound", mod(func(c *Config) { c.Hi[0] = math.Inf(1) }), "finite"},
		{"NaN bound", mod(func(c *Config) { c.Lo[0] = math.NaN() }), "lower < upper"},
		{"one class", mod(func(c *Config) { c.Classes = []string{"only"} }), "at least 2 classes"},
		{"no classes", mod(func(c *Config) { c.Classes = nil }), "at least 2 classes"},
		{"duplicate class", mod(func(c *Config) { c.Classes = []string{"a", "b", "a"} }), "twice"},
		{"too large", mod(func(c *Config) { c.N, c.Dim = 1<<21, 1024 }), "exceeds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := Plan(c.cfg)
			if err == nil {
				t.Fatalf("Plan accepted %+v (λ = %v)", c.cfg, tr.Scale())
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

func TestTrainRejectsMismatchedData(t *testing.T) {
	tr := mustPlan(t, cfgD(2, 3, 1, KernelLinear))
	good := [][]float64{{0, 1}, {1, 0}, {0.5, 0.5}}
	cases := []struct {
		name string
		x    [][]float64
		y    []int
	}{
		{"too few rows", good[:2], []int{0, 1}},
		{"labels short", good, []int{0, 1}},
		{"row width", [][]float64{{0, 1}, {1}, {0.5, 0.5}}, []int{0, 1, 0}},
		{"label out of domain", good, []int{0, 2, 1}},
		{"negative label", good, []int{0, -1, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if m, err := tr.Train(c.x, c.y); err == nil {
				t.Fatalf("Train accepted bad input, returned %+v", m)
			}
		})
	}
	if _, err := tr.Train(good, []int{0, 1, 0}); err != nil {
		t.Fatalf("Train on good input: %v", err)
	}
}

// TestTrainModel checks the released model's shape and metadata, and that
// the label mapping matches mechanism.Model.Predict (Classes[1] ↦ +1).
func TestTrainModel(t *testing.T) {
	// Separable: class "pos" iff x0 > 0. ε is huge so the noise cannot flip
	// the sign of the clearly separated test points.
	n := 200
	X := make([][]float64, n)
	y := make([]int, n)
	for i := range X {
		v := -1 + 2*float64(i)/float64(n-1)
		X[i] = []float64{v, 0.3}
		if v > 0 {
			y[i] = 1
		}
	}
	for _, kernel := range []string{KernelLinear, KernelRBF} {
		cfg := cfgD(2, n, 1e6, kernel)
		cfg.C = 100
		if kernel == KernelRBF {
			cfg.Dim, cfg.Gamma = 64, 4
		}
		tr := mustPlan(t, cfg)
		m, err := tr.Train(X, y)
		if err != nil {
			t.Fatal(err)
		}
		if m.Kind != mechanism.KindSVM || m.Kernel != kernel || m.Label != "y" || len(m.Weights) != 1 || len(m.Weights[0]) != tr.Dim() {
			t.Fatalf("%s: model %+v", kernel, m)
		}
		if (m.RFF != nil) != (kernel != KernelLinear) || m.Scaler.Intercept != (kernel == KernelLinear) {
			t.Fatalf("%s: RFF %v, intercept %v", kernel, m.RFF != nil, m.Scaler.Intercept)
		}
		if m.Params["lambda"] != tr.Scale() || m.Params["epsilon"] != 1e6 || m.Params["C"] != 100 || m.Params["tau"] != tr.Tolerance() {
			t.Fatalf("%s: params %v", kernel, m.Params)
		}
		for _, c := range []struct {
			x    float64
			want string
		}{{-0.9, "neg"}, {0.9, "pos"}} {
			p, err := m.Predict([]float64{c.x, 0.3})
			if err != nil || p.Class != c.want {
				t.Fatalf("%s: Predict(%v) = %+v, %v; want %s", kernel, c.x, p, err, c.want)
			}
		}
	}
}

// TestTrainOneVsRest checks K weight vectors, class k's vector voting for k.
func TestTrainOneVsRest(t *testing.T) {
	centres := [][]float64{{-0.8, -0.8}, {0.8, -0.8}, {0, 0.8}}
	n := 300
	X := make([][]float64, n)
	y := make([]int, n)
	for i := range X {
		k := i % 3
		y[i] = k
		X[i] = []float64{centres[k][0] + 0.1*math.Sin(float64(i)), centres[k][1] + 0.1*math.Cos(float64(i))}
	}
	cfg := cfgD(2, n, 1e6, KernelLinear, "a", "b", "c")
	cfg.C = 300
	tr := mustPlan(t, cfg)
	m, err := tr.Train(X, y)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Weights) != 3 || len(m.Classes) != 3 {
		t.Fatalf("%d weight vectors for %d classes", len(m.Weights), len(m.Classes))
	}
	for k, c := range centres {
		p, err := m.Predict(c)
		if err != nil || p.Class != cfg.Classes[k] {
			t.Fatalf("Predict(centre %d) = %+v, %v", k, p, err)
		}
	}
}

// TestTrainReleasesNoise checks that two trainings on the same data differ
// (the noise is there) by about the Laplace scale.
func TestTrainReleasesNoise(t *testing.T) {
	cfg := cfgD(3, 50, 1, KernelLinear)
	tr := mustPlan(t, cfg)
	X := make([][]float64, 50)
	y := make([]int, 50)
	for i := range X {
		X[i] = []float64{math.Sin(float64(i)), math.Cos(float64(i)), 0}
		y[i] = i % 2
	}
	clean, _, err := tr.fit(X, y)
	if err != nil {
		t.Fatal(err)
	}
	var sumAbs float64
	const reps = 400
	for r := 0; r < reps; r++ {
		m, err := tr.Train(X, y)
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range m.Weights[0] {
			sumAbs += math.Abs(v - clean[0][j])
		}
	}
	// E|Laplace(λ)| = λ (up to the sampler's 1 + F·2⁻¹⁹ inflation) with
	// sd λ: the mean of 1600 draws is within 15% (6 sd) but for 2·10⁻⁹.
	mean := sumAbs / (reps * float64(tr.Dim()))
	if math.Abs(mean/tr.Scale()-1) > 0.15 {
		t.Fatalf("mean |noise| = %v, λ = %v", mean, tr.Scale())
	}
}

// TestTrainTinyTables covers n = 1, a single class present, NULLs and
// values beyond the bounds: Train must still certify and release.
func TestTrainTinyTables(t *testing.T) {
	for _, loss := range []string{LossHinge, LossLogistic, LossHuber} {
		for _, kernel := range []string{KernelLinear, KernelCauchy} {
			for _, X := range [][][]float64{
				{{0.2, -0.4}},
				{{0.2, math.NaN()}, {5, -5}, {math.Inf(-1), 0}},
			} {
				cfg := cfgD(2, len(X), 1, kernel, "a", "b", "c")
				cfg.Loss = loss
				if kernel != KernelLinear {
					cfg.Dim = 8
				}
				tr := mustPlan(t, cfg)
				y := make([]int, len(X)) // every row in class "a"
				m, err := tr.Train(X, y)
				if err != nil {
					t.Fatalf("%s/%s n=%d: %v", kernel, loss, len(X), err)
				}
				if len(m.Weights) != 3 {
					t.Fatalf("%s/%s: %d weight vectors", kernel, loss, len(m.Weights))
				}
				for _, w := range m.Weights {
					for _, v := range w {
						if math.IsNaN(v) || math.IsInf(v, 0) {
							t.Fatalf("%s/%s: non-finite weight", kernel, loss)
						}
					}
				}
			}
		}
	}
}
