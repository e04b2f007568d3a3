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

// near reports |got − want| ≤ tol·|want|.
func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

// TestScaleByHand checks the step, T, Δ₂ and λ against values computed by
// hand from docs/mechanisms/svm.md §4–6 (κ = L = 1):
//
//	η = 2/(2 + C·β_ℓ), q = 1 − η, T = ⌈ln(R/tol)/ln(1/q)⌉,
//	R = min(C, √(2C·ℓ(0))), tol = max(0.1·s₁·2C/n, 0.01), s₁ = √2·√F·K/ε,
//	Δ₂ = (2C/n)·(1 − q^T) (plus a floating-point slack below 10⁻⁹ relative),
//	λ = √F·Δ₂·K/ε.
func TestScaleByHand(t *testing.T) {
	cases := []struct {
		name                 string
		cfg                  Config
		f, k, iters          int
		eta, delta2, lambda  float64
		wantEvents, eventEps float64
	}{
		// F = 16, n = 1000, C = 1, ε = 1, huber h = ½ (β_ℓ = 1): η = 2/3,
		// q = 1/3, R = 1, tol = max(0.00113, 0.01) = 0.01,
		// T = ⌈ln 100/ln 3⌉ = 5, Δ₂ = 0.002·(1 − 3⁻⁵) = 0.002·242/243.
		{"linear-huber", func() Config { c := cfgD(15, 1000, 1, KernelLinear); c.C = 1; return c }(),
			16, 1, 5, 2.0 / 3, 0.0019917695473251028, 4 * 0.0019917695473251028, 1, 1},
		// d̂ = 8 → F = 16, logistic (β_ℓ = ¼), n = 200, C = 40, ε = 2:
		// η = 1/6, R = √(80 ln 2) = 7.447, tol = 0.1·2√2·0.4 = 0.1131,
		// T = ⌈ln(65.82)/ln(6/5)⌉ = 23, Δ₂ = 0.4·(1 − (5/6)²³).
		{"rbf-logistic", func() Config {
			c := cfgD(5, 200, 2, KernelRBF)
			c.Dim, c.C, c.Loss = 8, 40, LossLogistic
			return c
		}(), 16, 1, 23, 1.0 / 6, 0.39396202469801184, 0.7879240493960237, 1, 2},
		// Four classes, one-vs-rest, ε_k = 0.5; F = 4, huber h = ¼
		// (β_ℓ = 2), n = 500, C = 10: η = 1/11, R = √20,
		// tol = 0.1·(√2·2/0.5)·0.04 = 0.02263, T = ⌈ln(197.6)/ln 1.1⌉ = 56,
		// Δ₂ = 0.04·(1 − (10/11)⁵⁶), λ = 2·Δ₂/0.5.
		{"ovr-huber", func() Config {
			c := cfgD(3, 500, 2, KernelLinear, "a", "b", "c", "d")
			c.Loss, c.HuberH, c.C = LossHuber, 0.25, 10
			return c
		}(), 4, 4, 56, 1.0 / 11, 0.039807659995235826, 0.1592306399809433, 4, 0.5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := mustPlan(t, c.cfg)
			if tr.Dim() != c.f || tr.Models() != c.k || tr.Iterations() != c.iters {
				t.Fatalf("F, K, T = %d, %d, %d; want %d, %d, %d", tr.Dim(), tr.Models(), tr.Iterations(), c.f, c.k, c.iters)
			}
			if !near(tr.Step(), c.eta, 1e-15) || !near(tr.Sensitivity(), c.delta2, 1e-9) || !near(tr.Scale(), c.lambda, 1e-9) {
				t.Fatalf("η, Δ₂, λ = %v, %v, %v; want %v, %v, %v", tr.Step(), tr.Sensitivity(), tr.Scale(), c.eta, c.delta2, c.lambda)
			}
			// The slack only ever adds.
			if tr.Sensitivity() < c.delta2 || tr.Scale() < c.lambda {
				t.Fatalf("Δ₂ = %v or λ = %v below the exact-arithmetic value", tr.Sensitivity(), tr.Scale())
			}
			ev := tr.Events()
			if len(ev) != int(c.wantEvents) {
				t.Fatalf("%d events, want %v", len(ev), c.wantEvents)
			}
			for _, e := range ev {
				if e != (budget.Event{Kind: budget.Laplace, Epsilon: c.eventEps}) {
					t.Fatalf("event %+v, want Laplace ε = %v", e, c.eventEps)
				}
			}
		})
	}
}

