package budget

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestDecimalUnits(t *testing.T) {
	for _, c := range []struct {
		x        float64
		up, down uint64
	}{
		{0.01, 10_000_000_000, 10_000_000_000}, // the decimal 0.01, not its binary carrier
		{0.5, 500_000_000_000, 500_000_000_000},
		{1e-13, 1, 0},
		{1.0 / 3, 333_333_333_334, 333_333_333_333},
		{MaxEpsilon, 1e18, 1e18},
	} {
		if got := ratToUnits(decimalRat(c.x), epsScale, true); got != c.up {
			t.Errorf("ceil units of %v = %d, want %d", c.x, got, c.up)
		}
		if got := ratToUnits(decimalRat(c.x), epsScale, false); got != c.down {
			t.Errorf("floor units of %v = %d, want %d", c.x, got, c.down)
		}
	}
	if got := ratToUnits(decimalRat(1e300), epsScale, true); got != unitsInf {
		t.Errorf("1e300 did not saturate: %d", got)
	}
	if got := ratToUnits(decimalRat(1e-6), deltaScale, true); got != 1_000_000_000_000 {
		t.Errorf("δ units of 1e-6 = %d", got)
	}
}

func TestUnitsFloatDirection(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20000; i++ {
		u := rng.Uint64N(1e18)
		if i%3 == 0 {
			u = rng.Uint64N(1e6)
		}
		exact := new(big.Rat).SetFrac(new(big.Int).SetUint64(u), epsScale)
		up, down := unitsFloat(u, epsDigits, true), unitsFloat(u, epsDigits, false)
		if decimalRat(up).Cmp(exact) < 0 || decimalRat(down).Cmp(exact) > 0 || up < down {
			t.Fatalf("units %d: up %v, down %v around %s", u, up, down, exact.FloatString(12))
		}
		if up-down > 2*math.Abs(up)*0x1p-52 {
			t.Fatalf("units %d: up %v and down %v are more than an ulp apart", u, up, down)
		}
	}
	if unitsFloat(600_000_000_000, epsDigits, true) != 0.6 {
		t.Fatal("0.6 does not print as 0.6")
	}
}

func TestFormatUnits(t *testing.T) {
	for _, c := range []struct {
		u      uint64
		digits int
		want   string
	}{
		{0, 12, "0"}, {500_000_000_000, 12, "0.5"}, {10_000_000_000_000, 12, "10"},
		{1, 12, "0.000000000001"}, {100_000_000_000, 18, "0.0000001"}, {unitsInf, 12, "∞"},
	} {
		if got := formatUnits(c.u, c.digits); got != c.want {
			t.Errorf("formatUnits(%d, %d) = %q, want %q", c.u, c.digits, got, c.want)
		}
	}
}
