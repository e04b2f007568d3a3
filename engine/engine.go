package engine

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dpsql/dpsql/wal"
	"github.com/sirupsen/logrus"
	bolt "go.etcd.io/bbolt"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/dpquery"
	"github.com/dpsql/dpsql/dpquery/rel"
	"github.com/dpsql/dpsql/dump"
	"github.com/dpsql/dpsql/explain"
	"github.com/dpsql/dpsql/fastpath"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/guard"
	"github.com/dpsql/dpsql/internal/bigmem"
	"github.com/dpsql/dpsql/mysqlstore"
	"github.com/dpsql/dpsql/scaleout"
	"github.com/dpsql/dpsql/server"
	"github.com/dpsql/dpsql/sqlcompat"
	"github.com/dpsql/dpsql/store"
)

// DBFile is the name of the single bbolt file under the data directory.
const DBFile = "dpsql.db"

// guardRuleID is the id of the guard's analyzer rule (any id unused by
// go-mysql-server's own rules).
const guardRuleID analyzer.RuleId = 10_000

// Options configure Open.
type Options struct {
	DataDir string
	// RootPassword is used when the data directory is new. If empty, one is
	// generated and returned in Engine.GeneratedRootPassword.
	RootPassword string
	Log          logrus.FieldLogger
	// MaxReleaseMemory bounds the public memory estimate of one release and
	// of all running releases together, in bytes (functions/limits.go):
	// 0 means server.DefaultMaxReleaseMemory(), a negative value no limit.
	MaxReleaseMemory int64
	// AnswerCacheEntries and AnswerCacheBytes bound the DP answer cache
	// (catalog/anscache.go); 0 means the catalog's defaults.
	AnswerCacheEntries int
	AnswerCacheBytes   int64
	// BackendDSN, when set, connects to a MariaDB/MySQL server (go-sql-
	// driver/mysql DSN) whose tables owners attach with dp_attach
	// (scale-out, issue 14).
	BackendDSN string
	// DisablePlanCache turns off the prepared-statement plan cache
	// (fastpath/plancache.go), for comparisons.
	DisablePlanCache bool
	// DisableWAL opens the data file without the write-ahead log
	// (package wal, dpsql.wal): every commit is then bbolt's own durable
	// commit (two fdatasyncs). For comparisons and as a fallback.
	DisableWAL bool
}

// Engine is an opened dpsql instance.
type Engine struct {
	SQL     *sqle.Engine
	DB      *bolt.DB
	Store   *store.Store
	Catalog *catalog.Catalog
	Budget  *budget.Accountant
	Env     *functions.Env
	Log     logrus.FieldLogger
	// Backend is the MariaDB/MySQL backend (nil: embedded store only).
	Backend *mysqlstore.Backend
	// GeneratedRootPassword is set on first start when no password was given.
	GeneratedRootPassword string

	plans *fastpath.PlanCache // prepared-statement plans (issue 13)
}

var authOnce sync.Once

