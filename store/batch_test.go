package store

import (
	"fmt"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
)

// TestInsertBatch: InsertBatch checks every row as Insert does, in order
// (duplicates of stored rows, of earlier rows of the batch, of a unique
// key written earlier in the batch), skips duplicates only when asked,
// stops at the first other failure with the rows before it written, and
// a statement mark's DiscardChanges removes everything the batches wrote
// (the compact per-batch undo entries).
func TestInsertBatch(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE b (id INT PRIMARY KEY, u INT, v DOUBLE, UNIQUE KEY uu (u), KEY kv (v))")
	h.mustQuery("INSERT INTO b VALUES (5, 50, 0.5)")
	row := func(id, u int32) sql.Row { return sql.Row{id, u, float64(id) / 2} }

	h.mustQuery("BEGIN")
	ins := h.newTable("b").Inserter(h.ctx).(BatchInserter)
	ins.StatementBegin(h.ctx)
	skipped, failed, err := ins.InsertBatch(h.ctx, []sql.Row{row(1, 10), row(5, 99), row(2, 20), row(3, 20), row(1, 11), row(4, 40)}, true)
	if err != nil || failed != 6 {
		t.Fatalf("skipping batch: failed %d, err %v", failed, err)
	}
	got := ""
	for _, s := range skipped {
		got += fmt.Sprintf("%d:%s;", s.Row, s.Err)
	}
	if want := "1:duplicate primary key given: [5];3:duplicate unique key given: [20];4:duplicate primary key given: [1];"; got != want {
		t.Fatalf("skipped %s, want %s", got, want)
	}
	// Without skipping, the first duplicate ends the batch after the
	// rows before it.
	_, failed, err = ins.InsertBatch(h.ctx, []sql.Row{row(6, 60), row(7, 70), row(6, 61), row(8, 80)}, false)
	if !isDupKey(err) || failed != 2 {
		t.Fatalf("failing batch: failed %d, err %v", failed, err)
	}
	ins.StatementComplete(h.ctx)
	all := "1,10; 2,20; 4,40; 5,50; 6,60; 7,70"
	expectRows(t, h, "SELECT id, u FROM b ORDER BY id", all)
	expectRows(t, h, "SELECT id FROM b WHERE u = 20", "2")
	expectRows(t, h, "SELECT id FROM b WHERE v = 3.5", "7")
	// A discarded statement of several batches leaves nothing.
	ins.StatementBegin(h.ctx)
	for k := int32(0); k < 3; k++ {
		var rows []sql.Row
		for i := int32(0); i < 50; i++ {
			rows = append(rows, row(100+50*k+i, 1000+50*k+i))
		}
		if _, failed, err := ins.InsertBatch(h.ctx, rows, false); err != nil || failed != 50 {
			t.Fatalf("batch %d: failed %d, err %v", k, failed, err)
		}
	}
	if err := ins.DiscardChanges(h.ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := ins.Close(h.ctx); err != nil {
		t.Fatal(err)
	}
	expectRows(t, h, "SELECT id, u FROM b ORDER BY id", all)
	expectRows(t, h, "SELECT COUNT(*) FROM b", "6")
	expectRows(t, h, "SELECT id FROM b WHERE u >= 1000", "")
	h.mustQuery("COMMIT")
	expectRows(t, h, "SELECT id, u FROM b ORDER BY id", all)
}

// A statement that made a DP release (NoStatementRestart) is never marked
// for re-execution; an ordinary one is, once, and only while it runs.
func TestNoStatementRestart(t *testing.T) {
	s := NewSession(sql.NewBaseSession())
	s.BeginStatement()
	n := s.stmt.Load()
	if !s.markRestart(n) || !s.RestartRequested() || s.RestartRequested() {
		t.Fatal("an ordinary statement could not be restarted (once)")
	}
	s.EndStatement()
	if s.markRestart(n) {
		t.Fatal("restart marked after the statement ended")
	}
	s.BeginStatement()
	s.NoStatementRestart()
	if s.markRestart(s.stmt.Load()) || s.RestartRequested() {
		t.Fatal("a statement that made a release was marked for re-execution")
	}
	s.EndStatement()
}
