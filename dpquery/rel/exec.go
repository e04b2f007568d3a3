package rel

import (
	"fmt"
	"math"
	"strings"

	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/mechanism/bound"
)

// Source is the storage a release reads directly (functions.Rows).
type Source interface {
	ScanValues(db, table string, cols []string, fn func(row []any) error) (int64, error)
}

// Result is the released answer: one row per group, the group columns'
// values (as declared labels) then the aggregates (COUNT as int64, SUM and
// AVG as float64).
type Result struct {
	Rows  [][]any
	Bound *bound.Result
}

// runner holds one run's state.
type runner struct {
	p      *Plan
	src    Source
	lookup map[string]map[string]string // parent table → its key value → person
	check  func() error
}

// Run executes the plan: scans, attaches persons, joins, filters, and
// releases through mechanism/bound. check (may be nil) is called at public
// points (every 4096 rows of a scan) so that a KILL can stop the run; its
// error aborts the run. Call Run only after the release is charged.
func (p *Plan) Run(src Source, check func() error) (*Result, error) {
	acc, err := p.collect(src, check)
	if err != nil {
		return nil, err
	}
	res, err := acc.Release()
	if err != nil {
		return nil, err
	}
	out := &Result{Bound: res}
	for g, key := range res.Keys {
		lab, ok := splitKey(key)
		if !ok || len(lab) != len(p.groups) {
			return nil, fmt.Errorf("rel: group key %q", key)
		}
		row := make([]any, 0, len(lab)+len(p.aggs))
		for _, l := range lab {
			row = append(row, l)
		}
		for j, a := range p.aggs {
			v := res.Values[j][g]
			if a.Kind == bound.Count {
				row = append(row, int64(v))
			} else {
				row = append(row, v)
			}
		}
		out.Rows = append(out.Rows, row)
	}
	return out, nil
}

// collect streams FROM and WHERE and feeds every row, with its person and
// group, to the accumulator. Only the build sides of joins (the right
// inputs) are held in memory; the probe side streams from storage.
func (p *Plan) collect(src Source, check func() error) (*bound.Accumulator, error) {
	acc := p.bp.Accumulator()
	if ok, err := p.pushed(src, check, acc); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return acc, nil
	}
	if err := p.each(src, check, acc.Row); err != nil {
		return nil, err
	}
	return acc, nil
}

// each streams FROM and WHERE and calls fn with every row's person, group
// key and aggregate inputs (vals is reused between calls).
func (p *Plan) each(src Source, check func() error, fn func(person, group string, vals []float64)) error {
	r := &runner{p: p, src: src, lookup: map[string]map[string]string{}, check: check}
	lay := r.layout(p.root)
	vals := make([]float64, len(p.aggs))
	whereVals := make([]any, len(p.whereR))
	labels := make([]string, len(p.groups))
	whereAt := make([]int, len(p.whereR))
	for j, w := range p.whereR {
		whereAt[j] = lay.cols[w]
	}
	groupAt := make([]int, len(p.groups))
	for j, g := range p.groups {
		groupAt[j] = lay.cols[g]
	}
	aggAt := make([]int, len(p.aggs))
	reads := make([]catalog.Read, len(p.aggs))
	for j, at := range p.aggR {
		aggAt[j] = -1
		if at != nil {
			aggAt[j] = lay.cols[*at]
			reads[j] = p.scans[at.scan].readOf[strings.ToLower(at.col)]
		}
	}
	return r.stream(p.root, func(row []any, person string) error {
		if p.where != nil {
			for j, at := range whereAt {
				whereVals[j] = row[at]
			}
			if !p.where.Eval(whereVals) {
				return nil
			}
		}
		for j, at := range groupAt {
			v := row[at]
			if b := p.bins[j]; b != nil {
				i := b.Of(v)
				if i < 0 || i >= len(b.Labels) {
					return nil // in no bin: in no group
				}
				labels[j] = b.Labels[i]
				continue
			}
			if v == nil {
				return nil // NULL keys are in no group
			}
			labels[j] = keyOf(v)
		}
		for j, a := range p.aggs {
			vals[j] = value(a.Kind, aggAt[j], reads[j], row)
		}
		fn(person, groupKey(labels), vals)
		return nil
	})
}

// value is an aggregate's input from one row: 1 for COUNT(*), 1 or NaN
// (NULL) for COUNT(col), the declared read of the column for SUM/AVG.
func value(kind bound.Kind, at int, read catalog.Read, row []any) float64 {
	if at < 0 {
		return 1
	}
	v := row[at]
	if kind == bound.Count {
		if v == nil {
			return math.NaN()
		}
		return 1
	}
	f, ok := functions.ToFloat(v)
	if !ok {
		return math.NaN()
	}
	return functions.ReadValue(read, f)
}

// layout is where each column of a subtree sits in its rows: a join's rows
// are its left input's columns, then its right input's.
type layout struct {
	cols  map[ref]int
	width int
	unit  bool
}

func (r *runner) layout(n node) layout {
	if n.join == nil {
		s := r.p.scans[n.scan]
		l := layout{cols: map[ref]int{}, unit: s.member != nil}
		for _, c := range r.scanCols(n.scan) {
			l.cols[ref{scan: n.scan, col: c}] = l.width
			l.width++
		}
		return l
	}
	a, b := r.layout(n.join.left), r.layout(n.join.right)
	l := layout{cols: map[ref]int{}, width: a.width + b.width, unit: a.unit || b.unit}
	for k, i := range a.cols {
		l.cols[k] = i
	}
	for k, i := range b.cols {
		l.cols[k] = a.width + i
	}
	return l
}

