package gmstest

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/enginetest"
	"github.com/dolthub/go-mysql-server/enginetest/scriptgen/setup"
	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/vitess/go/mysql"
	bolt "go.etcd.io/bbolt"

	"github.com/dpsql/dpsql/fastpath"
	"github.com/dpsql/dpsql/store"
)

// Harness is an enginetest.Harness whose engines run on a fresh store in a
// temporary bbolt file. The file is opened with NoSync: the suites test SQL
// semantics, not durability (engine/crash_test.go does that).
type Harness struct {
	t         *testing.T
	mu        sync.Mutex
	setupData []setup.SetupScript
	session   *store.Session
	st        *store.Store
	// bulk: engines run the bulk forms with dpsql's bulk writer.
	bulk bool
}

var (
	_ enginetest.Harness             = (*Harness)(nil)
	_ enginetest.IndexHarness        = (*Harness)(nil)
	_ enginetest.ForeignKeyHarness   = (*Harness)(nil)
	_ enginetest.KeylessTableHarness = (*Harness)(nil)
	_ enginetest.TransactionHarness  = (*Harness)(nil)
	_ enginetest.ClientHarness       = (*Harness)(nil)
	_ enginetest.ServerHarness       = (*Harness)(nil)
)

func NewHarness(t *testing.T) *Harness { return &Harness{t: t} }

func (h *Harness) Setup(data ...[]setup.SetupScript) {
	h.setupData = nil
	for _, d := range data {
		h.setupData = append(h.setupData, d...)
	}
}

// Sessions have distinct connection ids (the store tells sessions apart by
// them); the first one is 1, as the suites expect of CONNECTION_ID().
var sessionIDs atomic.Uint32

func (h *Harness) newSession(client sql.Client) *store.Session {
	id := uint32(1)
	if h.session != nil {
		id = sessionIDs.Add(1) + 1
	}
	return store.NewSession(sql.NewBaseSessionWithClientServer("address", client, id))
}

func (h *Harness) NewContext() *sql.Context {
	h.mu.Lock()
	if h.session == nil {
		h.session = h.newSession(sql.Client{Address: "localhost", User: "root"})
	}
	s := h.session
	h.mu.Unlock()
	return sql.NewContext(context.Background(), sql.WithSession(s))
}

func (h *Harness) NewSession() *sql.Context {
	h.mu.Lock()
	h.session = h.newSession(sql.Client{Address: "localhost", User: "root"})
	h.mu.Unlock()
	return h.NewContext()
}

func (h *Harness) NewContextWithClient(client sql.Client) *sql.Context {
	return sql.NewContext(context.Background(), sql.WithSession(h.newSession(client)))
}

func (h *Harness) SessionBuilder() server.SessionBuilder {
	return func(_ context.Context, c *mysql.Conn, addr string) (sql.Session, error) {
		client := sql.Client{Capabilities: c.Capabilities}
		if u, ok := c.UserData.(sql.MysqlConnectionUser); ok {
			client.Address, client.User = u.Host, u.User
		}
		return store.NewSession(sql.NewBaseSessionWithClientServer(addr, client, c.ConnectionID)), nil
	}
}

func (h *Harness) NewEngine(t *testing.T) (enginetest.QueryEngine, error) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "gms.db"), 0o600, &bolt.Options{NoSync: true, NoFreelistSync: true})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { db.Close() })
	st, err := store.Open(db)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.session, h.st = nil, st
	h.mu.Unlock()
	var e *sqle.Engine
	e, err = enginetest.NewEngine(t, h, st.Provider(), h.setupData, memory.NewStatsProv())
	if err != nil {
		return nil, err
	}
	if h.bulk {
		fastpath.InstallBulkWriter(e.Analyzer)
	}
	// As in dpsql's engine (engine/engine.go): multi-clause ALTER TABLE is
	// atomic.
	for _, b := range e.Analyzer.Batches {
		if b.Desc == "post-validation" {
			b.Rules = append(b.Rules, analyzer.Rule{Id: store.AtomicAlterRuleID, Apply: st.AtomicAlterRule})
		}
	}
	h.mu.Lock()
	h.session = nil
	h.mu.Unlock()
	return e, nil
}

func (h *Harness) SupportsNativeIndexCreation() bool { return true }
func (h *Harness) SupportsForeignKeys() bool         { return false }
func (h *Harness) SupportsKeylessTables() bool       { return true }
