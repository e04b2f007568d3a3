package rel

import (
	"fmt"
	"math"
	"math/bits"
)

// Memory admission of person-level releases (docs/privacy/units.md §6):
// the run's memory is estimated before anything is charged from public
// quantities (the plan: columns read, joins, measures) and, per table
// read, the owner's declared maximum row count (CALL dp_max_rows: public,
// nothing about the rows enters) or else the stored row count rounded up
// to a power of two. The engine refuses the release when the estimate
// exceeds --max-release-memory; the refusal names neither a count nor the
// estimate, and because of the rounding it depends on an undeclared
// table's count only through ⌈log₂ rows⌉.

// RowCounter gives stored row counts (functions.Rows has it).
type RowCounter interface {
	RowCount(db, table string) (int64, error)
}

// Bytes per held item: a build-side row (slice header, person string, map
// bucket and key; plus 16 per column value), a parent-lookup entry (two
// strings in a map), and a (person, group) cell of the accumulator (map
// entries, per-measure count and compensated sum).
const (
	buildRowBytes  = 128
	valueBytes     = 16
	lookupBytes    = 112
	cellBytes      = 200
	cellMeasureB   = 40
	MemoryBaseline = 1 << 20 // fixed overhead of one run
)

// PaddedRows is the next power of two ≥ max(n, 1): all the admission
// check uses of a stored row count.
func PaddedRows(n int64) float64 {
	if n <= 1 {
		return 1
	}
	return math.Ldexp(1, bits.Len64(uint64(n-1)))
}

// Memory is the run's estimated memory in bytes: every join's build side
// (the right input's rows, as many as its tables' padded counts), the
// parent lookups of the unit paths, and the accumulator's cells (at most
// one per row of the largest unit table read: the estimate takes joins
// along keys, which do not multiply a unit table's rows; a public table
// with repeated keys can, and is then under-estimated). Only the padded
// counts enter, never an exact one.
func (p *Plan) Memory(rc RowCounter) (float64, error) {
	padded := map[string]float64{}
	rows := func(db, table, key string) (float64, error) {
		if v, ok := padded[key]; ok {
			return v, nil
		}
		if n := p.maxRows[key]; n > 0 {
			// The owner's public bound: no stored count is read.
			padded[key] = float64(n)
			return padded[key], nil
		}
		n, err := rc.RowCount(db, table)
		if err != nil {
			return 0, fmt.Errorf("row count of %s: %w", key, err)
		}
		padded[key] = PaddedRows(n)
		return padded[key], nil
	}
	r := &runner{p: p}
	total := float64(MemoryBaseline)
	var build func(n node) error
	build = func(n node) error {
		if n.join == nil {
			return nil
		}
		if err := build(n.join.left); err != nil {
			return err
		}
		if err := build(n.join.right); err != nil {
			return err
		}
		w := float64(r.layout(n.join.right).width)
		for _, i := range n.join.right.scans {
			s := p.scans[i]
			v, err := rows(s.DB, s.Table, s.key)
			if err != nil {
				return err
			}
			total += v * (buildRowBytes + valueBytes*w)
		}
		return nil
	}
	if err := build(p.root); err != nil {
		return 0, err
	}
	for key, m := range p.parents {
		v, err := rows(m.db, m.table, key)
		if err != nil {
			return 0, err
		}
		total += v * lookupBytes
	}
	cells := 0.0
	for _, s := range p.scans {
		if s.member == nil {
			continue
		}
		v, err := rows(s.DB, s.Table, s.key)
		if err != nil {
			return 0, err
		}
		cells = math.Max(cells, v)
	}
	total += cells * (cellBytes + cellMeasureB*float64(len(p.aggs)))
	return total, nil
}

// memoryOf is Memory over src's row counts; nil when src has none (no
// admission check).
func (p *Plan) memoryOf(src Source) func() (float64, error) {
	rc, ok := src.(RowCounter)
	if !ok {
		return nil
	}
	return func() (float64, error) { return p.Memory(rc) }
}
