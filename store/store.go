package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dpsql/dpsql/wal"
	bolt "go.etcd.io/bbolt"
)

// Bucket layout inside the shared bbolt file (internal names start with a
// NUL byte, which MySQL identifiers cannot contain):
//
//	data/
//	  \x00next_id            next table id (8 bytes)
//	  <db name, lower case>/
//	    \x00meta             {"name": <db name as created>}
//	    \x00names/           <table name, lower case> → table id
//	    \x00views/           <view name, lower case> → view definition
//	    \x00tables/
//	      <table id>/        8-byte big-endian id; renames do not move data
//	        schema           JSON table definition
//	        stat             row count, next sequence, next auto-increment, schema version
//	        rows/            row key → encoded row
//	        imports/         staging buckets of ImportCSV runs in progress
var (
	bucketData    = []byte("data")
	keyNextID     = []byte("\x00next_id")
	keyDBMeta     = []byte("\x00meta")
	bucketNames   = []byte("\x00names")
	bucketViews   = []byte("\x00views")
	bucketTables  = []byte("\x00tables")
	keySchema     = []byte("schema")
	keyStat       = []byte("stat")
	bucketRows    = []byte("rows")
	bucketImports = []byte("imports")
)

// WriteOp names the kind of write a CheckWrite hook is asked about.
type WriteOp int

const (
	OpInsert WriteOp = iota + 1
	OpUpdate
	OpDelete
	OpReplace
	OpTruncate
	OpCreate // CREATE TABLE (the table does not exist yet)
	OpDrop   // DROP TABLE, and each table of a dropped database
	OpAlter  // ALTER TABLE column changes and AUTO_INCREMENT changes
	OpRename // RENAME TABLE / ALTER TABLE … RENAME, called with the old name
)

func (op WriteOp) String() string {
	switch op {
	case OpInsert:
		return "INSERT"
	case OpUpdate:
		return "UPDATE"
	case OpDelete:
		return "DELETE"
	case OpReplace:
		return "REPLACE"
	case OpTruncate:
		return "TRUNCATE"
	case OpCreate:
		return "CREATE"
	case OpDrop:
		return "DROP"
	case OpAlter:
		return "ALTER"
	case OpRename:
		return "RENAME"
	}
	return fmt.Sprintf("WriteOp(%d)", int(op))
}

// Hooks let the engine veto reads and writes made through SQL. Nil functions
// allow everything. Database and table names are passed in lower case.
// Hooks are called without any lock of the store held, so they may call back
// into the Store's direct-access methods; they must not run SQL that writes
// the same table.
type Hooks struct {
	// CheckRead is called before any row of db.table is produced for SQL
	// (PartitionRows, the existing row behind a duplicate-key error, the
	// AUTO_INCREMENT counter shown by information_schema and SHOW CREATE
	// TABLE). Returning an error aborts the query with that error, except
	// for the AUTO_INCREMENT counter, which is then shown as NULL.
	CheckRead func(ctx *sql.Context, db, table string) error
	// CheckWrite is called before any write to db.table: once per statement
	// and op with row == nil, and for each new row value of INSERT, UPDATE
	// and REPLACE with the row, before it is accepted. DDL on a table calls
	// it with OpCreate, OpDrop, OpTruncate, OpAlter or OpRename and row ==
	// nil. The engine runs some statements as several steps: ALTER TABLE …
	// ADD COLUMN with a default then updates every row (OpUpdate calls),
	// TRUNCATE of a table with an AUTO_INCREMENT column resets the counter
	// (OpAlter), and DELETE without WHERE is a truncation (OpTruncate).
	CheckWrite func(ctx *sql.Context, db, table string, op WriteOp, row sql.Row) error
	// HideRowCount reports whether the caller of ctx may not learn the
	// number of rows of db.table through SQL statistics (TABLE_ROWS, SHOW
	// TABLE STATUS, the planner's exact count); RowCount then reports 0,
	// not exact. Nil: row counts are shown.
	HideRowCount func(ctx *sql.Context, db, table string) bool
}

