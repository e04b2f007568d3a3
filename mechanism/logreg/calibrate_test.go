package logreg

import (
	"fmt"
	"math"
	"testing"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
)

func mustPlan(t testing.TB, cfg Config) *Trainer {
	t.Helper()
	tr, err := Plan(cfg)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	return tr
}

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Abs(b) }

// testConfig is d features with bounds [−1, 1] and k classes.
func testConfig(d, k, n int, eps, delta float64) Config {
	cfg := Config{Epsilon: eps, Delta: delta, N: n, Label: "y"}
	for j := 0; j < d; j++ {
		cfg.Features = append(cfg.Features, fmt.Sprintf("x%d", j+1))
		cfg.Lo, cfg.Hi = append(cfg.Lo, -1), append(cfg.Hi, 1)
	}
	for c := 0; c < k; c++ {
		cfg.Classes = append(cfg.Classes, fmt.Sprintf("c%d", c))
	}
	return cfg
}

// TestScales checks the planned constants by hand: the row bound is
// L_C = min(L, C) with L = √2 (softmax) or 1 (binary) and C = L/4 by
// default; Δ₂ = 2L_C, Δ₁ = 2·min(2√F or √F, C√(K′F)), up to a rounding
// slack below 10⁻⁷ relative (n ≤ 5·10⁴);
// δ > 0: σ = GaussianSigma(√T·Δ₂, ε, δ) and one Gaussian event of ratio
// √T·Δ₂/σ; δ = 0: b = Δ₁·T/ε and T Laplace events of ε/T; η = τ/T with the
// default τ = 30·n·R/(L_C√(K′F)) clamped to [1, 200·T]; where the plain
// default T₀ exceeds 100 and is capped below τ/200 (δ > 0), ⌈2√T₀⌉ Nesterov
// steps of step 200.
func TestScales(t *testing.T) {
	for _, c := range []struct {
		d, k, n, steps int
		eps, delta     float64
	}{{4, 2, 1000, 0, 1, 1e-5}, {4, 3, 1000, 0, 1, 1e-5}, {10, 20, 20000, 0, 1, 1e-6}, {40, 5, 100000, 0, 1, 1e-6}, {10, 20, 50000, 7, 0.3, 1e-6}, {4, 2, 1000, 0, 1, 0}, {10, 5, 300, 3, 2, 0}, {3, 2, 200000, 0, 10, 1e-5}, {10, 2, 10000, 0, 1, 1e-6}, {20, 2, 100000, 0, 1, 1e-6}} {
		cfg := testConfig(c.d, c.k, c.n, c.eps, c.delta)
		cfg.Steps = c.steps
		tr := mustPlan(t, cfg)
		p := tr.p
		f := float64(c.d + 1)
		binary := c.k == 2
		lip, r1 := math.Sqrt2, 2.0
		kp := float64(c.k)
		if binary {
			lip, r1, kp = 1, 1, 1
		}
		clip := ClipFraction * lip
		l1 := 2 * math.Min(r1*math.Sqrt(f), clip*math.Sqrt(kp*f))
		lip = math.Min(lip, clip)
		wantT := c.steps
		var eta0 float64 // the accelerated rule's step
		precond := false // the preconditioned rule (§13)
		if wantT == 0 {
			wantT = DefaultStepsPure
			if c.delta > 0 {
				// Enough steps for a step η ≤ 200 at the uncapped
				// default τ, in [100, min(1000, 10¹⁰/(n·K′·F))].
				unit, _ := mechanism.GaussianSigma(1, c.eps, c.delta)
				tau0 := math.Max(MinHorizon, HorizonScale*float64(c.n)/unit/(math.Min(lip, clip)*math.Sqrt(kp*f)))
				hi := math.Min(1000, math.Floor(1e10/(float64(c.n)*kp*f)))
				wantT = int(math.Max(100, math.Min(math.Ceil(tau0/200), hi)))
				if wantT > 100 && tau0 > 200*float64(wantT) {
					// Accelerated where the cap binds: ⌈2√T₀⌉ Nesterov
					// steps of the plain plan's step 200; binary: 12
					// preconditioned steps.
					eta0 = 200
					wantT = int(math.Ceil(2 * math.Sqrt(float64(wantT))))
					if binary {
						wantT, precond = wantPrecondSteps(c.d+1, c.n, c.eps, c.delta, wantT), true
					}
				}
			}
		}
		T := float64(wantT)
		wantRule := map[bool]string{true: StepNesterov, false: StepPlain}[eta0 > 0]
		if precond {
			wantRule = StepPreconditioned
		}
		if p.rule != wantRule {
			t.Fatalf("%+v: rule %q, want %q", c, p.rule, wantRule)
		}
		if p.steps != wantT || p.lip != lip {
			t.Fatalf("%+v: steps %d L %v", c, p.steps, p.lip)
		}
		if !(p.l2 >= 2*lip) || !near(p.l2, 2*lip, 1e-7) || !(p.l1 >= l1) || !near(p.l1, l1, 1e-7) {
			t.Fatalf("%+v: Δ₂ %v (want %v), Δ₁ %v (want %v)", c, p.l2, 2*lip, p.l1, l1)
		}
		var snr float64
		if c.delta > 0 {
			sigma, err := mechanism.GaussianSigma(math.Sqrt(T)*p.l2, c.eps, c.delta)
			if err != nil {
				t.Fatal(err)
			}
			ratio := math.Sqrt(T) * p.l2 / sigma
			if precond {
				// One event of the same total ratio R: ρ_H = 0.1 of R² to
				// the Gram release, the rest to the T gradients.
				checkGramScales(t, tr, c.n, ratio)
				sigma /= math.Sqrt(0.9)
			}
			ev := tr.Events()
			if !near(p.sigma, sigma, 1e-15) || len(ev) != 1 || ev[0].Kind != budget.Gaussian || ev[0].Epsilon != c.eps || ev[0].Delta != c.delta ||
				!near(ev[0].Ratio, ratio, 1e-14) {
				t.Fatalf("%+v: σ %v (want %v), events %+v", c, p.sigma, sigma, ev)
			}
			if err := ev[0].Validate(); err != nil {
				t.Fatal(err)
			}
			unit, _ := mechanism.GaussianSigma(1, c.eps, c.delta)
			snr = 1 / unit
		} else {
			if !near(p.scale, p.l1*T/c.eps, 1e-15) {
				t.Fatalf("%+v: b %v, want %v", c, p.scale, p.l1*T/c.eps)
			}
			ev := tr.Events()
			var sum float64
			for _, e := range ev {
				if e.Kind != budget.Laplace || e.Epsilon != c.eps/T {
					t.Fatalf("%+v: event %+v", c, e)
				}
				sum += e.Epsilon
			}
			if len(ev) != wantT || !near(sum, c.eps, 1e-12) {
				t.Fatalf("%+v: %d events adding to %v", c, len(ev), sum)
			}
			snr = 2 * lip * math.Sqrt(T) / (math.Sqrt2 * p.scale)
		}
		tau := HorizonScale * float64(c.n) * snr / (lip * math.Sqrt(kp*f))
		tau = math.Min(MaxStepSize*T, math.Max(MinHorizon, tau))
		if eta0 > 0 {
			tau = eta0 * T
		}
		if precond {
			// τ sets the ridge 1/τ: the horizon the plain rule reaches,
			// min(τ*, 200·T₀); the step factor is 1.
			unit, _ := mechanism.GaussianSigma(1, c.eps, c.delta)
			t0 := math.Max(100, math.Min(math.Min(1000, math.Floor(1e10/(float64(c.n)*kp*f))), math.Ceil(HorizonScale*float64(c.n)/unit/(lip*math.Sqrt(kp*f))/200)))
			tau = math.Min(200*t0, HorizonScale*float64(c.n)*snr/(lip*math.Sqrt(kp*f)))
			if !near(p.horizon, tau, 1e-12) || p.eta != 1 {
				t.Fatalf("%+v: τ %v η %v, want %v, 1", c, p.horizon, p.eta, tau)
			}
			ridge := 0.25*p.gramSigma*(math.Sqrt(2*f)+math.Sqrt(2*math.Log(1000)))/float64(c.n) + 1/tau
			if !near(p.ridge, ridge, 1e-12) || !near(p.l2reg, 1/tau, 1e-12) {
				t.Fatalf("%+v: ridge %v, want %v (objective ridge %v)", c, p.ridge, ridge, p.l2reg)
			}
			continue
		}
		if !near(p.horizon, tau, 1e-12) || !near(p.eta, tau/T, 1e-12) {
			t.Fatalf("%+v: τ %v η %v, want %v, %v", c, p.horizon, p.eta, tau, tau/T)
		}
	}
	// The preconditioned rule: the default wherever the binary cap binds
	// (checked above), asked for explicitly with or without steps, binary
	// and softmax; its scales follow the same rules.
	for _, c := range []struct {
		d, k, n, steps, wantT int
		eps                   float64
	}{{20, 2, 100000, 0, 14, 1}, {10, 5, 100000, 0, 12, 1}, {4, 3, 1000, 0, 20, 1}, {4, 2, 500, 30, 30, 0.5}, {40, 2, 100000, 0, 22, 1}} {
		cfg := testConfig(c.d, c.k, c.n, c.eps, 1e-6)
		cfg.Steps, cfg.StepRule = c.steps, StepPreconditioned
		tr := mustPlan(t, cfg)
		if tr.p.rule != StepPreconditioned || tr.p.steps != c.wantT || tr.Params()["preconditioned"] != 1 {
			t.Fatalf("%+v: rule %q, T = %d", c, tr.p.rule, tr.p.steps)
		}
		sigma0, _ := mechanism.GaussianSigma(math.Sqrt(float64(c.wantT))*tr.p.l2, c.eps, 1e-6)
		checkGramScales(t, tr, c.n, math.Sqrt(float64(c.wantT))*tr.p.l2/sigma0)
		if !near(tr.p.sigma, sigma0/math.Sqrt(0.9), 1e-15) {
			t.Fatalf("%+v: σ %v, want %v", c, tr.p.sigma, sigma0/math.Sqrt(0.9))
		}
		fc := float64(c.d + 1)
		if want := bohningFactor(c.k == 2)*tr.p.gramSigma*(math.Sqrt(2*fc)+math.Sqrt(2*math.Log(1000)))/float64(c.n) + 1/tr.p.horizon; !near(tr.p.ridge, want, 1e-12) {
			t.Fatalf("%+v: ridge %v, want %v", c, tr.p.ridge, want)
		}
	}
	if tr := mustPlan(t, testConfig(20, 2, 1000000, 1, 1e-6)); tr.p.rule != StepPreconditioned || tr.p.steps != 12 { // q ≈ 0.013
		t.Fatalf("n = 10⁶, d = 20, K = 2: rule %q T = %d, want preconditioned, 12", tr.p.rule, tr.p.steps)
	}
	if tr := mustPlan(t, testConfig(10, 5, 100000, 1, 1e-6)); tr.p.rule != StepNesterov {
		t.Fatalf("softmax at the cap: rule %q, want nesterov", tr.p.rule)
	}
	// An explicit horizon, step count and clip are used as given; a clip
	// above L changes nothing (the row bound is min(L, C)).
	cfg := testConfig(3, 4, 100, 1, 1e-6)
	cfg.Steps, cfg.Horizon, cfg.Clip = 17, 5, 0.5
	tr := mustPlan(t, cfg)
	if tr.p.steps != 17 || tr.p.horizon != 5 || !near(tr.p.eta, 5.0/17, 1e-15) || tr.p.clip != 0.5 || !near(tr.p.l2, 1, 1e-9) {
		t.Fatalf("explicit: %+v", tr.p)
	}
	cfg.Clip = 10
	if tr := mustPlan(t, cfg); !near(tr.p.l2, 2*math.Sqrt2, 1e-9) {
		t.Fatalf("clip above L: Δ₂ = %v", tr.p.l2)
	}
}

