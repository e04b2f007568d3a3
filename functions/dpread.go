package functions

import (
	"math"

	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/mechanism"
)

// DP reads (issue 11 item 4). Every value a mechanism reads from a protected
// table goes through readValue: the owner's public transform T (CALL
// dp_transform) first, then a clip to the declared bounds, which are on the
// transformed scale. Both are fixed public functions of one row applied
// before the mechanism, so the sensitivity analysis of every mechanism (which
// only assumes each value lies in [lo, hi]) is unchanged. Clipping here even
// for columns declared without 'clip' costs nothing (their rows are checked
// at write time) and keeps every mechanism safe if a value slips through.

// Reads returns how DP reads see each column of table key.
func (e *Env) Reads(key string, cols []string) []catalog.Read {
	t, _ := e.Catalog.Table(key)
	out := make([]catalog.Read, len(cols))
	for i, c := range cols {
		out[i] = t.ReadOf(c)
	}
	return out
}

// ReadValue maps a raw value as a DP read sees it; NaN (NULL) stays NaN, so
// each mechanism keeps its own NULL rule.
func ReadValue(r catalog.Read, v float64) float64 {
	if math.IsNaN(v) {
		return v
	}
	v = mechanism.ApplyTransform(r.Transform, v)
	if r.Bounded {
		v = mechanism.Clip(v, r.Lo, r.Hi)
	}
	return v
}

// readRow maps row[j] for j < len(reads) in place.
func readRow(reads []catalog.Read, row []float64) {
	for j := range reads {
		row[j] = ReadValue(reads[j], row[j])
	}
}

// scanDP is Store.ScanFloats with every column mapped by ReadValue.
func (e *Env) scanDP(ref tableRef, cols []string, fn func(row []float64) error) (int64, error) {
	reads := e.readsOf(ref, cols)
	// The person-level sample on a unit table or a joined source (DP_LSQ
	// streams through here), the store otherwise.
	return e.rows(ref).ScanFloats(ref.db, ref.table, cols, func(row []float64) error {
		readRow(reads, row)
		return fn(row)
	})
}

// transformsOf lists the declared transforms of cols ("" = identity).
func transformsOf(reads []catalog.Read) []string {
	out := make([]string, len(reads))
	for i, r := range reads {
		out[i] = r.Transform
	}
	return out
}
