package functions

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"

	"github.com/dpsql/dpsql/catalog"
)

// Helpers on SQL values, sessions and plan nodes shared by the guard, the DP
// query planner and the engine's wiring (moved from engine/guard.go, issue 26).

// UserOf returns the account running the query ("" without a session).
func UserOf(ctx *sql.Context) string {
	if ctx == nil || ctx.Session == nil {
		return ""
	}
	return ctx.Session.Client().User
}

// TableKey returns the catalog key of a node that reads a table.
func TableKey(n any) (string, bool) {
	switch x := n.(type) {
	case *plan.ResolvedTable:
		if plan.IsDualTable(x.Table) || x.SqlDatabase == nil {
			return "", false
		}
		return catalog.Key(x.SqlDatabase.Name(), x.Table.Name()), true
	case sql.TableNode:
		if x.UnderlyingTable() == nil || x.Database() == nil {
			return "", false
		}
		return catalog.Key(x.Database().Name(), x.UnderlyingTable().Name()), true
	case *plan.IndexedTableAccess:
		return TableKey(x.TableNode)
	}
	return "", false
}

// ToFloat converts a numeric SQL value to float64 (false for anything else).
func ToFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case interface{ Float64() (float64, bool) }:
		// DECIMAL: the flag says whether the conversion is exact, not
		// whether the value is numeric (19.99 converts inexactly).
		f, _ := x.Float64()
		return f, true
	}
	return 0, false
}

// IsView reports whether table is one of the dpsql views.
func IsView(table string) bool {
	for _, v := range ViewNames {
		if strings.EqualFold(v, table) {
			return true
		}
	}
	return false
}

// IsSystemDB reports whether name is the dpsql system database.
func IsSystemDB(name string) bool { return strings.EqualFold(name, SystemDatabase) }
