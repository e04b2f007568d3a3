package explain

import (
	"errors"
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// reExplain matches the text of an EXPLAIN / DESCRIBE statement.
var reExplain = regexp.MustCompile(`(?is)^\s*(?:/\*.*?\*/\s*)*(?:EXPLAIN|DESCRIBE|DESC)\s`)

// Rule is a post-validation analyzer rule. go-mysql-server analyses only
// the explained statement (never the EXPLAIN node), with the statement's
// flags: a plan of at most one row sets QFlagMax1Row, and its handler then
// refuses the plan's several lines of text. The rule clears the flag when
// the statement is an EXPLAIN.
func Rule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qf *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if qf != nil && qf.IsSet(sql.QFlagMax1Row) && reExplain.MatchString(ctx.Query()) {
		qf.Unset(sql.QFlagMax1Row)
	}
	return n, transform.SameTree, nil
}

// Install makes a's exec builder answer the tabular EXPLAIN (plan.
// DescribeQuery without FORMAT=TREE/PLAN or ANALYZE) from the analysed
// plan; everything else is built as before.
func Install(a *analyzer.Analyzer) {
	a.ExecBuilder = builder{inner: a.ExecBuilder}
}

type builder struct{ inner sql.NodeExecBuilder }

func (b builder) Build(ctx *sql.Context, n sql.Node, r sql.Row) (sql.RowIter, error) {
	// EXPLAIN ANALYZE runs its statement: of a DP release it would charge
	// without showing the answer. The text path refuses it before
	// analysis (fastpath); this catches every other way in (a server-side
	// prepared statement), before the release is built.
	if analyzesRelease(n) {
		return nil, ErrAnalyze
	}
	if d, ok := n.(*plan.DescribeQuery); ok && !d.Format.Plan && !d.Format.Analyze {
		rows, err := tableRows(ctx, d.Child)
		if err != nil {
			return nil, err
		}
		return sql.RowsToRowIter(rows...), nil
	}
	return b.inner.Build(ctx, n, r)
}

// tableRows returns one row per table access of the main query block, in
// plan order (a join's outer table first), as MySQL lists them; "No tables
// used" when there is none. Tables read by subqueries in expressions are
// not listed. A plan with a row source of its own (sql.ExecSourceRel: a DP
// aggregate release, a table function) is refused: its rows are not a
// table access, and a release is never described as one.
func tableRows(ctx *sql.Context, n sql.Node) ([]sql.Row, error) {
	var rows []sql.Row
	var err error
	var walk func(n sql.Node, filtered bool)
	walk = func(n sql.Node, filtered bool) {
		if err != nil {
			return
		}
		switch x := n.(type) {
		case *plan.Filter:
			walk(x.Child, true)
			return
		case *plan.TableAlias:
			if rt, ok := x.Child.(*plan.ResolvedTable); ok {
				rows = append(rows, scanRow(ctx, x.Name(), rt, filtered))
				return
			}
			if ita, ok := x.Child.(*plan.IndexedTableAccess); ok {
				rows = append(rows, indexRow(ctx, x.Name(), ita, filtered))
				return
			}
		case *plan.ResolvedTable:
			rows = append(rows, scanRow(ctx, x.Name(), x, filtered))
			return
		case *plan.IndexedTableAccess:
			rows = append(rows, indexRow(ctx, x.Name(), x, filtered))
			return
		case sql.ExecSourceRel:
			err = ErrNotTabular
			return
		}
		for _, c := range n.Children() {
			walk(c, false)
		}
	}
	walk(n, false)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		rows = append(rows, row("", "", "", "", "", nil, "No tables used"))
	}
	return rows, nil
}

// ErrNotTabular refuses the tabular EXPLAIN of a plan with its own row
// source.
var ErrNotTabular = errors.New("the tabular EXPLAIN describes table accesses only; this plan has a row source of its own (a DP release or a table function): use EXPLAIN FORMAT=TREE")

