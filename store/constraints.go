package store

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dpsql/dpsql/wal"
	bolt "go.etcd.io/bbolt"
	"gopkg.in/src-d/go-errors.v1"
)

// CHECK constraints and index definitions are stored with the schema; the
// engine enforces checks, the store maintains indexes (index.go).

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
	return t.changeDef(ctx, func(old *tableMeta) (*tableMeta, error) {
		nm, err := old.derive(old.version, old.name, old.pk, nil)
		if err != nil {
			return nil, err
		}
		nm.checks = checks
		return nm, nil
	}, nil)
}

// changeDef installs a new definition of the table built from the current
// one, and with data != nil also changes the table's data (a DDL commit:
// older snapshots can no longer read it), in one durable transaction. DDL
// commits the session's transaction first, except inside the CREATE TABLE
// that made the table.
func (t *Table) changeDef(ctx *sql.Context, build func(old *tableMeta) (*tableMeta, error), data func(btx *bolt.Tx, tb *bolt.Bucket, old, nm *tableMeta) error) error {
	if !t.ts.createdIn(ctx) {
		if err := t.s.checkWrite(ctx, t.ts.db.key, t.meta.name, OpAlter, nil); err != nil {
			return err
		}
		if err := t.s.implicitCommit(ctx); err != nil {
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
	nm, err := build(old)
	if err != nil {
		return err
	}
	apply := func(btx *bolt.Tx) error {
		tb := tableBucket(btx, ts.db.key, ts.id)
		if _, err := readStat(tb, old); err != nil {
			return err
		}
		if data != nil {
			if err := data(btx, tb, old, nm); err != nil {
				return err
			}
		}
		return putMeta(tb, nm)
	}
	if data != nil {
		err = t.s.ddlUpdate(ts, apply)
	} else {
		err = wal.Update(t.s.db, apply)
	}
	if err != nil {
		if isKindErr(err) {
			return err
		}
		return fmt.Errorf("altering %s: %w", old.name, err)
	}
	ts.meta.Store(nm)
	t.meta = nm
	t.projNames, t.projOrds, t.projSch = nil, nil, nil
	t.s.afterDDL(ctx, t.ts)
	return nil
}

// isKindErr reports errors the engine maps to MySQL codes by their kind,
// which must not be wrapped.
func isKindErr(err error) bool {
	_, ok := err.(*errors.Error)
	return ok
}

// CreateIndex adds a secondary or unique index, built from the table's rows
// in the same transaction (a duplicate makes a unique index fail with 1062
// and leaves nothing). Full-text, spatial and vector indexes are refused;
// when that happens inside CREATE TABLE, the table that statement just
// created is dropped first, so the statement has no effect.
func (t *Table) CreateIndex(ctx *sql.Context, def sql.IndexDef) error {
	err := t.createIndex(ctx, def)
	if err != nil && t.ts.createdIn(ctx) && !t.ts.gone.Load() {
		if n, cerr := t.s.rowCount(t.ts); cerr == nil && n == 0 {
			if derr := t.s.dropTable(t.ts.db, t.meta.name); derr != nil {
				return fmt.Errorf("%w (and undoing CREATE TABLE failed: %v)", err, derr)
			}
		}
	}
	return err
}

func (t *Table) createIndex(ctx *sql.Context, def sql.IndexDef) error {
	switch {
	case def.IsFullText(), def.IsSpatial():
		return fmt.Errorf("index %q on %s: the dpsql storage backend supports PRIMARY KEY, KEY, UNIQUE KEY and (definition-only) VECTOR indexes, no full-text or spatial indexes", def.Name, t.meta.name)
	case def.IsPrimary() || strings.EqualFold(def.Name, "primary"):
		return fmt.Errorf("index %q on %s: adding a primary key to an existing table is not supported; create the table with its PRIMARY KEY", def.Name, t.meta.name)
	case def.Name == "":
		return fmt.Errorf("index on %s: an index needs a name", t.meta.name)
	}
	return t.changeDef(ctx, func(old *tableMeta) (*tableMeta, error) {
		if _, exists := old.index(def.Name); exists {
			return nil, sql.ErrDuplicateKey.New(def.Name)
		}
		d := indexDef{ID: old.nextIdxID + 1, Name: def.Name, Unique: def.IsUnique(), Comment: def.Comment, Vector: def.IsVector()}
		prefixed := false
		for _, c := range def.Columns {
			o, ok := old.column(c.Name)
			if !ok {
				return nil, sql.ErrKeyColumnDoesNotExist.New(c.Name)
			}
			d.Columns = append(d.Columns, strings.ToLower(old.schema()[o].Name))
			d.Prefix = append(d.Prefix, uint16(c.Length))
			prefixed = prefixed || c.Length > 0
		}
		if !prefixed {
			d.Prefix = nil
		}
		nm, err := old.derive(old.version+1, old.name, old.pk, nil)
		if err != nil {
			return nil, err
		}
		nm.nextIdxID = d.ID
		defs := make([]indexDef, 0, len(old.indexes)+1)
		for _, im := range old.indexes {
			defs = append(defs, im.def)
		}
		if err := nm.setIndexes(append(defs, d)); err != nil {
			return nil, err
		}
		return nm, nil
	}, func(_ *bolt.Tx, tb *bolt.Bucket, old, nm *tableMeta) error {
		return buildIndex(ctx, tb, nm, nm.indexes[len(nm.indexes)-1])
	})
}

// buildIndex fills a new index from the committed rows.
func buildIndex(ctx *sql.Context, tb *bolt.Bucket, m *tableMeta, im *indexMeta) error {
	ib, err := tb.CreateBucketIfNotExists(bucketIndexes)
	if err != nil {
		return err
	}
	if ib.Bucket(idxKey(im.id)) != nil {
		if err := ib.DeleteBucket(idxKey(im.id)); err != nil {
			return err
		}
	}
	b, err := ib.CreateBucket(idxKey(im.id))
	if err != nil || im.vector {
		return err
	}
	full := newProjection(len(m.schema()), seqOrds(len(m.schema())))
	row := make(sql.Row, len(m.schema()))
	return tb.Bucket(bucketRows).ForEach(func(k, v []byte) error {
		if err := m.codec.decode(v, &full, row); err != nil {
			return err
		}
		ek, uniq, err := im.entry(ctx, row, k)
		if err != nil {
			return err
		}
		if uniq {
			prefix := ek[:len(ek)-len(k)]
			if pk, _ := b.Cursor().Seek(prefix); pk != nil && bytes.HasPrefix(pk, prefix) {
				return sql.NewUniqueKeyErr(fmt.Sprintf("%s for key '%s'", describeKey(m, im, v), im.name), false, nil)
			}
		}
		return b.Put(ek, append([]byte{}, k...))
	})
}

func (t *Table) DropIndex(ctx *sql.Context, name string) error {
	if strings.EqualFold(name, "primary") {
		return fmt.Errorf("dropping the primary key of %s is not supported", t.meta.name)
	}
	if _, ok := t.meta.index(name); !ok {
		return sql.ErrIndexNotFound.New(name)
	}
	return t.changeDef(ctx, func(old *tableMeta) (*tableMeta, error) {
		i, ok := old.index(name)
		if !ok {
			return nil, sql.ErrIndexNotFound.New(name)
		}
		nm, err := old.derive(old.version+1, old.name, old.pk, nil)
		if err != nil {
			return nil, err
		}
		nm.indexes = append(append([]*indexMeta{}, nm.indexes[:i]...), nm.indexes[i+1:]...)
		return nm, nil
	}, func(_ *bolt.Tx, tb *bolt.Bucket, old, nm *tableMeta) error {
		i, _ := old.index(name)
		if ib := tb.Bucket(bucketIndexes); ib != nil && ib.Bucket(idxKey(old.indexes[i].id)) != nil {
			return ib.DeleteBucket(idxKey(old.indexes[i].id))
		}
		return nil
	})
}

func (t *Table) RenameIndex(ctx *sql.Context, from, to string) error {
	if _, ok := t.meta.index(from); !ok {
		return sql.ErrIndexNotFound.New(from)
	}
	return t.changeDef(ctx, func(old *tableMeta) (*tableMeta, error) {
		i, ok := old.index(from)
		if !ok {
			return nil, sql.ErrIndexNotFound.New(from)
		}
		if j, exists := old.index(to); exists && j != i {
			return nil, sql.ErrDuplicateKey.New(to)
		}
		nm, err := old.derive(old.version, old.name, old.pk, nil)
		if err != nil {
			return nil, err
		}
		defs := make([]indexDef, len(old.indexes))
		for j, im := range old.indexes {
			defs[j] = im.def
		}
		defs[i].Name = to
		return nm, nm.setIndexes(defs)
	}, nil)
}

var (
	_         sql.CollationAlterableTable = (*Table)(nil)
	convertTo                             = regexp.MustCompile(`(?i)\bCONVERT\s+TO\s+(CHARACTER\s+SET|CHARSET)\b`)
)

// ModifyDefaultCollation (ALTER TABLE … COLLATE) changes the collation of
// columns added later; existing columns keep theirs. The engine also sends
// ALTER TABLE … CONVERT TO CHARACTER SET here, which in MySQL converts every
// column: that one is refused rather than half done.
func (t *Table) ModifyDefaultCollation(ctx *sql.Context, coll sql.CollationID) error {
	if ctx != nil && convertTo.MatchString(ctx.Query()) {
		return t.ModifyStoredCollation(ctx, coll)
	}
	return t.changeDef(ctx, func(old *tableMeta) (*tableMeta, error) {
		nm, err := old.derive(old.version, old.name, old.pk, nil)
		if err != nil {
			return nil, err
		}
		nm.collation = coll
		return nm, nil
	}, nil)
}

// ModifyStoredCollation (ALTER TABLE … CONVERT TO CHARACTER SET) is refused.
func (t *Table) ModifyStoredCollation(*sql.Context, sql.CollationID) error {
	return fmt.Errorf("converting the collations of the columns of %s is not supported; change each column with MODIFY COLUMN", t.meta.name)
}
