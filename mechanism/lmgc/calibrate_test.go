package lmgc

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/budget"
)

func near(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(1, math.Abs(want))
}

func testConfig(eps float64, n, d, classes int) Config {
	cfg := Config{Epsilon: eps, N: n, Label: "y"}
	for j := 0; j < d; j++ {
		cfg.Features = append(cfg.Features, fmt.Sprintf("f%d", j))
		cfg.Lo = append(cfg.Lo, -1)
		cfg.Hi = append(cfg.Hi, 1)
	}
	for c := 0; c < classes; c++ {
		cfg.Classes = append(cfg.Classes, fmt.Sprintf("c%d", c))
	}
	return cfg
}

// TestCalibrationExact checks every public scale against values computed by
// hand (closed forms of docs/mechanisms/lmgc.md §5–§6, evaluated with
// Python), for C = 2 and C = 3.
func TestCalibrationExact(t *testing.T) {
	cases := []struct {
		name                               string
		eps                                float64
		n, d, classes                      int
		h                                  float64
		dim                                int
		sens, epsB, epsJ, epsOut           float64
		delta, beta, betaZ, radius, smooth float64
	}{
		{
			// C = 2, a = 1, D = 3, m = 12, S = 2√2: ε_out = 0.05, ε_obj = 0.95;
			// t_J(ρ_max·ε_obj) = 2a/(e^0.475 − 1) = 3.2894 is below the noise
			// rule, so t solves t·(ε_obj − 𝒥(t)) = m·S/(c_ν·D·√C) = 8/3 with
			// 𝒥(t) = log(1 + 2a/t): t = 4.5521; ε_b = ε_obj − 𝒥, β = S/ε_b,
			// β_Z = 0.1·β/t, r = ε_out·β_Z/2 (scipy brentq, 1e-15).
			name: "C=2", eps: 1, n: 100, d: 2, classes: 2, h: 0.5, dim: 12,
			sens: 2 * math.Sqrt2, epsB: 0.5858055074518477, epsJ: 0.3641944925481523, epsOut: 0.05,
			delta: 0.04552136558541767, beta: 4.828269944148114,
			betaZ: 0.10606601717798211, radius: 0.002651650429449553,
			smooth: 2*1 + 0.04552136558541767,
		},
		{
			// C = 3, a = 2, D = 5, m = 45, S = 3√2: ε_out = 0.1, ε_obj = 1.9;
			// t_J(0.95) = 6.2549 (a/t = (−2 + √(1 + 3e^0.95))/3), noise rule
			// t·(1.9 − 𝒥(t)) = 45·3√2/(3·5·√3) = 7.3485 gives t = 7.0822.
			name: "C=3", eps: 2, n: 150, d: 4, classes: 3, h: 0.25, dim: 45,
			sens: 3 * math.Sqrt2, epsB: 1.037598924462971, epsJ: 0.8624010755370288, epsOut: 0.1,
			delta: 0.04721457752186778, beta: 4.088902356288721,
			betaZ: 0.05773502691896257, radius: 0.0028867513459481286,
			smooth: 3*2 + 0.04721457752186778,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(tc.eps, tc.n, tc.d, tc.classes)
			cfg.H = tc.h
			p, err := Plan(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := p.Calibration()
			const rel = 1e-10
			checks := []struct {
				name      string
				got, want float64
			}{
				{"sensitivity S", c.Sensitivity, tc.sens},
				{"ε_b", c.PerturbationEpsilon, tc.epsB},
				{"𝒥", c.JacobianEpsilon, tc.epsJ},
				{"ε_out", c.OutputEpsilon, tc.epsOut},
				{"Δ", c.StrongConvexity, tc.delta},
				{"β", c.PerturbationScale, tc.beta},
				{"β_Z", c.OutputScale, tc.betaZ},
				{"r", c.Radius, tc.radius},
				{"L", c.Smoothness, tc.smooth},
				{"charged ε", p.ChargedEpsilon(), tc.eps},
				{"requested ε", p.RequestedEpsilon(), tc.eps},
			}
			for _, ch := range checks {
				if !near(ch.got, ch.want, rel) {
					t.Errorf("%s = %.17g, want %.17g", ch.name, ch.got, ch.want)
				}
			}
			if c.Dim != tc.dim {
				t.Errorf("m = %d, want %d", c.Dim, tc.dim)
			}
			// The Jacobian budget is never exceeded (bisection keeps the safe end).
			if c.JacobianEpsilon > MaxJacobianShare*(tc.eps-tc.epsOut) {
				t.Errorf("𝒥 = %.17g exceeds its share %.17g", c.JacobianEpsilon, MaxJacobianShare*(tc.eps-tc.epsOut))
			}
			ev := p.Events()
			if len(ev) != 2 || ev[0].Kind != budget.Generic || ev[0].Delta != 0 || ev[1].Kind != budget.Laplace {
				t.Fatalf("events %+v, want a pure Generic event and a Laplace output step", ev)
			}
			for _, e := range ev {
				if err := e.Validate(); err != nil {
					t.Errorf("event %+v: %v", e, err)
				}
			}
			if !near(ev[0].Epsilon, tc.epsB+tc.epsJ, rel) || !near(ev[1].Epsilon, tc.epsOut, rel) {
				t.Errorf("events %+v, want ε_b+𝒥 = %v and ε_out = %v", ev, tc.epsB+tc.epsJ, tc.epsOut)
			}
			if sum := ev[0].Epsilon + ev[1].Epsilon; sum != p.ChargedEpsilon() {
				t.Errorf("events sum to %v, charged %v", sum, p.ChargedEpsilon())
			}
			// Output step: Laplace per upper-triangle entry, scale √m·2r/ε_out with
			// r = r_s + r_b, r_b ≪ r_s; the coupling slack is negligible.
			if want := math.Sqrt(float64(tc.dim)) * 2 * (c.Radius + c.SamplingRadius) / tc.epsOut; !near(c.OutputLaplaceScale, want, 1e-14) || p.step.Scale != c.OutputLaplaceScale {
				t.Errorf("Laplace scale %v (step %v), want %v", c.OutputLaplaceScale, p.step.Scale, want)
			}
			if !(c.SamplingRadius > 0 && c.SamplingRadius < 1e-6*c.Radius) || !(c.CouplingSlack < 1e-15) {
				t.Errorf("r_b = %v (r_s = %v), η = %v", c.SamplingRadius, c.Radius, c.CouplingSlack)
			}
			// T from the tighter of the two start bounds (G²/Δ and 2·g(Φ⁰)
			// with ‖Φ⁰‖ ≤ R₀ = ‖b‖-bound/(nΔ)), never more than the G-bound.
			r0 := perturbationNormBound(tc.dim, tc.beta, tc.eps) / (tc.delta * float64(tc.n))
			gb := float64(tc.classes-1)*(1+tc.h+r0) + DefaultLambda*math.Sqrt(float64(tc.classes*tc.d))*r0
			if !near(c.StartRadius, r0, 1e-12) || !near(c.StartGap, math.Min(c.GradientBound*c.GradientBound/tc.delta, 2*gb), 1e-12) {
				t.Errorf("R₀ = %v, gap = %v; want %v, %v", c.StartRadius, c.StartGap, r0, 2*gb)
			}
			if want := iterationsForGap(c.StartGap, c.StrongConvexity, c.Smoothness, c.Radius/2); c.Iterations != want || want < 1 ||
				want > aprioriIterations(c.GradientBound, c.StrongConvexity, c.Smoothness, c.Radius/2) {
				t.Errorf("T = %d, want %d", c.Iterations, want)
			}
			// The noise rule holds at the t used: m·β/(nΔ) ≤ c_ν·D·√C, and
			// the Jacobian term stays within its cap.
			if disp := float64(tc.dim) * tc.beta / (tc.delta * float64(tc.n)); disp > NoiseMargin*float64(tc.d+1)*math.Sqrt(float64(tc.classes))*(1+1e-12) {
				t.Errorf("expected displacement %v above c_ν·D·√C", disp)
			}
		})
	}
}

