package noise

import (
	"math"
	"math/big"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func TestGaussianParamsExact(t *testing.T) {
	for _, c := range []struct {
		sigma float64
		f     int
		g     float64
		s     uint64
	}{
		// σ=10 ∈ [8,16): g = 2⁻²⁷, s = ⌈10·2²⁷·(1+2⁻¹⁰)⌉ + 1.
		{10, 1, 0x1p-27, 10*(1<<27) + 10*(1<<17) + 1},
		// σ=1, √F=2: σ·2⁻³⁰/√F = 2⁻³¹ exactly; the (1−2⁻⁴⁰) guard picks 2⁻³².
		{1, 4, 0x1p-32, 1<<32 + 1<<22 + 1},
		// σ=10, √F=65: 10/(65·2³⁰) ≈ 2^-32.7, so g = 2⁻³³.
		{10, 65 * 65, 0x1p-33, 10*(1<<33) + 10*(1<<23) + 1},
	} {
		g, s, err := gaussianParams(c.sigma, c.f)
		if err != nil {
			t.Fatal(err)
		}
		if g != c.g || s != c.s {
			t.Fatalf("gaussianParams(%v, %d) = (%v, %d), want (%v, %d)", c.sigma, c.f, g, s, c.g, c.s)
		}
	}
}

// bigSqrtUp returns an upper bound on √f (200-bit square root plus one part
// in 2¹⁸⁰).
func bigSqrtUp(f int) *big.Float {
	r := new(big.Float).SetPrec(200).Sqrt(new(big.Float).SetPrec(200).SetInt64(int64(f)))
	return r.Mul(r, new(big.Float).SetPrec(200).SetFloat64(1+0x1p-50))
}

// Exact checks of the grid/scale invariants and of the rounding accounting:
// g is a power of two with √F·g ≤ 2⁻³⁰σ, s ≥ (1+2⁻¹⁰)σ/g, and for the worst
// admissible sensitivity Δ₂ = GaussianMinRatio·σ (and larger ones) the
// rounded integer shift satisfies (Δ₂ + √F·g)/(g·s) ≤ Δ₂/σ.
func TestGaussianRoundingAccountingExact(t *testing.T) {
	const prec = 200
	bf := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
	mul := func(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(prec).Mul(a, b) }
	add := func(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(prec).Add(a, b) }
	for _, sigma := range []float64{0x1p-900, 1e-7, 0.37, 1, 2.5, 10, 1234.5, 1e15, 0x1p900} {
		for _, f := range []int{1, 2, 3, 4, 1000, 65 * 65, maxGaussianDim} {
			g, s, err := gaussianParams(sigma, f)
			if err != nil {
				t.Fatal(err)
			}
			if fr, _ := math.Frexp(g); fr != 0.5 {
				t.Fatalf("σ=%v F=%d: g = %v is not a power of two", sigma, f, g)
			}
			sq := bigSqrtUp(f)
			lim := mul(bf(sigma), bf(0x1p-30))
			if mul(sq, bf(g)).Cmp(lim) > 0 {
				t.Fatalf("σ=%v F=%d: √F·g > 2⁻³⁰σ", sigma, f)
			}
			// Not needlessly fine: 4g·√F > 2⁻³⁰σ.
			if mul(bf(4*g), sq).Cmp(lim) <= 0 {
				t.Fatalf("σ=%v F=%d: grid %v finer than needed", sigma, f, g)
			}
			sBig := new(big.Float).SetPrec(prec).SetUint64(s)
			need := mul(bf(sigma/g), bf(gaussianInflation))
			if sBig.Cmp(need) < 0 || sBig.Cmp(add(need, bf(2))) > 0 {
				t.Fatalf("σ=%v F=%d: s = %d outside [(1+2⁻¹⁰)σ/g, +2]", sigma, f, s)
			}
			if s >= 1<<42 {
				t.Fatalf("σ=%v F=%d: s = %d ≥ 2⁴²", sigma, f, s)
			}
			for _, ratio := range []float64{GaussianMinRatio, 1e-3, 0.5, 2} {
				d2 := mul(bf(sigma), bf(ratio))
				// (Δ₂ + √F·g)·σ ≤ Δ₂·g·s
				lhs := mul(add(d2, mul(sq, bf(g))), bf(sigma))
				rhs := mul(mul(d2, bf(g)), sBig)
				if lhs.Cmp(rhs) > 0 {
					t.Fatalf("σ=%v F=%d Δ₂/σ=%v: rounded shift exceeds the claimed ratio", sigma, f, ratio)
				}
			}
		}
	}
}

func TestGaussianValidation(t *testing.T) {
	for _, sigma := range []float64{0, -1, math.NaN(), math.Inf(1), 0x1p-901, 0x1p901} {
		if _, err := AddGaussian(0, sigma); err == nil {
			t.Errorf("AddGaussian(0, %v): want error", sigma)
		}
		if err := AddGaussianVec([]float64{1}, sigma); err == nil {
			t.Errorf("AddGaussianVec(_, %v): want error", sigma)
		}
		if err := AddGaussianVec(nil, sigma); err == nil {
			t.Errorf("AddGaussianVec(nil, %v): want error", sigma)
		}
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := AddGaussian(x, 1); err == nil {
			t.Errorf("AddGaussian(%v, 1): want error", x)
		}
		v := []float64{1, x}
		if err := AddGaussianVec(v, 1); err == nil || v[0] != 1 {
			t.Errorf("AddGaussianVec with %v: err %v, x %v", x, err, v)
		}
	}
	if err := AddGaussianVec(make([]float64, maxGaussianDim+1), 1); err == nil {
		t.Errorf("AddGaussianVec above the maximum dimension: want error")
	}
	for _, c := range []struct{ x, sigma float64 }{{1e300, 1e-3}, {0, 0x1p-900}, {0, 0x1p900}} {
		v, err := AddGaussian(c.x, c.sigma)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("AddGaussian(%v, %v) = %v, %v", c.x, c.sigma, v, err)
		}
	}
}