// wantPrecondSteps is the preconditioned default T by hand:
// ⌈12·max(1, √(q/0.1))⌉ with q = σ_H(√(2F) + √(2 ln 1000))·3F/n, at most
// capT = ⌈2√T₀⌉.
func wantPrecondSteps(f, n int, eps, delta float64, capT int) int {
	unit, _ := mechanism.GaussianSigma(1, eps, delta)
	sigmaH := math.Sqrt2 * unit / math.Sqrt(0.1)
	q := sigmaH * (math.Sqrt(2*float64(f)) + math.Sqrt(2*math.Log(1000))) * 3 * float64(f) / float64(n)
	t := int(math.Ceil(12 * math.Sqrt(math.Max(1, q/0.1))))
	return min(t, capT)
}

// checkGramScales checks the Gram release of a preconditioned plan by
// hand: Δ_H = √2·κ̂² up to a rounding slack below 10⁻⁶ relative, ρ_H = 0.1,
// σ_H = Δ_H/(√ρ_H·R) with R the total ratio, and the composed ratio
// √(T(Δ₂/σ)² + (Δ_H/σ_H)²) = R.
func checkGramScales(t *testing.T, tr *Trainer, n int, total float64) {
	t.Helper()
	p := tr.p
	if !(p.gramL2 > math.Sqrt2) || !near(p.gramL2, math.Sqrt2, 1e-6) || p.gramShare != 0.1 {
		t.Fatalf("Δ_H %v (want √2), ρ_H %v", p.gramL2, p.gramShare)
	}
	if want := p.gramL2 / (math.Sqrt(0.1) * total); !near(p.gramSigma, want, 1e-15) {
		t.Fatalf("σ_H %v, want %v", p.gramSigma, want)
	}
	T := float64(p.steps)
	if got := math.Sqrt(T*(p.l2/p.sigma)*(p.l2/p.sigma) + (p.gramL2/p.gramSigma)*(p.gramL2/p.gramSigma)); !near(got, total, 1e-14) || !near(p.ratio, total, 1e-14) {
		t.Fatalf("composed ratio %v (plan %v), want %v", got, p.ratio, total)
	}
	if g := gramSensitivity(n, tr.f); g != p.gramL2 {
		t.Fatalf("Δ_H %v vs gramSensitivity %v", p.gramL2, g)
	}
}