// scanRow: a full scan (type ALL).
func scanRow(ctx *sql.Context, name string, rt *plan.ResolvedTable, filtered bool) sql.Row {
	if rt.Table == nil || rt.Name() == "" {
		return row("", "", "", "", "", nil, "No tables used")
	}
	return row(name, "ALL", "", "", "", rowCount(ctx, rt.Table), extra(filtered))
}

// indexRow: an index access. A static lookup is const (a point on a
// unique key: one row), ref (equalities) or range; a join's lookup is
// eq_ref (a full unique key: one row) or ref, with the outer columns as ref.
func indexRow(ctx *sql.Context, name string, ita *plan.IndexedTableAccess, filtered bool) sql.Row {
	idx := ita.Index()
	key := ""
	if idx != nil {
		key = idx.ID()
		if strings.EqualFold(key, "primary") {
			key = "PRIMARY"
		}
	}
	n := rowCount(ctx, ita.Table)
	one := any(uint64(1))
	if n == nil {
		one = nil
	}
	if !ita.IsStatic() {
		var refs []string
		for _, e := range ita.Expressions() {
			refs = append(refs, e.String())
		}
		if ita.IsStrictLookup() {
			return row(name, "eq_ref", key, key, strings.Join(refs, ","), one, extra(filtered))
		}
		return row(name, "ref", key, key, strings.Join(refs, ","), n, extra(filtered))
	}
	lookup, err := ita.GetLookup(ctx, nil)
	eq := 0
	if err == nil {
		eq = equalities(ctx, lookup)
	}
	switch {
	case err == nil && (lookup.IsPointLookup || (idx != nil && idx.IsUnique() && eq == len(idx.Expressions()))):
		return row(name, "const", key, key, "const", one, extra(filtered))
	case eq > 0:
		return row(name, "ref", key, key, "const", n, extra(filtered))
	}
	// MySQL's range access evaluates its condition on the index rows.
	return row(name, "range", key, key, "", n, "Using where")
}

// equalities returns the number of index columns a static lookup fixes
// (one range, x = c on each of its columns), 0 when it is not such a lookup.
func equalities(ctx *sql.Context, l sql.IndexLookup) int {
	rc, ok := l.Ranges.(sql.MySQLRangeCollection)
	if !ok || len(rc) != 1 {
		return 0
	}
	for _, ce := range rc[0] {
		if ce.Type() != sql.RangeType_ClosedClosed {
			return 0
		}
		c, err := ce.Typ.Compare(ctx, sql.GetMySQLRangeCutKey(ce.LowerBound), sql.GetMySQLRangeCutKey(ce.UpperBound))
		if err != nil || c != 0 {
			return 0
		}
	}
	return len(rc[0])
}

func extra(filtered bool) string {
	if filtered {
		return "Using where"
	}
	return ""
}

// rowCount is the table's row count, or nil when the store does not tell
// the caller (the HideRowCount hook) or keeps none.
func rowCount(ctx *sql.Context, t sql.Table) any {
	for t != nil {
		if st, ok := t.(sql.StatisticsTable); ok {
			n, exact, err := st.RowCount(ctx)
			if err != nil || !exact {
				return nil
			}
			return n
		}
		w, ok := t.(sql.TableWrapper)
		if !ok {
			return nil
		}
		t = w.Underlying()
	}
	return nil
}

// row builds a row of plan.DescribeSchema ("" is NULL); filtered is 100:
// dpsql keeps no selectivity estimates.
func row(table, typ, possible, key, ref string, rows any, extra string) sql.Row {
	null := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	var filtered any = 100.0
	if table == "" {
		filtered = nil
	}
	return sql.Row{uint64(1), "SIMPLE", null(table), nil, null(typ), null(possible), null(key), nil, null(ref), rows, filtered, null(extra)}
}

// analyzesRelease reports whether n is (or wraps) an EXPLAIN ANALYZE of a
// DP release.
func analyzesRelease(n sql.Node) bool {
	found := false
	transform.Inspect(n, func(c sql.Node) bool {
		if d, ok := c.(*plan.DescribeQuery); ok {
			if d.Format.Analyze {
				_, found = Find(d.Child)
			}
			return false
		}
		return !found
	})
	return found
}
