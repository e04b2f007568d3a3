package mysqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/dpsql/dpsql/functions"
)

// Person-level pushdown (issue 27 item 6, docs/privacy/units.md §11): the
// per-(person, group) partial aggregates of a unit query, computed by the
// backend in one statement (one snapshot):
//
//	SELECT person, g1…, COUNT(*), COUNT(t1), SUM(LEAST(GREATEST(t1, lo), hi))…
//	FROM a JOIN b ON … GROUP BY person, g1…
//
// dpsql then draws each person's groups and caps and clamps exactly as
// on the streaming path (mechanism/bound): the per-(person, group) counts
// and sums are all it reads of the rows. The statement holds no analyst
// text: table and column names come from the attached tables' schemas
// (quoted), aliases are generated, and the only literals are the public
// bounds (rowLit).

// maxPushedBound keeps every pushed sum finite: a (person, group) cell has
// fewer than 2⁶³ rows, each clipped to |v| ≤ 10²⁸⁰, so |Σ| < 10²⁹⁹ and the
// backend's DOUBLE sum cannot overflow (an overflow would be an error that
// depends on the data).
const maxPushedBound = 1e280

// unitPushes counts the pushed-down person-level statements (tests).
var unitPushes atomic.Int64

// UnitPushes returns the number of person-level statements run so far.
func UnitPushes() int64 { return unitPushes.Load() }

// PersonGroups implements functions.UnitPushdown.
func (b *Backend) PersonGroups(q functions.PersonGroupQuery, fn func(g functions.PersonGroup) error) (bool, error) {
	stmt, kinds, ok := b.personGroupsSQL(q)
	if !ok {
		return false, nil
	}
	unitPushes.Add(1)
	ng, nt := len(q.Groups), len(q.Terms)
	err := b.snapshot(context.Background(), func(c *sql.Conn) error {
		st, err := c.PrepareContext(context.Background(), stmt)
		if err != nil {
			return b.fail("prepare person-level aggregate", err)
		}
		defer st.Close()
		rows, err := st.QueryContext(context.Background())
		if err != nil {
			return b.fail("person-level aggregate", err)
		}
		defer rows.Close()
		raw := make([]any, 2+ng+2*nt)
		ptrs := make([]any, len(raw))
		for i := range raw {
			ptrs[i] = &raw[i]
		}
		g := functions.PersonGroup{Groups: make([]any, ng), Rows: make([]int64, nt), Sums: make([]float64, nt)}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return b.fail("person-level aggregate", err)
			}
			g.Person = toValue(raw[0], kinds[0])
			for j := 0; j < ng; j++ {
				g.Groups[j] = toValue(raw[1+j], kinds[1+j])
			}
			g.All = toInt(raw[1+ng])
			for j := 0; j < nt; j++ {
				g.Rows[j] = toInt(raw[2+ng+2*j])
				g.Sums[j] = 0
				if s := toFloat(raw[3+ng+2*j]); !math.IsNaN(s) {
					g.Sums[j] = s
				}
			}
			if err := fn(g); err != nil {
				return err
			}
		}
		return b.fail("person-level aggregate", rows.Err())
	})
	return true, err
}

// toInt reads a COUNT (as an integer column's value).
func toInt(v any) int64 {
	n, _ := toValue(v, kindInt).(int64)
	return n
}

// PersonGroupsQuery returns the statement PersonGroups would run (tests,
// docs); ok = false when it would not push.
func (b *Backend) PersonGroupsQuery(q functions.PersonGroupQuery) (string, bool) {
	s, _, ok := b.personGroupsSQL(q)
	return s, ok
}