// requireFrequency checks that ok() is true with probability p (6 standard
// errors over n trials).
func requireFrequency(t *testing.T, name string, n int, p float64, ok func() bool) {
	t.Helper()
	hits := 0
	for i := 0; i < n; i++ {
		if ok() {
			hits++
		}
	}
	requireWithin(t, name, float64(hits)/float64(n), p, math.Sqrt(p*(1-p)/float64(n)), 6)
}

func TestBernoulliExact(t *testing.T) {
	const n = 200000
	requireFrequency(t, "Bernoulli(exp(-1))", n, math.Exp(-1), bernoulliExpMinusOne)
	requireFrequency(t, "Bernoulli(exp(-1/3))", n, math.Exp(-1.0/3), func() bool { return bernoulliExpRatio(1, 3) })
	requireFrequency(t, "Bernoulli(exp(-999/1000))", n, math.Exp(-0.999), func() bool { return bernoulliExpRatio(999, 1000) })

	den := new(big.Int).Lsh(big.NewInt(1), 130)
	den.Add(den, big.NewInt(12345))
	num := new(big.Int).Div(new(big.Int).Mul(den, big.NewInt(2)), big.NewInt(7))
	requireFrequency(t, "Bernoulli(2/7) on 131-bit integers", n, 2.0/7, func() bool { return bernoulliRatioBig(num, den) })
	// den = 2¹²⁸ + 1: half of the lazily drawn values are rejected.
	den2 := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1))
	num2 := new(big.Int).Lsh(big.NewInt(1), 127)
	requireFrequency(t, "Bernoulli(2¹²⁷/(2¹²⁸+1))", n, 0.5, func() bool { return bernoulliRatioBig(num2, den2) })
	requireFrequency(t, "Bernoulli(1/3) small", n, 1.0/3, func() bool { return bernoulliRatioBig(big.NewInt(1), big.NewInt(3)) })
	for i := 0; i < 1000; i++ {
		if bernoulliRatioBig(big.NewInt(0), den) {
			t.Fatal("Bernoulli(0) returned true")
		}
		if !bernoulliRatioBig(den, den) {
			t.Fatal("Bernoulli(1) returned false")
		}
		// Equal top words, decided in a lower word.
		if !bernoulliRatioBig(den2, den2) {
			t.Fatal("Bernoulli(1) on 2¹²⁸+1 returned false")
		}
	}
	dg := newDiscreteGaussian(1)
	requireFrequency(t, "Bernoulli(exp(-5/2)) big", n, math.Exp(-2.5), func() bool {
		return dg.bernoulliExpBig(big.NewInt(5), big.NewInt(2))
	})
	requireFrequency(t, "Bernoulli(exp(-0)) big", 1000, 1, func() bool {
		return dg.bernoulliExpBig(big.NewInt(0), big.NewInt(7))
	})
}

