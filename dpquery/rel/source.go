package rel

import (
	"fmt"
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/mechanism/bound"
)

// Training sources written as a FROM clause (docs/privacy/units.md §10,
// docs/sql.md "Training on a join"): the trainings' table argument may be
// 'orders o JOIN customers c ON o.customer_id = c.id', parsed here into the
// compiler's Node and compiled by Compile, so a training set obeys exactly
// the join rules (and refusals) of a unit query.

// ParseFrom parses the text of a FROM clause — tables, aliases and inner
// equi-joins JOIN … ON a = b — into a Node; unqualified tables are in db.
// Anything else (WHERE, subqueries, outer, comma, NATURAL or USING joins)
// is refused, wrapping ErrRefused.
func ParseFrom(db, from string) (Node, error) {
	text := strings.TrimSpace(from)
	if text == "" {
		return nil, refuse("the training source is empty")
	}
	st, err := sqlparser.Parse("SELECT * FROM " + text)
	if err != nil {
		return nil, refuse("the training source %q is not a FROM clause: %v", text, err)
	}
	sel, ok := st.(*sqlparser.Select)
	if !ok {
		return nil, refuse("the training source %q is not a FROM clause", text)
	}
	// Only FROM: the statement must print exactly as SELECT * FROM <its
	// FROM> (no WHERE, GROUP BY, LIMIT, INTO, locking, hints …).
	bare := &sqlparser.Select{SelectExprs: sel.SelectExprs, From: sel.From}
	if sqlparser.String(bare) != sqlparser.String(sel) || len(sel.SelectExprs) != 1 {
		return nil, refuse("the training source %q has more than a FROM clause: write tables and JOIN … ON a = b only (no WHERE, GROUP BY, ORDER BY or LIMIT; a training reads every joined row)", text)
	}
	if len(sel.From) != 1 {
		return nil, refuse("the training source %q joins tables with a comma (a cross product): write JOIN … ON a = b", text)
	}
	return fromExpr(db, sel.From[0])
}

func fromExpr(db string, e sqlparser.TableExpr) (Node, error) {
	switch x := e.(type) {
	case *sqlparser.AliasedTableExpr:
		tn, ok := x.Expr.(sqlparser.TableName)
		if !ok {
			return nil, refuse("training source: %s is not a table (no subqueries or table functions)", sqlparser.String(x.Expr))
		}
		if x.AsOf != nil || len(x.Partitions) > 0 || x.Hints != nil || x.Lateral {
			return nil, refuse("training source: %s: AS OF, PARTITION, index hints and LATERAL are not supported", sqlparser.String(x))
		}
		d := db
		if !tn.DbQualifier.IsEmpty() {
			d = tn.DbQualifier.String()
		}
		if d == "" {
			return nil, refuse("training source: no database selected: qualify %s as <db>.%s", tn.Name.String(), tn.Name.String())
		}
		return Scan{DB: d, Table: tn.Name.String(), Alias: x.As.String()}, nil
	case *sqlparser.ParenTableExpr:
		if len(x.Exprs) != 1 {
			return nil, refuse("training source: (%s) joins tables with a comma: write JOIN … ON a = b", sqlparser.String(x.Exprs))
		}
		return fromExpr(db, x.Exprs[0])
	case *sqlparser.JoinTableExpr:
		if x.Join != sqlparser.JoinStr {
			return nil, refuse("training source: %s is not supported: only inner joins (JOIN … ON a = b); a training set is the rows that match", strings.ToUpper(x.Join))
		}
		if x.Condition.Using != nil || x.Condition.On == nil {
			return nil, refuse("training source: JOIN %s needs ON a = b (USING and joins without ON are not supported)", sqlparser.String(x.RightExpr))
		}
		cmp, ok := x.Condition.On.(*sqlparser.ComparisonExpr)
		if !ok || cmp.Operator != sqlparser.EqualStr {
			return nil, refuse("training source: JOIN ON %s: join on one equality of two columns", sqlparser.String(x.Condition.On))
		}
		l, lok := cmp.Left.(*sqlparser.ColName)
		r, rok := cmp.Right.(*sqlparser.ColName)
		if !lok || !rok {
			return nil, refuse("training source: JOIN ON %s: join on one equality of two columns", sqlparser.String(cmp))
		}
		left, err := fromExpr(db, x.LeftExpr)
		if err != nil {
			return nil, err
		}
		right, err := fromExpr(db, x.RightExpr)
		if err != nil {
			return nil, err
		}
		return Join{Left: left, Right: right, LeftCol: colName(l), RightCol: colName(r)}, nil
	}
	return nil, refuse("training source: %s is not supported (tables and inner equi-joins only)", sqlparser.String(e))
}

