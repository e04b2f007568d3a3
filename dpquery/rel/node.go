package rel

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/mechanism/bound"
)

// The SQL glue: what the engine needs to put a compiled unit query where
// the analyst's GroupBy was (docs/sql.md, "Privacy units").

// Releaser reserves a unit-level release and runs it (functions.Env).
type Releaser interface {
	ReleaseUnit(ctx *sql.Context, unit string, tables []string, function string, reqEps, reqDelta float64, events []budget.Event, compute func() (any, error)) (any, error)
	// AdmitUnit checks the release's memory estimate before the charge
	// (docs/privacy/units.md §6); done frees its reservation.
	AdmitUnit(ctx *sql.Context, estimate func() (float64, error)) (done func(), err error)
	// QuoteRelease is what the release would charge now on account and
	// whether it is admitted, read-only (the EXPLAIN of the query).
	QuoteRelease(ctx *sql.Context, account, function string, reqEps, reqDelta float64, events []budget.Event) (budget.Quote, error)
}

// Schemas gives tables' schemas (functions.Rows).
type Schemas interface {
	TableSchema(db, table string) (sql.Schema, error)
}

// CatalogMeta is Meta over the catalog and the store's schemas.
type CatalogMeta struct {
	Cat     *catalog.Catalog
	Schemas Schemas
}

// Table implements Meta.
func (m CatalogMeta) Table(key string) (catalog.Table, bool) { return m.Cat.Table(key) }

// Columns implements Meta.
func (m CatalogMeta) Columns(db, table string) ([]string, error) {
	return ColumnNames(m.Schemas, db, table)
}

// ColumnNames lists a table's columns in schema order and spelling.
func ColumnNames(sch Schemas, db, table string) ([]string, error) {
	s, err := sch.TableSchema(db, table)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(s))
	for i, c := range s {
		out[i] = c.Name
	}
	return out, nil
}

// Touches reports whether a plan subtree reads a table of a privacy unit
// (such a GroupBy goes through this compiler, never the row-level one).
func Touches(n sql.Node, cat *catalog.Catalog) bool {
	found := false
	transform.Inspect(n, func(c sql.Node) bool {
		if rt, ok := c.(*plan.ResolvedTable); ok {
			if _, ok := cat.UnitOf(catalog.Key(rt.SqlDatabase.Name(), rt.Name())); ok {
				found = true
			}
		}
		return !found
	})
	return found
}

// Deps are the node's collaborators.
type Deps struct {
	Env   Releaser
	Src   Source
	Cat   *catalog.Catalog // the answer cache and write epochs; nil: no cache
	Fresh bool             // SET SESSION dp_fresh = 1: never answer from the cache
	// Account keys the answer cache: an answer is reused only for the
	// account that paid for it (as the row-level cache since issue 25), so
	// one account's quota cannot be bypassed with another's answers.
	Account string
}

// Aggregate is the leaf that replaces the analyst's GroupBy: it reserves the
// unit's budget, runs the plan and emits the released rows in the
// GroupBy's schema.
type Aggregate struct {
	p      *Plan
	outs   []Out
	schema sql.Schema
	deps   Deps
	// names and order: the output columns as the statement shows them
	// (SetColumns), for the EXPLAIN.
	names []string
	order []int
}

// SetColumns gives the output columns' names in the statement (aliases)
// and the order to list them in, for the EXPLAIN; aligned with the
// GroupBy's schema.
func (n *Aggregate) SetColumns(names []string, order []int) {
	if len(names) == len(n.outs) && len(order) == len(n.outs) {
		n.names, n.order = names, order
	}
}

var _ sql.ExecSourceRel = (*Aggregate)(nil)

// NewAggregate wraps a compiled plan for the GroupBy with schema and outs.
func NewAggregate(p *Plan, outs []Out, schema sql.Schema, deps Deps) *Aggregate {
	return &Aggregate{p: p, outs: outs, schema: schema, deps: deps}
}

func (n *Aggregate) Resolved() bool       { return true }
func (n *Aggregate) IsReadOnly() bool     { return true }
func (n *Aggregate) Schema() sql.Schema   { return n.schema }
func (n *Aggregate) Children() []sql.Node { return nil }
func (n *Aggregate) String() string {
	return fmt.Sprintf("DPUnitAggregate(%s, %s)", n.p.Unit, strings.Join(n.p.Tables, ", "))
}

