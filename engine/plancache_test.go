package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpsql/dpsql/engine"
	"github.com/dpsql/dpsql/server"
)

// planDB is a one-connection pool (so prepared statements stay on the
// connection whose plans are cached) as user on database plc.
func planDB(t *testing.T, ts *testServer, user, pw string) *sql.DB {
	t.Helper()
	db := ts.connect(user, pw, "plc")
	db.SetMaxOpenConns(1)
	return db
}

func planServer(t *testing.T) (*testServer, *sql.DB) {
	t.Helper()
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE plc")
	root := planDB(t, ts, "root", rootPW)
	mustExec(t, root, "CREATE TABLE sb (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(20) NOT NULL DEFAULT '', KEY k_1 (k))")
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d, %d, 'c%d')", i, i%7, i)
	}
	mustExec(t, root, "INSERT INTO sb VALUES "+b.String())
	return ts, root
}

func stmt(t *testing.T, db *sql.DB, q string) *sql.Stmt {
	t.Helper()
	st, err := db.Prepare(q)
	if err != nil {
		t.Fatalf("prepare %s: %v", q, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func oneString(t *testing.T, st *sql.Stmt, args ...any) (string, bool) {
	t.Helper()
	var s string
	err := st.QueryRow(args...).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false
	}
	if err != nil {
		t.Fatalf("query %v: %v", args, err)
	}
	return s, true
}

// Parameters are re-bound into the cached plan: point lookups, ranges
// (also empty and single-point ones), updates, deletes and inserts give
// the answers of a full analysis, and the cache is used.
func TestPlanCacheRebindsParameters(t *testing.T) {
	ts, root := planServer(t)
	before := ts.e.PlanCacheHits()
	point := stmt(t, root, "SELECT c FROM sb WHERE id=?")
	for _, id := range []int{5, 17, 5, 99, 1, 100, 42, 0, 101, -3, 7} {
		c, ok := oneString(t, point, id)
		if want := id >= 1 && id <= 100; ok != want || (ok && c != fmt.Sprintf("c%d", id)) {
			t.Fatalf("id=%d: got %q %v", id, c, ok)
		}
	}
	// A string and a NULL parameter where numbers were.
	if c, ok := oneString(t, point, "8"); !ok || c != "c8" {
		t.Fatalf("id='8': %q %v", c, ok)
	}
	if _, ok := oneString(t, point, nil); ok {
		t.Fatal("id=NULL returned a row")
	}
	sum := stmt(t, root, "SELECT SUM(k) FROM sb WHERE id BETWEEN ? AND ?")
	for _, r := range [][2]int{{1, 10}, {20, 30}, {5, 5}, {30, 20}, {95, 200}, {-5, 3}, {50, 60}} {
		var got sql.NullFloat64
		if err := sum.QueryRow(r[0], r[1]).Scan(&got); err != nil {
			t.Fatalf("sum %v: %v", r, err)
		}
		want, any := 0, false
		for i := max(r[0], 1); i <= min(r[1], 100); i++ {
			want += i % 7
			any = true
		}
		if got.Valid != any || (any && int(got.Float64) != want) {
			t.Fatalf("sum %v = %v, want %d (%v)", r, got, want, any)
		}
	}
	byK := stmt(t, root, "SELECT COUNT(*) FROM sb WHERE k = ?")
	for _, k := range []int{3, 0, 6, 9, 3} {
		var n int
		if err := byK.QueryRow(k).Scan(&n); err != nil {
			t.Fatal(err)
		}
		want := 0
		for i := 1; i <= 100; i++ {
			if i%7 == k {
				want++
			}
		}
		if n != want {
			t.Fatalf("k=%d: %d rows, want %d", k, n, want)
		}
	}
	// Two parameters with equal values, on different columns.
	two := stmt(t, root, "SELECT COUNT(*) FROM sb WHERE id >= ? AND k = ?")
	for _, p := range [][2]int{{3, 3}, {1, 5}, {5, 5}, {0, 0}, {6, 6}, {90, 2}, {2, 2}} {
		var n int
		if err := two.QueryRow(p[0], p[1]).Scan(&n); err != nil {
			t.Fatal(err)
		}
		want := 0
		for i := max(p[0], 1); i <= 100; i++ {
			if i%7 == p[1] {
				want++
			}
		}
		if n != want {
			t.Fatalf("id >= %d AND k = %d: %d rows, want %d", p[0], p[1], n, want)
		}
	}
	upd := stmt(t, root, "UPDATE sb SET k=k+1 WHERE id=?")
	setc := stmt(t, root, "UPDATE sb SET c=? WHERE id=?")
	del := stmt(t, root, "DELETE FROM sb WHERE id=?")
	ins := stmt(t, root, "INSERT INTO sb (id, k, c) VALUES (?, ?, ?)")
	for i := 1; i <= 10; i++ {
		if _, err := upd.Exec(i); err != nil {
			t.Fatal(err)
		}
		if _, err := setc.Exec(fmt.Sprintf("new%d", i), i+10); err != nil {
			t.Fatal(err)
		}
		if _, err := del.Exec(i + 20); err != nil {
			t.Fatal(err)
		}
		if _, err := ins.Exec(i+200, i, fmt.Sprintf("ins%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 10; i++ {
		var k int
		if err := root.QueryRow(fmt.Sprintf("SELECT k FROM sb WHERE id=%d", i)).Scan(&k); err != nil || k != i%7+1 {
			t.Fatalf("id %d: k=%d (%v), want %d", i, k, err, i%7+1)
		}
		if c, ok := oneString(t, point, i+10); !ok || c != fmt.Sprintf("new%d", i) {
			t.Fatalf("id %d: c=%q", i+10, c)
		}
		if _, ok := oneString(t, point, i+20); ok {
			t.Fatalf("id %d not deleted", i+20)
		}
		if c, ok := oneString(t, point, i+200); !ok || c != fmt.Sprintf("ins%d", i) {
			t.Fatalf("id %d: c=%q", i+200, c)
		}
	}
	if n := countTableRows(t, root, "sb"); n != 100 {
		t.Fatalf("%d rows, want 100", n)
	}
	if ts.e.PlanCacheHits() == before {
		t.Fatal("no execution re-used a cached plan")
	}
}

// DDL between executions: the next execution sees the new table.
func TestPlanCacheDDLInvalidation(t *testing.T) {
	ts, root := planServer(t)
	point := stmt(t, root, "SELECT c FROM sb WHERE id=?")
	for i := 1; i <= 5; i++ {
		oneString(t, point, i)
	}
	hits := ts.e.PlanCacheHits()
	if hits == 0 {
		t.Fatal("plan not cached")
	}
	other := ts.connect("root", rootPW, "plc")
	mustExec(t, other, "DROP TABLE sb")
	mustExec(t, other, "CREATE TABLE sb (id INT PRIMARY KEY, c VARCHAR(20))")
	mustExec(t, other, "INSERT INTO sb VALUES (3, 'recreated')")
	if c, ok := oneString(t, point, 3); !ok || c != "recreated" {
		t.Fatalf("after DROP/CREATE: %q %v", c, ok)
	}
	if _, ok := oneString(t, point, 4); ok {
		t.Fatal("row 4 of the dropped table returned")
	}
	mustExec(t, other, "ALTER TABLE sb MODIFY c VARCHAR(40)")
	mustExec(t, other, "INSERT INTO sb VALUES (4, 'after alter')")
	if c, ok := oneString(t, point, 4); !ok || c != "after alter" {
		t.Fatalf("after ALTER: %q %v", c, ok)
	}
	// A cached UPDATE after the table is renamed away and replaced.
	upd := stmt(t, root, "UPDATE sb SET c=? WHERE id=?")
	for i := 0; i < 4; i++ {
		if _, err := upd.Exec(fmt.Sprintf("u%d", i), 3); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, other, "RENAME TABLE sb TO sb_old")
	mustExec(t, other, "CREATE TABLE sb (id INT PRIMARY KEY, c VARCHAR(20))")
	mustExec(t, other, "INSERT INTO sb VALUES (3, 'fresh')")
	if _, err := upd.Exec("x", 3); err != nil {
		t.Fatal(err)
	}
	var old string
	if err := root.QueryRow("SELECT c FROM sb_old WHERE id=3").Scan(&old); err != nil || old != "u3" {
		t.Fatalf("renamed table changed by a cached UPDATE: %q %v", old, err)
	}
	if c, ok := oneString(t, point, 3); !ok || c != "x" {
		t.Fatalf("new table: %q %v", c, ok)
	}
}

// The guard and privileges are checked on every execution of a cached plan.
func TestPlanCacheGuardAndPrivileges(t *testing.T) {
	ts, root := planServer(t)
	mustExec(t, root, "CREATE USER ana IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "GRANT SELECT ON plc.* TO ana")
	ana := planDB(t, ts, "ana", "ana-pw")
	q := "SELECT c FROM sb WHERE id=?"
	// The owner's cached plan of the same text.
	own := stmt(t, root, q)
	for i := 1; i <= 5; i++ {
		oneString(t, own, i)
	}
	ast := stmt(t, ana, q)
	for i := 1; i <= 5; i++ {
		if c, ok := oneString(t, ast, i); !ok || c != fmt.Sprintf("c%d", i) {
			t.Fatalf("analyst read %q %v", c, ok)
		}
	}
	hits := ts.e.PlanCacheHits()
	if hits < 6 {
		t.Fatalf("%d cache hits, want both connections' plans cached", hits)
	}
	// Protecting the table refuses the analyst's next execution.
	mustExec(t, root, "CALL dp_bounds('sb', 'k', 0, 10)")
	mustExec(t, root, "CALL dp_protect('sb', 1, 0)")
	for i := 0; i < 3; i++ {
		var c string
		err := ast.QueryRow(2).Scan(&c)
		if err == nil || !strings.Contains(err.Error(), "protected") {
			t.Fatalf("analyst's cached plan on a protected table: %q, %v", c, err)
		}
	}
	// The owner still reads.
	for i := 1; i <= 3; i++ {
		if c, ok := oneString(t, own, i); !ok || c != fmt.Sprintf("c%d", i) {
			t.Fatalf("owner read %q %v", c, ok)
		}
	}
	// A new prepared statement by the analyst of the owner's text is refused.
	if _, err := ana.QueryContext(context.Background(), q, 1); err == nil || !strings.Contains(err.Error(), "protected") {
		t.Fatalf("analyst query on protected table: %v", err)
	}

	// Revoke takes effect on the next execution.
	mustExec(t, root, "CREATE TABLE open (id INT PRIMARY KEY, v INT)")
	mustExec(t, root, "INSERT INTO open VALUES (1, 10), (2, 20), (3, 30)")
	ov := stmt(t, ana, "SELECT v FROM open WHERE id=?")
	for i := 1; i <= 3; i++ {
		var v int
		if err := ov.QueryRow(i).Scan(&v); err != nil || v != 10*i {
			t.Fatalf("open %d: %d %v", i, v, err)
		}
	}
	h := ts.e.PlanCacheHits()
	for i := 1; i <= 3; i++ {
		var v int
		if err := ov.QueryRow(i).Scan(&v); err != nil || v != 10*i {
			t.Fatalf("open %d: %d %v", i, v, err)
		}
	}
	if ts.e.PlanCacheHits() == h {
		t.Fatal("plan of open not cached")
	}
	mustExec(t, root, "REVOKE SELECT ON plc.* FROM ana")
	var v int
	if err := ov.QueryRow(1).Scan(&v); err == nil {
		t.Fatalf("read %d after REVOKE", v)
	}
}

// BenchmarkPreparedPointSelect: one connection executing the sysbench
// point select, with and without the plan cache.
func BenchmarkPreparedPointSelect(b *testing.B) {
	for _, off := range []bool{false, true} {
		b.Run(fmt.Sprintf("cache=%v", !off), func(b *testing.B) {
			ts := startServerOpts(b, b.TempDir(), engine.Options{RootPassword: rootPW, Log: quietLog(), DisablePlanCache: off}, server.Options{})
			mustExec(b, ts.connect("root", rootPW, ""), "CREATE DATABASE plc")
			db := ts.connect("root", rootPW, "plc")
			db.SetMaxOpenConns(1)
			mustExec(b, db, "CREATE TABLE sbtest1 (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k))")
			var sb strings.Builder
			for i := 1; i <= 10000; i++ {
				if sb.Len() > 0 {
					sb.WriteString(",")
				}
				fmt.Fprintf(&sb, "(%d, %d, '%0120d', '%060d')", i, i*7%10000, i, i)
			}
			mustExec(b, db, "INSERT INTO sbtest1 VALUES "+sb.String())
			st, err := db.Prepare("SELECT c FROM sbtest1 WHERE id=?")
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			var c string
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := st.QueryRow(i%10000 + 1).Scan(&c); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time of the process (server and client) per execution:
			// comparable on a loaded machine, unlike ns/op.
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Point lookups (plan cache and the store's single-key read) see the
// transaction's own writes and keep their snapshot.
func TestPlanCachePointLookupSnapshot(t *testing.T) {
	ts, root := planServer(t)
	other := planDB(t, ts, "root", rootPW)
	ctx := context.Background()
	conn, err := root.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	get, err := conn.PrepareContext(ctx, "SELECT c FROM sb WHERE id=?")
	if err != nil {
		t.Fatal(err)
	}
	defer get.Close()
	read := func(id int) string {
		t.Helper()
		var c string
		if err := get.QueryRow(id).Scan(&c); errors.Is(err, sql.ErrNoRows) {
			return "<none>"
		} else if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for i := 1; i <= 5; i++ {
		read(i)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if got := read(7); got != "c7" {
		t.Fatalf("id 7: %q", got)
	}
	mustExec(t, other, "UPDATE sb SET c='changed' WHERE id=7")
	mustExec(t, other, "INSERT INTO sb VALUES (500, 1, 'other')")
	if got := read(7); got != "c7" {
		t.Fatalf("snapshot lost: id 7 reads %q", got)
	}
	if got := read(500); got != "<none>" {
		t.Fatalf("row committed after the snapshot visible: %q", got)
	}
	for _, q := range []string{"INSERT INTO sb VALUES (600, 1, 'mine')", "DELETE FROM sb WHERE id=8"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(600); got != "mine" {
		t.Fatalf("own insert: %q", got)
	}
	if got := read(8); got != "<none>" {
		t.Fatalf("own delete: %q", got)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if got, want := read(7)+read(8)+read(600)+read(500), "changedc8<none>other"; got != want {
		t.Fatalf("after rollback: %q, want %q", got, want)
	}
}
