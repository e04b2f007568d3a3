package amp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/budget"
)

// TestGaussianSigma checks the calibration against its defining condition:
// δ(ε; Δ₂/σ) ≤ δ at the returned σ and > δ just below it, for a range of
// (ε, δ), and that σ scales linearly with Δ₂.
func TestGaussianSigma(t *testing.T) {
	for _, eps := range []float64{0.001, 0.1, 1, 5, 50} {
		for _, delta := range []float64{1e-12, 1e-6, 0.01} {
			s, err := GaussianSigma(1, eps, delta)
			if err != nil {
				t.Fatal(err)
			}
			if d := budget.GaussianDelta(eps, 1/s); d > delta {
				t.Fatalf("ε=%v δ=%v: σ=%v gives δ=%v", eps, delta, s, d)
			}
			if d := budget.GaussianDelta(eps, 1/(s*(1-1e-6))); d <= delta*(1-1e-9) {
				t.Fatalf("ε=%v δ=%v: σ=%v is not the smallest (δ=%v at 0.999999σ)", eps, delta, s, d)
			}
			if s7, _ := GaussianSigma(7, eps, delta); math.Abs(s7/s-7) > 1e-9 {
				t.Fatalf("σ not linear in Δ₂: %v vs 7·%v", s7, s)
			}
		}
	}
	for _, bad := range [][3]float64{{0, 1, 0.1}, {1, 0, 0.1}, {1, 1, 0}, {1, 1, 1}, {math.NaN(), 1, 0.1}, {1, math.Inf(1), 0.1}} {
		if _, err := GaussianSigma(bad[0], bad[1], bad[2]); err == nil {
			t.Fatalf("no error for %v", bad)
		}
	}
}

// TestSteps checks the planned scales and events of both steps and the
// refusals of invalid plans.
func TestSteps(t *testing.T) {
	g, err := NewGaussian(1e-9, 15, 0.01, 1e-4)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := GaussianSigma(2e-9, 0.01, 1e-4); g.Scale != want || !g.Gaussian {
		t.Fatalf("Gaussian step %+v, want σ %v", g, want)
	}
	if ev := g.Event(); ev.Kind != budget.Gaussian || ev.Ratio != 2e-9/g.Scale || ev.Validate() != nil {
		t.Fatalf("event %+v: %v", ev, ev.Validate())
	}
	l, err := NewLaplace(1e-6, 45, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Sqrt(45) * 2e-6 / 0.05; l.Scale != want || l.Gaussian {
		t.Fatalf("Laplace step %+v, want scale %v", l, want)
	}
	if ev := l.Event(); ev != (budget.Event{Kind: budget.Laplace, Epsilon: 0.05}) || ev.Validate() != nil {
		t.Fatalf("event %+v", ev)
	}
	for name, f := range map[string]func() error{
		"zero radius":        func() error { _, err := NewGaussian(0, 3, 1, 0.1); return err },
		"NaN radius":         func() error { _, err := NewLaplace(math.NaN(), 3, 1); return err },
		"no coordinates":     func() error { _, err := NewLaplace(1, 0, 1); return err },
		"too many Gaussian":  func() error { _, err := NewGaussian(1, MaxGaussianDim+1, 1, 0.1); return err },
		"delta zero":         func() error { _, err := NewGaussian(1, 3, 1, 0); return err },
		"tiny Laplace ε":     func() error { _, err := NewLaplace(1, 3, 1e-9); return err },
		"Laplace scale huge": func() error { _, err := NewLaplace(1e300, 3, 1); return err },
	} {
		if f() == nil {
			t.Fatalf("%s: no error", name)
		}
	}
	if err := l.Apply(make([]float64, 44)); err == nil {
		t.Fatal("Apply accepted a wrong length")
	}
	x := make([]float64, 45)
	if err := l.Apply(x); err != nil {
		t.Fatal(err)
	}
}

// TestAuditOutputStep audits each step on two inputs at the largest
// distance it covers (2r along one coordinate), observing that coordinate:
// it passes at the step's (ε, δ) and catches a step with a quarter of the
// noise.
func TestAuditOutputStep(t *testing.T) {
	const r = 0.5
	sampler := func(s Step) audit.Sampler {
		return func(nb int) float64 {
			x := make([]float64, s.Dim)
			x[0] = 2 * r * float64(nb)
			if err := s.Apply(x); err != nil {
				t.Fatal(err)
			}
			return x[0]
		}
	}
	g, err := NewGaussian(r, 1, 1, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLaplace(r, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	audit.RequirePass(t, sampler(g), 1, audit.Config{N: 20000, Delta: 1e-3})
	audit.RequirePass(t, sampler(l), 1, audit.Config{N: 20000})
	g.Scale /= 4
	l.Scale /= 4
	audit.RequireCatch(t, sampler(g), 1, audit.Config{N: 20000, Delta: 1e-3})
	audit.RequireCatch(t, sampler(l), 1, audit.Config{N: 20000})
}

// TestChiSquareBounds checks the Laurent–Massart bounds empirically.
func TestChiSquareBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{1, 5, 50} {
		const x, draws = 3.0, 20000
		up, lo := ChiSquareUpper(k, x), ChiSquareLower(k, x)
		var above, below int
		for i := 0; i < draws; i++ {
			var s float64
			for j := 0; j < k; j++ {
				v := rng.NormFloat64()
				s += v * v
			}
			if s > up {
				above++
			}
			if s < lo {
				below++
			}
		}
		// e^(−3) ≈ 0.0498: allow sampling noise.
		if lim := int(draws*math.Exp(-x)) + 150; above > lim || below > lim {
			t.Fatalf("k=%d: %d above %v, %d below %v (limit %d)", k, above, up, below, lo, lim)
		}
	}
	if TailLevel(0) != 1000*math.Ln2 || TailLevel(3) != 1000*math.Ln2+3 {
		t.Fatal("TailLevel")
	}
}
