package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dpsql/dpsql/engine"
)

// TestBulkPipeEarlyError: a row refused near the start of a large pipelined
// LOAD DATA LOCAL or INSERT (the producer has parsed ahead, most of the
// input is unread) fails the statement and leaves none of its rows; the
// producer ends with the statement, the rest of the file is drained, and
// the same connection then loads again.
func TestBulkPipeEarlyError(t *testing.T) {
	defer engine.SetBulkInsertMinBytes(0)()
	n := 60000
	if raceEnabled {
		n = 6000
	}
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 20, 5)
	conn := pinnedConn(t, root)
	ctx := context.Background()
	data := func(first, bad int) (string, string) {
		var csv, ins strings.Builder
		ins.WriteString("INSERT INTO people VALUES ")
		for i := 1; i <= n; i++ {
			age := 20 + i%50
			if i == bad {
				age = 400
			}
			fmt.Fprintf(&csv, "%d,p%d,%d,%d\n", first+i, i, age, i%3)
			if i > 1 {
				ins.WriteString(",")
			}
			fmt.Fprintf(&ins, "(%d,'p%d',%d,%d)", first+i, i, age, i%3)
		}
		return csv.String(), ins.String()
	}
	badCSV, badIns := data(1000, 100)
	registerData(t, "bad", badCSV)
	want := "value 400 of column age is outside its declared bounds [0, 100] for demo.people"
	before := engine.BulkLoads()
	for _, q := range []string{
		"LOAD DATA LOCAL INFILE 'Reader::bad' INTO TABLE people FIELDS TERMINATED BY ','",
		badIns,
	} {
		_, err := conn.ExecContext(ctx, q)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v, want %q", short(q), err, want)
		}
		if c := countTableRows(t, root, "people"); c != 20 {
			t.Fatalf("%s: %d rows after the refusal, want 20", short(q), c)
		}
		waitNoPipes(t)
	}
	if took := engine.BulkLoads() - before; took != 2 {
		t.Fatalf("%d of 2 statements took the bulk writer", took)
	}
	// The connection is in step with the client: both forms load now.
	goodCSV, _ := data(1000, -1)
	_, goodIns := data(1000+n, -1)
	registerData(t, "good", goodCSV)
	for i, q := range []string{
		"LOAD DATA LOCAL INFILE 'Reader::good' INTO TABLE people FIELDS TERMINATED BY ','",
		goodIns,
	} {
		res, err := conn.ExecContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", short(q), err)
		}
		if a, _ := res.RowsAffected(); a != int64(n) {
			t.Fatalf("%s: %d rows affected, want %d", short(q), a, n)
		}
		if c := countTableRows(t, root, "people"); c != 20+(i+1)*n {
			t.Fatalf("%s: %d rows, want %d", short(q), c, 20+(i+1)*n)
		}
		waitNoPipes(t)
	}
}

// waitNoPipes fails unless every producer has ended (they end before their
// statement answers; the wait only covers the test's own scheduling).
func waitNoPipes(t *testing.T) {
	t.Helper()
	for i := 0; engine.PipesRunning() != 0; i++ {
		if i == 200 {
			t.Fatalf("%d bulk producers still running", engine.PipesRunning())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
