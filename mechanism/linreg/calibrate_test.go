package linreg

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
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

// TestGaussianScales checks every planned σ against the calibration by
// hand: precisions a = 1/σ_A², b = 1/σ_c² = Kappa·a, e = 1/σ_λ² with
// e/(J + e) = LambdaShare, and κ̂²√(J(a, b) + e) + rounding slack = R, the
// unit-sensitivity ratio of mechanism.GaussianSigma at (ε, δ). The event
// carries R and validates.
func TestGaussianScales(t *testing.T) {
	for _, c := range []struct {
		d, n       int
		eps, delta float64
	}{{1, 1, 1, 1e-5}, {10, 353, 1, 1e-5}, {14, 100000, 0.1, 1e-6}, {50, 10000, 10, 1e-5}, {3, 1 << 24, 0.5, 1e-9}} {
		tr := mustPlan(t, synthConfig(c.d, c.n, c.eps, c.delta))
		g := tr.gauss
		unit, err := mechanism.GaussianSigma(1, c.eps, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		if g == nil || g.ratio != 1/unit {
			t.Fatalf("d=%d: ratio %+v, want %v", c.d, g, 1/unit)
		}
		a, b, e := 1/(g.sigmaA*g.sigmaA), 1/(g.sigmaC*g.sigmaC), 1/(g.sigmaL*g.sigmaL)
		if !near(b/a, Kappa, 1e-12) {
			t.Fatalf("b/a = %v, want %v", b/a, Kappa)
		}
		j := a * (2 + 2*Kappa + Kappa*Kappa/2) // J(a, b) for b/a = Kappa < 2
		if !near(e/(j+e), LambdaShare, 1e-12) {
			t.Fatalf("λ share %v, want %v", e/(j+e), LambdaShare)
		}
		exact := math.Sqrt(j + e)
		if r := g.ratio; !(exact <= r) || !near(exact, r, 1e-6*math.Max(1, math.Pow(float64(c.n)/1e6, 2))) {
			t.Fatalf("d=%d n=%d: exact joint ratio %v vs charged %v (rounding slack must be tiny and non-negative)", c.d, c.n, exact, r)
		}
		ev := tr.Events()
		if len(ev) != 1 || ev[0].Kind != budget.Gaussian || ev[0].Epsilon != c.eps || ev[0].Delta != c.delta || ev[0].Ratio != g.ratio {
			t.Fatalf("events %+v", ev)
		}
		if err := ev[0].Validate(); err != nil {
			t.Fatalf("accountant rejects the event: %v", err)
		}
		if got := budget.GaussianDelta(c.eps, g.ratio); got > c.delta {
			t.Fatalf("δ(ε, R) = %v > %v", got, c.delta)
		}
		// Noise-norm bound and λ margin follow the documented rule.
		f := float64(c.d + 1)
		if want := g.sigmaA * (math.Sqrt(2*f) + math.Sqrt(2*math.Log(1/Failure))); !near(tr.noiseNorm, want, 1e-12) {
			t.Fatalf("E = %v, want %v", tr.noiseNorm, want)
		}
		if want := g.sigmaL * 1.6448536269514722; !near(tr.margin, want, 1e-9) {
			t.Fatalf("margin %v, want %v", tr.margin, want)
		}
	}
	// A hand value: d = 1 (F = 2), ε = 1, δ = 10⁻⁵, Kappa = 1. J = a(2 + 2
	// + ½) = 4.5a, e = (0.05/0.95)·4.5a, so σ_A = √(4.5/0.95)/R = σ_c.
	tr := mustPlan(t, synthConfig(1, 10, 1, 1e-5))
	want := math.Sqrt(4.5/0.95) / tr.gauss.ratio
	if !near(tr.gauss.sigmaA, want, 1e-9) || !near(tr.gauss.sigmaC, want/math.Sqrt(Kappa), 1e-9) {
		t.Fatalf("σ_A %v σ_c %v, want %v and %v", tr.gauss.sigmaA, tr.gauss.sigmaC, want, want/math.Sqrt(Kappa))
	}
}

// TestLaplaceScales checks the pure-ε split and every scale: ε_λ =
// LambdaShare·ε, the rest halved between XᵀX and Xᵀy; b = ℓ₁ sensitivity /
// share with Δ₁(XᵀX) = √((F − 1)(F + 4)/2), Δ₁(Xᵀy) = 2√F, Δ₁(λ) = 1 up to
// rounding slack.
func TestLaplaceScales(t *testing.T) {
	for _, c := range []struct {
		d, n int
		eps  float64
	}{{1, 1, 1}, {10, 353, 1}, {14, 100000, 0.1}, {50, 10000, 10}} {
		tr := mustPlan(t, synthConfig(c.d, c.n, c.eps, 0))
		l := tr.lap
		f := float64(c.d + 1)
		if l == nil || !near(l.epsL, 0.05*c.eps, 1e-12) || !near(l.epsC, 0.475*c.eps, 1e-12) || !near(l.epsA, 0.475*c.eps, 1e-12) {
			t.Fatalf("split %+v", l)
		}
		if s := l.epsA + l.epsC + l.epsL; !near(s, c.eps, 1e-15) {
			t.Fatalf("shares add to %v, want %v", s, c.eps)
		}
		for _, s := range []struct{ got, want float64 }{
			{l.sensA, math.Sqrt((f - 1) * (f + 4) / 2)}, {l.sensC, 2 * math.Sqrt(f)}, {l.sensL, 1},
		} {
			if !(s.got >= s.want) || !near(s.got, s.want, 1e-7) {
				t.Fatalf("d=%d n=%d: sensitivity %v, want %v (+ tiny rounding slack)", c.d, c.n, s.got, s.want)
			}
		}
		if l.scaleA != l.sensA/l.epsA || l.scaleC != l.sensC/l.epsC || l.scaleL != l.sensL/l.epsL {
			t.Fatalf("scales %+v", l)
		}
		ev := tr.Events()
		if len(ev) != 3 {
			t.Fatalf("events %+v", ev)
		}
		for i, want := range []float64{l.epsA, l.epsC, l.epsL} {
			if ev[i] != (budget.Event{Kind: budget.Laplace, Epsilon: want}) {
				t.Fatalf("event %d: %+v", i, ev[i])
			}
		}
		if want := l.scaleA * (math.Sqrt(2*f) + math.Sqrt(2*math.Log(1/Failure))); !near(tr.noiseNorm, want, 1e-12) {
			t.Fatalf("E = %v, want %v", tr.noiseNorm, want)
		}
		if want := l.scaleL * math.Log(10); !near(tr.margin, want, 1e-12) {
			t.Fatalf("margin %v, want %v", tr.margin, want)
		}
	}
}

// TestRoundingSlackSmall: the floating-point slack is negligible at every
// practical n (< 1% of the sensitivity √2 at n = 10⁸, where the O(n/512)
// summation depth dominates) but grows with n as it must.
func TestRoundingSlackSmall(t *testing.T) {
	tA1, _ := roundingBounds(1000, depth(1000, 2))
	tA2, _ := roundingBounds(100_000_000, depth(100_000_000, 64))
	if !(tA1 < tA2) || tA2 > 1e-2 || tA1 > 1e-10 {
		t.Fatalf("t_A(1e3) = %v, t_A(1e8) = %v", tA1, tA2)
	}
	if r := rayleighRounding(100_000_000, 1001); r > 1e-1 {
		t.Fatalf("Rayleigh rounding %v", r)
	}
}

// TestPlanErrors: every refusal depends on the config only.
func TestPlanErrors(t *testing.T) {
	good := synthConfig(3, 100, 1, 1e-5)
	bad := []func(*Config){
		func(c *Config) { c.Epsilon = 0 },
		func(c *Config) { c.Epsilon = math.Inf(1) },
		func(c *Config) { c.Delta = 1 },
		func(c *Config) { c.Delta = -1e-9 },
		func(c *Config) { c.N = 0 },
		func(c *Config) { c.Features = nil; c.Lo = nil; c.Hi = nil },
		func(c *Config) { c.Lo = c.Lo[:2] },
		func(c *Config) { c.Hi[1] = c.Lo[1] },
		func(c *Config) { c.LabelLo, c.LabelHi = 1, 1 },
		func(c *Config) { c.LabelHi = math.NaN() },
		func(c *Config) { c.Epsilon, c.Delta = 1e-9, 1e-12 }, // beyond the sampler's σ range
		func(c *Config) { c.Epsilon, c.Delta = 1e-7, 0 },     // below the Laplace sampler's minimum share
	}
	for i, mod := range bad {
		c := good
		c.Features = append([]string(nil), good.Features...)
		c.Lo = append([]float64(nil), good.Lo...)
		c.Hi = append([]float64(nil), good.Hi...)
		mod(&c)
		if _, err := Plan(c); err == nil {
			t.Fatalf("case %d: Plan accepted %+v", i, c)
		}
	}
	wide := synthConfig(MaxFeatures+1, 10, 1, 0)
	if _, err := Plan(wide); err == nil {
		t.Fatal("Plan accepted too many features")
	}
}

// TestNoiseMatchesPlan releases the statistics of a fixed table many times
// and checks the noise actually added: standard deviation σ(1 + 2⁻¹⁰) per
// coordinate of the discrete Gaussian (diagonal and √2-scaled off-diagonal
// coordinates alike, i.e. σ_A/√2 on the matrix's off-diagonal), and mean
// absolute deviation b for Laplace.
func TestNoiseMatchesPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ds := synthLinear(rng, synthBeta(rng, 2), 30, 0.1)
	for _, delta := range []float64{1e-5, 0} {
		tr := mustPlan(t, synthConfig(2, 30, 0.8, delta))
		st := tr.stats(ds.x, ds.y)
		const draws = 2000
		var dev [3][]float64 // A diagonal, A off-diagonal, c
		var devQ []float64
		dirsOK := true
		for k := 0; k < draws; k++ {
			r, err := tr.addNoise(st)
			if err != nil {
				t.Fatal(err)
			}
			f := tr.f
			for j := 0; j < f; j++ {
				for i := j; i < f; i++ {
					if i == f-1 && j == f-1 {
						if r.a.At(i, j) != tr.interceptEntry() {
							t.Fatalf("intercept entry %v, want the public %v", r.a.At(i, j), tr.interceptEntry())
						}
						continue
					}
					d := r.a.At(j, i) - st.a[j*f+i]
					if i == j {
						dev[0] = append(dev[0], d)
					} else {
						dev[1] = append(dev[1], d)
					}
				}
				dev[2] = append(dev[2], r.c[j]-st.c[j])
			}
			q := rayleighMin(st.a, f, directions(r.a))
			devQ = append(devQ, r.q-q)
			dirsOK = dirsOK && !math.IsNaN(q)
		}
		if !dirsOK {
			t.Fatal("NaN λ-statistic")
		}
		if delta > 0 {
			g := tr.gauss
			infl := 1 + 0x1p-10
			for i, want := range []float64{g.sigmaA * infl, g.sigmaA * infl / math.Sqrt2, g.sigmaC * infl, g.sigmaL * infl} {
				v := devQ
				if i < 3 {
					v = dev[i]
				}
				if sd := rms(v); !near(sd, want, 0.06) {
					t.Fatalf("Gaussian block %d: sd %v, want %v", i, sd, want)
				}
			}
		} else {
			l := tr.lap
			for i, want := range []float64{l.scaleA, l.scaleA, l.scaleC, l.scaleL} {
				v := devQ
				if i < 3 {
					v = dev[i]
				}
				if mad := meanAbs(v); !near(mad, want, 0.08) {
					t.Fatalf("Laplace block %d: mean |noise| %v, want %v", i, mad, want)
				}
			}
		}
	}
}

