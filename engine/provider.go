package engine

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/scaleout"
	"github.com/dpsql/dpsql/store"
)

// provider adds the dpsql system database and the dp_* procedures to the
// storage provider.
type provider struct {
	sql.MutableDatabaseProvider
	sys   sql.Database
	views func(db string) map[string]sql.Table
	procs sql.ExternalStoredProcedureRegistry
	cat   *catalog.Catalog
	// tfs are the table functions (dpquery/histtf.go), by lower-case name.
	tfs map[string]sql.TableFunction

	viewCache sync.Map // database name → its dpsql views (viewsOf)

	// attached serves the tables attached from a MariaDB/MySQL backend
	// (scale-out, issue 14); nil without a backend.
	attached *scaleout.Attached
}

var (
	_ sql.MutableDatabaseProvider         = (*provider)(nil)
	_ sql.ExternalStoredProcedureProvider = (*provider)(nil)
	_ sql.TableFunctionProvider           = (*provider)(nil)
)

// TableFunction returns a dpsql table function (SELECT * FROM f(…)).
func (p *provider) TableFunction(_ *sql.Context, name string) (sql.TableFunction, bool) {
	tf, ok := p.tfs[strings.ToLower(name)]
	return tf, ok
}

// WithTableFunctions is not used by dpsql (its table functions are fixed).
func (p *provider) WithTableFunctions(...sql.TableFunction) (sql.TableFunctionProvider, error) {
	return p, nil
}

func newProvider(inner sql.MutableDatabaseProvider, sys sql.Database, views func(string) map[string]sql.Table, procs []sql.ExternalStoredProcedureDetails, cat *catalog.Catalog) *provider {
	reg := sql.NewExternalStoredProcedureRegistry()
	for _, p := range procs {
		reg.Register(p)
	}
	return &provider{MutableDatabaseProvider: inner, sys: sys, views: views, procs: reg, cat: cat}
}

func (p *provider) Database(ctx *sql.Context, name string) (sql.Database, error) {
	if functions.IsSystemDB(name) {
		return p.sys, nil
	}
	db, err := p.MutableDatabaseProvider.Database(ctx, name)
	if err != nil {
		return nil, err
	}
	return p.wrap(db), nil
}

// wrap adds the dpsql views to a user database.
func (p *provider) wrap(db sql.Database) sql.Database {
	if sdb, ok := db.(*store.Database); ok {
		return &userDB{Database: sdb, views: p.viewsOf(sdb.Name()), attached: p.attached}
	}
	return db
}

// viewsOf caches the dpsql views of a database: they hold no state (their
// rows are computed when read) and the engine resolves the database on
// every statement.
func (p *provider) viewsOf(db string) map[string]sql.Table {
	if v, ok := p.viewCache.Load(db); ok {
		return v.(map[string]sql.Table)
	}
	v, _ := p.viewCache.LoadOrStore(db, p.views(db))
	return v.(map[string]sql.Table)
}

// userDB is a store database plus the dpsql views (restricted to it).
// Embedding keeps every interface the store database implements.
type userDB struct {
	*store.Database
	views    map[string]sql.Table
	attached *scaleout.Attached
}

func (d *userDB) GetTableInsensitive(ctx *sql.Context, name string) (sql.Table, bool, error) {
	if v, ok := d.views[strings.ToLower(name)]; ok {
		return v, true, nil
	}
	if t, ok := d.attached.Table(d.Name(), name); ok {
		return t, true, nil
	}
	return d.Database.GetTableInsensitive(ctx, name)
}

func (d *userDB) GetTableNames(ctx *sql.Context) ([]string, error) {
	// The dpsql views are listed by AllViews, as VIEW (issue 12).
	names, err := d.Database.GetTableNames(ctx)
	return append(names, d.attached.Names(d.Name())...), err
}

// AllViews adds the dpsql views to the database's own views.
func (d *userDB) AllViews(ctx *sql.Context) ([]sql.ViewDefinition, error) {
	views, err := d.Database.AllViews(ctx)
	if err != nil {
		return nil, err
	}
	return append(views, userViewDefs(d.Name())...), nil
}

