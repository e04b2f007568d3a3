package engine

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/functions"
)

// provider adds the dpsql system database and the dp_* procedures to the
// storage provider.
type provider struct {
	sql.MutableDatabaseProvider
	sys   sql.Database
	procs sql.ExternalStoredProcedureRegistry
	cat   *catalog.Catalog
}

var (
	_ sql.MutableDatabaseProvider        = (*provider)(nil)
	_ sql.ExternalStoredProcedureProvider = (*provider)(nil)
)

func newProvider(inner sql.MutableDatabaseProvider, sys sql.Database, procs []sql.ExternalStoredProcedureDetails, cat *catalog.Catalog) *provider {
	reg := sql.NewExternalStoredProcedureRegistry()
	for _, p := range procs {
		reg.Register(p)
	}
	return &provider{MutableDatabaseProvider: inner, sys: sys, procs: reg, cat: cat}
}

func (p *provider) Database(ctx *sql.Context, name string) (sql.Database, error) {
	if isSystemDB(name) {
		return p.sys, nil
	}
	return p.MutableDatabaseProvider.Database(ctx, name)
}

func (p *provider) HasDatabase(ctx *sql.Context, name string) bool {
	return isSystemDB(name) || p.MutableDatabaseProvider.HasDatabase(ctx, name)
}

func (p *provider) AllDatabases(ctx *sql.Context) []sql.Database {
	return append(p.MutableDatabaseProvider.AllDatabases(ctx), p.sys)
}

func (p *provider) CreateDatabase(ctx *sql.Context, name string) error {
	if isSystemDB(name) {
		return fmt.Errorf("database %s is reserved for dpsql's system views", functions.SystemDatabase)
	}
	return p.MutableDatabaseProvider.CreateDatabase(ctx, name)
}

func (p *provider) DropDatabase(ctx *sql.Context, name string) error {
	if isSystemDB(name) {
		return fmt.Errorf("database %s holds dpsql's system views and cannot be dropped", functions.SystemDatabase)
	}
	prefix := strings.ToLower(name) + "."
	var protected []string
	for _, t := range p.cat.Tables() {
		if strings.HasPrefix(t.Name, prefix) && t.Protected {
			protected = append(protected, t.Name)
		}
	}
	if len(protected) > 0 && !p.cat.IsOwner(userOf(ctx)) {
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
