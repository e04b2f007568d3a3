package store

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
)

// Foreign keys. The store keeps the definitions (with the child table's
// schema); go-mysql-server enforces them, reading the other table through
// its indexes (lookups call CheckRead, so an analyst's reference check on a
// protected table is refused like any other read of it) and writing through
// GetForeignKeyEditor for cascades. A user who may not read the parent table
// may not declare a foreign key to it.

var _ sql.ForeignKeyTable = (*Table)(nil)

func (t *Table) CreateIndexForForeignKey(ctx *sql.Context, def sql.IndexDef) error {
	return t.CreateIndex(ctx, def)
}

// GetDeclaredForeignKeys lists the table's foreign keys by name (the order
// SHOW CREATE TABLE prints them in).
func (t *Table) GetDeclaredForeignKeys(*sql.Context) ([]sql.ForeignKeyConstraint, error) {
	out := append([]sql.ForeignKeyConstraint{}, t.meta.fks...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// GetReferencedForeignKeys lists the foreign keys of any table of the store
// whose parent is this table.
func (t *Table) GetReferencedForeignKeys(*sql.Context) ([]sql.ForeignKeyConstraint, error) {
	t.s.mu.RLock()
	defer t.s.mu.RUnlock()
	var out []sql.ForeignKeyConstraint
	for _, ds := range t.s.dbs {
		for _, ts := range ds.tables {
			for _, fk := range ts.meta.Load().fks {
				if strings.EqualFold(fk.ParentDatabase, t.meta.dbName) && strings.EqualFold(fk.ParentTable, t.meta.name) {
					out = append(out, fk)
				}
			}
		}
	}
	return out, nil
}

// fkNameTaken reports whether a foreign key of that name exists in db
// (names are unique per database, as in MySQL), other than on except.
func (s *Store) fkNameTaken(db *dbState, name string, except *tableState) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, ts := range db.tables {
		if ts == except {
			continue
		}
		for _, fk := range ts.meta.Load().fks {
			if strings.EqualFold(fk.Name, name) {
				return true
			}
		}
	}
	return false
}

func (t *Table) AddForeignKey(ctx *sql.Context, fk sql.ForeignKeyConstraint) error {
	if pts, err := t.s.lookup(fk.ParentDatabase, fk.ParentTable); err == nil {
		if err := t.s.checkRead(ctx, pts); err != nil {
			return err
		}
	}
	if t.s.fkNameTaken(t.ts.db, fk.Name, t.ts) {
		return sql.ErrForeignKeyDuplicateName.New(fk.Name)
	}
	return t.setFKs(ctx, func(fks []sql.ForeignKeyConstraint) ([]sql.ForeignKeyConstraint, error) {
		for _, o := range fks {
			if strings.EqualFold(o.Name, fk.Name) {
				return nil, sql.ErrForeignKeyDuplicateName.New(fk.Name)
			}
		}
		return append(fks, fk), nil
	})
}

func (t *Table) DropForeignKey(ctx *sql.Context, name string) error {
	return t.setFKs(ctx, func(fks []sql.ForeignKeyConstraint) ([]sql.ForeignKeyConstraint, error) {
		var out []sql.ForeignKeyConstraint
		for _, o := range fks {
			if !strings.EqualFold(o.Name, name) {
				out = append(out, o)
			}
		}
		if len(out) == len(fks) {
			return nil, sql.ErrForeignKeyNotFound.New(name, t.meta.name)
		}
		return out, nil
	})
}

func (t *Table) UpdateForeignKey(ctx *sql.Context, name string, fk sql.ForeignKeyConstraint) error {
	return t.setFKs(ctx, func(fks []sql.ForeignKeyConstraint) ([]sql.ForeignKeyConstraint, error) {
		out := make([]sql.ForeignKeyConstraint, 0, len(fks))
		found := false
		for _, o := range fks {
			if strings.EqualFold(o.Name, name) {
				o, found = fk, true
			} else if strings.EqualFold(o.Name, fk.Name) {
				return nil, sql.ErrForeignKeyDuplicateName.New(fk.Name)
			}
			out = append(out, o)
		}
		if !found {
			out = append(out, fk)
		}
		return out, nil
	})
}

func (t *Table) setFKs(ctx *sql.Context, change func([]sql.ForeignKeyConstraint) ([]sql.ForeignKeyConstraint, error)) error {
	return t.changeDef(ctx, func(old *tableMeta) (*tableMeta, error) {
		fks, err := change(append([]sql.ForeignKeyConstraint{}, old.fks...))
		if err != nil {
			return nil, err
		}
		nm, err := old.derive(old.version, old.name, old.pk, nil)
		if err != nil {
			return nil, err
		}
		nm.fks = fks
		return nm, nil
	}, nil)
}

// GetForeignKeyEditor returns the editor go-mysql-server writes through when
// the table takes part in a foreign key.
func (t *Table) GetForeignKeyEditor(ctx *sql.Context) sql.ForeignKeyEditor {
	return &fkEditor{t: t, ins: t.openEditor(ctx, OpInsert), upd: t.openEditor(ctx, OpUpdate), del: t.openEditor(ctx, OpDelete)}
}

// fkEditor is one editor (one statement's writes) seen as inserter,
// updater and deleter, and addressable through the table's indexes.
type fkEditor struct {
	t             *Table
	ins, upd, del *editWrapper
}

var _ sql.ForeignKeyEditor = (*fkEditor)(nil)

func (f *fkEditor) StatementBegin(ctx *sql.Context) { f.ins.StatementBegin(ctx) }
func (f *fkEditor) DiscardChanges(ctx *sql.Context, err error) error {
	return f.ins.DiscardChanges(ctx, err)
}
func (f *fkEditor) StatementComplete(ctx *sql.Context) error { return f.ins.StatementComplete(ctx) }
func (f *fkEditor) Insert(ctx *sql.Context, row sql.Row) error {
	return f.ins.Insert(ctx, row)
}
func (f *fkEditor) Update(ctx *sql.Context, old, row sql.Row) error {
	return f.upd.Update(ctx, old, row)
}
func (f *fkEditor) Delete(ctx *sql.Context, row sql.Row) error { return f.del.Delete(ctx, row) }

func (f *fkEditor) Close(ctx *sql.Context) error {
	var first error
	for _, w := range []*editWrapper{f.ins, f.upd, f.del} {
		if err := w.Close(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (f *fkEditor) IndexedAccess(_ *sql.Context, lookup sql.IndexLookup) sql.IndexedTable {
	return &indexedTable{Table: f.t, lookup: lookup, live: true}
}
func (f *fkEditor) GetIndexes(ctx *sql.Context) ([]sql.Index, error) { return f.t.GetIndexes(ctx) }
func (f *fkEditor) PreciseMatch() bool                               { return true }

func (f *fkEditor) String() string { return fmt.Sprintf("foreign key editor of %s", f.t.meta.name) }
