package guard

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/dpsql/dpsql/functions"
)

// The process list (issue 29). A statement's text can hold row values (an
// owner's WHERE id = 17 AND age = 42 on a protected table), and its State
// the running plan: an analyst sees only the rows of their own
// connections, as MySQL shows an account without the PROCESS privilege;
// data owners see every connection. The filter applies before any row
// leaves the process list, so no other account's text, state, database or
// even connection id reaches an analyst. An analyst's own rows show State
// "running" (or nothing) instead of the plan's progress: the rows read so
// far of a table a DP query scans would count a protected table's rows,
// which HideRowCount keeps from analysts.

// processUserCol and processStateCol are the User and State columns of
// SHOW PROCESSLIST and of information_schema.PROCESSLIST.
const (
	processUserCol  = 1
	processStateCol = 6
)

// OwnProcesses makes information_schema.PROCESSLIST of infoSchema (the
// analyzer catalog's) answer analysts with their own connections only.
func (g *Guard) OwnProcesses(infoSchema sql.Database) error {
	t, ok, err := infoSchema.GetTableInsensitive(sql.NewEmptyContext(), information_schema.ProcessListTableName)
	if err != nil || !ok {
		return fmt.Errorf("information_schema.processlist not found (%v)", err)
	}
	ist, ok := t.(*information_schema.InformationSchemaTable)
	if !ok {
		return fmt.Errorf("information_schema.processlist is a %T", t)
	}
	inner := ist.Reader
	ist.Reader = func(ctx *sql.Context, c sql.Catalog) (sql.RowIter, error) {
		it, err := inner(ctx, c)
		if err != nil || g.Owner(ctx) {
			return it, err
		}
		rows, err := sql.RowIterToRows(ctx, it)
		if err != nil {
			return nil, err
		}
		user := functions.UserOf(ctx)
		own := rows[:0]
		for _, r := range rows {
			if len(r) > processStateCol && fmt.Sprint(r[processUserCol]) == user {
				if st, _ := r[processStateCol].(string); st != "" {
					r = append(sql.Row(nil), r...)
					r[processStateCol] = "running"
				}
				own = append(own, r)
			}
		}
		return sql.RowsToRowIter(own...), nil
	}
	return nil
}

// ownProcessesOnly puts a filter on the User column over SHOW PROCESSLIST
// for an analyst, and over it a projection that shows State as "running"
// (or "") rather than the plan's progress (the rule runs twice on a plan:
// a filter already there is not added again).
func ownProcessesOnly(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	cond := expression.NewEquals(
		expression.NewGetField(processUserCol, types.LongText, "User", false),
		expression.NewLiteral(functions.UserOf(ctx), types.LongText))
	return transform.NodeWithCtx(n, nil, func(c transform.Context) (sql.Node, transform.TreeIdentity, error) {
		if _, ok := c.Node.(*plan.ShowProcessList); !ok {
			return c.Node, transform.SameTree, nil
		}
		if f, ok := c.Parent.(*plan.Filter); ok && strings.EqualFold(f.Expression.String(), cond.String()) {
			return c.Node, transform.SameTree, nil
		}
		sch := c.Node.Schema()
		cols := make([]sql.Expression, len(sch))
		for i, col := range sch {
			cols[i] = expression.NewGetField(i, col.Type, col.Name, col.Nullable)
		}
		if len(cols) > processStateCol {
			st := cols[processStateCol]
			empty := expression.NewLiteral("", types.LongText)
			cols[processStateCol] = expression.NewAlias(sch[processStateCol].Name, expression.NewCase(nil,
				[]expression.CaseBranch{{Cond: expression.NewEquals(st, empty), Value: empty}},
				expression.NewLiteral("running", types.LongText)))
		}
		return plan.NewProject(cols, plan.NewFilter(cond, c.Node)), transform.NewTree, nil
	})
}
