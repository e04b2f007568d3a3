package store

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dpsql/dpsql/wal"
	bolt "go.etcd.io/bbolt"
)

// TestAckedCommitSeenByLaterReads checks the guarantee of answering a commit
// at its log fdatasync, before bbolt commits it (commitBatch): a statement
// that starts after the commit was acknowledged sees it, on any connection
// and on the direct read paths. The commit is held between its
// acknowledgement and bbolt's commit (wal.SetTailHook) until the reader is
// waiting for it (testOnSettle), so the order is forced, not timed. The
// must-fail variant turns the wait off (noSettle): the reader then runs at
// once, before bbolt's commit, and must miss the acknowledged row.
func TestAckedCommitSeenByLaterReads(t *testing.T) {
	readers := map[string]func(h *harness, ctx *sql.Context, id int) (bool, error){
		"select": func(h *harness, ctx *sql.Context, id int) (bool, error) {
			rows, err := h.queryCtx(ctx, fmt.Sprintf("SELECT c FROM t WHERE id = %d", id))
			return len(rows) == 1, err
		},
		"update": func(h *harness, ctx *sql.Context, id int) (bool, error) {
			// An autocommitted UPDATE reads the latest rows (currentRead).
			if _, err := h.queryCtx(ctx, fmt.Sprintf("UPDATE t SET c = c + 1 WHERE id = %d", id)); err != nil {
				return false, err
			}
			rows, err := h.queryCtx(ctx, fmt.Sprintf("SELECT c FROM t WHERE id = %d", id))
			return len(rows) == 1 && fmt.Sprint(rows[0][0]) == "2", err
		},
		"rowcount": func(h *harness, _ *sql.Context, id int) (bool, error) {
			n, err := h.s.RowCount("db", "t")
			return n == int64(id), err
		},
		"scan": func(h *harness, _ *sql.Context, id int) (bool, error) {
			found := false
			_, err := h.s.ScanValues("db", "t", []string{"id"}, func(row []any) error {
				found = found || fmt.Sprint(row[0]) == fmt.Sprint(id)
				return nil
			})
			return found, err
		},
	}
	for _, mustFail := range []bool{false, true} {
		for _, name := range []string{"select", "update", "rowcount", "scan"} {
			t.Run(fmt.Sprintf("%s/mustFail=%v", name, mustFail), func(t *testing.T) {
				h := newWALHarness(t)
				h.setupDB()
				h.mustQuery("CREATE TABLE t (id INT PRIMARY KEY, k INT, c INT, KEY k_1 (k))")
				h.s.mv.noSettle = mustFail
				g := &gate{}
				wal.SetTailHook(h.db, g.wait)
				h.s.mv.testOnSettle = g.open
				read := readers[name]
				for id := 1; id <= 3; id++ {
					g.arm()
					// Connection A: acknowledged once the record is durable;
					// bbolt's commit is then held.
					h.mustQuery(fmt.Sprintf("INSERT INTO t VALUES (%d, %d, 1)", id, id))
					// Connection B starts after the acknowledgement.
					seen, err := read(h, h.newCtx(), id)
					g.open()
					if err != nil {
						t.Fatal(err)
					}
					if mustFail {
						if seen {
							t.Fatalf("id %d: without the wait the reader still saw the row: the check has no teeth", id)
						}
						return
					}
					if !seen {
						t.Fatalf("id %d: a %s that started after the INSERT was acknowledged did not see it", id, name)
					}
				}
			})
		}
	}
}

// newWALHarness is newHarness on a bbolt file opened behind its write-ahead
// log, as the server opens it.
func newWALHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, path: filepath.Join(t.TempDir(), "dpsql.db")}
	db, err := wal.Open(h.path, &bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(db)
	if err != nil {
		t.Fatal(err)
	}
	h.db, h.s = db, s
	h.e = sqle.NewDefault(s.Provider())
	h.ctx = h.newCtx()
	t.Cleanup(func() {
		if err := wal.Close(db); err != nil {
			t.Error(err)
		}
	})
	return h
}

// gate holds the next commit between its acknowledgement and bbolt's commit
// until it is opened (which may come first).
type gate struct {
	mu      sync.Mutex
	armed   bool
	opened  bool
	release chan struct{}
}

func (g *gate) arm() {
	g.mu.Lock()
	g.armed, g.opened, g.release = true, false, make(chan struct{})
	g.mu.Unlock()
}

// wait (the log's tail hook) blocks the armed commit.
func (g *gate) wait() {
	g.mu.Lock()
	armed, ch := g.armed, g.release
	g.armed = false
	g.mu.Unlock()
	if armed {
		<-ch
	}
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.release != nil && !g.opened {
		g.opened = true
		close(g.release)
	}
}
