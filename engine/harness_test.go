package engine_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/sirupsen/logrus"

	"github.com/dpsql/dpsql/engine"
	"github.com/dpsql/dpsql/server"
)

const rootPW = "root-secret"

// testServer is an engine plus its wire-protocol server on a loopback port.
type testServer struct {
	t   testing.TB
	dir string
	e   *engine.Engine
	srv *server.Server
}

func quietLog() *logrus.Logger {
	l := logrus.New()
	l.SetLevel(logrus.ErrorLevel)
	return l
}

func startServer(t testing.TB, dir string) *testServer {
	t.Helper()
	e, err := engine.Open(engine.Options{DataDir: dir, RootPassword: rootPW, Log: quietLog()})
	if err != nil {
		t.Fatalf("open engine: %v", err)
	}
	srv, err := e.NewServer("127.0.0.1:0")
	if err != nil {
		e.Close()
		t.Fatalf("new server: %v", err)
	}
	go srv.Serve()
	ts := &testServer{t: t, dir: dir, e: e, srv: srv}
	t.Cleanup(ts.stop)
	return ts
}

func (ts *testServer) stop() {
	if ts.srv != nil {
		ts.srv.Close()
		ts.srv = nil
	}
	if ts.e != nil {
		ts.e.Close()
		ts.e = nil
	}
}

// connect opens a go-sql-driver/mysql pool as user.
func (ts *testServer) connect(user, pw, db string) *sql.DB {
	ts.t.Helper()
	return connectAddr(ts.t, ts.srv.Addr(), user, pw, db)
}

func connectAddr(t testing.TB, addr, user, pw, db string) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, pw, "tcp", addr, db
	cfg.Timeout = 10 * time.Second
	cfg.AllowNativePasswords = true
	cfg.InterpolateParams = false
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatalf("connector: %v", err)
	}
	pool := sql.OpenDB(conn)
	if err := pool.Ping(); err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(func() { pool.Close() })
	return pool
}

func mustExec(t testing.TB, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", short(q), err)
	}
}

func queryString(t testing.TB, db *sql.DB, q string, args ...any) string {
	t.Helper()
	var s string
	if err := db.QueryRow(q, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

// rowStrings renders the remaining rows of rows as "a|b|NULL" lines.
func rowStrings(t testing.TB, rows *sql.Rows) []string {
	var out []string
	for _, vals := range scanAll(t, rows) {
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = "NULL"
			if v.Valid {
				parts[i] = v.String
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	return out
}

// scanAll reads the remaining rows of rows, every column as a nullable
// string, and checks rows.Err.
func scanAll(t testing.TB, rows *sql.Rows) [][]sql.NullString {
	t.Helper()
	cols, _ := rows.Columns()
	var out [][]sql.NullString
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func queryFloat(t testing.TB, db *sql.DB, q string, args ...any) float64 {
	t.Helper()
	var f float64
	if err := db.QueryRow(q, args...).Scan(&f); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return f
}

// wantErr runs q and requires an error containing every fragment.
func wantErr(t testing.TB, db *sql.DB, q string, fragments ...string) error {
	t.Helper()
	rows, err := db.Query(q)
	if err == nil {
		// Some errors surface only while reading rows.
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	if err == nil {
		t.Fatalf("%s: expected an error, got none", q)
	}
	for _, f := range fragments {
		if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(f)) {
			t.Fatalf("%s: error %q does not mention %q", q, err, f)
		}
	}
	return err
}

// setupProtected creates db demo with a protected table people (n rows,
// age in [0, 100]) and a public table towns, plus an analyst account.
func setupProtected(t testing.TB, ts *testServer, n int, epsBudget float64) *sql.DB {
	t.Helper()
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE IF NOT EXISTS demo")
	root := ts.connect("root", rootPW, "demo")
	mustExec(t, root, "CREATE TABLE demo.people (id INT PRIMARY KEY, name VARCHAR(64), age DOUBLE, town INT)")
	var b strings.Builder
	for i := 0; i < n; i++ {
		if b.Len() > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d, 'person%d', %d, %d)", i, i, 20+i%50, i%3)
	}
	mustExec(t, root, "INSERT INTO demo.people VALUES "+b.String())
	mustExec(t, root, "CREATE TABLE demo.towns (id INT PRIMARY KEY, tname VARCHAR(64))")
	mustExec(t, root, "INSERT INTO demo.towns VALUES (0,'a'),(1,'b'),(2,'c')")
	mustExec(t, root, "CALL dp_bounds('people', 'age', 0, 100)")
	mustExec(t, root, fmt.Sprintf("CALL dp_protect('people', %v, 0)", epsBudget))
	mustExec(t, root, "CREATE USER IF NOT EXISTS 'ana'@'%' IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, CREATE VIEW, DROP, ALTER, EXECUTE, TRIGGER ON demo.* TO 'ana'@'%'")
	return root
}

func spent(t testing.TB, db *sql.DB, table string) float64 {
	t.Helper()
	return queryFloat(t, db, "SELECT epsilon_spent FROM dp_budget WHERE table_name = ?", table)
}

// short trims long statements in failure messages.
func short(q string) string {
	if len(q) > 120 {
		return q[:120] + "…"
	}
	return q
}
