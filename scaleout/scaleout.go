package scaleout

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/sirupsen/logrus"

	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/mysqlstore"
	"github.com/dpsql/dpsql/store"
)

// Scale-out (issue 14, docs/scale-out.md): tables attached from a
// MariaDB/MySQL backend. The embedded store keeps every other table, the
// catalog, the ledger and the accounts.

// routedRows sends the DP functions' reads of attached tables to the
// backend and every other read to the embedded store.
type routedRows struct {
	emb *store.Store
	my  *mysqlstore.Backend
}

var (
	_ functions.Rows           = routedRows{}
	_ functions.Pushdown       = routedRows{}
	_ functions.UnitPushdown   = routedRows{}
	_ functions.ParallelFloats = routedRows{}
)

// NewRows returns the DP functions' reads: of attached tables from the
// backend my, of every other table from the embedded store emb.
func NewRows(emb *store.Store, my *mysqlstore.Backend) functions.Rows {
	return routedRows{emb: emb, my: my}
}

func (r routedRows) TableSchema(db, table string) (sql.Schema, error) {
	if r.my.Attached(db, table) {
		return r.my.TableSchema(db, table)
	}
	return r.emb.TableSchema(db, table)
}

func (r routedRows) RowCount(db, table string) (int64, error) {
	if r.my.Attached(db, table) {
		return r.my.RowCount(db, table)
	}
	return r.emb.RowCount(db, table)
}

func (r routedRows) ScanFloats(db, table string, cols []string, fn func([]float64) error) (int64, error) {
	if r.my.Attached(db, table) {
		return r.my.ScanFloats(db, table, cols, fn)
	}
	return r.emb.ScanFloats(db, table, cols, fn)
}

// ScanFloatsParallel scans an embedded table on several cores; an attached
// table is streamed from its backend by ScanFloats (ok = false).
func (r routedRows) ScanFloatsParallel(db, table string, cols []string, start func(int64) error, fn func(int64, []float64)) (int64, bool, error) {
	if r.my.Attached(db, table) {
		return 0, false, nil
	}
	return r.emb.ScanFloatsParallel(db, table, cols, start, fn)
}

func (r routedRows) ScanValues(db, table string, cols []string, fn func([]any) error) (int64, error) {
	if r.my.Attached(db, table) {
		return r.my.ScanValues(db, table, cols, fn)
	}
	return r.emb.ScanValues(db, table, cols, fn)
}

func (r routedRows) ShiftedSum(db, table, col string, lo, hi float64, exact bool) (float64, int64, bool, error) {
	return r.my.ShiftedSum(db, table, col, lo, hi, exact)
}

func (r routedRows) LinearStats(db, table string, m functions.LinearMap, exact bool) ([]float64, []float64, int64, bool, error) {
	if exact {
		return r.my.LinearStatsExact(db, table, m)
	}
	return r.my.LinearStats(db, table, m)
}

func (r routedRows) CentredLinearStats(db, table string, m functions.LinearMap, lo, hi float64, meanExact, exact bool,
	centre func(float64, int64) (functions.LinearMap, error)) ([]float64, []float64, int64, bool, error) {
	return r.my.CentredLinearStats(db, table, m, lo, hi, meanExact, exact, centre)
}

// Attached reports whether db.table lives on the backend (public: the
// catalog's attach). [reg] linreg's bounds=auto keeps the pushed-down
// public scaling there (functions.planLinReg).
func (r routedRows) Attached(db, table string) bool { return r.my.Attached(db, table) }

// Attached is what the database provider needs of the backend: its
// attached tables, read through check.
type Attached struct {
	my    *mysqlstore.Backend
	check mysqlstore.ReadCheck
}

// NewAttached returns the attached tables of my, read through check.
func NewAttached(my *mysqlstore.Backend, check mysqlstore.ReadCheck) *Attached {
	return &Attached{my: my, check: check}
}

// Table returns the attached table db.name (false if none; a nil
// receiver has none).
func (a *Attached) Table(db, name string) (sql.Table, bool) {
	if a == nil {
		return nil, false
	}
	t, ok := a.my.Table(db, name, a.check)
	if !ok {
		return nil, false
	}
	return t, true
}

// Names lists the tables attached in db.
func (a *Attached) Names(db string) []string {
	if a == nil {
		return nil
	}
	return a.my.Tables(db)
}

