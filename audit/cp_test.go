package audit

import (
	"math"
	"testing"
)

// binomSum returns P[from ≤ Bin(n, p) ≤ to] by direct summation of the pmf
// (summing only the small tail keeps full relative precision).
func binomSum(from, to, n int, p float64) float64 {
	lg, _ := math.Lgamma(float64(n + 1))
	var s float64
	for i := from; i <= to; i++ {
		l1, _ := math.Lgamma(float64(i + 1))
		l2, _ := math.Lgamma(float64(n - i + 1))
		s += math.Exp(lg - l1 - l2 + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return s
}

func TestClopperPearsonKnownValues(t *testing.T) {
	// Two-sided 95% intervals (each side at 0.025), standard table values.
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{5, 10, 0.1871, 0.8129},
		{1, 10, 0.0025, 0.4450},
		{0, 10, 0, 0.3085},
		{10, 10, 0.6915, 1},
		{50, 100, 0.3983, 0.6017},
	} {
		lo, hi := cpLower(c.k, c.n, 0.025), cpUpper(c.k, c.n, 0.025)
		if math.Abs(lo-c.lo) > 1e-4 || math.Abs(hi-c.hi) > 1e-4 {
			t.Errorf("CP(%d/%d) = [%.4f, %.4f], want [%.4f, %.4f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
	// Closed forms at the boundary: upper(0) = 1 − a^(1/n), lower(n) = a^(1/n).
	a, n := 2.5e-7, 5000
	if got, want := cpUpper(0, n, a), 1-math.Pow(a, 1/float64(n)); math.Abs(got-want) > 1e-12 {
		t.Errorf("upper(0/%d) = %v, want %v", n, got, want)
	}
	if got, want := cpLower(n, n, a), math.Pow(a, 1/float64(n)); math.Abs(got-want) > 1e-12 {
		t.Errorf("lower(%d/%d) = %v, want %v", n, n, got, want)
	}
}

// The defining property at the small levels the audit uses:
// P[Bin(n, upper) ≤ k] = a and P[Bin(n, lower) ≥ k] = a.
func TestClopperPearsonDefinition(t *testing.T) {
	a := 2.5e-7
	for _, c := range []struct{ k, n int }{{3, 500}, {40, 2000}, {1000, 2000}, {1990, 2000}, {150, 20000}} {
		up := cpUpper(c.k, c.n, a)
		if got := binomSum(0, c.k, c.n, up); math.Abs(got-a)/a > 1e-4 {
			t.Errorf("P[Bin(%d, upper=%.6g) ≤ %d] = %.6g, want %.3g", c.n, up, c.k, got, a)
		}
		lo := cpLower(c.k, c.n, a)
		if got := binomSum(c.k, c.n, c.n, lo); math.Abs(got-a)/a > 1e-4 {
			t.Errorf("P[Bin(%d, lower=%.6g) ≥ %d] = %.6g, want %.3g", c.n, lo, c.k, got, a)
		}
		if !(lo < float64(c.k)/float64(c.n) && float64(c.k)/float64(c.n) < up) {
			t.Errorf("CP bounds [%v, %v] do not bracket %d/%d", lo, up, c.k, c.n)
		}
	}
}