// discreteGaussianPMF returns P[Z = z] for |z| ≤ m under N_ℤ(0, s²), exactly
// normalised over a range wide enough for float64.
func discreteGaussianPMF(s float64, m int) map[int]float64 {
	var norm float64
	w := int(40*s) + 10
	for z := -w; z <= w; z++ {
		norm += math.Exp(-float64(z*z) / (2 * s * s))
	}
	p := make(map[int]float64)
	for z := -m; z <= m; z++ {
		p[z] = math.Exp(-float64(z*z)/(2*s*s)) / norm
	}
	return p
}

// Chi-square goodness of fit of the raw sampler against the exact pmf.
func TestDiscreteGaussianPMF(t *testing.T) {
	const n = 100000
	for _, s := range []uint64{1, 3} {
		m := int(4 * s) // bins −m..m, tails lumped
		pmf := discreteGaussianPMF(float64(s), m)
		var inner float64
		for _, p := range pmf {
			inner += p
		}
		tail := (1 - inner) / 2
		counts := make(map[int]int)
		dg := newDiscreteGaussian(s)
		for i := 0; i < n; i++ {
			z := int(dg.sample())
			switch {
			case z > m:
				z = m + 1
			case z < -m:
				z = -m - 1
			}
			counts[z]++
		}
		var chi2 float64
		bins := 0
		for z := -m - 1; z <= m+1; z++ {
			p, ok := pmf[z]
			if !ok {
				p = tail
			}
			e := p * n
			if e < 5 {
				if counts[z] > int(e)+20 {
					t.Fatalf("s=%d: %d draws at %d, expected %.2f", s, counts[z], z, e)
				}
				continue
			}
			chi2 += (float64(counts[z]) - e) * (float64(counts[z]) - e) / e
			bins++
		}
		crit := distuv.ChiSquared{K: float64(bins - 1)}.Quantile(1 - statAlpha)
		t.Logf("N_Z(0,%d²): χ² = %.1f on %d bins (critical %.1f)", s, chi2, bins, crit)
		if chi2 > crit {
			t.Fatalf("N_Z(0,%d²): χ² = %.1f exceeds %.1f", s, chi2, crit)
		}
	}
}

func TestDiscreteGaussianVariance(t *testing.T) {
	const n = 100000
	s := 10.0
	pmf := discreteGaussianPMF(s, int(40*s))
	var want float64
	for z, p := range pmf {
		want += float64(z*z) * p
	}
	dg := newDiscreteGaussian(10)
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(dg.sample())
	}
	m, v := meanVar(x)
	requireWithin(t, "N_Z(0,10²) mean", m, 0, math.Sqrt(want/n), 6)
	requireWithin(t, "N_Z(0,10²) variance", v, want, want*math.Sqrt(2.0/n), 6)
	if math.Abs(want-100) > 1e-6 {
		t.Fatalf("exact variance %v should be ≈ 100", want)
	}
}

func TestAddGaussianDistribution(t *testing.T) {
	const n = 40000
	for _, sigma := range []float64{0.7, 10} {
		g, s, err := gaussianParams(sigma, 1)
		if err != nil {
			t.Fatal(err)
		}
		used := g * float64(s)
		x := make([]float64, n)
		for i := range x {
			v, err := AddGaussian(5, sigma)
			if err != nil {
				t.Fatal(err)
			}
			if k := (v - roundToGrid(5, g)) / g; k != math.Trunc(k) {
				t.Fatalf("noise %v is not on the grid %v", v-5, g)
			}
			x[i] = v - 5
		}
		requireKS(t, "AddGaussian", x, normalCDF(used))
		m, v := meanVar(x)
		requireWithin(t, "AddGaussian mean", m, 0, used/math.Sqrt(n), 6)
		requireWithin(t, "AddGaussian variance", v, used*used, used*used*math.Sqrt(2.0/n), 6)
	}
}

func TestAddGaussianVecCoordinates(t *testing.T) {
	const f, rounds = 100, 300
	sigma := 2.0
	g, s, err := gaussianParams(sigma, f)
	if err != nil {
		t.Fatal(err)
	}
	used := g * float64(s)
	var all []float64
	for r := 0; r < rounds; r++ {
		v := make([]float64, f)
		for i := range v {
			v[i] = float64(i) / 3
		}
		if err := AddGaussianVec(v, sigma); err != nil {
			t.Fatal(err)
		}
		for i := range v {
			all = append(all, v[i]-roundToGrid(float64(i)/3, g))
		}
	}
	requireKS(t, "AddGaussianVec", all, normalCDF(used))
	_, v := meanVar(all)
	requireWithin(t, "AddGaussianVec variance", v, used*used, used*used*math.Sqrt(2.0/float64(len(all))), 6)
}
