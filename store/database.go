package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer/analyzererrors"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/dpsql/dpsql/wal"
	bolt "go.etcd.io/bbolt"
)

// provider is the store's sql.MutableDatabaseProvider. information_schema
// and mysql are added by the engine's analyzer catalog, not here.
type provider struct{ s *Store }

var (
	_ sql.MutableDatabaseProvider = provider{}
	_ sql.CollatedDatabase        = (*Database)(nil)
	_ sql.Database                = (*Database)(nil)
	_ sql.TableCreator            = (*Database)(nil)
	_ sql.TableDropper            = (*Database)(nil)
	_ sql.TableRenamer            = (*Database)(nil)
	_ sql.ViewDatabase            = (*Database)(nil)
	_ sql.SchemaValidator         = (*Database)(nil)
)

// Provider returns the database provider to hand to sqle.NewDefault or
// analyzer.NewBuilder.
func (s *Store) Provider() sql.MutableDatabaseProvider { return provider{s} }

func (p provider) Database(_ *sql.Context, name string) (sql.Database, error) {
	p.s.mu.RLock()
	defer p.s.mu.RUnlock()
	ds, ok := p.s.dbs[strings.ToLower(name)]
	if !ok {
		return nil, sql.ErrDatabaseNotFound.New(name)
	}
	return &Database{s: p.s, ds: ds}, nil
}

func (p provider) HasDatabase(_ *sql.Context, name string) bool {
	p.s.mu.RLock()
	defer p.s.mu.RUnlock()
	_, ok := p.s.dbs[strings.ToLower(name)]
	return ok
}

