package fastpath

import (
	"math"
	"strconv"
)

// parseFloat is strconv.ParseFloat(s, 64) with a shortcut for the plain
// decimals of bulk loads (issue 13: ParseFloat's general reader was ≈ 40 ns
// of a field's ≈ 50). A decimal of at most 19 significant digits whose
// mantissa is below 2^52 and whose power of ten is exact (|exp| ≤ 22, and
// for positive powers the product stays below 10^15 first) is one exact
// float multiplication or division, correctly rounded: the path
// strconv's own atof64exact takes for it, with the same operations, so the
// bits are the same. Everything else (more digits, hex, inf, nan,
// underscores, errors) goes to strconv.ParseFloat.
func parseFloat(s string) (float64, error) {
	if f, ok := fastFloat(s); ok {
		return f, nil
	}
	return strconv.ParseFloat(s, 64)
}

var float64pow10 = [...]float64{
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
	1e20, 1e21, 1e22,
}

func fastFloat(s string) (float64, bool) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var mant uint64
	nd, frac := 0, 0 // significant digits; digits after the point
	sawDigit, sawDot := false, false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			sawDigit = true
			if sawDot {
				frac++
			}
			if c == '0' && nd == 0 {
				continue // a leading zero
			}
			if nd == 19 {
				return 0, false // strconv truncates here
			}
			mant = mant*10 + uint64(c-'0')
			nd++
			continue
		case c == '.' && !sawDot:
			sawDot = true
			continue
		}
		break
	}
	if !sawDigit {
		return 0, false
	}
	exp := -frac
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return 0, false
		}
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return 0, false
		}
		e := 0
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' || e > 1000 {
				return 0, false
			}
			e = e*10 + int(c-'0')
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if mant == 0 {
		if neg {
			return math.Copysign(0, -1), true // as strconv
		}
		return 0, true
	}
	// strconv.atof64exact, on the same mantissa and exponent.
	if mant>>52 != 0 {
		return 0, false
	}
	f := float64(mant)
	if neg {
		f = -f
	}
	switch {
	case exp == 0:
		return f, true
	case exp > 0 && exp <= 15+22:
		if exp > 22 {
			f *= float64pow10[exp-22]
			exp = 22
		}
		if f > 1e15 || f < -1e15 {
			return 0, false
		}
		return f * float64pow10[exp], true
	case exp < 0 && exp >= -22:
		return f / float64pow10[-exp], true
	}
	return 0, false
}