// Store is a durable go-mysql-server storage backend on bbolt. All its data
// lives under the top-level bucket "data" of the bbolt file it is given.
type Store struct {
	db    *bolt.DB
	hooks atomic.Pointer[Hooks]
	mv    *mvcc
	group groupCommit
	locks lockTable // row locks (lock.go)

	mu  sync.RWMutex // guards dbs and the tables maps; held by DDL
	dbs map[string]*dbState
}

type dbState struct {
	key       string // lower case; bucket name
	name      string // as created
	collation atomic.Uint32
	tables    map[string]*tableState
	// The view definitions, cached: the engine asks for a view of every
	// table name a statement mentions. viewGen moves after every change.
	viewGen   atomic.Uint64
	viewCache atomic.Pointer[viewCache]
}

type viewCache struct {
	gen  uint64
	defs map[string]sql.ViewDefinition
}

// dbMeta is the persisted form of a database's definition.
type dbMeta struct {
	Name      string
	Collation uint16 `json:",omitempty"`
}

// tableState is the process-wide state of one table, shared by all Table
// values the engine obtains for it.
type tableState struct {
	db   *dbState
	id   uint64
	meta atomic.Pointer[tableMeta]
	seq  atomic.Uint64 // next sequence key to hand out
	gone atomic.Bool   // dropped
	// ddlTS is the commit timestamp of the last change made outside
	// transactions (TRUNCATE, ALTER rewrites, index builds, imports):
	// snapshots older than it cannot read the table.
	ddlTS atomic.Uint64
	ddlBy atomic.Uint32 // session (connection) id of the last layout change
	// altering: a multi-clause ALTER is running (atomic.go); commits to
	// the table are refused until it ends.
	altering atomic.Bool
	// createdBy is the context of the CREATE TABLE statement that made the
	// table, to undo it if that statement fails after CreateTable.
	createdBy atomic.Pointer[sql.Context]
	// cnt caches the committed row count the planner asks for on every
	// statement (see tview.rowCount).
	cnt   atomic.Pointer[countCache]
	ddlMu sync.Mutex // serialises ALTER / TRUNCATE / import swaps of this table

	autoMu   sync.Mutex
	autoNext uint64     // next AUTO_INCREMENT value
	autoLock sync.Mutex // AcquireAutoIncrementLock
}

