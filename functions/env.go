package functions

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/sirupsen/logrus"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/engine/store"
)

// Env is what the SQL adapters need: storage read directly (not through the
// analyst's privileges), the catalog and the accountant.
type Env struct {
	Store   *store.Store
	Catalog *catalog.Catalog
	Budget  *budget.Accountant
	Log     logrus.FieldLogger
}

// tableRef is a resolved table argument.
type tableRef struct {
	db, table string
	key       string // catalog key "db.table"
	schema    sql.Schema
}

var identRE = regexp.MustCompile(`^[A-Za-z0-9_$]{1,64}$`)

// resolveTable resolves '<table>' (current database) or '<db>.<table>'.
// Everything it reports (existence, protection) is public.
func (e *Env) resolveTable(ctx *sql.Context, name string) (tableRef, error) {
	db, table, qualified := strings.Cut(name, ".")
	if !qualified {
		db, table = ctx.GetCurrentDatabase(), name
		if db == "" {
			return tableRef{}, fmt.Errorf("no database selected: write the table as '<db>.<table>'")
		}
	}
	db, table = strings.Trim(db, "`"), strings.Trim(table, "`")
	if !identRE.MatchString(db) || !identRE.MatchString(table) {
		return tableRef{}, fmt.Errorf("invalid table name %q", name)
	}
	schema, err := e.Store.TableSchema(db, table)
	if err != nil {
		return tableRef{}, fmt.Errorf("table %s.%s does not exist", db, table)
	}
	return tableRef{db: db, table: table, key: catalog.Key(db, table), schema: schema}, nil
}

// protectedTable resolves a table argument that must be protected.
func (e *Env) protectedTable(ctx *sql.Context, name string) (tableRef, error) {
	ref, err := e.resolveTable(ctx, name)
	if err != nil {
		return ref, err
	}
	if !e.Catalog.IsProtected(ref.key) {
		return ref, fmt.Errorf("table %s is not protected: DP functions run on protected tables (CALL dp_protect first)", ref.key)
	}
	return ref, nil
}

// column returns the schema's spelling of a column name.
func (r tableRef) column(name string) (string, error) {
	for _, c := range r.schema {
		if strings.EqualFold(c.Name, name) {
			return c.Name, nil
		}
	}
	return "", fmt.Errorf("table %s has no column %q", r.key, name)
}

// user returns the account running the query.
func user(ctx *sql.Context) string {
	if ctx == nil || ctx.Session == nil {
		return ""
	}
	return ctx.Session.Client().User
}

// errMechanismFailed is what an analyst sees when a mechanism fails after
// touching data: the reason could depend on the rows, so it goes to the
// owner-only ledger and the log, never to the analyst.
var errMechanismFailed = errors.New("the mechanism failed after reading the data; the privacy charge is kept (the reason is in dp_ledger)")

// release reserves the cost of a release durably, runs compute, and records
// the outcome. Once compute has started the charge stays, whatever happens.
func (e *Env) release(ctx *sql.Context, ref tableRef, function string, reqEps, reqDelta float64, events []budget.Event, compute func() (any, error)) (any, error) {
	rec, err := e.Budget.Reserve(budget.Request{
		Table:     ref.key,
		User:      user(ctx),
		Function:  function,
		Requested: [2]float64{reqEps, reqDelta},
		Events:    events,
	})
	if err != nil {
		return nil, err
	}
	out, cerr := compute()
	status, detail := "ok", ""
	if cerr != nil {
		status, detail = "failed", cerr.Error()
	}
	if err := e.Budget.Complete(rec.ID, status, detail); err != nil {
		e.Log.WithError(err).WithField("release", rec.ID).Error("could not record release outcome")
	}
	if cerr != nil {
		e.Log.WithError(cerr).WithFields(logrus.Fields{"table": ref.key, "function": function, "release": rec.ID}).Warn("release failed after charge")
		return nil, errMechanismFailed
	}
	e.Log.WithFields(logrus.Fields{"table": ref.key, "function": function, "release": rec.ID, "user": user(ctx)}).Info("release")
	return out, nil
}