func colName(c *sqlparser.ColName) Col {
	return Col{Table: c.Qualifier.Name.String(), Column: c.Name.String()}
}

// scansOf lists the scans of a parsed Node, in text order.
func scansOf(n Node) []Scan {
	switch x := n.(type) {
	case Scan:
		return []Scan{x}
	case Join:
		return append(scansOf(x.Left), scansOf(x.Right)...)
	}
	return nil
}

// CompileFrom implements functions.UnitCompiler: a training source written
// as a FROM clause, compiled by the same Compile as a unit query (one unit;
// protected ⨝ public on any key; protected ⨝ protected of the unit on the
// unit's keys; row-level protected tables and other units refused), whose
// rows are every column of every table, named alias.column, each with its
// person. A table canRead refuses is reported as missing, before anything
// else is said about it. Everything here is before any charge.
func (f Functions) CompileFrom(db, from string, canRead func(db, table string) bool) (*functions.UnitScan, error) {
	n, err := ParseFrom(db, from)
	if err != nil {
		return nil, err
	}
	scans := scansOf(n)
	for _, s := range scans {
		if canRead != nil && !canRead(s.DB, s.Table) {
			return nil, refuse("table %s does not exist", catalog.Key(s.DB, s.Table))
		}
	}
	p, err := Compile(Query{From: n, Aggs: []Agg{{Kind: bound.Count}}, Options: Options{Epsilon: 1}}, f.Meta)
	if err != nil {
		return nil, err
	}
	for _, s := range p.scans {
		for _, c := range s.cols {
			s.need[strings.ToLower(c)] = true
		}
	}
	lay := (&runner{p: p}).layout(p.root)
	cols := make([]string, lay.width)
	origins := make([]functions.ColumnOrigin, lay.width)
	for k, i := range lay.cols {
		s := p.scans[k.scan]
		cols[i] = s.Alias + "." + k.col
		origins[i] = functions.ColumnOrigin{DB: s.DB, Table: s.Table, Column: k.col, Public: s.public}
	}
	var protected []string
	for _, s := range p.scans {
		if !s.public {
			protected = append(protected, s.key)
		}
	}
	return &functions.UnitScan{
		Unit: p.Unit, Tables: p.Tables, Columns: cols, Origins: origins, From: canonicalFrom(p, p.root), Anchor: protected[0],
		Run: func(check func() error, fn func(person string, row []any)) error {
			r := &runner{p: p, src: f.Src, lookup: map[string]map[string]string{}, check: check}
			return r.stream(p.root, func(row []any, person string) error {
				fn(person, row)
				return nil
			})
		},
	}, nil
}

// canonicalFrom prints a compiled FROM with qualified tables (the source
// named in dry runs and in the model's params).
func canonicalFrom(p *Plan, n node) string {
	if n.join == nil {
		s := p.scans[n.scan]
		return fmt.Sprintf("%s.%s AS %s", s.DB, s.Table, s.Alias)
	}
	j := n.join
	right := canonicalFrom(p, j.right)
	if j.right.join != nil {
		right = "(" + right + ")"
	}
	return fmt.Sprintf("%s JOIN %s ON %s.%s = %s.%s", canonicalFrom(p, j.left), right,
		p.scans[j.l.scan].Alias, j.l.col, p.scans[j.r.scan].Alias, j.r.col)
}
