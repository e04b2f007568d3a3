package explain

import (
	"errors"
	"fmt"
	"math"
	"regexp"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// EXPLAIN of a DP release (docs/sql.md "EXPLAIN of a DP query"). An
// analyst's DP aggregate query is planned by dpquery before anything is
// charged; its EXPLAIN answers that plan — the charge, the unit, the
// contribution bounds, how groups are formed, the joins, and the mechanism,
// ε, δ and noise scale of every output column — instead of table accesses,
// without charging and without reading a row. The rows are built by the
// release node (Releaser) from public inputs only: the query, the catalog,
// the options, the account's budget and quota (as dp_budget shows them) and,
// for row-level tables, the public row count.

// Item is one row of a DP EXPLAIN. Empty strings and NaN are NULL.
type Item struct {
	Item        string  // release, event, unit, table, join, where, contribution, groups, auto_bounds, column
	Name        string  // the ledger function, the unit, an output column, …
	Value       string  // the row's value: the account, k, C, the join condition, a column's aggregate …
	Mechanism   string  // Laplace, …
	Epsilon     float64 // release: the charge after accounting; others: the share
	Delta       float64
	NoiseScale  float64
	Sensitivity float64
	Bounds      string
	Detail      string
}

// NoValue marks an absent number (NULL).
var NoValue = math.NaN()

// Schema is the result of a DP EXPLAIN.
var Schema = sql.Schema{
	{Name: "item", Type: types.Text, Nullable: false},
	{Name: "name", Type: types.Text, Nullable: true},
	{Name: "value", Type: types.Text, Nullable: true},
	{Name: "mechanism", Type: types.Text, Nullable: true},
	{Name: "epsilon", Type: types.Float64, Nullable: true},
	{Name: "delta", Type: types.Float64, Nullable: true},
	{Name: "noise_scale", Type: types.Float64, Nullable: true},
	{Name: "sensitivity", Type: types.Float64, Nullable: true},
	{Name: "bounds", Type: types.Text, Nullable: true},
	{Name: "detail", Type: types.LongText, Nullable: true},
}

// Releaser is a plan node that releases with DP (a DP aggregate): its
// EXPLAIN is its plan. ExplainRelease must read no row and charge nothing;
// every value it returns must be public.
type Releaser interface {
	sql.Node
	ExplainRelease(ctx *sql.Context) ([]Item, error)
}

// Find returns the DP release of an analysed plan (the child of an
// EXPLAIN), if it has one.
func Find(n sql.Node) (Releaser, bool) {
	var r Releaser
	transform.Inspect(n, func(c sql.Node) bool {
		if x, ok := c.(Releaser); ok && r == nil {
			r = x
		}
		return r == nil
	})
	return r, r != nil
}

// reOptions matches EXPLAIN with options after the keyword (FORMAT=…,
// ANALYZE, PLAN, EXTENDED): those keep go-mysql-server's answers.
var reOptions = regexp.MustCompile(`(?is)^\s*(?:/\*.*?\*/\s*)*(?:EXPLAIN|DESCRIBE|DESC)\s+(?:/\*.*?\*/\s*)*(?:FORMAT\b|ANALYZE\b|PLAN\b|EXTENDED\b)`)

// reAnalyze matches EXPLAIN ANALYZE.
var reAnalyze = regexp.MustCompile(`(?is)^\s*(?:/\*.*?\*/\s*)*(?:EXPLAIN|DESCRIBE|DESC)\s+(?:/\*.*?\*/\s*)*ANALYZE\b`)

// Candidate reports whether a statement's text is an EXPLAIN that may be
// of a DP release: the plain EXPLAIN / DESCRIBE / DESC <statement>, and
// EXPLAIN ANALYZE (which is refused on a DP release: ErrAnalyze).
func Candidate(q string) bool {
	if len(q) > 4096 {
		q = q[:4096]
	}
	return reExplain.MatchString(q) && (!reOptions.MatchString(q) || reAnalyze.MatchString(q))
}

// ErrAnalyze refuses EXPLAIN ANALYZE of a DP release: it would run the
// release, spending its budget, and show none of its answer.
var ErrAnalyze = errors.New("EXPLAIN ANALYZE would run the DP release and spend its budget without showing its answer: EXPLAIN <query> shows the DP plan (charge, noise scales, bounds) without charging, and the query itself gives the answer")

// Node answers a DP EXPLAIN: the rows of its release's plan, built when it
// is executed (with the executing statement's account).
type Node struct{ R Releaser }

var _ sql.ExecSourceRel = (*Node)(nil)

func (n *Node) Resolved() bool       { return true }
func (n *Node) IsReadOnly() bool     { return true }
func (n *Node) Schema() sql.Schema   { return Schema }
func (n *Node) Children() []sql.Node { return nil }
func (n *Node) String() string       { return fmt.Sprintf("DPExplain(%s)", n.R) }

// WithChildren implements sql.Node.
func (n *Node) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

// RowIter implements sql.ExecSourceRel: the plan, nothing read or charged.
func (n *Node) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	items, err := n.R.ExplainRelease(ctx)
	if err != nil {
		return nil, err
	}
	rows := make([]sql.Row, len(items))
	for i, it := range items {
		rows[i] = sql.Row{it.Item, null(it.Name), null(it.Value), null(it.Mechanism), num(it.Epsilon), num(it.Delta),
			num(it.NoiseScale), num(it.Sensitivity), null(it.Bounds), null(it.Detail)}
	}
	return sql.RowsToRowIter(rows...), nil
}

func null(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// num is a number column's value: NULL for NaN (absent) and for ±Inf.
func num(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return f
}

// Describe returns the node answering the EXPLAIN d when its statement is a
// DP release; false otherwise (go-mysql-server's EXPLAIN answers it).
func Describe(d *plan.DescribeQuery) (sql.Node, bool) {
	r, ok := Find(d.Child)
	if !ok {
		return nil, false
	}
	return &Node{R: r}, true
}

// Plain is an item with no numbers (they are NULL).
func Plain(item, name, value, detail string) Item {
	return Item{Item: item, Name: name, Value: value, Detail: detail,
		Epsilon: NoValue, Delta: NoValue, NoiseScale: NoValue, Sensitivity: NoValue}
}