func rms(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s / float64(len(v)))
}

func meanAbs(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += math.Abs(x)
	}
	return s / float64(len(v))
}

// TestSamplerLimits: the joint ratio stays above the grid condition for
// every plan that is accepted.
func TestSamplerLimits(t *testing.T) {
	tr := mustPlan(t, synthConfig(3, 10, 0.01, 1e-10))
	if tr.gauss.ratio < math.Sqrt(3)*noise.GaussianMinRatio {
		t.Fatalf("accepted ratio %v below the grid condition", tr.gauss.ratio)
	}
}

// The ridge is max(0, RidgeFactor·E − λ̃_min), λ̃_min = max(0, q̃ − margin):
// a post-processing of the released λ-statistic with public constants.
func TestRidgeRule(t *testing.T) {
	for _, delta := range []float64{0, 1e-5} {
		tr, err := Plan(synthConfig(5, 1000, 1, delta))
		if err != nil {
			t.Fatal(err)
		}
		e, m := tr.noiseNorm, tr.margin
		for _, c := range []struct{ q, want float64 }{
			{-1e9, RidgeFactor * e}, // λ̃_min clamps at 0
			{m, RidgeFactor * e},    // q̃ − margin = 0
			{m + RidgeFactor*e/2, RidgeFactor * e / 2},
			{m + 10*e, 0}, // well conditioned: no ridge
		} {
			if got := tr.ridge(c.q); math.Abs(got-c.want) > 1e-12*math.Max(1, c.want) {
				t.Fatalf("δ=%v q=%v: λ = %v, want %v", delta, c.q, got, c.want)
			}
		}
	}
	if RidgeFactor != 0.25 {
		t.Fatalf("RidgeFactor = %v, documented ¼", RidgeFactor)
	}
}
