package noise

import (
	"math"
	"math/big"
	"testing"

	gdp "github.com/google/differential-privacy/go/v3/noise"
)

func TestLaplaceScaleFormulas(t *testing.T) {
	if got, want := laplaceInflation(1), 1+0x1p-19; got != want {
		t.Fatalf("laplaceInflation(1) = %v, want %v", got, want)
	}
	if got, want := laplaceInflation(1000), 1+1000*0x1p-19; got != want {
		t.Fatalf("laplaceInflation(1000) = %v, want %v", got, want)
	}
	if got, want := LaplaceMinEpsilon(1), 0x1p-19*(1+0x1p-19); got != want {
		t.Fatalf("LaplaceMinEpsilon(1) = %v, want %v", got, want)
	}
	for _, b := range []float64{1e-6, 0.3, 1, 2, 7.5, 1e9} {
		for _, f := range []int{1, 4, 1000} {
			got := laplaceInflatedScale(b, f)
			exact := new(big.Float).SetPrec(200).Mul(big.NewFloat(b), big.NewFloat(laplaceInflation(f)))
			if new(big.Float).SetFloat64(got).Cmp(exact) < 0 {
				t.Fatalf("inflated scale %v below b·c(F) = %v", got, exact)
			}
			if got > math.Nextafter(math.Nextafter(b*laplaceInflation(f), math.Inf(1)), math.Inf(1)) {
				t.Fatalf("inflated scale %v more than 2 ulp above b·c(F)", got)
			}
		}
	}
	// Grid: smallest power of two ≥ b′/2⁴⁰.
	for _, c := range []struct{ inflated, want float64 }{
		{0x1p40, 1},
		{3 * 0x1p40, 4},
		{math.Nextafter(0x1p40, 2*0x1p40), 2},
		{1, 0x1p-40},
		{1.5, 0x1p-39},
		{1e-6, 0x1p-59}, // 1e-6/2⁴⁰ ≈ 9.09e-19 ∈ (2⁻⁶⁰, 2⁻⁵⁹]
	} {
		got := laplaceGrid(c.inflated)
		x := c.inflated / 0x1p40
		if got < x || got/2 >= x || math.Log2(got) != math.Round(math.Log2(got)) {
			t.Fatalf("laplaceGrid(%v) = %v is not the smallest power of two ≥ %v", c.inflated, got, x)
		}
		if got != c.want {
			t.Fatalf("laplaceGrid(%v) = %v, want %v", c.inflated, got, c.want)
		}
	}
}

func TestRoundToGrid(t *testing.T) {
	g := 0x1p-10
	for _, c := range []struct{ x, want float64 }{
		{0, 0},
		{1, 1},
		{0.3, math.Round(0.3*1024) / 1024},
		{-0.3, math.Round(-0.3*1024) / 1024},
		{1e300, 1e300},   // already a multiple of g, no x/g overflow
		{-1e300, -1e300}, //
		{0x1p-1074, 0},   // subnormal rounds to 0
	} {
		if got := roundToGrid(c.x, g); got != c.want {
			t.Fatalf("roundToGrid(%v, 2^-10) = %v, want %v", c.x, got, c.want)
		}
	}
	if got := roundToGrid(1e300, 0x1p-1000); got != 1e300 || math.IsInf(got, 0) {
		t.Fatalf("roundToGrid overflowed: %v", got)
	}
}

// The privacy argument needs λ·(Δ₁ + F·g)/g ≤ ε for Δ₁ = b·ε, where λ is
// the geometric parameter exactly as the library computes it in float64,
// g·ε/(l₁ + g) with ε = 1 and l₁ = b′ (ideally g/(b′+g)). Check it in exact
// arithmetic at the worst case ε = LaplaceMinEpsilon(F) and at larger ε.
func TestLaplaceRoundingAccountingExact(t *testing.T) {
	prec := uint(300)
	bf := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
	for _, b := range []float64{0x1p-800, 1e-9, 0.1, 1, 3, 1e12, 0x1p800} {
		for _, f := range []int{1, 2, 4, 65 * 65, 1 << 19} {
			inflated := laplaceInflatedScale(b, f)
			g := laplaceGrid(inflated)
			lambda := g * 1 / (inflated + g) // the library's float64 expression
			for _, eps := range []float64{LaplaceMinEpsilon(f), 1e-3, 1, 10} {
				if eps < LaplaceMinEpsilon(f) {
					continue
				}
				delta := new(big.Float).SetPrec(prec).Mul(bf(b), bf(eps))
				shift := new(big.Float).SetPrec(prec).Add(delta, new(big.Float).SetPrec(prec).Mul(bf(float64(f)), bf(g)))
				loss := new(big.Float).SetPrec(prec).Mul(bf(lambda), shift)
				loss.Quo(loss, bf(g))
				if loss.Cmp(bf(eps)) > 0 {
					t.Fatalf("b=%v F=%d ε=%v: privacy loss bound %v exceeds ε", b, f, eps, loss)
				}
			}
		}
	}
}