// WithChildren implements sql.Node.
func (n *Aggregate) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

// cacheID keys an answer on the compiled plan and the write epochs of
// every table it reads (public values only; no row count).
func (n *Aggregate) cacheID() []byte {
	var tables []string
	for _, s := range n.p.scans {
		tables = append(tables, s.key)
	}
	tables = append(tables, n.p.Tables...)
	sort.Strings(tables)
	var b strings.Builder
	b.WriteString("unit-v1 ")
	fmt.Fprintf(&b, "account(%q) ", n.deps.Account)
	b.WriteString(n.p.Key())
	prev := ""
	for _, t := range tables {
		if t != prev {
			fmt.Fprintf(&b, " epoch(%s)=%d", t, n.deps.Cat.WriteEpoch(t))
			prev = t
		}
	}
	h := sha256.Sum256([]byte(b.String()))
	return h[:]
}

// RowIter reserves the budget durably, then scans and releases.
func (n *Aggregate) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	if n.deps.Env == nil || n.deps.Src == nil {
		return nil, errors.New("DP unit aggregates are not wired")
	}
	var id []byte
	if n.deps.Cat != nil {
		id = n.cacheID()
		if !n.deps.Fresh {
			if blob, ok := n.deps.Cat.CachedAnswer(id); ok {
				var r Result
				if err := json.Unmarshal(blob, &r); err == nil {
					ctx.Warn(1105, "dp: answer from the answer cache (same compiled query on the same snapshot): no charge; SET SESSION dp_fresh = 1 for a new release")
					return sql.RowsToRowIter(n.rows(ctx, &r)...), nil
				}
			}
		}
	}
	done, err := n.deps.Env.AdmitUnit(ctx, n.p.memoryOf(n.deps.Src))
	if err != nil {
		return nil, err
	}
	defer done()
	check := func() error { return ctx.Err() }
	out, err := n.deps.Env.ReleaseUnit(ctx, n.p.Unit, n.p.Tables, unitAggregateFn, n.p.spec.Epsilon, n.p.spec.Delta, n.p.Events(), func() (any, error) {
		return n.p.Run(n.deps.Src, check)
	})
	if err != nil {
		return nil, err
	}
	r := out.(*Result)
	if id != nil {
		if blob, err := json.Marshal(r); err == nil {
			_ = n.deps.Cat.StoreAnswer(n.p.Tables[0], id, blob) // a lost cache entry only costs a new release
		}
	}
	ctx.Warn(1105, "dp: %s", n.p.DescribeRelease(r.Bound))
	return sql.RowsToRowIter(n.rows(ctx, r)...), nil
}

// rows maps released rows to the GroupBy's schema and types.
func (n *Aggregate) rows(ctx *sql.Context, r *Result) []sql.Row {
	ng := len(n.p.groups)
	out := make([]sql.Row, 0, len(r.Rows))
	for _, rr := range r.Rows {
		if len(rr) != ng+len(n.p.aggs) {
			continue
		}
		row := make(sql.Row, len(n.outs))
		for i, o := range n.outs {
			var v any
			if o.Group >= 0 {
				v = rr[o.Group]
			} else {
				v = rr[ng+o.Agg]
				if n.p.aggs[o.Agg].Kind == bound.Count {
					if f, ok := v.(float64); ok { // after a JSON round trip
						v = int64(f)
					}
				}
			}
			if cv, _, err := n.schema[i].Type.Convert(ctx, v); err == nil {
				v = cv
			}
			row[i] = v
		}
		out = append(out, row)
	}
	return out
}

// PlanGroupBy compiles an analyst's GroupBy over tables of a privacy unit
// (Touches) into the leaf that replaces it; everything is checked on the
// plan and the catalog, before any charge. The engine keeps the nodes above
// the GroupBy (projection, HAVING, ORDER BY, LIMIT) as post-processing.
func PlanGroupBy(gb *plan.GroupBy, opt Options, bounds []ArgBounds, meta Meta, deps Deps) (*Aggregate, error) {
	q, outs, err := FromGroupBy(gb, opt, bounds)
	if err != nil {
		return nil, err
	}
	p, err := Compile(q, meta)
	if err != nil {
		return nil, err
	}
	return NewAggregate(p, outs, gb.Schema(), deps), nil
}
