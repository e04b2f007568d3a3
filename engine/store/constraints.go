package store

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	bolt "go.etcd.io/bbolt"
)

// CHECK constraints are stored with the schema and enforced by the engine.
// Secondary, unique, full-text and spatial indexes are not supported:
// CreateIndex fails, and when it is part of a CREATE TABLE it first drops
// the table that statement just created, so the statement has no effect.

var (
	_ sql.CheckTable          = (*Table)(nil)
	_ sql.CheckAlterableTable = (*Table)(nil)
	_ sql.IndexAlterableTable = (*Table)(nil)
)

func (t *Table) GetChecks(*sql.Context) ([]sql.CheckDefinition, error) {
	return append([]sql.CheckDefinition{}, t.meta.checks...), nil
}

func (t *Table) CreateCheck(ctx *sql.Context, check *sql.CheckDefinition) error {
	c := *check
	taken := func(name string) bool {
		for _, o := range t.meta.checks {
			if strings.EqualFold(o.Name, name) {
				return true
			}
		}
		return false
	}
	if c.Name == "" {
		// MySQL's naming: <table>_chk_<n>.
		for n := 1; c.Name == "" || taken(c.Name); n++ {
			c.Name = fmt.Sprintf("%s_chk_%d", t.meta.name, n)
		}
	}
	if taken(c.Name) {
		return fmt.Errorf("check constraint %q already exists", c.Name)
	}
	return t.setChecks(ctx, append(append([]sql.CheckDefinition{}, t.meta.checks...), c))
}

func (t *Table) DropCheck(ctx *sql.Context, name string) error {
	var out []sql.CheckDefinition
	for _, c := range t.meta.checks {
		if !strings.EqualFold(c.Name, name) {
			out = append(out, c)
		}
	}
	if len(out) == len(t.meta.checks) {
		return sql.ErrUnknownConstraint.New(name)
	}
	return t.setChecks(ctx, out)
}

func (t *Table) setChecks(ctx *sql.Context, checks []sql.CheckDefinition) error {
	if !t.ts.createdIn(ctx) {
		if err := t.s.checkWrite(ctx, t.ts.db.key, t.meta.name, OpAlter, nil); err != nil {
			return err
		}
	}
	ts := t.ts
	ts.ddlMu.Lock()
	defer ts.ddlMu.Unlock()
	old := ts.meta.Load()
	if old.version != t.meta.version {
		return errTableChanged(old.name)
	}
	nm, err := newTableMeta(old.id, old.version+1, old.dbName, old.name, old.pk, old.collation, old.comment)
	if err != nil {
		return err
	}
	nm.checks = checks
	err = t.s.db.Update(func(tx *bolt.Tx) error {
		tb := tableBucket(tx, ts.db.key, ts.id)
		if _, err := readStat(tb, old); err != nil {
			return err
		}
		return putMeta(tb, nm)
	})
	if err != nil {
		return fmt.Errorf("altering %s: %w", old.name, err)
	}
	ts.meta.Store(nm)
	t.meta = nm
	return nil
}

func (t *Table) CreateIndex(ctx *sql.Context, def sql.IndexDef) error {
	err := fmt.Errorf("index %q on %s: the dpsql storage backend supports only PRIMARY KEY (no secondary, unique, full-text or spatial indexes)", def.Name, t.meta.name)
	if t.ts.createdIn(ctx) && !t.ts.gone.Load() {
		if n, cerr := t.s.rowCount(t.ts); cerr == nil && n == 0 {
			if derr := t.s.dropTable(t.ts.db, t.meta.name); derr != nil {
				return fmt.Errorf("%w (and undoing CREATE TABLE failed: %v)", err, derr)
			}
		}
	}
	return err
}

func (t *Table) DropIndex(_ *sql.Context, name string) error {
	return sql.ErrIndexNotFound.New(name)
}

func (t *Table) RenameIndex(_ *sql.Context, from, _ string) error {
	return sql.ErrIndexNotFound.New(from)
}