func TestLaplaceValidation(t *testing.T) {
	for _, scale := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1), 0x1p-901, 0x1p901} {
		if _, err := AddLaplace(0, scale); err == nil {
			t.Errorf("AddLaplace(0, %v): want error", scale)
		}
		if err := AddLaplaceVec([]float64{1, 2}, scale); err == nil {
			t.Errorf("AddLaplaceVec(_, %v): want error", scale)
		}
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := AddLaplace(x, 1); err == nil {
			t.Errorf("AddLaplace(%v, 1): want error", x)
		}
		v := []float64{1, x, 3}
		if err := AddLaplaceVec(v, 1); err == nil {
			t.Errorf("AddLaplaceVec with %v: want error", x)
		}
		if v[0] != 1 || v[2] != 3 {
			t.Errorf("AddLaplaceVec modified x on error: %v", v)
		}
	}
	if err := AddLaplaceVec(nil, 1); err != nil {
		t.Errorf("AddLaplaceVec(nil): %v", err)
	}
	if err := AddLaplaceVec(nil, -1); err == nil {
		t.Errorf("AddLaplaceVec(nil, -1): want error")
	}
	// Extreme but valid inputs give finite outputs.
	for _, c := range []struct{ x, scale float64 }{{1e300, 1e-6}, {-1e300, 1e-6}, {0, 0x1p-900}, {0, 0x1p900}} {
		v, err := AddLaplace(c.x, c.scale)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("AddLaplace(%v, %v) = %v, %v", c.x, c.scale, v, err)
		}
	}
}

// The grid recomputed here must be exactly the library's granularity: every
// library draw is a multiple of g, and some are odd multiples (so the
// library's grid is not 2g or coarser).
func TestLaplaceGridMatchesLibrary(t *testing.T) {
	for _, b := range []float64{1e-3, 1, 3.7, 1e6} {
		inflated := laplaceInflatedScale(b, 1)
		g := laplaceGrid(inflated)
		odd := 0
		for i := 0; i < 200; i++ {
			z, err := gdp.Laplace().AddNoiseFloat64(0, 1, inflated, 1, 0)
			if err != nil {
				t.Fatal(err)
			}
			k := z / g
			if k != math.Trunc(k) {
				t.Fatalf("b=%v: library draw %v is not a multiple of g = %v", b, z, g)
			}
			if math.Mod(k, 2) != 0 {
				odd++
			}
			// Our wrapper: output − round(x) is the same kind of draw.
			x := 0.123456789 * b
			v, err := AddLaplace(x, b)
			if err != nil {
				t.Fatal(err)
			}
			if k := (v - roundToGrid(x, g)) / g; k != math.Trunc(k) {
				t.Fatalf("b=%v: AddLaplace noise %v is not a multiple of g = %v", b, v-roundToGrid(x, g), g)
			}
		}
		if odd == 0 {
			t.Fatalf("b=%v: no odd multiple of g in 200 draws; the library grid is coarser than %v", b, g)
		}
	}
}

func TestAddLaplaceDistribution(t *testing.T) {
	const n = 25000
	for _, b := range []float64{0.5, 3} {
		used := laplaceInflatedScale(b, 1)
		x := make([]float64, n)
		for i := range x {
			v, err := AddLaplace(10, b)
			if err != nil {
				t.Fatal(err)
			}
			x[i] = v - 10
		}
		requireKS(t, "AddLaplace", x, laplaceCDF(used))
		requireWithin(t, "AddLaplace mean |noise|", meanAbs(x), used, used/math.Sqrt(n), 6)
		m, _ := meanVar(x)
		requireWithin(t, "AddLaplace mean", m, 0, used*math.Sqrt2/math.Sqrt(n), 6)
	}
}

func TestAddLaplaceVecDistribution(t *testing.T) {
	// Coordinates are i.i.d. Laplace(b′) around x, with b′ = b·c(F).
	const f, rounds = 50, 400
	b := 2.0
	used := laplaceInflatedScale(b, f)
	var all []float64
	var cross float64 // Σ z₀·z₁: independence of neighbouring coordinates
	for r := 0; r < rounds; r++ {
		v := make([]float64, f)
		for i := range v {
			v[i] = float64(i)
		}
		if err := AddLaplaceVec(v, b); err != nil {
			t.Fatal(err)
		}
		for i := range v {
			all = append(all, v[i]-float64(i))
		}
		cross += (v[0] - 0) * (v[1] - 1)
	}
	requireKS(t, "AddLaplaceVec", all, laplaceCDF(used))
	requireWithin(t, "AddLaplaceVec mean |noise|", meanAbs(all), used, used/math.Sqrt(float64(len(all))), 6)
	// E[z₀z₁] = 0 with standard deviation 2b′²/√rounds.
	requireWithin(t, "AddLaplaceVec E[z0·z1]", cross/rounds, 0, 2*used*used/math.Sqrt(rounds), 6)
}
