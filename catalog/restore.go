package catalog

import (
	"fmt"
	"math"
)

// Restore installs the public catalog entry of a table re-created from a
// database dump (issue 13): protection, bounds and domains as dumped. A
// restore never unprotects: a table protected here stays protected.
func (c *Catalog) Restore(key string, in Table) error {
	for col, b := range in.Bounds {
		if err := checkBound(b); err != nil {
			return fmt.Errorf("bounds of %s: %w", col, err)
		}
	}
	return c.update(key, func(t *Table) error {
		protected := t.Protected || in.Protected
		bounds, labels := t.Bounds, t.Labels
		unit := t.Unit
		*t = in
		t.Name, t.Protected = key, protected
		if unit != nil {
			// A restore never moves a table out of (or across) its unit.
			t.Unit = unit
		}
		t.Bounds, t.Labels = bounds, labels
		clear(t.Bounds)
		clear(t.Labels)
		for col, b := range in.Bounds {
			t.Bounds[col] = b
		}
		for col, l := range in.Labels {
			t.Labels[col] = append([]string(nil), l...)
		}
		return nil
	})
}

func checkBound(b Bound) error {
	if math.IsNaN(b.Lo) || math.IsNaN(b.Hi) || math.IsInf(b.Lo, 0) || math.IsInf(b.Hi, 0) || !(b.Lo < b.Hi) {
		return fmt.Errorf("bounds must be finite with lower < upper, got [%v, %v]", b.Lo, b.Hi)
	}
	return nil
}