// Procedures are dp_attach and dp_detach (owners only): they attach tables
// of backend (nil: none configured) beside the embedded store st, creating
// their databases in dbs.
func Procedures(cat *catalog.Catalog, st *store.Store, backend *mysqlstore.Backend, log logrus.FieldLogger, dbs sql.MutableDatabaseProvider) []sql.ExternalStoredProcedureDetails {
	okSchema := sql.Schema{{Name: "status", Type: types.LongText}}
	attach := func(ctx *sql.Context, name string) (sql.RowIter, error) {
		if !cat.IsOwner(functions.UserOf(ctx)) {
			return nil, fmt.Errorf("dp_attach: only data owners may call it (user %q is an analyst)", functions.UserOf(ctx))
		}
		if backend == nil {
			return nil, fmt.Errorf("dp_attach: no MariaDB/MySQL backend is configured (start dpsql serve with --backend mysql --backend-dsn …)")
		}
		db, table, ok := strings.Cut(name, ".")
		if !ok {
			db, table = ctx.GetCurrentDatabase(), name
		}
		db, table = strings.Trim(db, "`"), strings.Trim(table, "`")
		if db == "" {
			return nil, fmt.Errorf("dp_attach: write the table as '<db>.<table>'")
		}
		if functions.IsSystemDB(db) {
			return nil, fmt.Errorf("dp_attach: database %s is reserved", db)
		}
		if st.HasTable(db, table) {
			return nil, fmt.Errorf("dp_attach: dpsql already has a table %s.%s in its embedded store", db, table)
		}
		if !dbs.HasDatabase(ctx, db) {
			if err := dbs.CreateDatabase(ctx, db); err != nil {
				return nil, fmt.Errorf("dp_attach: create database %s: %w", db, err)
			}
		}
		sch, err := backend.Attach(ctx, db, table)
		if err != nil {
			log.WithError(err).WithField("table", db+"."+table).Warn("dp_attach failed")
			return nil, fmt.Errorf("dp_attach: %s.%s: the backend has no such table, or it is unreachable (see the server log)", db, table)
		}
		return sql.RowsToRowIter(sql.Row{fmt.Sprintf("table %s.%s attached from the backend (%d columns, read-only in dpsql); declare bounds and CALL dp_protect", db, table, len(sch))}), nil
	}
	detach := func(ctx *sql.Context, name string) (sql.RowIter, error) {
		if !cat.IsOwner(functions.UserOf(ctx)) {
			return nil, fmt.Errorf("dp_detach: only data owners may call it (user %q is an analyst)", functions.UserOf(ctx))
		}
		if backend == nil {
			return nil, fmt.Errorf("dp_detach: no MariaDB/MySQL backend is configured")
		}
		db, table, ok := strings.Cut(name, ".")
		if !ok {
			db, table = ctx.GetCurrentDatabase(), name
		}
		if !backend.Attached(db, table) {
			return nil, fmt.Errorf("dp_detach: %s.%s is not attached", db, table)
		}
		if cat.IsProtected(strings.ToLower(db) + "." + strings.ToLower(table)) {
			return nil, fmt.Errorf("dp_detach: %s.%s is protected: its budget is bound to the name, it stays attached", db, table)
		}
		if err := backend.Detach(db, table); err != nil {
			return nil, fmt.Errorf("dp_detach: %w", err)
		}
		return sql.RowsToRowIter(sql.Row{fmt.Sprintf("table %s.%s detached (the backend's table is untouched)", db, table)}), nil
	}
	return []sql.ExternalStoredProcedureDetails{
		{Name: "dp_attach", Schema: okSchema, Function: attach},
		{Name: "dp_detach", Schema: okSchema, Function: detach},
	}
}

func (r routedRows) CountOutside(db, table, col string, lo, hi float64) (int64, bool, error) {
	return r.my.CountOutside(db, table, col, lo, hi)
}

func (r routedRows) Pushes(db, table string) bool { return r.my.Attached(db, table) }

// PersonGroups pushes a person-level query's per-(person, group) partial
// aggregates to the backend when every table it reads is attached there
// (issue 27 item 6); otherwise ok = false and the compiler streams rows.
func (r routedRows) PersonGroups(q functions.PersonGroupQuery, fn func(g functions.PersonGroup) error) (bool, error) {
	return r.my.PersonGroups(q, fn)
}