// TestJacobianTermClosedForm checks 𝒥 against the star-graph eigenvalues.
func TestJacobianTermClosedForm(t *testing.T) {
	// C = 2: log(1 + 2a/t); C = 4: 2·log(1 + a/t) + log(1 + 4a/t).
	if got, want := jacobianTerm(2, 3, 5), math.Log(1+6.0/5); !near(got, want, 1e-14) {
		t.Errorf("𝒥(C=2) = %v, want %v", got, want)
	}
	if got, want := jacobianTerm(4, 0.5, 2), 2*math.Log(1.25)+math.Log(2); !near(got, want, 1e-14) {
		t.Errorf("𝒥(C=4) = %v, want %v", got, want)
	}
	for _, classes := range []int{2, 3, 10, 100} {
		for _, target := range []float64{1e-4, 0.01, 0.5, 5, 40} {
			tt := solveStrongConvexity(classes, 1.7, target)
			j := jacobianTerm(classes, 1.7, tt)
			if j > target || j < target*(1-1e-9) {
				t.Errorf("C=%d target %v: 𝒥(t) = %v", classes, target, j)
			}
		}
	}
}

// TestStrongConvexityFloor: for a huge ε the share rule would make Δ
// vanish; the floor keeps Δ ≥ MinStrongConvexity and the charge exact.
func TestStrongConvexityFloor(t *testing.T) {
	p, err := Plan(testConfig(1e6, 10, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	c := p.Calibration()
	if c.StrongConvexity != MinStrongConvexity {
		t.Errorf("Δ = %v, want the floor %v", c.StrongConvexity, MinStrongConvexity)
	}
	if want := jacobianTerm(3, 1/(2.0*DefaultH), 10*MinStrongConvexity); c.JacobianEpsilon != want {
		t.Errorf("𝒥 = %v, want %v", c.JacobianEpsilon, want)
	}
	if !near(p.ChargedEpsilon(), 1e6, 1e-12) {
		t.Errorf("charged %v, want 1e6", p.ChargedEpsilon())
	}
}

// TestConditionNumberCap: a tiny Huber width (huge curvature a) at a
// large ε would make κ = (C·a + Δ)/Δ unbounded; the floor C·a/κ_max keeps
// κ ≤ κ_max + 1, and a count above MaxIterations is refused by Plan.
func TestConditionNumberCap(t *testing.T) {
	cfg := testConfig(100, 50, 2, 3)
	cfg.H = 1e-4
	p, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := p.Calibration()
	if kappa := c.Smoothness / c.StrongConvexity; kappa > MaxConditionNumber+1+1e-9 {
		t.Errorf("κ = %v above κ_max + 1", kappa)
	}
	if want := 3 * c.Curvature / MaxConditionNumber; !near(c.StrongConvexity, want, 1e-12) {
		t.Errorf("Δ = %v, want the cap C·a/κ_max = %v", c.StrongConvexity, want)
	}
	cfg.H, cfg.Lambda, cfg.Epsilon = 1e-6, 1e6, 100
	cfg.Features, cfg.Lo, cfg.Hi = append(cfg.Features, "f2", "f3"), append(cfg.Lo, -1, -1), append(cfg.Hi, 1, 1)
	cfg.Classes = append(cfg.Classes, "c3", "c4")
	if _, err := Plan(cfg); err == nil || !strings.Contains(err.Error(), "solver iterations") {
		t.Errorf("Plan accepted T > MaxIterations (err %v)", err)
	}
}

func TestPlanDefaults(t *testing.T) {
	p, err := Plan(testConfig(1, 10, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	if p.cfg.Lambda != DefaultLambda || p.cfg.H != DefaultH {
		t.Errorf("defaults λ = %v, h = %v; want %v, %v", p.cfg.Lambda, p.cfg.H, DefaultLambda, DefaultH)
	}
}

func TestPlanErrors(t *testing.T) {
	mod := func(f func(*Config)) Config {
		c := testConfig(1, 10, 2, 3)
		f(&c)
		return c
	}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"zero epsilon", mod(func(c *Config) { c.Epsilon = 0 }), "epsilon must be positive"},
		{"negative epsilon", mod(func(c *Config) { c.Epsilon = -1 }), "epsilon must be positive"},
		{"NaN epsilon", mod(func(c *Config) { c.Epsilon = math.NaN() }), "epsilon must be positive"},
		{"infinite epsilon", mod(func(c *Config) { c.Epsilon = math.Inf(1) }), "epsilon must be positive"},
		{"negative lambda", mod(func(c *Config) { c.Lambda = -0.1 }), "lambda must be positive"},
		{"NaN lambda", mod(func(c *Config) { c.Lambda = math.NaN() }), "lambda must be positive"},
		{"negative h", mod(func(c *Config) { c.H = -1 }), "Huber width"},
		{"infinite h", mod(func(c *Config) { c.H = math.Inf(1) }), "Huber width"},
		{"empty table", mod(func(c *Config) { c.N = 0 }), "table is empty"},
		{"one class", mod(func(c *Config) { c.Classes = []string{"a"} }), "at least 2 classes"},
		{"duplicate class", mod(func(c *Config) { c.Classes = []string{"a", "b", "a"} }), "declared twice"},
		{"no features", mod(func(c *Config) { c.Features, c.Lo, c.Hi = nil, nil, nil }), "at least one feature"},
		{"missing bound", mod(func(c *Config) { c.Hi = c.Hi[:1] }), "upper bounds"},
		{"inverted bounds", mod(func(c *Config) { c.Lo[0], c.Hi[0] = 2, 1 }), "lower < upper"},
		{"NaN bound", mod(func(c *Config) { c.Lo[1] = math.NaN() }), "NaN"},
		{"too many parameters", func() Config {
			c := testConfig(1, 10, 400, 60)
			return c
		}(), "more than the limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Plan(tc.cfg)
			if err == nil {
				t.Fatalf("Plan accepted %s (plan %+v)", tc.name, p.Calibration())
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}
