package dpquery

import (
	"fmt"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/dpsql/dpsql/functions"
)

// DP_HISTOGRAM as a table function (issue 12.3):
//
//	SELECT * FROM DP_HISTOGRAM('<table>', '<column>', ε [, '<options>']) AS h
//
// returns one row per public bin (bin, lo, hi, count) from one charged
// release, the same as the JSON form. The guard (package guard, through TableRelease) accepts it only
// as the sole source of its statement, under post-processing nodes
// (projection, WHERE on the bins, ORDER BY, LIMIT, aliases), so it is
// evaluated once; a second iteration of the node (it cannot happen under
// those nodes) would return the same released rows, not a new release.

const histogramTFName = "dp_histogram"

type histogramTF struct {
	env  *functions.Env
	db   sql.Database
	args []sql.Expression
	memo *histMemo
}

// histMemo holds the one release of a node instance.
type histMemo struct {
	once sync.Once
	rows []sql.Row
	err  error
}

var (
	_ sql.TableFunction      = (*histogramTF)(nil)
	_ sql.ExecSourceRel      = (*histogramTF)(nil)
	_ sql.CollationCoercible = (*histogramTF)(nil)
)

var histogramSchema = sql.Schema{
	{Name: "bin", Type: types.LongText, Source: histogramTFName},
	{Name: "lo", Type: types.Float64, Nullable: true, Source: histogramTFName},
	{Name: "hi", Type: types.Float64, Nullable: true, Source: histogramTFName},
	{Name: "count", Type: types.Float64, Source: histogramTFName},
}

func (h *histogramTF) NewInstance(_ *sql.Context, db sql.Database, args []sql.Expression) (sql.Node, error) {
	if len(args) < 3 || len(args) > 4 {
		return nil, fmt.Errorf("DP_HISTOGRAM takes 3 or 4 arguments ('<table>', '<column>', ε [, '<options>']), got %d", len(args))
	}
	return &histogramTF{env: h.env, db: db, args: args, memo: &histMemo{}}, nil
}

func (h *histogramTF) Name() string                  { return histogramTFName }
func (h *histogramTF) Database() sql.Database        { return h.db }
func (h *histogramTF) Schema() sql.Schema            { return histogramSchema }
func (h *histogramTF) Children() []sql.Node          { return nil }
func (h *histogramTF) IsReadOnly() bool              { return true }
func (h *histogramTF) Expressions() []sql.Expression { return h.args }
func (h *histogramTF) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 7
}

func (h *histogramTF) Resolved() bool {
	for _, a := range h.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}

func (h *histogramTF) String() string {
	parts := make([]string, len(h.args))
	for i, a := range h.args {
		parts[i] = a.String()
	}
	return "DP_HISTOGRAM(" + strings.Join(parts, ", ") + ")"
}

func (h *histogramTF) WithDatabase(db sql.Database) (sql.Node, error) {
	n := *h
	n.db = db
	return &n, nil
}

func (h *histogramTF) WithExpressions(exprs ...sql.Expression) (sql.Node, error) {
	if len(exprs) != len(h.args) {
		return nil, sql.ErrInvalidChildrenNumber.New(h, len(exprs), len(h.args))
	}
	n := *h
	n.args = exprs
	n.memo = &histMemo{}
	return &n, nil
}

func (h *histogramTF) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(h, len(children), 0)
	}
	return h, nil
}

// RowIter makes the release (charged by functions.Env like every ★ call)
// and returns its bins.
func (h *histogramTF) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	h.memo.once.Do(func() {
		vals := make([]any, len(h.args))
		for i, a := range h.args {
			v, err := a.Eval(ctx, nil)
			if err != nil {
				h.memo.err = err
				return
			}
			vals[i] = v
		}
		r, err := h.env.HistogramRelease(ctx, vals)
		if err != nil {
			h.memo.err = err
			return
		}
		n := "n not public"
		if r.N != nil {
			n = fmt.Sprintf("n = %d", *r.N)
		}
		if r.Unit != "" {
			n += fmt.Sprintf("; person level, unit %s: at most %d bin(s) per person, %d row(s) per person and bin", r.Unit, r.MaxGroups, r.MaxRows)
		}
		ctx.Warn(1105, "dp: DP_HISTOGRAM of %s.%s: ε = %v, Laplace noise of scale %.6g on every count (%s). %s", r.Table, r.Column, r.Epsilon, r.Scale, n, r.Note)
		for _, b := range r.Bins {
			var lo, hi any
			if b.Lo != nil {
				lo = *b.Lo
			}
			if b.Hi != nil {
				hi = *b.Hi
			}
			h.memo.rows = append(h.memo.rows, sql.Row{b.Label, lo, hi, b.Count})
		}
	})
	if h.memo.err != nil {
		return nil, h.memo.err
	}
	return sql.RowsToRowIter(h.memo.rows...), nil
}

// soleHistogramSource reports whether tf is the only source of the
// statement: reached from the root through post-processing nodes only.
func soleHistogramSource(root sql.Node, tf *histogramTF) bool {
	for cur := root; ; {
		switch x := cur.(type) {
		case *histogramTF:
			return x == tf
		case *plan.Project, *plan.Filter, *plan.Sort, *plan.Limit, *plan.Offset, *plan.TableAlias,
			*plan.SubqueryAlias, *plan.Distinct, *plan.TopN, *plan.Having, *plan.GroupBy:
			if len(cur.Children()) != 1 {
				return false
			}
			cur = cur.Children()[0]
		default:
			return false
		}
	}
}
