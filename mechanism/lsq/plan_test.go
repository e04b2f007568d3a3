package lsq

import (
	"math"
	"strings"
	"testing"
)

// TestPlanRejectsBadInput checks that every invalid public argument is
// refused by Plan / PlanPredict, before any data is touched, with an error
// that names the problem.
func TestPlanRejectsBadInput(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	base := func() Config { return synthConfig(2, 1000, 1, 0.01) }
	cases := []struct {
		name    string
		mod     func(*Config)
		predict bool
		want    string
	}{
		{"unknown method", func(c *Config) { c.Method = "ridge" }, false, "unknown method"},
		{"unknown kernel", func(c *Config) { c.Kernel = "poly" }, false, "unknown kernel"},
		{"zero epsilon", func(c *Config) { c.Epsilon = 0 }, false, "epsilon"},
		{"negative epsilon", func(c *Config) { c.Epsilon = -1 }, false, "epsilon"},
		{"NaN epsilon", func(c *Config) { c.Epsilon = nan }, false, "epsilon"},
		{"infinite epsilon", func(c *Config) { c.Epsilon = inf }, false, "epsilon"},
		{"NaN delta", func(c *Config) { c.Delta = nan }, false, "delta"},
		{"delta one", func(c *Config) { c.Delta = 1 }, false, "delta"},
		{"negative lambda", func(c *Config) { c.Lambda = -0.1 }, false, "lambda"},
		{"NaN lambda", func(c *Config) { c.Lambda = nan }, false, "lambda"},
		{"NaN eta", func(c *Config) { c.Method, c.Eta = MethodObjective, nan }, false, "eta"},
		{"eta with output", func(c *Config) { c.Eta = 2 }, false, "eta"},
		{"zero n", func(c *Config) { c.N = 0 }, false, "row count"},
		{"no features", func(c *Config) { c.Features, c.Lo, c.Hi = nil, nil, nil }, false, "no feature"},
		{"missing bounds", func(c *Config) { c.Lo = c.Lo[:1] }, false, "bounds"},
		{"NaN bound", func(c *Config) { c.Hi[0] = nan }, false, "bounds"},
		{"empty bound", func(c *Config) { c.Lo[1] = c.Hi[1] }, false, "bounds"},
		{"NaN label bound", func(c *Config) { c.LabelLo = nan }, false, "label bounds"},
		{"label bounds reversed", func(c *Config) { c.LabelLo, c.LabelHi = 1, -1 }, false, "label bounds"},
		{"dim with linear", func(c *Config) { c.Dim = 8 }, false, "dim and gamma"},
		{"bad dim", func(c *Config) { c.Kernel, c.Dim = KernelRBF, -3 }, false, "dim"},
		{"NaN gamma", func(c *Config) { c.Kernel, c.Gamma = KernelRBF, nan }, false, "gamma"},
		{"objective without delta", func(c *Config) { c.Method, c.Delta = MethodObjective, 0 }, false, "delta > 0"},
		{"input without delta", func(c *Config) { c.Method, c.Delta = MethodInput, 0 }, false, "delta > 0"},
		{"input with kernel", func(c *Config) { c.Method, c.Kernel = MethodInput, KernelRBF }, false, "linear regression only"},
		{"objective with kernel", func(c *Config) { c.Method, c.Kernel = MethodObjective, KernelCauchy }, false, "linear regression only"},
		{"input n too small", func(c *Config) { c.Method, c.N = MethodInput, 150 }, false, "needs n ≥"},
		{"tiny lambda", func(c *Config) { c.Lambda, c.N = 1e-15, 1<<20 }, false, "too small"},
		{"predict lambda above 1", func(c *Config) { c.Delta, c.Lambda = 0, 1.5 }, true, "(0, 1]"},
		{"predict with delta", func(c *Config) {}, true, "delta must be 0"},
		{"predict with method", func(c *Config) { c.Delta, c.Method = 0, MethodOutput }, true, "method"},
		{"predict with eta", func(c *Config) { c.Delta, c.Eta = 0, 1 }, true, "eta"},
		{"predict NaN epsilon", func(c *Config) { c.Delta, c.Epsilon = 0, nan }, true, "epsilon"},
		{"predict unknown kernel", func(c *Config) { c.Delta, c.Kernel = 0, "sigmoid" }, true, "unknown kernel"},
	}
	for _, c := range cases {
		cfg := base()
		c.mod(&cfg)
		var err error
		if c.predict {
			_, err = PlanPredict(cfg)
		} else {
			_, err = Plan(cfg)
		}
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.want)
		}
	}
}

// TestTrainRejectsWrongShape checks the data-shape checks of Train and
// Predict (the shape is public: row count and schema).
func TestTrainRejectsWrongShape(t *testing.T) {
	tr := mustPlan(t, synthConfig(2, 3, 1, 0))
	if _, err := tr.Train([][]float64{{0, 0}, {1, 1}}, []float64{0, 1}); err == nil || !strings.Contains(err.Error(), "n = 3") {
		t.Fatalf("wrong n: %v", err)
	}
	if _, err := tr.Train([][]float64{{0, 0}, {1}, {1, 1}}, []float64{0, 1, 1}); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Fatalf("short row: %v", err)
	}
	if _, err := tr.Train([][]float64{{0, 0}, {1, 1}, {1, 1}}, []float64{0, 1}); err == nil || !strings.Contains(err.Error(), "labels") {
		t.Fatalf("missing label: %v", err)
	}
	p := mustPlanPredict(t, synthConfig(2, 2, 1, 0))
	if _, err := p.Predict([][]float64{{0, 0}, {1, 1}}, []float64{0, 1}, []float64{1}); err == nil || !strings.Contains(err.Error(), "query") {
		t.Fatalf("short query: %v", err)
	}
}

// TestNullsAndOutOfRange checks the data-independent handling of NULL (NaN)
// and out-of-bounds values: features clip to the box (NaN ↦ centre), labels
// clip to their bounds (NaN ↦ midpoint), and the release stays finite.
func TestNullsAndOutOfRange(t *testing.T) {
	for _, method := range []string{MethodOutput, MethodObjective, MethodInput} {
		n := 400
		cfg := synthConfig(2, n, 1, 0.01)
		cfg.Method = method
		tr := mustPlan(t, cfg)
		x := make([][]float64, n)
		y := make([]float64, n)
		for i := range x {
			x[i] = []float64{math.NaN(), 1e9}
			y[i] = math.Inf(-1)
			if i%2 == 0 {
				y[i] = math.NaN()
			}
		}
		m, err := tr.Train(x, y)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		for _, v := range m.Weights[0] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s: non-finite weight %v", method, m.Weights[0])
			}
		}
		if u := tr.lm.unit(math.NaN()); u != 0 {
			t.Fatalf("NaN label maps to %v, want 0", u)
		}
		if u := tr.lm.unit(math.Inf(-1)); u != -1 {
			t.Fatalf("−Inf label maps to %v, want −1", u)
		}
	}
}