// Open opens (or creates) the data directory and wires everything.
func Open(opt Options) (*Engine, error) {
	if opt.Log == nil {
		opt.Log = logrus.StandardLogger()
	}
	if err := os.MkdirAll(opt.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	// issue 13: a 1 GiB initial mapping (address space only) spares large
	// loads the remaps that copy every dirty page of the commit each time
	// the file outgrows the mapping.
	//
	// The write-ahead log (wal, issue 13) makes a group commit one log
	// fdatasync; it recovers an unclean stop before anything reads the file.
	bopts := &bolt.Options{Timeout: 5 * time.Second, InitialMmapSize: 1 << 30}
	var db *bolt.DB
	var err error
	if opt.DisableWAL {
		// A log left by a crash holds acknowledged commits the data file
		// may lack (and the file may hold unsynced pages): only the log's
		// recovery may open it, so refuse rather than serve a torn file.
		unclean, uerr := wal.Unclean(filepath.Join(opt.DataDir, DBFile))
		if uerr != nil {
			return nil, uerr
		}
		if unclean {
			return nil, fmt.Errorf("open %s: %s holds the write-ahead log of an unclean stop; start once with the log on (without -wal=false) to recover, then stop cleanly", filepath.Join(opt.DataDir, DBFile), wal.LogPath(filepath.Join(opt.DataDir, DBFile)))
		}
		db, err = bolt.Open(filepath.Join(opt.DataDir, DBFile), 0o600, bopts)
	} else {
		db, err = wal.Open(filepath.Join(opt.DataDir, DBFile), bopts)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w (is another dpsql using this data dir?)", filepath.Join(opt.DataDir, DBFile), err)
	}
	e := &Engine{DB: db, Log: opt.Log}
	if err := e.wire(opt); err != nil {
		wal.Close(db)
		return nil, err
	}
	return e, nil
}

func (e *Engine) wire(opt Options) error {
	var err error
	if e.Store, err = store.Open(e.DB); err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	if e.Catalog, err = catalog.Open(e.DB); err != nil {
		return err
	}
	if opt.AnswerCacheEntries != 0 || opt.AnswerCacheBytes != 0 {
		n, b := opt.AnswerCacheEntries, opt.AnswerCacheBytes
		if n == 0 {
			n = catalog.DefaultAnswerCacheEntries
		}
		if b == 0 {
			b = catalog.DefaultAnswerCacheBytes
		}
		if err := e.Catalog.SetAnswerCacheLimits(n, b); err != nil {
			return err
		}
	}
	if e.Budget, err = budget.Open(e.DB); err != nil {
		return fmt.Errorf("open budget: %w", err)
	}
	mem := opt.MaxReleaseMemory
	if mem == 0 {
		mem = server.DefaultMaxReleaseMemory()
	}
	// Idle row buffers kept zeroed between releases (internal/bigmem's
	// pool) stay within a quarter of the release memory, at most 1 GiB.
	bigmem.PoolLimit = uintptr(min(1<<30, max(mem, 0)/4))
	var rows functions.Rows = e.Store
	if opt.BackendDSN != "" {
		if e.Backend, err = mysqlstore.Open(opt.BackendDSN, e.DB, e.Log); err != nil {
			return err
		}
		rows = scaleout.NewRows(e.Store, e.Backend)
	}
	e.Env = &functions.Env{Store: functions.RowSafe(rows), Catalog: e.Catalog, Budget: e.Budget, Log: e.Log, MaxReleaseMemory: max(mem, 0)}
	// Privacy units inherit along the schema's declared foreign keys (issue 27).
	e.Env.ForeignKeys = functions.ProviderForeignKeys(e.Store.Provider())
	// DP_MEAN / DP_HISTOGRAM on a unit's tables compile through the
	// person-level compiler (docs/privacy/units.md §8).
	e.Env.Units = rel.Functions{Meta: rel.CatalogMeta{Cat: e.Catalog, Schemas: e.Env.Store}, Src: e.Env.Store}
	g := guard.New(e.Catalog, e.Store, e.Env)
	// The DP aggregate planner and DP_HISTOGRAM (package dpquery).
	g.PlanDPAgg = dpquery.New(e.Catalog, e.Env).Plan
	g.TableRelease = dpquery.TableRelease
	e.Env.CanRead = g.CanRead
	e.Store.SetHooks(g.Hooks())

	// The authorisation factory is read when the analyzer's catalog is
	// built, so it must be installed first (once per process).
	authOnce.Do(func() {
		sql.SetAuthorizationHandlerFactory(guard.NewAuthFactory(sql.GetAuthorizationHandlerFactory()))
	})
	pro := newProvider(e.Store.Provider(), e.Env.SystemDB(), e.Env.Views, e.Env.Procedures(), e.Catalog)
	pro.tfs = map[string]sql.TableFunction{dpquery.HistogramTFName: dpquery.NewHistogramTF(e.Env), fastpath.InsertValuesTFName: fastpath.NewInsertValuesTF()}
	if e.Backend != nil {
		pro.attached = scaleout.NewAttached(e.Backend, g.Hooks().CheckRead)
	}
	for _, p := range scaleout.Procedures(e.Catalog, e.Store, e.Backend, e.Log, pro.MutableDatabaseProvider) {
		pro.procs.Register(p)
	}
	// The guard runs before any default rule (go-mysql-server evaluates
	// constant filters while analysing, which would run a release) and again
	// after validation, on the final plan.
	e.plans = fastpath.NewPlanCache(g, e.Catalog, opt.DisablePlanCache)
	dumps := dump.New(g, e.Catalog, e.Store, e.Env)
	a := analyzer.NewBuilder(pro).
		AddPreAnalyzeRule(guardRuleID, g.Rule).
		AddPostValidationRule(guardRuleID+1, g.Rule).
		AddPreAnalyzeRule(guardRuleID+2, dumps.PreRule).      // issue 13: restore (package dump)
		AddPostValidationRule(guardRuleID+3, dumps.PostRule). // issue 13: SHOW CREATE TABLE carries the catalog
		// After the guard, which must see the clauses it hides: a
		// multi-clause ALTER TABLE is all or nothing.
		AddPostValidationRule(store.AtomicAlterRuleID, e.Store.AtomicAlterRule).
		AddPreAnalyzeRule(guardRuleID+4, e.plans.BumpRule).   // issue 13: plan cache expiry
		AddPostValidationRule(guardRuleID+5, explain.Rule).   // issue 29: EXPLAIN of one-row plans
		AddPostValidationRule(guardRuleID+6, sqlcompat.Rule). // MariaDB's CAST(datetime AS TIME), after the guard
		Build()
	a.Catalog.StatsProvider = guard.ProtectStats(a.Catalog.StatsProvider, e.Catalog)
	if err := g.OwnProcesses(a.Catalog.InfoSchema); err != nil { // issue 29: analysts see their own threads
		return fmt.Errorf("restrict the process list: %w", err)
	}
	// issue 13: LOAD DATA and large literal INSERTs go to the store in
	// batches (fastpath/bulkload.go).
	fastpath.InstallBulkWriter(a)
	// issue 29: the tabular EXPLAIN in MySQL's layout (the guard has
	// refused analysts' EXPLAINs of protected tables while analysing).
	explain.Install(a)
	e.SQL = sqle.New(a, &sqle.Config{})
	e.plans.SetEngine(e.SQL)
	e.SQL.Parser = dump.Parser{Parser: e.SQL.Parser}             // issue 13: mysqldump of the mysql database
	e.SQL.Parser = fastpath.NewBulkParser(e.SQL.Parser, e.Store) // issue 13: fast multi-row INSERT (fastpath/bulkinsert.go)
	g.SetAccounts(e.SQL.Analyzer.Catalog.MySQLDb)
	// LOAD DATA LOCAL INFILE streams a client-side file (the client must
	// allow it too, e.g. mariadb --local-infile=1). Server-side file access
	// (LOAD DATA INFILE, SELECT … INTO OUTFILE) is confined to DIR/files.
	files := filepath.Join(opt.DataDir, "files")
	if err := os.MkdirAll(files, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", files, err)
	}
	if err := sql.SystemVariables.AssignValues(map[string]any{"local_infile": 1, "secure_file_priv": files}); err != nil {
		return fmt.Errorf("set server variables: %w", err)
	}
	ctx := sql.NewEmptyContext()
	for _, f := range e.Env.Functions() {
		e.SQL.Analyzer.Catalog.RegisterFunction(ctx, f)
	}
	return e.loadUsers(opt)
}

// loadUsers restores accounts and grants, or creates root on first start.
func (e *Engine) loadUsers(opt Options) error {
	mdb := e.SQL.Analyzer.Catalog.MySQLDb
	p := &userPersister{db: e.DB}
	// The persister must be set before any account change (else GMS panics).
	mdb.SetPersister(p)
	blob, err := p.load()
	if err != nil {
		return err
	}
	ctx := sql.NewEmptyContext()
	if blob != nil {
		if err := mdb.LoadData(ctx, blob); err != nil {
			return fmt.Errorf("load accounts: %w", err)
		}
		mdb.SetEnabled(true)
		return nil
	}
	pw := opt.RootPassword
	if pw == "" {
		var b [18]byte
		if _, err := rand.Read(b[:]); err != nil {
			return fmt.Errorf("generate root password: %w", err)
		}
		pw = strings.TrimRight(base64.RawURLEncoding.EncodeToString(b[:]), "=")
		e.GeneratedRootPassword = pw
	}
	ed := mdb.Editor()
	defer ed.Close()
	mdb.AddSuperUser(ed, "root", "%", pw)
	if err := mdb.Persist(ctx, ed); err != nil {
		return fmt.Errorf("persist root account: %w", err)
	}
	return nil
}

// NewServer listens on addr (host:port; port 0 picks a free one) with the
// default options: no TLS, default login throttle.
func (e *Engine) NewServer(addr string) (*server.Server, error) {
	return e.NewServerWithOptions(addr, server.Options{})
}

// NewServerWithOptions listens on addr with opt.
func (e *Engine) NewServerWithOptions(addr string, opt server.Options) (*server.Server, error) {
	return server.New(e.SQL, e.plans, addr, e.serverOptions(opt))
}

// PlanCacheHits is the number of prepared-statement executions that
// re-used an analysed plan (package fastpath).
func (e *Engine) PlanCacheHits() uint64 { return e.plans.Hits() }

// TextInsertHits is the number of text INSERTs that re-used an analysed
// plan (package fastpath).
func (e *Engine) TextInsertHits() uint64 { return e.plans.TextHits() }

// NewContext returns a context for running SQL as user (tests, import).
func (e *Engine) NewContext(user string) *sql.Context {
	sess := store.NewSession(sql.NewBaseSessionWithClientServer("localhost", sql.Client{User: user, Address: "localhost"}, 0))
	ctx := sql.NewContext(context.Background(), sql.WithSession(sess))
	return ctx
}

// Close flushes and closes the data file.
func (e *Engine) Close() error {
	if e.Backend != nil {
		e.Backend.Close()
	}
	return wal.Close(e.DB) // checkpoints and empties the log
}

var usersBucket = []byte("users")

// userPersister stores the GMS account blob in bbolt (fsynced on commit).
type userPersister struct{ db *bolt.DB }

func (p *userPersister) Persist(_ *sql.Context, data []byte) error {
	return wal.Update(p.db, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(usersBucket)
		if err != nil {
			return err
		}
		return b.Put([]byte("mysql"), append([]byte(nil), data...))
	})
}

func (p *userPersister) load() ([]byte, error) {
	var out []byte
	err := p.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(usersBucket); b != nil {
			if v := b.Get([]byte("mysql")); v != nil {
				out = append([]byte(nil), v...)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load accounts: %w", err)
	}
	return out, nil
}

var _ mysql_db.MySQLDbPersistence = (*userPersister)(nil)
