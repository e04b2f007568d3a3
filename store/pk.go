package store

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
)

// ALTER TABLE … ADD / DROP PRIMARY KEY rewrite the table with its new row
// keys (and indexes) in one transaction, like the other column changes.

var _ sql.PrimaryKeyAlterableTable = (*Table)(nil)

func (t *Table) CreatePrimaryKey(ctx *sql.Context, columns []sql.IndexColumn) error {
	if t.meta.keys != nil {
		return sql.ErrMultiplePrimaryKeysDefined.New()
	}
	sch := t.meta.schema().Copy()
	ords := make([]int, len(columns))
	for i, c := range columns {
		o, ok := t.meta.column(c.Name)
		if !ok {
			return sql.ErrKeyColumnDoesNotExist.New(c.Name)
		}
		if c.Length > 0 {
			return sql.ErrUnsupportedIndexPrefix.New(sch[o].Name)
		}
		sch[o].PrimaryKey = true
		sch[o].Nullable = false
		ords[i] = o
	}
	return t.rewrite(ctx, sql.NewPrimaryKeySchema(sch, ords...), nil, func(r sql.Row) (sql.Row, error) {
		for _, o := range ords {
			if r[o] == nil {
				return nil, sql.ErrInsertIntoNonNullableProvidedNull.New(sch[o].Name)
			}
		}
		return r, nil
	})
}

func (t *Table) DropPrimaryKey(ctx *sql.Context) error {
	if t.meta.keys == nil {
		return sql.ErrCantDropFieldOrKey.New("PRIMARY")
	}
	if err := sql.ValidatePrimaryKeyDrop(ctx, t, t.PrimaryKeySchema()); err != nil {
		return err
	}
	refs, _ := t.GetReferencedForeignKeys(ctx)
	for _, o := range t.meta.pk.PkOrdinals {
		name := t.meta.schema()[o].Name
		for _, fk := range append(refs, t.meta.fks...) {
			cols := fk.Columns
			if strings.EqualFold(fk.ParentTable, t.meta.name) && strings.EqualFold(fk.ParentDatabase, t.meta.dbName) {
				cols = fk.ParentColumns
			}
			for _, c := range cols {
				if strings.EqualFold(c, name) {
					return sql.ErrCantDropIndex.New("PRIMARY", fk.Name)
				}
			}
		}
	}
	sch := t.meta.schema().Copy()
	for _, c := range sch {
		c.PrimaryKey = false
	}
	return t.rewrite(ctx, sql.NewPrimaryKeySchema(sch), nil, func(r sql.Row) (sql.Row, error) { return r, nil })
}
