package noise

import (
	"math"
	"slices"
	"testing"
)

// Distribution tests use fixed thresholds at significance 1e-6 (a correct
// sampler fails about once in a million runs) while the sample sizes are
// chosen so that a scale error of a few percent is detected.
const statAlpha = 1e-6

// ksStatistic returns the Kolmogorov–Smirnov distance between the empirical
// distribution of x and the continuous CDF cdf.
func ksStatistic(x []float64, cdf func(float64) float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	n := float64(len(s))
	var d float64
	for i, v := range s {
		f := cdf(v)
		d = math.Max(d, math.Max(f-float64(i)/n, float64(i+1)/n-f))
	}
	return d
}

// ksCritical is the asymptotic KS critical value at level α
// (Dvoretzky–Kiefer–Wolfowitz with Massart's constant: P[D > c] ≤ 2e^(−2nc²)).
func ksCritical(n int, alpha float64) float64 {
	return math.Sqrt(math.Log(2/alpha) / (2 * float64(n)))
}

func requireKS(t *testing.T, name string, x []float64, cdf func(float64) float64) {
	t.Helper()
	d, c := ksStatistic(x, cdf), ksCritical(len(x), statAlpha)
	t.Logf("%s: KS D = %.5f (critical %.5f, n = %d)", name, d, c, len(x))
	if d > c {
		t.Fatalf("%s: KS distance %.5f exceeds critical value %.5f", name, d, c)
	}
}

func meanVar(x []float64) (mean, variance float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		variance += (v - mean) * (v - mean)
	}
	return mean, variance / float64(len(x)-1)
}

// requireWithin fails unless |got − want| ≤ k·se.
func requireWithin(t *testing.T, name string, got, want, se, k float64) {
	t.Helper()
	t.Logf("%s: got %.6g, want %.6g ± %.3g", name, got, want, k*se)
	if math.Abs(got-want) > k*se {
		t.Fatalf("%s: got %.6g, want %.6g within %.3g (%g standard errors)", name, got, want, k*se, k)
	}
}

func laplaceCDF(scale float64) func(float64) float64 {
	return func(x float64) float64 {
		if x < 0 {
			return 0.5 * math.Exp(x/scale)
		}
		return 1 - 0.5*math.Exp(-x/scale)
	}
}

func normalCDF(sigma float64) func(float64) float64 {
	return func(x float64) float64 { return 0.5 * math.Erfc(-x/(sigma*math.Sqrt2)) }
}

// meanAbs returns the mean of |x_i|; for Laplace(b) it estimates b with
// standard error b/√n, a much sharper scale check than KS.
func meanAbs(x []float64) float64 {
	var m float64
	for _, v := range x {
		m += math.Abs(v)
	}
	return m / float64(len(x))
}

func TestDistributionChecksHavePower(t *testing.T) {
	// The checks used below must reject a wrong scale at their sample sizes:
	// KS a 15% error, the mean-|X| check a 5% error.
	const n = 40000
	x := make([]float64, n)
	for i := range x {
		x[i] = LaplaceFloat() * 1.15
	}
	if d, c := ksStatistic(x, laplaceCDF(1)), ksCritical(n, statAlpha); d <= c {
		t.Fatalf("KS did not detect a 15%% scale error: D = %.5f ≤ %.5f", d, c)
	}
	for i := range x {
		x[i] = LaplaceFloat() * 1.05
	}
	if m := meanAbs(x); math.Abs(m-1) <= 6/math.Sqrt(n) {
		t.Fatalf("mean |X| = %.4f did not detect a 5%% scale error", m)
	}
}
