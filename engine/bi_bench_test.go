package engine_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Grouped DP COUNT/SUM/AVG against the same non-private query (issue 12):
//
//	go test ./engine -run '^$' -bench BenchmarkGrouped -benchtime 5x
//
// BI_BENCH_ROWS overrides the row count (default 1,000,000). Results:
// docs/results/bi.md.

var benchOnce struct {
	sync.Once
	ts   *testServer
	root *sql.DB
	ana  *sql.Conn
	err  error
}

func benchSetup(b *testing.B) (*sql.DB, *sql.Conn) {
	benchOnce.Do(func() {
		rows := 1_000_000
		if v := os.Getenv("BI_BENCH_ROWS"); v != "" {
			fmt.Sscan(v, &rows)
		}
		dir, err := os.MkdirTemp("", "bi-bench")
		if err != nil {
			benchOnce.err = err
			return
		}
		// Shared by every run of both benchmarks: not tied to the cleanup of
		// the b that happens to run first.
		keep := &testing.T{}
		ts := startServer(keep, dir)
		csv := filepath.Join(dir, "t.csv")
		f, err := os.Create(csv)
		if err != nil {
			benchOnce.err = err
			return
		}
		w := bufio.NewWriter(f)
		fmt.Fprintln(w, "id,g,x")
		for i := 0; i < rows; i++ {
			// Deterministic pseudo-random values (no math/rand needed).
			h := uint64(i)*0x9E3779B97F4A7C15 + 12345
			fmt.Fprintf(w, "%d,%d,%.3f\n", i, h%10, float64(h>>11%100000)/1000)
		}
		w.Flush()
		f.Close()
		if _, err := ts.e.ImportCSVFile("bench.t", csv); err != nil {
			benchOnce.err = err
			return
		}
		root := connectAddr(keep, ts.srv.Addr(), "root", rootPW, "bench")
		for _, q := range []string{
			"CALL dp_labels('t', 'g', '0,1,2,3,4,5,6,7,8,9')",
			"CALL dp_bounds('t', 'x', 0, 100)",
			"CALL dp_protect('t', 1000000, 0)",
			"CREATE USER IF NOT EXISTS 'ana'@'%' IDENTIFIED BY 'ana-pw'",
			"GRANT SELECT ON bench.* TO 'ana'@'%'",
		} {
			if _, err := root.Exec(q); err != nil {
				benchOnce.err = fmt.Errorf("%s: %w", q, err)
				return
			}
		}
		ana, err := connectAddr(keep, ts.srv.Addr(), "ana", "ana-pw", "bench").Conn(context.Background())
		if err != nil {
			benchOnce.err = err
			return
		}
		// A fresh release every time: the answer cache would make it free.
		if _, err := ana.ExecContext(context.Background(), "SET SESSION dp_epsilon = 1, dp_fresh = 1"); err != nil {
			benchOnce.err = err
			return
		}
		benchOnce.ts, benchOnce.root, benchOnce.ana = ts, root, ana
	})
	if benchOnce.err != nil {
		b.Fatal(benchOnce.err)
	}
	return benchOnce.root, benchOnce.ana
}

const benchQuery = "SELECT g, COUNT(*), SUM(x), AVG(x) FROM t GROUP BY g ORDER BY g"

func drain(b *testing.B, rows *sql.Rows, err error) {
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if n != 10 {
		b.Fatalf("%d groups", n)
	}
}

func BenchmarkGroupedNonPrivate(b *testing.B) {
	root, _ := benchSetup(b)
	for b.Loop() {
		rows, err := root.Query(benchQuery)
		drain(b, rows, err)
	}
}

func BenchmarkGroupedDP(b *testing.B) {
	_, ana := benchSetup(b)
	for b.Loop() {
		rows, err := ana.QueryContext(context.Background(), benchQuery)
		drain(b, rows, err)
	}
}

// The same with a WHERE (issue 25): the DP side runs it on the total,
// fixed-cost evaluator (dpquery/eval), the non-private side on
// go-mysql-server's.
const benchWhereQuery = "SELECT g, COUNT(*), SUM(x), AVG(x) FROM t WHERE x > 10 AND (id % 7 <> 3 OR x < 90) GROUP BY g ORDER BY g"

func BenchmarkGroupedWhereNonPrivate(b *testing.B) {
	root, _ := benchSetup(b)
	for b.Loop() {
		rows, err := root.Query(benchWhereQuery)
		drain(b, rows, err)
	}
}

func BenchmarkGroupedWhereDP(b *testing.B) {
	_, ana := benchSetup(b)
	for b.Loop() {
		rows, err := ana.QueryContext(context.Background(), benchWhereQuery)
		drain(b, rows, err)
	}
}
