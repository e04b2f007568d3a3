package rel

import (
	"encoding/json"
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

// relation is an evaluated FROM subtree. cols[i] locates column i of its
// rows; person[r] is row r's person ("" for a public relation).
type relation struct {
	cols   map[ref]int
	rows   [][]any
	person []string
	unit   bool
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
		var lab []string
		if err := json.Unmarshal([]byte(key), &lab); err != nil || len(lab) != len(p.groups) {
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

// collect evaluates FROM and WHERE and feeds every row, with its person
// and group, to the accumulator.
func (p *Plan) collect(src Source, check func() error) (*bound.Accumulator, error) {
	r := &runner{p: p, src: src, lookup: map[string]map[string]string{}, check: check}
	rel, err := r.eval(p.root)
	if err != nil {
		return nil, err
	}
	acc := p.bp.Accumulator()
	vals := make([]float64, len(p.aggs))
	whereVals := make([]any, len(p.whereR))
	labels := make([]string, len(p.groups))
	for i, row := range rel.rows {
		if p.where != nil {
			for j, w := range p.whereR {
				whereVals[j] = row[rel.cols[w]]
			}
			if !p.where.Eval(whereVals) {
				continue
			}
		}
		inGroup := true
		for j, g := range p.groups {
			v := row[rel.cols[g]]
			if v == nil {
				inGroup = false // NULL keys are in no group
				break
			}
			labels[j] = functions.LabelString(v)
		}
		if !inGroup {
			continue
		}
		for j, a := range p.aggs {
			vals[j] = r.value(a, p.aggR[j], row, rel)
		}
		acc.Row(rel.person[i], groupKey(labels), vals)
	}
	return acc, nil
}

// value is aggregate a's input from one row: 1 for COUNT(*), 1 or NaN
// (NULL) for COUNT(col), the declared read of the column for SUM/AVG.
func (r *runner) value(a Agg, at *ref, row []any, rel *relation) float64 {
	if at == nil {
		return 1
	}
	v := row[rel.cols[*at]]
	if a.Kind == bound.Count {
		if v == nil {
			return math.NaN()
		}
		return 1
	}
	f, ok := functions.ToFloat(v)
	if !ok {
		return math.NaN()
	}
	return functions.ReadValue(r.p.scans[at.scan].readOf[strings.ToLower(at.col)], f)
}

func (r *runner) eval(n node) (*relation, error) {
	if n.join == nil {
		return r.scan(n.scan)
	}
	j := n.join
	left, err := r.eval(j.left)
	if err != nil {
		return nil, err
	}
	right, err := r.eval(j.right)
	if err != nil {
		return nil, err
	}
	// Hash join on the key's label; NULL never matches (SQL equality).
	index := map[string][]int{}
	rc := right.cols[j.r]
	for i, row := range right.rows {
		if v := row[rc]; v != nil {
			k := functions.LabelString(v)
			index[k] = append(index[k], i)
		}
	}
	out := &relation{cols: map[ref]int{}, unit: left.unit || right.unit}
	width := len(left.cols)
	for k, i := range left.cols {
		out.cols[k] = i
	}
	for k, i := range right.cols {
		out.cols[k] = width + i
	}
	lc := left.cols[j.l]
	for i, row := range left.rows {
		v := row[lc]
		if v == nil {
			continue
		}
		for _, m := range index[functions.LabelString(v)] {
			person := left.person[i]
			if right.unit {
				if left.unit && right.person[m] != person {
					// Unit-preserving keys link rows of one person; the
					// check keeps the invariant even if the data breaks
					// a foreign key (Qrlew adds the same equality).
					continue
				}
				if !left.unit {
					person = right.person[m]
				}
			}
			joined := make([]any, 0, width+len(right.cols))
			joined = append(append(joined, row...), right.rows[m]...)
			out.rows = append(out.rows, joined)
			out.person = append(out.person, person)
		}
	}
	return out, nil
}

// scan reads one table's needed columns; rows of a unit table whose person
// is NULL belong to no one and are dropped.
func (r *runner) scan(i int) (*relation, error) {
	s := r.p.scans[i]
	var cols []string
	out := &relation{cols: map[ref]int{}, unit: s.member != nil}
	personAt := -1
	for _, c := range s.cols {
		lc := strings.ToLower(c)
		if !s.need[lc] {
			continue
		}
		if s.member != nil && lc == s.member.Column {
			personAt = len(cols)
		}
		out.cols[ref{scan: i, col: c}] = len(cols)
		cols = append(cols, c)
	}
	var persons map[string]string
	if s.member != nil && s.member.Parent != "" {
		var err error
		if persons, err = r.personsOf(s.member.Parent); err != nil {
			return nil, err
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
			person = functions.LabelString(v)
			if persons != nil {
				p, ok := persons[person]
				if !ok {
					return nil // a dangling key: no person
				}
				person = p
			}
		}
		out.rows = append(out.rows, append([]any(nil), row...))
		out.person = append(out.person, person)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("scan %s: %w", s.key, err)
	}
	return out, nil
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
		person := functions.LabelString(row[1])
		if up != nil {
			p, ok := up[person]
			if !ok {
				return nil
			}
			person = p
		}
		out[functions.LabelString(row[0])] = person
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
