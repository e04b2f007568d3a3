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

// Person-level pushdown (issue 27 item 6, docs/privacy/units.md §10): the
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

// toInt reads a COUNT.
func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case uint64:
		return int64(x)
	case []byte:
		n, _ := strconv.ParseInt(string(x), 10, 64)
		return n
	}
	return 0
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
	if pre, ok := preAggregated(q, sel, group, key, col, from); ok {
		return pre, kinds, true
	}
	return fmt.Sprintf("SELECT %s FROM %s GROUP BY %s", strings.Join(sel, ", "), fromSQL, strings.Join(group, ", ")), kinds, true
}

// preAggregated writes the statement with the aggregation below the join
// when the root joins a single scan S, which holds every aggregated
// column, to any other subtree T:
//
//	SELECT person, groups, SUM(d.t0)… FROM
//	  (SELECT S.key AS k, [S.person AS p], [S.g AS g0]…, COUNT…, SUM… FROM S GROUP BY k, p, g…) AS d
//	  JOIN (T) ON d.k = T.key GROUP BY person, groups
//
// Equal to the plain statement: a joined row (s, t) falls in the outer
// group of (s's key, person, S-groups; t), so grouping S's rows by those
// first and adding the groups' counts and sums per joined t gives the same
// counts, and sums of the same values in another order (inside one
// person's cell: docs/privacy/units.md §10). MariaDB then groups S along
// an index on its key instead of the whole join in a temporary table.
// sel and group are the plain statement's lists (person, groups, then
// two expressions per term).
func preAggregated(q functions.PersonGroupQuery, sel, group []string,
	key func(functions.PushCol, bool) (string, kind, bool),
	col func(functions.PushCol) (string, kind, bool),
	from func(*functions.PushNode) (string, bool)) (string, bool) {
	root := q.From
	if root == nil || root.Scan >= 0 {
		return "", false
	}
	for _, side := range []struct {
		s, t       *functions.PushNode
		sCol, tCol functions.PushCol
	}{{root.Left, root.Right, root.LeftCol, root.RightCol}, {root.Right, root.Left, root.RightCol, root.LeftCol}} {
		if side.s.Scan < 0 {
			continue
		}
		S := side.s.Scan
		ok := true
		for _, t := range q.Terms {
			if t.Col != nil && t.Col.Scan != S {
				ok = false
			}
		}
		if !ok {
			continue
		}
		k, _, ok1 := col(side.sCol)
		tk, _, ok2 := col(side.tCol)
		sFrom, ok3 := from(side.s)
		tFrom, ok4 := from(side.t)
		if !(ok1 && ok2 && ok3 && ok4) {
			return "", false
		}
		inner, innerGroup := []string{k + " AS k"}, []string{k}
		outer := make([]string, 0, len(sel))
		outerGroup := make([]string, 0, len(group))
		// Person and group columns: from S through d, else from T as is.
		cols := append([]functions.PushGroup{{Col: q.Person}}, q.Groups...)
		for j, g := range cols {
			if g.Col.Scan != S {
				outer, outerGroup = append(outer, group[j]), append(outerGroup, group[j])
				continue
			}
			e, _, ok := key(g.Col, g.Binned)
			if !ok {
				return "", false
			}
			alias := "g" + strconv.Itoa(j)
			inner = append(inner, e+" AS "+alias)
			if e != k {
				innerGroup = append(innerGroup, e)
			}
			outer, outerGroup = append(outer, "d."+alias), append(outerGroup, "d."+alias)
		}
		for i, e := range sel[len(group):] {
			if e == "0" {
				outer = append(outer, "0")
				continue
			}
			alias := "t" + strconv.Itoa(i)
			inner = append(inner, e+" AS "+alias)
			outer = append(outer, "SUM(d."+alias+")")
		}
		return fmt.Sprintf("SELECT %s FROM (SELECT %s FROM %s GROUP BY %s) AS d JOIN (%s) ON d.k = %s GROUP BY %s",
			strings.Join(outer, ", "), strings.Join(inner, ", "), sFrom, strings.Join(innerGroup, ", "),
			tFrom, tk, strings.Join(outerGroup, ", ")), true
	}
	return "", false
}