// Open loads the databases stored in db (creating the "data" bucket if
// needed) and drops staging data left by an interrupted ImportCSV.
func Open(db *bolt.DB) (*Store, error) {
	if db == nil {
		return nil, errors.New("store: nil bbolt database")
	}
	s := &Store{db: db, dbs: map[string]*dbState{}}
	s.hooks.Store(&Hooks{})
	err := wal.Update(db, func(tx *bolt.Tx) error {
		data, err := tx.CreateBucketIfNotExists(bucketData)
		if err != nil {
			return err
		}
		s.mv = newMVCC(tx)
		// A multi-clause ALTER interrupted by a crash: restore its tables.
		var dbs [][]byte
		if err := data.ForEachBucket(func(k []byte) error {
			dbs = append(dbs, append([]byte{}, k...))
			return nil
		}); err != nil {
			return err
		}
		for _, k := range dbs {
			dbb := data.Bucket(k)
			bk := dbb.Bucket(bucketAlterBackup)
			if bk == nil {
				continue
			}
			var ids [][]byte
			if err := bk.ForEachBucket(func(id []byte) error {
				ids = append(ids, append([]byte{}, id...))
				return nil
			}); err != nil {
				return err
			}
			for _, id := range ids {
				if err := restoreTableLocked(dbb, nil, binary.BigEndian.Uint64(id)); err != nil {
					return fmt.Errorf("restoring a table after an interrupted ALTER: %w", err)
				}
			}
			if err := dbb.DeleteBucket(bucketAlterBackup); err != nil {
				return err
			}
		}
		return data.ForEachBucket(func(k []byte) error {
			dbb := data.Bucket(k)
			var dm dbMeta
			if err := json.Unmarshal(dbb.Get(keyDBMeta), &dm); err != nil {
				return fmt.Errorf("database %q: corrupt metadata: %w", k, err)
			}
			ds := &dbState{key: string(k), name: dm.Name, tables: map[string]*tableState{}}
			ds.collation.Store(uint32(dm.Collation))
			tables := dbb.Bucket(bucketTables)
			err := dbb.Bucket(bucketNames).ForEach(func(name, idb []byte) error {
				id := binary.BigEndian.Uint64(idb)
				tb := tables.Bucket(idb)
				if tb == nil {
					return fmt.Errorf("table %s.%s: missing data bucket", ds.name, name)
				}
				if tb.Bucket(bucketImports) != nil {
					if err := tb.DeleteBucket(bucketImports); err != nil {
						return err
					}
				}
				st, err := parseStat(tb.Get(keyStat))
				if err != nil {
					return fmt.Errorf("table %s.%s: %w", ds.name, name, err)
				}
				m, err := unmarshalMeta(id, st.version, ds.name, tb.Get(keySchema))
				if err != nil {
					return fmt.Errorf("table %s.%s: %w", ds.name, name, err)
				}
				ts := &tableState{db: ds, id: id, autoNext: st.autoInc}
				ts.meta.Store(m)
				ts.seq.Store(st.seq)
				ds.tables[string(name)] = ts
				return nil
			})
			if err != nil {
				return err
			}
			s.dbs[ds.key] = ds
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: opening: %w", err)
	}
	return s, nil
}

// implicitCommit commits the session's transaction before DDL, as MySQL
// does, so that the DDL sees (and keeps) its writes.
func (s *Store) implicitCommit(ctx *sql.Context) error {
	if ctx == nil || ctx.Session == nil {
		return nil
	}
	tx := asTxn(ctx.GetTransaction())
	if tx == nil {
		return nil
	}
	tx.mu.Lock()
	pending := tx.s == s && len(tx.tables) > 0
	tx.mu.Unlock()
	if !pending {
		return nil
	}
	return tx.commit()
}

// afterDDL ends the session's transaction after DDL (which committed it
// first): the statements that follow read a snapshot that includes the
// change, as after MySQL's implicit commit.
func (s *Store) afterDDL(ctx *sql.Context, ts *tableState) {
	if ctx == nil || ctx.Session == nil {
		return
	}
	if ts != nil {
		ts.ddlBy.Store(ctx.Session.ID())
	}
	if tx := asTxn(ctx.GetTransaction()); tx != nil {
		tx.mu.Lock()
		if tx.s == s && len(tx.tables) == 0 {
			tx.endLocked()
		}
		tx.mu.Unlock()
	}
}

// ddlUpdate runs fn, a change of ts's data outside transactions, in one
// durable write transaction with a commit timestamp: transactions whose
// snapshot is older can no longer read or write the table
// (ER_TABLE_DEF_CHANGED).
func (s *Store) ddlUpdate(ts *tableState, fn func(btx *bolt.Tx) error) error {
	var stamp uint64
	err := wal.Update(s.db, func(btx *bolt.Tx) error {
		var err error
		if stamp, err = s.mv.assign(btx); err != nil {
			return err
		}
		ts.ddlTS.Store(stamp)
		return fn(btx)
	})
	if stamp != 0 {
		s.mv.publish(stamp)
	}
	return err
}

// SetHooks installs the engine's read and write checks.
func (s *Store) SetHooks(h Hooks) { s.hooks.Store(&h) }

// hideRowCount asks the HideRowCount hook.
func (s *Store) hideRowCount(ctx *sql.Context, ts *tableState) bool {
	h := s.hooks.Load()
	return h.HideRowCount != nil && h.HideRowCount(ctx, ts.db.key, ts.key())
}

func (s *Store) checkRead(ctx *sql.Context, ts *tableState) error {
	if h := s.hooks.Load(); h.CheckRead != nil {
		return h.CheckRead(ctx, ts.db.key, ts.key())
	}
	return nil
}

func (s *Store) checkWrite(ctx *sql.Context, dbKey, table string, op WriteOp, row sql.Row) error {
	if h := s.hooks.Load(); h.CheckWrite != nil {
		return h.CheckWrite(ctx, dbKey, strings.ToLower(table), op, row)
	}
	return nil
}

// createdIn reports whether ctx is the CREATE TABLE statement that created
// the table. The server gives every statement its own context; requiring a
// CREATE query text as well keeps a context reused across statements (as
// embedded callers may do) from matching a later statement.
func (ts *tableState) createdIn(ctx *sql.Context) bool {
	if ctx == nil || ts.createdBy.Load() != ctx {
		return false
	}
	q := strings.TrimSpace(ctx.Query())
	return len(q) >= 6 && strings.EqualFold(q[:6], "CREATE")
}

// key is the lower-case table name; it changes with RENAME.
func (ts *tableState) key() string { return strings.ToLower(ts.meta.Load().name) }

func idKey(id uint64) []byte { return binary.BigEndian.AppendUint64(nil, id) }

// tableBucket finds a table's bucket in tx, or nil if it was dropped.
func tableBucket(tx *bolt.Tx, dbKey string, id uint64) *bolt.Bucket {
	dbb := tx.Bucket(bucketData).Bucket([]byte(dbKey))
	if dbb == nil {
		return nil
	}
	return dbb.Bucket(bucketTables).Bucket(idKey(id))
}

// lookup finds a table by case-insensitive names.
func (s *Store) lookup(db, table string) (*tableState, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ds, ok := s.dbs[strings.ToLower(db)]
	if !ok {
		return nil, sql.ErrDatabaseNotFound.New(db)
	}
	ts, ok := ds.tables[strings.ToLower(table)]
	if !ok {
		return nil, sql.ErrTableNotFound.New(table)
	}
	return ts, nil
}

// errTableChanged reports a table dropped or altered while a statement, scan
// or import was using it.
func errTableChanged(name string) error {
	return fmt.Errorf("table %q was dropped or altered by a concurrent statement; retry", name)
}

// readStat reads the table's counters and checks the schema version.
func readStat(tb *bolt.Bucket, m *tableMeta) (tableStat, error) {
	if tb == nil {
		return tableStat{}, errTableChanged(m.name)
	}
	st, err := parseStat(tb.Get(keyStat))
	if err != nil {
		return st, err
	}
	if st.version != m.version {
		return st, errTableChanged(m.name)
	}
	return st, nil
}

// TableSchema returns a copy of the table's schema (names are
// case-insensitive).
func (s *Store) TableSchema(db, table string) (sql.Schema, error) {
	ts, err := s.lookup(db, table)
	if err != nil {
		return nil, err
	}
	return ts.meta.Load().schema().Copy(), nil
}

// HasDatabase reports whether the store holds database db (case-insensitive).
func (s *Store) HasDatabase(db string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.dbs[strings.ToLower(db)]
	return ok
}

// HasTable reports whether db.table exists (case-insensitive).
func (s *Store) HasTable(db, table string) bool {
	_, err := s.lookup(db, table)
	return err == nil
}

// RowCount returns the exact number of committed rows of db.table in O(1).
func (s *Store) RowCount(db, table string) (int64, error) {
	ts, err := s.lookup(db, table)
	if err != nil {
		return 0, err
	}
	n, err := s.rowCount(ts)
	return int64(n), err
}

func (s *Store) rowCount(ts *tableState) (uint64, error) {
	var n uint64
	s.mv.settled()
	err := s.db.View(func(tx *bolt.Tx) error {
		tb := tableBucket(tx, ts.db.key, ts.id)
		if tb == nil {
			return sql.ErrTableNotFound.New(ts.meta.Load().name)
		}
		st, err := parseStat(tb.Get(keyStat))
		n = st.count
		return err
	})
	return n, err
}

// Databases returns the names of all databases, as created, sorted.
func (s *Store) Databases() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for _, ds := range s.dbs {
		out = append(out, ds.name)
	}
	sort.Strings(out)
	return out
}

// Tables returns the names of the tables of db, as created, sorted.
func (s *Store) Tables(db string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ds, ok := s.dbs[strings.ToLower(db)]
	if !ok {
		return nil, sql.ErrDatabaseNotFound.New(db)
	}
	var out []string
	for _, ts := range ds.tables {
		out = append(out, ts.meta.Load().name)
	}
	sort.Strings(out)
	return out, nil
}
