package lsq

import (
	"math"
	"testing"
)

// The rule's values by hand, and that the default call plans what it says.
func TestDefaultRule(t *testing.T) {
	for _, c := range []struct {
		n, d       int
		eps, delta float64
		method     string
		lambda     float64 // output
		mult       float64 // objective
	}{
		// The case: 100k rows × 14 features, ε = 1: t = 10⁵/225.
		{100000, 14, 1, 1e-6, MethodObjective, 0, 16 / math.Sqrt(100000.0/225)},
		{100000, 14, 1, 0, MethodOutput, 1 / math.Sqrt(100000.0/225), 0},
		// 405 rows × 10 features, ε = 1: t = 405/121 ≈ 3.3 (output, shrunk).
		{405, 10, 1, 1e-6, MethodOutput, 3 / (405.0 / 121), 0},
		{405, 10, 1, 0, MethodOutput, 1 / math.Sqrt(405.0/121), 0},
		// Clamps.
		{10, 50, 0.01, 1e-6, MethodOutput, ruleLambdaMax, 0},
		{1 << 30, 1, 10, 1e-6, MethodObjective, 0, ruleRidgeMin},
		// The threshold itself.
		{15 * 36, 5, 1, 1e-6, MethodObjective, 0, ruleRidgeMax}, // t = 15 exactly: 16/√15 clamped to 4
	} {
		r := chooseDefault(c.n, c.d+1, c.eps, c.delta)
		if r.method != c.method || math.Abs(r.lambda-c.lambda) > 1e-12*c.lambda || math.Abs(r.ridgeMult-c.mult) > 1e-12*c.mult {
			t.Fatalf("n=%d d=%d ε=%v δ=%v: rule %+v, want %s λ=%v ×%v", c.n, c.d, c.eps, c.delta, r, c.method, c.lambda, c.mult)
		}
	}
	// The default call plans the rule's method and λ; naming any of
	// method, lambda or eta turns the rule off (the papers' auto rules).
	cfg := synthConfig(14, 100000, 1, 1e-6)
	cfg.Center = CenterOff // the rule alone (centring: center_test.go)
	tr := mustPlan(t, cfg)
	if tr.cfg.Method != MethodObjective || tr.obj == nil || tr.center != nil {
		t.Fatalf("default call planned %q", tr.cfg.Method)
	}
	cfg.Method, cfg.Center = MethodObjective, 0
	paper := mustPlan(t, cfg)
	if m := tr.obj.ridge / paper.obj.ridge; math.Abs(m-16/math.Sqrt(100000.0/225)) > 1e-9 {
		t.Fatalf("default ridge / paper ridge = %v", m)
	}
	cfg = synthConfig(10, 405, 1, 0)
	cfg.Center = CenterOff
	tr = mustPlan(t, cfg)
	if tr.cfg.Method != MethodOutput || math.Abs(tr.Lambda()-1/math.Sqrt(405.0/121)) > 1e-12 {
		t.Fatalf("405 rows pure ε: %s λ=%v", tr.cfg.Method, tr.Lambda())
	}
	// With centring on (the default at this n, ε) the rule sees the
	// method's share of ε; re-planning with the resolved Config keeps
	// method, ridge and centring.
	cfg = synthConfig(14, 100000, 1, 1e-6)
	tr = mustPlan(t, cfg)
	if r := chooseDefault(100000, 15, 1-CenterShareObjective, 1e-6); tr.center == nil || tr.cfg.ridgeMult != r.ridgeMult {
		t.Fatalf("default call: centring %v, ridge ×%v, want ×%v", tr.center, tr.cfg.ridgeMult, r.ridgeMult)
	}
	again := tr.Config()
	again.N = 90000
	tr2 := mustPlan(t, again)
	if tr2.cfg.Method != MethodObjective || tr2.cfg.ridgeMult != tr.cfg.ridgeMult || tr2.center == nil {
		t.Fatalf("re-plan changed the rule's choice: %+v", tr2.cfg)
	}
}

// The default call never fails to plan on sane public inputs, and its
// events add up to exactly (ε, δ).
func TestDefaultCallAlwaysPlans(t *testing.T) {
	for _, n := range []int{1, 400, 100000, 1 << 24} {
		for _, d := range []int{1, 14, 50} {
			for _, eps := range []float64{0.01, 1, 10} {
				for _, delta := range []float64{0, 1e-6} {
					tr, err := Plan(synthConfig(d, n, eps, delta))
					if err != nil {
						t.Fatalf("n=%d d=%d ε=%v δ=%v: %v", n, d, eps, delta, err)
					}
					var se, sd float64
					for _, ev := range tr.Events() {
						if err := ev.Validate(); err != nil {
							t.Fatalf("n=%d d=%d ε=%v δ=%v: event %v", n, d, eps, delta, err)
						}
						se, sd = se+ev.Epsilon, sd+ev.Delta
					}
					if math.Abs(se-eps) > 1e-9*eps || math.Abs(sd-delta) > 1e-9*math.Max(delta, 1e-300) {
						t.Fatalf("n=%d d=%d ε=%v δ=%v: events add up to (%v, %v)", n, d, eps, delta, se, sd)
					}
				}
			}
		}
	}
}