// TestScaleGaussian checks the δ > 0 release: one discrete-Gaussian event
// on the stacked K·F vector, σ calibrated to √K·Δ₂ (not Δ₂), and T from
// the same rule with s = σ per unit sensitivity.
func TestScaleGaussian(t *testing.T) {
	for _, k := range []int{2, 3, 7} {
		classes := make([]string, k)
		for i := range classes {
			classes[i] = fmt.Sprint(i)
		}
		// F = 2, huber ½, n = 100, C = 2, ε = 1, δ = 10⁻⁵: η = ½, q = ½,
		// R = 2, Δ₂ = 0.04·(1 − 2^−T).
		cfg := cfgD(1, 100, 1, KernelLinear, classes...)
		cfg.C, cfg.Delta = 2, 1e-5
		tr := mustPlan(t, cfg)
		models := k
		if k == 2 {
			models = 1
		}
		s1, err := mechanism.GaussianSigma(math.Sqrt(float64(models)), 1, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		tol := math.Max(0.1*s1*0.04, 0.01)
		wantT := int(math.Ceil(math.Log(2/tol) / math.Log(2)))
		wantD := 0.04 * (1 - math.Pow(0.5, float64(wantT)))
		stacked := math.Sqrt(float64(models)) * wantD
		wantSigma, err := mechanism.GaussianSigma(stacked, 1, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Iterations() != wantT || !near(tr.Sensitivity(), wantD, 1e-9) || !near(tr.Scale(), wantSigma, 1e-9) || !tr.Gaussian() {
			t.Fatalf("K=%d: T, Δ₂, σ = %d, %v, %v; want %d, %v, %v", k, tr.Iterations(), tr.Sensitivity(), tr.Scale(), wantT, wantD, wantSigma)
		}
		ev := tr.Events()
		if len(ev) != 1 || ev[0].Kind != budget.Gaussian || ev[0].Epsilon != 1 || ev[0].Delta != 1e-5 || !near(ev[0].Ratio, stacked/tr.Scale(), 1e-9) {
			t.Fatalf("K=%d: events %+v", k, ev)
		}
		if err := ev[0].Validate(); err != nil {
			t.Fatalf("K=%d: event does not validate: %v", k, err)
		}
		// σ for a single vector would be √K times too small.
		single, _ := mechanism.GaussianSigma(wantD, 1, 1e-5)
		if models > 1 && !(tr.Scale() > 1.5*single) {
			t.Fatalf("K=%d: σ = %v is not calibrated to the stacked sensitivity (single-vector σ %v)", k, tr.Scale(), single)
		}
	}
}

// TestDefaults checks the default loss and h, and the default C and d̂
// rules of docs/mechanisms/svm.md §7 against hand-computed values.
func TestDefaults(t *testing.T) {
	// Binary linear, F = 5, n = 10 000, ε = 1, Laplace: s₁ = √2·√5·2/10⁴,
	// C = 0.25/s₁ = 395.3 (below the cap 500).
	tr := mustPlan(t, cfgD(4, 10_000, 1, ""))
	c := tr.Config()
	wantC := 0.25 / (math.Sqrt2 * math.Sqrt(5) * 2 / 10_000)
	if c.Kernel != KernelLinear || c.Loss != LossHuber || c.HuberH != DefaultHuberH || !near(c.C, wantC, 1e-12) || c.Dim != 0 || c.Gamma != 0 {
		t.Fatalf("linear defaults: %+v (want C = %v)", c, wantC)
	}
	// Three classes: ρ/√K with s₁ carrying K/ε: C = 0.25/√3/(√2·√5·3·2/10⁴).
	tr = mustPlan(t, cfgD(4, 10_000, 1, "", "a", "b", "c"))
	if want := 0.25 / math.Sqrt(3) / (math.Sqrt2 * math.Sqrt(5) * 3 * 2 / 10_000); !near(tr.Config().C, want, 1e-12) {
		t.Fatalf("one-vs-rest default C = %v, want %v", tr.Config().C, want)
	}
	// Clamps: tiny n gives MinDefaultC; huge ε gives MaxDefaultCBeta/β_ℓ.
	if c := mustPlan(t, cfgD(4, 20, 0.1, "")).Config().C; c != MinDefaultC {
		t.Fatalf("small-table default C = %v, want %v", c, MinDefaultC)
	}
	big := cfgD(4, 10_000, 100, "")
	big.Loss = LossLogistic
	if c := mustPlan(t, big).Config().C; c != MaxDefaultCBeta*4 {
		t.Fatalf("capped logistic default C = %v, want %v", c, MaxDefaultCBeta*4)
	}
	// Work budget: 10⁶ rows, d̂ = 64, ε = 1 would take C = 500 (T ≈ 1900,
	// 2.4·10¹¹ multiply-adds); the default is lowered until it fits.
	w := cfgD(20, 1_000_000, 1, KernelRBF)
	tw := mustPlan(t, w)
	if tw.work() > MaxDefaultWork || tw.Config().C >= 500 || tw.Config().C < 100 {
		t.Fatalf("work-limited default: C = %v, T = %d, work %.3g", tw.Config().C, tw.Iterations(), tw.work())
	}
	// d̂: power of two nearest √(nε/K)/4 in [8, 64]; 64 for δ > 0.
	for _, c := range []struct {
		n       int
		eps     float64
		classes []string
		delta   float64
		want    int
	}{
		{200, 1, nil, 0, 8},                              // √200/4 = 3.5
		{455, 10, nil, 0, 16},                            // √4550/4 = 16.9
		{10_000, 1, nil, 0, 32},                          // √10⁴/4 = 25 → 2^4.64 → 32
		{10_000, 1, []string{"a", "b", "c", "d"}, 0, 16}, // √2500/4 = 12.5 → 2^3.64 → 16
		{1_000_000, 1, nil, 0, 64},                       // 250 → capped
		{200, 1, nil, 1e-6, 64},
	} {
		cfg := cfgD(3, c.n, c.eps, KernelRBF, c.classes...)
		cfg.Delta = c.delta
		if got := mustPlan(t, cfg).Config().Dim; got != c.want {
			t.Errorf("default d̂ for n=%d ε=%v K=%d δ=%v: %d, want %d", c.n, c.eps, len(c.classes), c.delta, got, c.want)
		}
	}
	rb := mustPlan(t, cfgD(4, 200, 1, KernelRBF))
	if rb.rff == nil || len(rb.rff.Omega) != 8 || len(rb.rff.Omega[0]) != 4 || rb.rff.Gamma != DefaultGamma {
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
		{"hinge", mod(func(c *Config) { c.Loss = LossHinge }), "not smooth"},
		{"hinge names the alternatives", mod(func(c *Config) { c.Loss = LossHinge }), `use "huber"`},
		{"hinge names the doc", mod(func(c *Config) { c.Loss = LossHinge; c.HuberH = 0.3 }), "docs/mechanisms/svm.md"},
		{"zero epsilon", mod(func(c *Config) { c.Epsilon = 0 }), "epsilon"},
		{"negative epsilon", mod(func(c *Config) { c.Epsilon = -1 }), "epsilon"},
		{"NaN epsilon", mod(func(c *Config) { c.Epsilon = math.NaN() }), "epsilon"},
		{"Inf epsilon", mod(func(c *Config) { c.Epsilon = math.Inf(1) }), "epsilon"},
		{"tiny epsilon per model", mod(func(c *Config) { c.Epsilon = 1e-9 }), "minimum"},
		{"negative delta", mod(func(c *Config) { c.Delta = -1e-5 }), "delta"},
		{"delta one", mod(func(c *Config) { c.Delta = 1 }), "delta"},
		{"NaN delta", mod(func(c *Config) { c.Delta = math.NaN() }), "delta"},
		{"negative C", mod(func(c *Config) { c.C = -1 }), "C must be in"},
		{"denormal C", mod(func(c *Config) { c.C = 5e-324 }), "C must be in [1e-06"},
		{"NaN C", mod(func(c *Config) { c.C = math.NaN() }), "C must be in"},
		{"Inf C", mod(func(c *Config) { c.C = math.Inf(1) }), "C must be in"},
		{"C of the issue", mod(func(c *Config) { c.C = 1.55e6 }), "C must be in [1e-06, 4096]"},
		{"C above the logistic cap", mod(func(c *Config) { c.Loss, c.C = LossLogistic, 1e12 }), "C must be in [1e-06, 16384]"},
		{"C above the cap for small h", mod(func(c *Config) { c.HuberH, c.C = 0.01, 100 }), "C must be in [1e-06, 81.92]"},
		{"negative iterations", mod(func(c *Config) { c.Iterations = -1 }), "iterations"},
		{"too many iterations", mod(func(c *Config) { c.Iterations = MaxIterations + 1 }), "iterations"},
		{"work above the cap", mod(func(c *Config) { c.N, c.Dim, c.C = 1_000_000, 256, 4096 }), "above the limit"},
		{"negative dim", mod(func(c *Config) { c.Dim = -4 }), "dim must be in"},
		{"absurd dim", mod(func(c *Config) { c.Dim = mechanism.MaxRFFDim + 1 }), "dim must be in"},
		{"negative gamma", mod(func(c *Config) { c.Gamma = -1 }), "gamma must be positive"},
		{"NaN gamma", mod(func(c *Config) { c.Gamma = math.NaN() }), "gamma must be positive"},
		{"dim for linear", mod(func(c *Config) { c.Kernel, c.Dim = KernelLinear, 10 }), "only apply"},
		{"gamma for linear", mod(func(c *Config) { c.Kernel, c.Gamma = KernelLinear, 1 }), "only apply"},
		{"huber h for logistic", mod(func(c *Config) { c.Loss, c.HuberH = LossLogistic, 0.3 }), "only applies"},
		{"negative huber h", mod(func(c *Config) { c.HuberH = -0.3 }), "half-width"},
		{"tiny huber h", mod(func(c *Config) { c.HuberH = 1e-5 }), "half-width"},
		{"huge huber h", mod(func(c *Config) { c.HuberH = 1e300 }), "half-width"},
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
				t.Fatalf("Plan accepted %+v (scale %v)", c.cfg, tr.Scale())
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not mention %q", err, c.want)
			}
		})
	}
	// The extremes of the accepted range plan fine.
	for _, c := range []float64{MinC, MaxCBeta} {
		cfg := cfgD(3, 100, 1, KernelLinear)
		cfg.C = c
		tr := mustPlan(t, cfg)
		if !(tr.Sensitivity() > 0) || !(tr.Scale() > 0) || tr.Iterations() < 1 || tr.Iterations() > MaxIterations {
			t.Fatalf("C = %v: Δ₂ = %v, scale %v, T = %d", c, tr.Sensitivity(), tr.Scale(), tr.Iterations())
		}
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
		for _, delta := range []float64{0, 1e-6} {
			cfg := cfgD(2, n, 1e5, kernel)
			cfg.C, cfg.Delta = 100, delta
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
			if m.Params["epsilon"] != 1e5 || m.Params["C"] != 100 || m.Params["iterations"] != float64(tr.Iterations()) ||
				m.Params["sensitivity_l2"] != tr.Sensitivity() || m.Params["huber_h"] != DefaultHuberH || m.Params["loss"] != 2 {
				t.Fatalf("%s: params %v", kernel, m.Params)
			}
			if delta == 0 && (m.Params["lambda"] != tr.Scale() || m.Params["sigma"] != 0) ||
				delta > 0 && (m.Params["sigma"] != tr.Scale() || m.Params["delta"] != delta || m.Params["lambda"] != 0) {
				t.Fatalf("%s δ=%v: params %v", kernel, delta, m.Params)
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
}

// TestTrainOneVsRest checks K weight vectors, class k's vector voting for k,
// with both releases.
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
	for _, delta := range []float64{0, 1e-6} {
		cfg := cfgD(2, n, 1e5, KernelLinear, "a", "b", "c")
		cfg.C, cfg.Delta = 300, delta
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
				t.Fatalf("δ=%v: Predict(centre %d) = %+v, %v", delta, k, p, err)
			}
		}
	}
}

