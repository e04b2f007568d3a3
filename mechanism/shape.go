package mechanism

import "fmt"

// CheckShape validates the shape of a training set against its plan: n rows
// of d values and n labels, each label a class index in [0, k) (k = 0 skips
// the label check, for mechanisms that map out-of-range labels to class 0).
// These errors fire only on a caller bug — the adapters read exactly the
// planned columns and map labels through the public domain — and they name
// no row or value.
func CheckShape(mech string, X [][]float64, y []int, n, d, k int) error {
	if len(X) != n || len(y) != n {
		return fmt.Errorf("%s: got %d rows and %d labels, the plan is for n = %d", mech, len(X), len(y), n)
	}
	for _, r := range X {
		if len(r) != d {
			return fmt.Errorf("%s: a row has %d values, want %d features", mech, len(r), d)
		}
	}
	if k > 0 {
		for _, c := range y {
			if c < 0 || c >= k {
				return fmt.Errorf("%s: a label index is outside the domain [0, %d)", mech, k)
			}
		}
	}
	return nil
}
