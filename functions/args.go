package functions

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// argString returns a non-empty string argument.
func argString(args []any, i int, what string) (string, error) {
	if i >= len(args) || args[i] == nil {
		return "", fmt.Errorf("argument %d (%s) must not be NULL", i+1, what)
	}
	var s string
	switch v := args[i].(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return "", fmt.Errorf("argument %d (%s) must be a string, got %T", i+1, what, args[i])
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("argument %d (%s) must not be empty", i+1, what)
	}
	return s, nil
}

// argFloat returns a finite numeric argument. A string that is a whole
// number ('0.5', ' 1e-5 ') is read as MySQL coerces it: PHP PDO and Perl DBI
// bind every placeholder as a string. Anything else in a string ('0.5x',
// ”) is refused, so that a typo is an error instead of MySQL's silent 0.
func argFloat(args []any, i int, what string) (float64, error) {
	if i >= len(args) || args[i] == nil {
		return 0, fmt.Errorf("argument %d (%s) must not be NULL", i+1, what)
	}
	var f float64
	switch v := args[i].(type) {
	case float64:
		f = v
	case float32:
		f = float64(v)
	case int8:
		f = float64(v)
	case int16:
		f = float64(v)
	case int32:
		f = float64(v)
	case int64:
		f = float64(v)
	case int:
		f = float64(v)
	case uint8:
		f = float64(v)
	case uint16:
		f = float64(v)
	case uint32:
		f = float64(v)
	case uint64:
		f = float64(v)
	case decimal.Decimal:
		f, _ = v.Float64()
	case decimal.NullDecimal:
		if !v.Valid {
			return 0, fmt.Errorf("argument %d (%s) must not be NULL", i+1, what)
		}
		f, _ = v.Decimal.Float64()
	case string:
		return numericString(v, i, what)
	case []byte:
		return numericString(string(v), i, what)
	default:
		return 0, fmt.Errorf("argument %d (%s) must be a number, got %T", i+1, what, args[i])
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("argument %d (%s) must be finite, got %v", i+1, what, f)
	}
	return f, nil
}

// numericString reads a number bound as a string (see argFloat).
func numericString(s string, i int, what string) (float64, error) {
	t := strings.TrimSpace(s)
	f, err := strconv.ParseFloat(t, 64)
	// Decimal notation only (no 0x1p-2, no 1_000), as MySQL reads numbers.
	// 'nan' and 'inf' are not numbers to MySQL either (it reads them as 0).
	if err != nil || strings.ContainsAny(t, "xXpP_") || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("argument %d (%s) must be a number, got the string %q", i+1, what, truncateArg(s))
	}
	return f, nil
}

// truncateArg keeps error messages short.
func truncateArg(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// argEpsilon returns a privacy parameter ε > 0.
func argEpsilon(args []any, i int) (float64, error) {
	eps, err := argFloat(args, i, "epsilon")
	if err != nil {
		return 0, err
	}
	if !(eps > 0) {
		return 0, fmt.Errorf("epsilon must be > 0, got %v", eps)
	}
	if eps < minEpsilon {
		return 0, fmt.Errorf("epsilon must be at least %v, got %v", minEpsilon, eps)
	}
	if eps > maxEpsilon {
		return 0, fmt.Errorf("epsilon must be at most %v, got %v", maxEpsilon, eps)
	}
	return eps, nil
}

// maxEpsilon caps a single request: beyond it the noise is meaningless and
// float arithmetic in the samplers loses precision.
const maxEpsilon = 1e6

// minEpsilon is the smallest ε a single request may use: below about 4e-6
// the secure Laplace sampler's grid rounding is no longer covered by its
// scale inflation (noise.LaplaceMinEpsilon), and such noise is useless anyway.
const minEpsilon = 1e-5

// options is a parsed 'k=v; k=v' option string.
type options map[string]string

func parseOptions(s string) (options, error) {
	o := options{}
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("option %q is not of the form key=value", part)
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		if k == "" {
			return nil, fmt.Errorf("option %q has an empty key", part)
		}
		if _, dup := o[k]; dup {
			return nil, fmt.Errorf("option %q given twice", k)
		}
		o[k] = v
	}
	return o, nil
}

// take removes and returns option k.
func (o options) take(k string) (string, bool) {
	v, ok := o[k]
	delete(o, k)
	return v, ok
}

func (o options) float(k string, def float64) (float64, error) {
	v, ok := o.take(k)
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("option %s=%q is not a finite number", k, v)
	}
	return f, nil
}

// positive parses an optional option that must be > 0 when given; absent
// options return 0, which the mechanisms read as "use the default".
// Given values must lie in [minOption, maxOption]: a generic safety net,
// checked before anything is charged, against values such as C=5e-324 or
// gamma=1e300 that make a noise scale 0, infinite or NaN downstream.
func (o options) positive(k string) (float64, error) {
	_, given := o[k]
	f, err := o.float(k, 0)
	if err != nil {
		return 0, err
	}
	if given && !(f > 0) {
		return 0, fmt.Errorf("option %s must be > 0, got %v", k, f)
	}
	if given && (f < minOption || f > maxOption) {
		return 0, fmt.Errorf("option %s must be in [%g, %g], got %v", k, minOption, maxOption, f)
	}
	return f, nil
}

// The range of positive real options (C, gamma, eta, h, lambda of LMGC…).
const (
	minOption = 1e-12
	maxOption = 1e12
)

// positiveInt is positive for integers.
func (o options) positiveInt(k string) (int, error) {
	_, given := o[k]
	n, err := o.int(k, 0)
	if err != nil {
		return 0, err
	}
	if given && n <= 0 {
		return 0, fmt.Errorf("option %s must be > 0, got %d", k, n)
	}
	return n, nil
}

func (o options) int(k string, def int) (int, error) {
	v, ok := o.take(k)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("option %s=%q is not an integer", k, v)
	}
	return n, nil
}

func (o options) list(k string) ([]string, bool) {
	v, ok := o.take(k)
	if !ok {
		return nil, false
	}
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out, true
}

// unknown reports options nobody consumed.
func (o options) unknown() error {
	for k := range o {
		return fmt.Errorf("unknown option %q", k)
	}
	return nil
}
