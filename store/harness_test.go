package store

import (
	"context"
	"path/filepath"
	"testing"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	bolt "go.etcd.io/bbolt"
)

// harness runs a real go-mysql-server engine on a Store over a real bbolt
// file in a temporary directory.
type harness struct {
	t    testing.TB
	path string
	db   *bolt.DB
	s    *Store
	e    *sqle.Engine
	ctx  *sql.Context
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	h := &harness{t: t, path: filepath.Join(t.TempDir(), "dpsql.db")}
	h.open()
	t.Cleanup(func() { h.db.Close() })
	return h
}

func (h *harness) open() {
	h.t.Helper()
	db, err := bolt.Open(h.path, 0o600, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	s, err := Open(db)
	if err != nil {
		h.t.Fatal(err)
	}
	h.db, h.s = db, s
	h.e = sqle.NewDefault(s.Provider())
	for _, b := range h.e.Analyzer.Batches {
		if b.Desc == "post-validation" {
			b.Rules = append(b.Rules, analyzer.Rule{Id: AtomicAlterRuleID, Apply: s.AtomicAlterRule})
		}
	}
	h.ctx = h.newCtx()
}

// reopen closes the bbolt file and opens it again with a new Store and
// engine, as a server restart would.
func (h *harness) reopen() {
	h.t.Helper()
	if err := h.db.Close(); err != nil {
		h.t.Fatal(err)
	}
	h.open()
}

func (h *harness) newCtx() *sql.Context {
	ctx := sql.NewContext(context.Background(), sql.WithSession(NewSession(sql.NewBaseSession())))
	if h.s != nil && h.s.Provider().HasDatabase(ctx, "db") {
		ctx.SetCurrentDatabase("db")
	}
	return ctx
}

// queryCtx runs one statement to completion (including Close, where
// writes commit) and returns its rows.
func (h *harness) queryCtx(ctx *sql.Context, q string) ([]sql.Row, error) {
	// One context per statement carrying its text, as the server does.
	ctx = ctx.WithQuery(q)
	_, it, _, err := h.e.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	return sql.RowIterToRows(ctx, it)
}

func (h *harness) query(q string) ([]sql.Row, error) { return h.queryCtx(h.ctx, q) }

func (h *harness) mustQuery(q string) []sql.Row {
	h.t.Helper()
	rows, err := h.query(q)
	if err != nil {
		h.t.Fatalf("%s: %v", q, err)
	}
	return rows
}

// setupDB creates database "db" and makes it current.
func (h *harness) setupDB() {
	h.t.Helper()
	h.mustQuery("CREATE DATABASE db")
	h.ctx.SetCurrentDatabase("db")
}