// personGroupsSQL writes the statement and the kinds of its person and
// group columns; ok = false when some part cannot be computed in SQL
// exactly as the streaming path computes it (public facts only):
//   - every table attached here;
//   - join keys integers (SQL equality of text depends on collations; the
//     streaming path compares exact values);
//   - the person and plain group columns integers or text, text grouped by
//     its exact bytes (utf8mb4_nopad_bin: neither case- nor
//     trailing-space-insensitive); binned group columns also numeric;
//   - summed columns numeric, bounds finite within ±maxPushedBound.
func (b *Backend) personGroupsSQL(q functions.PersonGroupQuery) (string, []kind, bool) {
	tabs := make([]*table, len(q.Scans))
	for i, s := range q.Scans {
		t, ok := b.lookup(s.DB, s.Table)
		if !ok {
			return "", nil, false
		}
		tabs[i] = t
	}
	col := func(c functions.PushCol) (string, kind, bool) {
		if c.Scan < 0 || c.Scan >= len(tabs) {
			return "", 0, false
		}
		names, kinds, err := tabs[c.Scan].columns([]string{c.Column})
		if err != nil {
			return "", 0, false
		}
		return "a" + strconv.Itoa(c.Scan) + "." + quote(names[0]), kinds[0], true
	}
	// key is a grouping expression with the streaming path's equality.
	key := func(c functions.PushCol, binned bool) (string, kind, bool) {
		e, k, ok := col(c)
		if !ok {
			return "", 0, false
		}
		switch {
		case k == kindInt || k == kindUint:
			return e, k, true
		case k == kindText:
			return "CONVERT(" + e + " USING utf8mb4) COLLATE utf8mb4_nopad_bin", k, true
		case binned && k == kindFloat:
			return e, k, true
		}
		return "", 0, false
	}
	var from func(n *functions.PushNode) (string, bool)
	from = func(n *functions.PushNode) (string, bool) {
		if n == nil {
			return "", false
		}
		if n.Scan >= 0 {
			if n.Scan >= len(tabs) {
				return "", false
			}
			return tabs[n.Scan].from() + " AS a" + strconv.Itoa(n.Scan), true
		}
		l, ok1 := from(n.Left)
		r, ok2 := from(n.Right)
		lc, lk, ok3 := col(n.LeftCol)
		rc, rk, ok4 := col(n.RightCol)
		ints := func(k kind) bool { return k == kindInt || k == kindUint }
		if !(ok1 && ok2 && ok3 && ok4 && ints(lk) && ints(rk)) {
			return "", false
		}
		return "(" + l + ") JOIN (" + r + ") ON " + lc + " = " + rc, true
	}
	fromSQL, ok := from(q.From)
	if !ok {
		return "", nil, false
	}
	var sel, group []string
	var kinds []kind
	p, pk, ok := key(q.Person, false)
	if !ok {
		return "", nil, false
	}
	sel, group, kinds = append(sel, p), append(group, p), append(kinds, pk)
	for _, g := range q.Groups {
		e, k, ok := key(g.Col, g.Binned)
		if !ok {
			return "", nil, false
		}
		sel, group, kinds = append(sel, e), append(group, e), append(kinds, k)
	}
	sel = append(sel, "COUNT(*)")
	for _, t := range q.Terms {
		if t.Col == nil {
			sel = append(sel, "COUNT(*)", "0")
			continue
		}
		e, k, ok := col(*t.Col)
		if !ok {
			return "", nil, false
		}
		if !t.Sum {
			sel = append(sel, "COUNT("+e+")", "0")
			continue
		}
		if !numeric(k) || !finite(t.Lo, t.Hi) || !(t.Lo <= t.Hi) || math.Abs(t.Lo) > maxPushedBound || math.Abs(t.Hi) > maxPushedBound {
			return "", nil, false
		}
		// As mechanism.Clip on the double the streaming path reads: with
		// DOUBLE bounds LEAST/GREATEST compare as DOUBLE and return one of
		// their arguments as a DOUBLE (no CAST: Spider heads rewrite
		// CAST(… AS DOUBLE) into a function the shards do not have).
		sel = append(sel, "COUNT("+e+")", "SUM(LEAST(GREATEST("+e+", "+rowLit(t.Lo)+"), "+rowLit(t.Hi)+"))")
	}
	return fmt.Sprintf("SELECT %s FROM %s GROUP BY %s", strings.Join(sel, ", "), fromSQL, strings.Join(group, ", ")), kinds, true
}
