package engine

import (
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/functions"
)

// The DP aggregate planner (dpagg.go, dpcache.go) and DP_HISTOGRAM
// (histtf.go) keep the names they were written with until they move to
// package dpquery (issue 26, after issue 25): guard is what they use of the
// guard (package guard calls them through Guard.PlanDPAgg and
// Guard.TableRelease), and these helpers now live in package functions.

type guard struct {
	cat *catalog.Catalog
	env *functions.Env
}

func tableKey(n any) (string, bool)  { return functions.TableKey(n) }
func userOf(ctx *sql.Context) string { return functions.UserOf(ctx) }
func toFloat(v any) (float64, bool)  { return functions.ToFloat(v) }
func isView(table string) bool       { return functions.IsView(table) }
func isSystemDB(name string) bool    { return functions.IsSystemDB(name) }