// TestTrainReleasesNoise checks that the released weights differ from the
// noise-free ones by about the noise scale: E|Laplace(λ)| = λ, and the
// discrete Gaussian has E[z²] ≈ σ².
func TestTrainReleasesNoise(t *testing.T) {
	X := make([][]float64, 50)
	y := make([]int, 50)
	for i := range X {
		X[i] = []float64{math.Sin(float64(i)), math.Cos(float64(i)), 0}
		y[i] = i % 3
	}
	for _, delta := range []float64{0, 1e-5} {
		cfg := cfgD(3, 50, 1, KernelLinear, "a", "b", "c")
		cfg.Delta = delta
		tr := mustPlan(t, cfg)
		clean, err := tr.fit(X, y)
		if err != nil {
			t.Fatal(err)
		}
		var sumAbs, sumSq float64
		const reps = 200
		for r := 0; r < reps; r++ {
			m, err := tr.Train(X, y)
			if err != nil {
				t.Fatal(err)
			}
			for k := range m.Weights {
				for j, v := range m.Weights[k] {
					d := v - clean[k][j]
					sumAbs += math.Abs(d)
					sumSq += d * d
				}
			}
		}
		// 200·3·4 = 2400 draws: the mean of |Laplace| and of z² are within
		// 15% (≥ 5 sd) but for 10⁻⁶.
		m := float64(reps * 3 * tr.Dim())
		if delta == 0 && math.Abs(sumAbs/m/tr.Scale()-1) > 0.15 {
			t.Fatalf("mean |noise| = %v, λ = %v", sumAbs/m, tr.Scale())
		}
		if delta > 0 && math.Abs(math.Sqrt(sumSq/m)/tr.Scale()-1) > 0.15 {
			t.Fatalf("rms noise = %v, σ = %v", math.Sqrt(sumSq/m), tr.Scale())
		}
	}
}

// TestTrainTinyTables covers n = 1, a single class present, NULLs and
// values beyond the bounds: Train must still release finite weights.
func TestTrainTinyTables(t *testing.T) {
	for _, loss := range []string{LossLogistic, LossHuber} {
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
