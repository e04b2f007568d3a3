package guard

import (
	"errors"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/dpsql/dpsql/functions"
)

// Public metadata for BI tools (issue 12). The schema, keys and row count of
// a protected table are public (docs/privacy/threat-model.md); only its rows
// are not. Everything here is decided from the plan's shape and the catalog.

// metadataOnly reports whether node is a statement that names a table but
// reads only its definition (columns, keys, DDL): those are public.
func metadataOnly(node sql.Node) bool {
	switch node.(type) {
	case *plan.ShowCreateTable, *plan.ShowColumns, *plan.ShowIndexes, *plan.ShowTableStatus:
		return true
	}
	return false
}

// metaCheck is the guard's hook for metadata statements: stop is true when
// the guard must not descend into node (it reads no rows), err refuses it.
func metaCheck(ctx *sql.Context, node sql.Node) (stop bool, err error) {
	if metadataOnly(node) {
		return true, nil
	}
	if sg, ok := node.(*plan.ShowGrants); ok {
		return true, checkShowGrants(ctx, sg)
	}
	return false, nil
}

// showGrantsAuth recognises the authorisation request of SHOW GRANTS
// (SELECT on database mysql, which the parser emits only for SHOW GRANTS).
// It is let through and decided by checkShowGrants, which knows whose
// grants are asked for.
func showGrantsAuth(auth ast.AuthInformation) bool {
	return auth.AuthType == ast.AuthType_SELECT && auth.TargetType == ast.AuthTargetType_DatabaseIdentifiers &&
		len(auth.TargetNames) == 1 && strings.EqualFold(auth.TargetNames[0], "mysql")
}

// checkShowGrants lets every account see its own grants; other accounts'
// grants need SELECT on mysql, as in MySQL.
func checkShowGrants(ctx *sql.Context, n *plan.ShowGrants) error {
	if n.CurrentUser || n.For == nil {
		return nil
	}
	client := ctx.Session.Client()
	if n.For.Name == client.User && (n.For.AnyHost || n.For.Host == client.Address || n.For.Host == "%") {
		return nil
	}
	if mdb, ok := n.MySQLDb.(*mysql_db.MySQLDb); ok {
		if mdb.UserHasPrivileges(ctx, sql.NewPrivilegedOperation(sql.PrivilegeCheckSubject{Database: "mysql"}, sql.PrivilegeType_Select)) {
			return nil
		}
	}
	return errors.New("SHOW GRANTS FOR another account needs SELECT on mysql; SHOW GRANTS (your own) is always allowed")
}

// blankEmptyReads replaces every protected table under a node that provably
// returns no rows (LIMIT 0, or a WHERE that is constantly false) by an empty
// table of the same schema, so such statements (Metabase's read probe,
// COM_FIELD_LIST's "SELECT * FROM t LIMIT 0") answer with column metadata
// only. The answer is the same whatever the rows: nothing is read.
func blankEmptyReads(n sql.Node, protected func(key string) bool) (sql.Node, error) {
	out, _, err := transform.Node(n, func(node sql.Node) (sql.Node, transform.TreeIdentity, error) {
		if !returnsNothing(node) {
			return node, transform.SameTree, nil
		}
		return transform.Node(node, func(c sql.Node) (sql.Node, transform.TreeIdentity, error) {
			if key, ok := functions.TableKey(c); ok && protected(key) {
				return plan.NewEmptyTableWithSchema(c.Schema()), transform.NewTree, nil
			}
			return c, transform.SameTree, nil
		})
	})
	return out, err
}

// returnsNothing: LIMIT 0 or a Filter whose condition is a constant that is
// false or NULL.
func returnsNothing(node sql.Node) bool {
	switch x := node.(type) {
	case *plan.Limit:
		l, ok := x.Limit.(*expression.Literal)
		if !ok {
			return false
		}
		v, _, err := types.Int64.Convert(sql.NewEmptyContext(), l.Value())
		if err != nil {
			return false
		}
		if i, ok := v.(int64); ok && i == 0 {
			return true
		}
	case *plan.Filter:
		if !constantExpr(x.Expression) {
			return false
		}
		v, err := x.Expression.Eval(sql.NewEmptyContext(), nil)
		if err != nil {
			return false
		}
		if v == nil {
			return true
		}
		return sql.IsFalse(v)
	}
	return false
}

// constantExpr: no column, subquery, variable or non-deterministic call.
func constantExpr(e sql.Expression) bool {
	ok := true
	transform.InspectExpr(e, func(x sql.Expression) bool {
		switch x.(type) {
		case *expression.Literal, *expression.Not, *expression.Equals, *expression.NullSafeEquals,
			*expression.GreaterThan, *expression.GreaterThanOrEqual, *expression.LessThan, *expression.LessThanOrEqual,
			*expression.And, *expression.Or, *expression.IsNull:
		default:
			// NOT EQUALS is Not(Equals); anything else (columns, variables,
			// functions, subqueries) is not treated as constant.
			ok = false
		}
		return !ok
	})
	return ok
}

// biRewrite is the guard's hook for analysts' plans (issue 12). It returns
// ok with the replacement plan when the DP aggregate planner takes the
// query; otherwise the (possibly blanked) plan for the guard's usual checks.
func (g *Guard) biRewrite(ctx *sql.Context, n sql.Node, scope *plan.Scope) (sql.Node, bool, error) {
	n, err := blankEmptyReads(n, g.cat.IsProtected)
	if err != nil {
		return nil, false, err
	}
	if g.PlanDPAgg == nil {
		return n, false, nil
	}
	out, err := g.PlanDPAgg(ctx, n)
	if err != nil || out != nil {
		return out, err == nil, err
	}
	return n, false, nil
}

// unwrapRelease strips what BI tools wrap around a single DP function call
// and that cannot evaluate it more than once: LIMIT n ≥ 1 (with an optional
// OFFSET), and SELECT <columns> FROM (<call>) AS x (a derived table in FROM
// with no join is evaluated once).
func unwrapRelease(n sql.Node) sql.Node {
	for {
		switch x := n.(type) {
		case *plan.Limit:
			l, ok := x.Limit.(*expression.Literal)
			if !ok {
				return n
			}
			v, _, err := types.Int64.Convert(sql.NewEmptyContext(), l.Value())
			if i, ok := v.(int64); err != nil || !ok || i < 1 {
				return n
			}
			n = x.Child
		case *plan.Offset:
			n = x.Child
		case *plan.SubqueryAlias:
			n = x.Child
		case *plan.Project:
			if _, ok := x.Child.(*plan.SubqueryAlias); !ok {
				return n
			}
			for _, e := range x.Projections {
				if _, ok := e.(*expression.GetField); !ok {
					return n
				}
			}
			n = x.Child
		default:
			return n
		}
	}
}