// dpsql refuses user triggers and stored procedures (the store could keep
// them): a trigger on a protected table would copy every new row somewhere
// else, and a stored procedure would run statements with its definer's
// rights. Events (scheduled statements) are not offered at all.
var (
	errNoTriggers   = errors.New("triggers are not supported by dpsql")
	errNoProcedures = errors.New("user-defined stored procedures are not supported by dpsql (the dp_* procedures are built in)")
)

func (d *userDB) CreateTrigger(*sql.Context, sql.TriggerDefinition) error { return errNoTriggers }
func (d *userDB) DropTrigger(*sql.Context, string) error                  { return errNoTriggers }
func (d *userDB) SaveStoredProcedure(*sql.Context, sql.StoredProcedureDetails) error {
	return errNoProcedures
}
func (d *userDB) DropStoredProcedure(*sql.Context, string) error { return errNoProcedures }

func (p *provider) HasDatabase(ctx *sql.Context, name string) bool {
	return functions.IsSystemDB(name) || p.MutableDatabaseProvider.HasDatabase(ctx, name)
}

func (p *provider) AllDatabases(ctx *sql.Context) []sql.Database {
	var out []sql.Database
	for _, db := range p.MutableDatabaseProvider.AllDatabases(ctx) {
		out = append(out, p.wrap(db))
	}
	return append(out, p.sys)
}

func (p *provider) CreateDatabase(ctx *sql.Context, name string) error {
	if functions.IsSystemDB(name) {
		return fmt.Errorf("database %s is reserved for dpsql's system views", functions.SystemDatabase)
	}
	return p.MutableDatabaseProvider.CreateDatabase(ctx, name)
}

func (p *provider) DropDatabase(ctx *sql.Context, name string) error {
	if functions.IsSystemDB(name) {
		return fmt.Errorf("database %s holds dpsql's system views and cannot be dropped", functions.SystemDatabase)
	}
	prefix := strings.ToLower(name) + "."
	var protected []string
	for _, t := range p.cat.Tables() {
		if strings.HasPrefix(t.Name, prefix) && t.Protected {
			protected = append(protected, t.Name)
		}
	}
	if len(protected) > 0 && !p.cat.IsOwner(functions.UserOf(ctx)) {
		return fmt.Errorf("database %s holds protected tables (%s): only data owners may drop it", name, strings.Join(protected, ", "))
	}
	if err := p.MutableDatabaseProvider.DropDatabase(ctx, name); err != nil {
		return err
	}
	for _, t := range p.cat.Tables() {
		if strings.HasPrefix(t.Name, prefix) {
			if err := p.cat.Forget(t.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *provider) ExternalStoredProcedure(_ *sql.Context, name string, numOfParams int) (*sql.ExternalStoredProcedureDetails, error) {
	return p.procs.LookupByNameAndParamCount(name, numOfParams)
}

func (p *provider) ExternalStoredProcedures(_ *sql.Context, name string) ([]sql.ExternalStoredProcedureDetails, error) {
	return p.procs.LookupByName(name)
}

// CreateView refuses the names of the dpsql views: a user view named
// dp_ledger would shadow the real one for its readers.
func (d *userDB) CreateView(ctx *sql.Context, name string, selectStatement, createViewStmt string) error {
	if functions.IsView(name) {
		return fmt.Errorf("view name %s is reserved for the dpsql view of the same name", name)
	}
	return d.Database.CreateView(ctx, name, selectStatement, createViewStmt)
}

// userViews lists the dpsql views of a database as views (not base tables),
// with a definition over the dpsql system database.
func userViewDefs(db string) []sql.ViewDefinition {
	out := make([]sql.ViewDefinition, 0, len(functions.ViewNames))
	for _, v := range functions.ViewNames {
		def := "SELECT * FROM `" + functions.SystemDatabase + "`.`" + v + "` /* restricted to database " + db + " */"
		out = append(out, sql.ViewDefinition{Name: v, TextDefinition: def, CreateViewStatement: "CREATE VIEW `" + v + "` AS " + def})
	}
	return out
}