// scanCols are the columns a scan reads, in schema order.
func (r *runner) scanCols(i int) []string {
	s := r.p.scans[i]
	var cols []string
	for _, c := range s.cols {
		if s.need[strings.ToLower(c)] {
			cols = append(cols, c)
		}
	}
	return cols
}

// emitFn receives one row (valid only during the call) and its person
// ("" for a public relation).
type emitFn func(row []any, person string) error

// stream evaluates a subtree, calling emit for each row.
func (r *runner) stream(n node, emit emitFn) error {
	if n.join == nil {
		return r.scan(n.scan, emit)
	}
	j := n.join
	ll, rl := r.layout(j.left), r.layout(j.right)
	// Build: the right input, indexed by the key's label; NULL never
	// matches (SQL equality).
	type built struct {
		row    []any
		person string
	}
	index := map[string][]built{}
	rc := rl.cols[j.r]
	if err := r.stream(j.right, func(row []any, person string) error {
		if v := row[rc]; v != nil {
			k := keyOf(v)
			index[k] = append(index[k], built{append([]any(nil), row...), person})
		}
		return nil
	}); err != nil {
		return err
	}
	// Probe: the left input streams.
	lc := ll.cols[j.l]
	buf := make([]any, 0, ll.width+rl.width)
	return r.stream(j.left, func(row []any, person string) error {
		v := row[lc]
		if v == nil {
			return nil
		}
		for _, m := range index[keyOf(v)] {
			p := person
			if rl.unit {
				if ll.unit && m.person != person {
					// Unit-preserving keys link rows of one person; the
					// check keeps the invariant even if the data breaks
					// a foreign key (Qrlew adds the same equality).
					continue
				}
				if !ll.unit {
					p = m.person
				}
			}
			buf = append(append(buf[:0], row...), m.row...)
			if err := emit(buf, p); err != nil {
				return err
			}
		}
		return nil
	})
}

// scan streams one table's needed columns; rows of a unit table whose
// person is NULL (or whose key dangles) belong to no one and are dropped.
func (r *runner) scan(i int, emit emitFn) error {
	s := r.p.scans[i]
	cols := r.scanCols(i)
	personAt := -1
	if s.member != nil {
		for j, c := range cols {
			if strings.ToLower(c) == s.member.Column {
				personAt = j
			}
		}
	}
	var persons map[string]string
	if s.member != nil && s.member.Parent != "" {
		var err error
		if persons, err = r.personsOf(s.member.Parent); err != nil {
			return err
		}
	}
	seen := 0
	if _, err := r.src.ScanValues(s.DB, s.Table, cols, func(row []any) error {
		if seen++; seen%4096 == 0 && r.check != nil {
			if err := r.check(); err != nil {
				return err
			}
		}
		person := ""
		if s.member != nil {
			v := row[personAt]
			if v == nil {
				return nil
			}
			person = keyOf(v)
			if persons != nil {
				p, ok := persons[person]
				if !ok {
					return nil // a dangling key: no person
				}
				person = p
			}
		}
		return emit(row, person)
	}); err != nil {
		return fmt.Errorf("scan %s: %w", s.key, err)
	}
	return nil
}

// personsOf maps the primary key values of a unit table to their persons,
// following its own path (memoised per run).
func (r *runner) personsOf(key string) (map[string]string, error) {
	if m, ok := r.lookup[key]; ok {
		return m, nil
	}
	var member *memberRef
	for _, s := range r.p.scans {
		if s.key == key && s.member != nil {
			member = &memberRef{db: s.DB, table: s.Table, m: *s.member, cols: s.cols}
			break
		}
	}
	if member == nil {
		m, ok := r.p.parents[key]
		if !ok {
			return nil, fmt.Errorf("rel: unit path through %s not compiled", key)
		}
		member = m
	}
	var up map[string]string
	if member.m.Parent != "" {
		var err error
		if up, err = r.personsOf(member.m.Parent); err != nil {
			return nil, err
		}
	}
	pk := r.p.parentKey[key]
	cols := []string{spell(member.cols, pk), spell(member.cols, member.m.Column)}
	out := map[string]string{}
	if _, err := r.src.ScanValues(member.db, member.table, cols, func(row []any) error {
		if row[0] == nil || row[1] == nil {
			return nil
		}
		person := keyOf(row[1])
		if up != nil {
			p, ok := up[person]
			if !ok {
				return nil
			}
			person = p
		}
		out[keyOf(row[0])] = person
		return nil
	}); err != nil {
		return nil, fmt.Errorf("scan %s: %w", key, err)
	}
	r.lookup[key] = out
	return out, nil
}

// spell returns the schema spelling of a lower-case column name.
func spell(cols []string, lc string) string {
	for _, c := range cols {
		if strings.ToLower(c) == lc {
			return c
		}
	}
	return lc
}

// memberRef is a unit table on a path (read for its keys only).
type memberRef struct {
	db, table string
	m         catalog.Member
	cols      []string
}
