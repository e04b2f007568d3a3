package budget

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Amounts are fixed-point integers so that sums are exact and every rounding
// direction is explicit: charges round up, totals round down.
const (
	epsDigits   = 12 // ε is kept in units of 10⁻¹²
	deltaDigits = 18 // δ is kept in units of 10⁻¹⁸ (δ < 1 fits in 60 bits)
)

var (
	epsScale   = pow10(epsDigits)
	deltaScale = pow10(deltaDigits)
	bigMaxU64  = new(big.Int).SetUint64(math.MaxUint64)
)

// unitsInf marks an amount that overflowed: it compares above every budget.
const unitsInf = math.MaxUint64

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// decimalRat returns the exact decimal that x denotes: the shortest decimal
// string that reads back as x (what an SQL literal such as 0.01 means). The
// float64 carrier may differ from it by less than 2⁻⁵³ relative; see
// docs/privacy/accounting.md ("Rounding") for why this is the unit charged.
func decimalRat(x float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	if !ok { // unreachable for finite x
		panic("budget: cannot parse " + strconv.FormatFloat(x, 'g', -1, 64))
	}
	return r
}

// ratToUnits converts a non-negative rational to units of 10^-digits,
// rounding up (ceil) or down, saturating at unitsInf.
func ratToUnits(r *big.Rat, scale *big.Int, up bool) uint64 {
	num := new(big.Int).Mul(r.Num(), scale)
	q, m := new(big.Int).QuoRem(num, r.Denom(), new(big.Int))
	if up && m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	if q.Cmp(bigMaxU64) >= 0 {
		return unitsInf
	}
	return q.Uint64()
}

// floatUnitsUp converts a float computed in floating point (an RDP value, a
// conversion) to units, rounding up: exact binary value, then ceil.
func floatUnitsUp(x float64, scale *big.Int) uint64 {
	if math.IsNaN(x) || math.IsInf(x, 1) {
		return unitsInf
	}
	if x <= 0 {
		return 0
	}
	return ratToUnits(new(big.Rat).SetFloat64(x), scale, true)
}

// unitsFloat converts units of 10^-digits to float64 rounded up (up) or
// down, so that a reported spend is never below the stored one and a
// remaining amount never above it. Floats are read as the shortest decimal
// that round-trips (as inputs are, see decimalRat), so 0.6 stays 0.6.
func unitsFloat(u uint64, digits int, up bool) float64 {
	if u == unitsInf {
		return math.Inf(1)
	}
	exact := new(big.Rat).SetFrac(new(big.Int).SetUint64(u), pow10(digits))
	f, _ := strconv.ParseFloat(strconv.FormatUint(u, 10)+"e-"+strconv.Itoa(digits), 64)
	for i := 0; i < 4; i++ {
		c := decimalRat(f).Cmp(exact)
		switch {
		case up && c < 0:
			f = math.Nextafter(f, math.Inf(1))
		case !up && c > 0:
			f = math.Nextafter(f, math.Inf(-1))
		default:
			return f
		}
	}
	return f
}

// formatUnits prints units as an exact decimal ("0.3", "1e-06" style is
// avoided so that messages show exactly what is stored).
func formatUnits(u uint64, digits int) string {
	if u == unitsInf {
		return "∞"
	}
	s := strconv.FormatUint(u, 10)
	if len(s) <= digits {
		s = strings.Repeat("0", digits-len(s)+1) + s
	}
	i, f := s[:len(s)-digits], strings.TrimRight(s[len(s)-digits:], "0")
	if f == "" {
		return i
	}
	return i + "." + f
}

// addSat adds units, saturating at unitsInf.
func addSat(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return unitsInf
}

// subFloor returns a−b, or 0 when b ≥ a.
func subFloor(a, b uint64) uint64 {
	if b >= a {
		return 0
	}
	return a - b
}
