package functions

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/catalog"
)

// ProviderForeignKeys is the ForeignKeySource of a go-mysql-server database
// provider: the single-column foreign keys each table declares (a compound
// key cannot carry one person, so it never makes a table inherit a unit).
// It reads table metadata only, never rows.
func ProviderForeignKeys(pro sql.DatabaseProvider) ForeignKeySource {
	return func(ctx *sql.Context, db string) ([]catalog.ForeignKey, error) {
		d, err := pro.Database(ctx, db)
		if err != nil {
			return nil, fmt.Errorf("database %s: %w", db, err)
		}
		names, err := d.GetTableNames(ctx)
		if err != nil {
			return nil, fmt.Errorf("tables of %s: %w", db, err)
		}
		var out []catalog.ForeignKey
		for _, name := range names {
			t, ok, err := d.GetTableInsensitive(ctx, name)
			if err != nil || !ok {
				continue
			}
			fkt, ok := t.(sql.ForeignKeyTable)
			if !ok {
				continue
			}
			fks, err := fkt.GetDeclaredForeignKeys(ctx)
			if err != nil {
				return nil, fmt.Errorf("foreign keys of %s.%s: %w", db, name, err)
			}
			for _, fk := range fks {
				if len(fk.Columns) != 1 || len(fk.ParentColumns) != 1 {
					continue
				}
				pdb := fk.ParentDatabase
				if pdb == "" {
					pdb = db
				}
				out = append(out, catalog.ForeignKey{
					Table: catalog.Key(db, name), Column: strings.ToLower(fk.Columns[0]),
					Parent: catalog.Key(pdb, fk.ParentTable), ParentColumn: strings.ToLower(fk.ParentColumns[0]),
				})
			}
		}
		return out, nil
	}
}
