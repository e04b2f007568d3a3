package engine

import (
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/functions"
)

// These helpers moved to package functions (issue 26); the files that
// still call them by their old names use these until they move too.

func tableKey(n any) (string, bool)  { return functions.TableKey(n) }
func userOf(ctx *sql.Context) string { return functions.UserOf(ctx) }
func toFloat(v any) (float64, bool)  { return functions.ToFloat(v) }
func isView(table string) bool       { return functions.IsView(table) }
func isSystemDB(name string) bool    { return functions.IsSystemDB(name) }