func (p provider) AllDatabases(*sql.Context) []sql.Database {
	p.s.mu.RLock()
	defer p.s.mu.RUnlock()
	out := make([]sql.Database, 0, len(p.s.dbs))
	for _, ds := range p.s.dbs {
		out = append(out, &Database{s: p.s, ds: ds})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

func (p provider) CreateDatabase(_ *sql.Context, name string) error {
	return p.s.CreateDatabase(name)
}

// CreateDatabase creates an empty database; it fails if one of that name
// (case-insensitive) exists.
func (s *Store) CreateDatabase(name string) error {
	key := strings.ToLower(name)
	if name == "" || strings.ContainsRune(name, 0) {
		return fmt.Errorf("invalid database name %q", name)
	}
	if key == sql.InformationSchemaDatabaseName || key == "mysql" {
		return sql.ErrDatabaseExists.New(name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.dbs[key]; ok {
		return sql.ErrDatabaseExists.New(name)
	}
	err := wal.Update(s.db, func(tx *bolt.Tx) error {
		dbb, err := tx.Bucket(bucketData).CreateBucket([]byte(key))
		if err != nil {
			return err
		}
		meta, err := json.Marshal(dbMeta{Name: name})
		if err != nil {
			return err
		}
		if err := dbb.Put(keyDBMeta, meta); err != nil {
			return err
		}
		for _, b := range [][]byte{bucketNames, bucketViews, bucketTables} {
			if _, err := dbb.CreateBucket(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("creating database %q: %w", name, err)
	}
	s.dbs[key] = &dbState{key: key, name: name, tables: map[string]*tableState{}}
	return nil
}

// DropDatabase calls CheckWrite(OpDrop) for every table of the database,
// then removes it with all its tables and views in one transaction.
func (p provider) DropDatabase(ctx *sql.Context, name string) error {
	s := p.s
	key := strings.ToLower(name)
	for {
		names, err := s.Tables(name)
		if err != nil {
			return err
		}
		for _, t := range names {
			if err := s.checkWrite(ctx, key, t, OpDrop, nil); err != nil {
				return err
			}
		}
		if err := s.implicitCommit(ctx); err != nil {
			return err
		}
		s.mu.Lock()
		ds, ok := s.dbs[key]
		if !ok {
			s.mu.Unlock()
			return sql.ErrDatabaseNotFound.New(name)
		}
		if len(ds.tables) != len(names) {
			// A table appeared after the checks: check again.
			s.mu.Unlock()
			continue
		}
		err = wal.Update(s.db, func(tx *bolt.Tx) error {
			return tx.Bucket(bucketData).DeleteBucket([]byte(key))
		})
		if err == nil {
			for _, ts := range ds.tables {
				ts.gone.Store(true)
			}
			delete(s.dbs, key)
		}
		s.mu.Unlock()
		if err != nil {
			return fmt.Errorf("dropping database %q: %w", name, err)
		}
		return nil
	}
}

// Database is one database of the store.
type Database struct {
	s  *Store
	ds *dbState
}

func (d *Database) Name() string { return d.ds.name }

// GetCollation is the database's default collation for new tables.
func (d *Database) GetCollation(*sql.Context) sql.CollationID {
	if c := sql.CollationID(d.ds.collation.Load()); c != sql.Collation_Unspecified {
		return c
	}
	return sql.Collation_Default
}

// SetCollation (CREATE DATABASE … COLLATE, ALTER DATABASE) persists the
// default collation.
func (d *Database) SetCollation(_ *sql.Context, c sql.CollationID) error {
	meta, err := json.Marshal(dbMeta{Name: d.ds.name, Collation: uint16(c)})
	if err != nil {
		return err
	}
	err = wal.Update(d.s.db, func(tx *bolt.Tx) error {
		dbb := tx.Bucket(bucketData).Bucket([]byte(d.ds.key))
		if dbb == nil {
			return sql.ErrDatabaseNotFound.New(d.ds.name)
		}
		return dbb.Put(keyDBMeta, meta)
	})
	if err != nil {
		return fmt.Errorf("setting collation of %s: %w", d.ds.name, err)
	}
	d.ds.collation.Store(uint32(c))
	return nil
}

func (d *Database) GetTableInsensitive(_ *sql.Context, name string) (sql.Table, bool, error) {
	d.s.mu.RLock()
	ts, ok := d.ds.tables[strings.ToLower(name)]
	d.s.mu.RUnlock()
	if !ok {
		return nil, false, nil
	}
	return newTable(d.s, ts), true, nil
}

func (d *Database) GetTableNames(*sql.Context) ([]string, error) {
	return d.s.Tables(d.ds.name)
}

// ValidateSchema rejects column types the codec cannot store, so CREATE and
// ALTER fail up front with a clear message.
func (d *Database) ValidateSchema(sch sql.Schema) error {
	if _, err := newTableMeta(0, 0, d.ds.name, "t", sql.NewPrimaryKeySchema(sch), sql.Collation_Default, ""); err != nil {
		return err
	}
	return validateRowLength(sch)
}

// validateRowLength applies InnoDB's 65,535-byte limit on the declared
// size of a row (long strings count fully, TEXT and BLOB as pointers), so
// that schemas MySQL refuses are refused here too.
func validateRowLength(sch sql.Schema) error {
	var n int64
	for _, c := range sch {
		switch t := c.Type.(type) {
		case sql.NumberType:
			n += 8
		case sql.StringType:
			if types.IsTextBlob(t) {
				n += 16
			} else {
				n += t.MaxByteLength()
			}
		case sql.DecimalType:
			n += int64(t.MaximumScale())
		case sql.EnumType:
			n += 2
		case types.JsonType:
			n += 20
		case sql.NullType:
			n++
		case types.TimeType:
			n += 16
		default:
			n += 8
		}
	}
	if n > types.MaxRowLength {
		return analyzererrors.ErrInvalidRowLength.New(types.MaxRowLength, n)
	}
	return nil
}

func (d *Database) CreateTable(ctx *sql.Context, name string, sch sql.PrimaryKeySchema, coll sql.CollationID, comment string) error {
	if err := d.s.checkWrite(ctx, d.ds.key, name, OpCreate, nil); err != nil {
		return err
	}
	if err := refuseUnsupportedIndexes(ctx, name); err != nil {
		return err
	}
	if err := d.checkForeignKeyParents(ctx, name); err != nil {
		return err
	}
	if err := d.s.implicitCommit(ctx); err != nil {
		return err
	}
	if err := d.s.createTable(d.ds.name, name, sch, coll, comment); err != nil {
		return err
	}
	// Remember the statement, so that a failure of the same CREATE TABLE
	// later (an unsupported index) can undo the creation.
	if ts, err := d.s.lookup(d.ds.name, name); err == nil {
		ts.createdBy.Store(ctx)
	}
	return nil
}

// refuseUnsupportedIndexes checks the CREATE TABLE statement being run for
// indexes the store cannot build (full-text, spatial, vector) and duplicate
// index names before the table exists: the engine creates the table first
// and its indexes afterwards, and would leave the table behind.
func refuseUnsupportedIndexes(ctx *sql.Context, table string) error {
	if ctx == nil {
		return nil
	}
	st, err := sqlparser.Parse(ctx.Query())
	if err != nil {
		return nil
	}
	ddl, ok := st.(*sqlparser.DDL)
	if !ok || ddl.TableSpec == nil || !strings.EqualFold(ddl.Table.Name.String(), table) {
		return nil
	}
	names := map[string]bool{}
	for _, idx := range ddl.TableSpec.Indexes {
		if idx.Info == nil {
			continue
		}
		name := strings.ToLower(idx.Info.Name.String())
		if idx.Info.Fulltext || idx.Info.Spatial || idx.Info.Vector {
			return fmt.Errorf("index %q on %s: the dpsql storage backend supports PRIMARY KEY, KEY and UNIQUE KEY indexes (no full-text, spatial or vector indexes)", name, table)
		}
		if idx.Info.Primary {
			for _, c := range idx.Columns {
				if c.Length != nil {
					return sql.ErrUnsupportedIndexPrefix.New(c.Column.String())
				}
			}
			continue
		}
		if name == "" {
			continue
		}
		if names[name] {
			return sql.ErrDuplicateKey.New(name)
		}
		names[name] = true
	}
	return nil
}

// checkForeignKeyParents applies the read check of every parent table a
// CREATE TABLE statement declares a foreign key to before the table exists:
// the engine adds foreign keys after creating the table, and a refusal then
// would leave the table behind.
func (d *Database) checkForeignKeyParents(ctx *sql.Context, table string) error {
	if ctx == nil {
		return nil
	}
	st, err := sqlparser.Parse(ctx.Query())
	if err != nil {
		return nil
	}
	ddl, ok := st.(*sqlparser.DDL)
	if !ok || ddl.TableSpec == nil || !strings.EqualFold(ddl.Table.Name.String(), table) {
		return nil
	}
	for _, c := range ddl.TableSpec.Constraints {
		fk, ok := c.Details.(*sqlparser.ForeignKeyDefinition)
		if !ok {
			continue
		}
		db := fk.ReferencedTable.DbQualifier.String()
		if db == "" {
			db = d.ds.name
		}
		if pts, err := d.s.lookup(db, fk.ReferencedTable.Name.String()); err == nil {
			if err := d.s.checkRead(ctx, pts); err != nil {
				return err
			}
		}
	}
	return nil
}

// CreateTable creates db.table directly (no hooks).
func (s *Store) CreateTable(db, table string, sch sql.PrimaryKeySchema) error {
	return s.createTable(db, table, sch, sql.Collation_Default, "")
}

func (s *Store) createTable(db, name string, sch sql.PrimaryKeySchema, coll sql.CollationID, comment string) error {
	if name == "" || strings.ContainsRune(name, 0) {
		return fmt.Errorf("invalid table name %q", name)
	}
	if coll == sql.Collation_Unspecified {
		coll = sql.Collation_Default
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ds, ok := s.dbs[strings.ToLower(db)]
	if !ok {
		return sql.ErrDatabaseNotFound.New(db)
	}
	key := strings.ToLower(name)
	if _, ok := ds.tables[key]; ok {
		return sql.ErrTableAlreadyExists.New(name)
	}
	m, err := newTableMeta(0, 1, ds.name, name, sch, coll, comment)
	if err != nil {
		return err
	}
	st := tableStat{seq: 1, autoInc: 1, version: 1}
	err = wal.Update(s.db, func(tx *bolt.Tx) error {
		data := tx.Bucket(bucketData)
		id := uint64(1)
		if b := data.Get(keyNextID); b != nil {
			id = binary.BigEndian.Uint64(b)
		}
		if err := data.Put(keyNextID, idKey(id+1)); err != nil {
			return err
		}
		m.id = id
		dbb := data.Bucket([]byte(ds.key))
		tb, err := dbb.Bucket(bucketTables).CreateBucket(idKey(id))
		if err != nil {
			return err
		}
		if _, err := tb.CreateBucket(bucketRows); err != nil {
			return err
		}
		js, err := m.marshal()
		if err != nil {
			return err
		}
		if err := tb.Put(keySchema, js); err != nil {
			return err
		}
		if err := tb.Put(keyStat, st.bytes()); err != nil {
			return err
		}
		return dbb.Bucket(bucketNames).Put([]byte(key), idKey(id))
	})
	if err != nil {
		return fmt.Errorf("creating table %q: %w", name, err)
	}
	ts := &tableState{db: ds, id: m.id, autoNext: st.autoInc}
	ts.meta.Store(m)
	ts.seq.Store(st.seq)
	ds.tables[key] = ts
	return nil
}

func (d *Database) DropTable(ctx *sql.Context, name string) error {
	if err := d.s.checkWrite(ctx, d.ds.key, name, OpDrop, nil); err != nil {
		return err
	}
	if err := d.s.implicitCommit(ctx); err != nil {
		return err
	}
	return d.s.dropTable(d.ds, name)
}

func (s *Store) dropTable(ds *dbState, name string) error {
	d := &Database{s: s, ds: ds}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(name)
	ts, ok := d.ds.tables[key]
	if !ok {
		return sql.ErrTableNotFound.New(name)
	}
	err := wal.Update(s.db, func(tx *bolt.Tx) error {
		dbb := tx.Bucket(bucketData).Bucket([]byte(d.ds.key))
		if dbb == nil {
			return sql.ErrDatabaseNotFound.New(d.ds.name)
		}
		if err := dbb.Bucket(bucketTables).DeleteBucket(idKey(ts.id)); err != nil {
			return err
		}
		return dbb.Bucket(bucketNames).Delete([]byte(key))
	})
	if err != nil {
		return fmt.Errorf("dropping table %q: %w", name, err)
	}
	ts.gone.Store(true)
	delete(d.ds.tables, key)
	return nil
}

func (d *Database) RenameTable(ctx *sql.Context, oldName, newName string) error {
	if err := d.s.checkWrite(ctx, d.ds.key, oldName, OpRename, nil); err != nil {
		return err
	}
	if err := d.s.implicitCommit(ctx); err != nil {
		return err
	}
	if newName == "" || strings.ContainsRune(newName, 0) {
		return fmt.Errorf("invalid table name %q", newName)
	}
	s := d.s
	s.mu.Lock()
	defer s.mu.Unlock()
	oldKey, newKey := strings.ToLower(oldName), strings.ToLower(newName)
	ts, ok := d.ds.tables[oldKey]
	if !ok {
		return sql.ErrTableNotFound.New(oldName)
	}
	if _, exists := d.ds.tables[newKey]; exists && newKey != oldKey {
		return sql.ErrTableAlreadyExists.New(newName)
	}
	ts.ddlMu.Lock()
	defer ts.ddlMu.Unlock()
	old := ts.meta.Load()
	m, err := old.derive(old.version, newName, old.pk, nil)
	if err != nil {
		return err
	}
	err = wal.Update(s.db, func(tx *bolt.Tx) error {
		dbb := tx.Bucket(bucketData).Bucket([]byte(d.ds.key))
		tb := dbb.Bucket(bucketTables).Bucket(idKey(ts.id))
		if err := putMeta(tb, m); err != nil {
			return err
		}
		names := dbb.Bucket(bucketNames)
		if err := names.Delete([]byte(oldKey)); err != nil {
			return err
		}
		return names.Put([]byte(newKey), idKey(ts.id))
	})
	if err != nil {
		return fmt.Errorf("renaming table %q: %w", oldName, err)
	}
	ts.meta.Store(m)
	delete(d.ds.tables, oldKey)
	d.ds.tables[newKey] = ts
	return nil
}

// putMeta writes a new definition and bumps the schema version in the stat
// record, so that statements prepared against the old one fail at commit.
func putMeta(tb *bolt.Bucket, m *tableMeta) error {
	st, err := parseStat(tb.Get(keyStat))
	if err != nil {
		return err
	}
	st.version = m.version
	js, err := m.marshal()
	if err != nil {
		return err
	}
	if err := tb.Put(keySchema, js); err != nil {
		return err
	}
	return tb.Put(keyStat, st.bytes())
}

type viewJSON struct {
	Name                string `json:"name"`
	TextDefinition      string `json:"text"`
	CreateViewStatement string `json:"create"`
	SqlMode             string `json:"sql_mode"`
}

func (d *Database) views(tx *bolt.Tx) (*bolt.Bucket, error) {
	dbb := tx.Bucket(bucketData).Bucket([]byte(d.ds.key))
	if dbb == nil {
		return nil, sql.ErrDatabaseNotFound.New(d.ds.name)
	}
	return dbb.Bucket(bucketViews), nil
}

func (d *Database) CreateView(ctx *sql.Context, name string, selectStatement, createViewStmt string) error {
	v, err := json.Marshal(viewJSON{Name: name, TextDefinition: selectStatement, CreateViewStatement: createViewStmt, SqlMode: sql.LoadSqlMode(ctx).String()})
	if err != nil {
		return err
	}
	err = wal.Update(d.s.db, func(tx *bolt.Tx) error {
		vb, err := d.views(tx)
		if err != nil {
			return err
		}
		k := []byte(strings.ToLower(name))
		if vb.Get(k) != nil {
			return sql.ErrExistingView.New(d.ds.name, name)
		}
		return vb.Put(k, v)
	})
	d.ds.viewGen.Add(1)
	return err
}

func (d *Database) DropView(_ *sql.Context, name string) error {
	defer d.ds.viewGen.Add(1)
	return wal.Update(d.s.db, func(tx *bolt.Tx) error {
		vb, err := d.views(tx)
		if err != nil {
			return err
		}
		k := []byte(strings.ToLower(name))
		if vb.Get(k) == nil {
			return sql.ErrViewDoesNotExist.New(d.ds.name, name)
		}
		return vb.Delete(k)
	})
}

func toViewDefinition(b []byte) (sql.ViewDefinition, error) {
	var v viewJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return sql.ViewDefinition{}, fmt.Errorf("corrupt view definition: %w", err)
	}
	return sql.ViewDefinition{Name: v.Name, TextDefinition: v.TextDefinition, CreateViewStatement: v.CreateViewStatement, SqlMode: v.SqlMode}, nil
}

func (d *Database) GetViewDefinition(_ *sql.Context, name string) (sql.ViewDefinition, bool, error) {
	// A cache read at generation g stays valid until a change moves the
	// generation (CreateView/DropView move it after their commit).
	c := d.ds.viewCache.Load()
	if g := d.ds.viewGen.Load(); c == nil || c.gen != g {
		nc := &viewCache{gen: g, defs: map[string]sql.ViewDefinition{}}
		err := d.s.db.View(func(tx *bolt.Tx) error {
			vb, err := d.views(tx)
			if err != nil {
				return err
			}
			return vb.ForEach(func(k, b []byte) error {
				def, err := toViewDefinition(b)
				nc.defs[string(k)] = def
				return err
			})
		})
		if err != nil {
			return sql.ViewDefinition{}, false, err
		}
		d.ds.viewCache.Store(nc)
		c = nc
	}
	def, ok := c.defs[strings.ToLower(name)]
	return def, ok, nil
}

func (d *Database) AllViews(*sql.Context) ([]sql.ViewDefinition, error) {
	var out []sql.ViewDefinition
	err := d.s.db.View(func(tx *bolt.Tx) error {
		vb, err := d.views(tx)
		if err != nil {
			return err
		}
		return vb.ForEach(func(_, b []byte) error {
			def, err := toViewDefinition(b)
			out = append(out, def)
			return err
		})
	})
	return out, err
}

// The store is not an sql.IndexedTableCreator: go-mysql-server would then
// drop the table comment (which carries a dump's dpsql catalog, see
// dump/dump.go). A primary key on column prefixes, which the store (like
// InnoDB for TEXT keys) does not support, is refused by
// refuseUnsupportedIndexes instead.