// TestRoundingSlack: the floating-point term of the sensitivity is tiny at
// practical n and grows with n.
func TestRoundingSlack(t *testing.T) {
	small, _, _ := sensitivity(1000, 10, 5, false, 10)
	big, _, _ := sensitivity(100_000_000, 10, 5, false, 10)
	if !(small < big) || small/(2*math.Sqrt2)-1 > 1e-9 || big/(2*math.Sqrt2)-1 > 1e-3 {
		t.Fatalf("Δ₂(n=1e3) = %v, Δ₂(n=1e8) = %v", small, big)
	}
}

// TestPlanErrors: every refusal depends on the config only.
func TestPlanErrors(t *testing.T) {
	bad := []func(*Config){
		func(c *Config) { c.Epsilon = 0 },
		func(c *Config) { c.Epsilon = math.NaN() },
		func(c *Config) { c.Delta = 1 },
		func(c *Config) { c.N = 0 },
		func(c *Config) { c.Features, c.Lo, c.Hi = nil, nil, nil },
		func(c *Config) { c.Hi = c.Hi[:1] },
		func(c *Config) { c.Classes = c.Classes[:1] },
		func(c *Config) { c.Classes[1] = c.Classes[0] },
		func(c *Config) { c.Steps = -1 },
		func(c *Config) { c.Steps = MaxSteps + 1 },
		func(c *Config) { c.Horizon = -1 },
		func(c *Config) { c.Horizon = math.Inf(1) },
		func(c *Config) { c.Clip = -1 },
		func(c *Config) { c.Clip = math.NaN() },
		func(c *Config) { c.Lo[0] = 2 },
		func(c *Config) { c.N = MaxEntries },
		func(c *Config) { c.Epsilon, c.Delta, c.Steps = 1e-6, 0, 1000 }, // ε/T below the Laplace minimum
		func(c *Config) { c.N, c.Steps = 10_000_000, 5000 },             // too much work
		func(c *Config) { c.Delta, c.StepRule = 0, StepPreconditioned }, // its XᵀX release is Gaussian
		func(c *Config) { c.StepRule = "newton" },
	}
	for i, mod := range bad {
		c := testConfig(2, 3, 100, 1, 1e-6)
		mod(&c)
		if _, err := Plan(c); err == nil {
			t.Fatalf("case %d: Plan accepted %+v", i, c)
		}
	}
}
