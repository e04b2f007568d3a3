package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// Transactions through a real MySQL client (go-sql-driver/mysql).

func mysqlErr(err error) (uint16, string) {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number, string(me.SQLState[:])
	}
	return 0, ""
}

func countTableRows(t testing.TB, q interface {
	QueryRow(string, ...any) *sql.Row
}, table string) int {
	t.Helper()
	var n int
	if err := q.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func txServer(t *testing.T) (*testServer, *sql.DB) {
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE shop")
	db := ts.connect("root", rootPW, "shop")
	mustExec(t, db, "CREATE TABLE acct (id INT PRIMARY KEY, owner VARCHAR(20), bal INT, KEY by_owner (owner))")
	mustExec(t, db, "INSERT INTO acct VALUES (1, 'ann', 100), (2, 'bob', 50)")
	return ts, db
}

func TestRollbackOverWire(t *testing.T) {
	_, db := txServer(t)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO acct VALUES (3, 'cid', 10)",
		"UPDATE acct SET bal = bal - 30 WHERE id = 1",
		"DELETE FROM acct WHERE id = 2",
	} {
		if _, err := tx.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	// The transaction sees its own writes, through the primary key, the
	// secondary index and a full scan.
	var bal int
	if err := tx.QueryRow("SELECT bal FROM acct WHERE id = 1").Scan(&bal); err != nil || bal != 70 {
		t.Fatalf("own update: %d %v", bal, err)
	}
	if err := tx.QueryRow("SELECT bal FROM acct WHERE owner = 'cid'").Scan(&bal); err != nil || bal != 10 {
		t.Fatalf("own insert via index: %d %v", bal, err)
	}
	if n := countTableRows(t, tx, "acct"); n != 2 {
		t.Fatalf("count in transaction = %d, want 2", n)
	}
	// Others do not.
	if n := countTableRows(t, db, "acct WHERE owner = 'cid'"); n != 0 {
		t.Fatalf("uncommitted row visible to another connection")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	rows := queryStrings(t, db, "SELECT CONCAT(id, ':', owner, ':', bal) FROM acct ORDER BY id")
	if fmt.Sprint(rows) != "[1:ann:100 2:bob:50]" {
		t.Fatalf("after ROLLBACK: %v", rows)
	}
	// DELETE without WHERE (which the engine runs as a truncation) rolls
	// back too.
	tx, _ = db.Begin()
	if _, err := tx.Exec("DELETE FROM acct"); err != nil {
		t.Fatal(err)
	}
	if n := countTableRows(t, tx, "acct"); n != 0 {
		t.Fatalf("count after DELETE in transaction = %d", n)
	}
	tx.Rollback()
	if n := countTableRows(t, db, "acct"); n != 2 {
		t.Fatalf("DELETE without WHERE survived ROLLBACK: %d rows", n)
	}
}

func queryStrings(t testing.TB, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestReadOnlyTransactionRefusesWrites(t *testing.T) {
	_, db := txServer(t)
	tx, err := db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := countTableRows(t, tx, "acct"); n != 2 {
		t.Fatalf("read in READ ONLY transaction: %d", n)
	}
	for _, q := range []string{"INSERT INTO acct VALUES (9, 'x', 1)", "UPDATE acct SET bal = 0", "DELETE FROM acct WHERE id = 1"} {
		_, err := tx.Exec(q)
		if code, _ := mysqlErr(err); code != 1792 {
			t.Errorf("%s in READ ONLY transaction: %v (want error 1792)", q, err)
		}
	}
	tx.Rollback()
	if n := countTableRows(t, db, "acct"); n != 2 {
		t.Fatalf("rows after refused writes: %d", n)
	}
}

func TestSnapshotAndSavepoints(t *testing.T) {
	ts, db := txServer(t)
	other := ts.connect("root", rootPW, "shop")
	tx, _ := db.Begin()
	if n := countTableRows(t, tx, "acct"); n != 2 {
		t.Fatal(n)
	}
	// A commit by another connection after the snapshot is not seen…
	mustExec(t, other, "INSERT INTO acct VALUES (5, 'eve', 5)")
	mustExec(t, other, "UPDATE acct SET bal = 0 WHERE id = 1")
	mustExec(t, other, "DELETE FROM acct WHERE id = 2")
	var bal int
	if err := tx.QueryRow("SELECT bal FROM acct WHERE id = 1").Scan(&bal); err != nil || bal != 100 {
		t.Fatalf("repeatable read by key: %d %v", bal, err)
	}
	if got := countTableRows(t, tx, "acct"); got != 2 {
		t.Fatalf("repeatable read count: %d", got)
	}
	if got := countTableRows(t, tx, "acct WHERE owner IN ('bob', 'eve')"); got != 1 {
		t.Fatalf("repeatable read through the index: %d", got)
	}
	// …savepoints work inside it.
	for _, q := range []string{"INSERT INTO acct VALUES (10, 'x', 1)", "SAVEPOINT s1", "INSERT INTO acct VALUES (11, 'y', 1)",
		"SAVEPOINT s2", "INSERT INTO acct VALUES (12, 'z', 1)", "ROLLBACK TO SAVEPOINT s1", "INSERT INTO acct VALUES (13, 'w', 1)"} {
		if _, err := tx.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	if _, err := tx.Exec("ROLLBACK TO SAVEPOINT s2"); err == nil {
		t.Error("savepoint released by ROLLBACK TO an earlier one still exists")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	got := queryStrings(t, db, "SELECT CONCAT(id, ':', owner) FROM acct ORDER BY id")
	if fmt.Sprint(got) != "[1:ann 5:eve 10:x 13:w]" {
		t.Fatalf("after commit: %v", got)
	}
}

func TestAutocommitOff(t *testing.T) {
	ts, db := txServer(t)
	other := ts.connect("root", rootPW, "shop")
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	for _, q := range []string{"SET autocommit = 0", "INSERT INTO acct VALUES (7, 'gus', 1)", "UPDATE acct SET bal = 1 WHERE id = 2"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	if n := countTableRows(t, other, "acct"); n != 2 {
		t.Fatalf("uncommitted autocommit=0 insert visible: %d", n)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "INSERT INTO acct VALUES (8, 'hal', 1)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	got := queryStrings(t, other, "SELECT CONCAT(id, ':', bal) FROM acct ORDER BY id")
	if fmt.Sprint(got) != "[1:100 2:50 8:1]" {
		t.Fatalf("after ROLLBACK, INSERT, COMMIT: %v", got)
	}
}

// Concurrent read-modify-write transactions lose no update and need no
// retry: the UPDATE locks the row and computes from its latest committed
// version (row locks, store/lock.go; the two-transaction cases are
// in rowlock_test.go, checked against MariaDB).
func TestConcurrentTransfersWithRetry(t *testing.T) {
	ts, db := txServer(t)
	mustExec(t, db, "CREATE TABLE ctr (id INT PRIMARY KEY, n INT)")
	mustExec(t, db, "INSERT INTO ctr VALUES (1, 0), (2, 0), (3, 0)")
	const workers, per = 8, 15
	var wg sync.WaitGroup
	var mu sync.Mutex
	retries := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			conn := ts.connect("root", rootPW, "shop")
			for i := 0; i < per; i++ {
				for {
					err := func() error {
						tx, err := conn.Begin()
						if err != nil {
							return err
						}
						defer tx.Rollback()
						id := 1 + (w+i)%3
						var n int
						if err := tx.QueryRow("SELECT n FROM ctr WHERE id = ?", id).Scan(&n); err != nil {
							return err
						}
						if _, err := tx.Exec("UPDATE ctr SET n = n + 1 WHERE id = ?", id); err != nil {
							return err
						}
						var m int
						if err := tx.QueryRow("SELECT n FROM ctr WHERE id = ?", id).Scan(&m); err != nil {
							return err
						}
						if m <= n {
							return fmt.Errorf("after the increment the transaction reads %d, before %d", m, n)
						}
						return tx.Commit()
					}()
					if err == nil {
						break
					}
					if code, _ := mysqlErr(err); code != 1213 {
						t.Error(err)
						return
					}
					mu.Lock()
					retries++
					mu.Unlock()
				}
			}
		}(w)
	}
	wg.Wait()
	var total int
	if err := db.QueryRow("SELECT SUM(n) FROM ctr").Scan(&total); err != nil {
		t.Fatal(err)
	}
	if total != workers*per || retries != 0 {
		t.Fatalf("sum %d after %d increments (%d retries on 1213, want none)", total, workers*per, retries)
	}
}

// A DP function inside a client transaction reads committed rows only, and
// its charge survives the transaction's ROLLBACK.
func TestReleaseInsideTransaction(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 200, 1e6)
	committed := queryFloat(t, root, "SELECT AVG(age) FROM people")
	tx, err := root.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if _, err := tx.Exec(fmt.Sprintf("INSERT INTO people VALUES (%d, 'x', 100, 0)", 1000+i)); err != nil {
			t.Fatal(err)
		}
	}
	var inTx float64
	if err := tx.QueryRow("SELECT AVG(age) FROM people").Scan(&inTx); err != nil || math.Abs(inTx-committed) < 1 {
		t.Fatalf("the owner's own uncommitted rows: AVG %v (committed %v), %v", inTx, committed, err)
	}
	var dp float64
	if err := tx.QueryRow("SELECT DP_MEAN('people', 'age', 1000)").Scan(&dp); err != nil {
		t.Fatal(err)
	}
	// With ε = 1000 the noise is far below the 2.7 the uncommitted rows
	// would add to the mean.
	if math.Abs(dp-committed) > 1 {
		t.Fatalf("DP_MEAN in transaction = %v, committed mean %v, with uncommitted rows %v", dp, committed, inTx)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if sp := spent(t, root, "demo.people"); sp < 1000 {
		t.Fatalf("charge rolled back with the transaction: spent %v", sp)
	}
}

// Autocommitted UPDATEs read the latest committed row (MySQL's current
// read), so concurrent increments rarely conflict and never lose an update.
func TestAutocommitIncrements(t *testing.T) {
	ts, db := txServer(t)
	mustExec(t, db, "CREATE TABLE hits (id INT PRIMARY KEY, n INT)")
	mustExec(t, db, "INSERT INTO hits VALUES (1, 0)")
	const workers, per = 8, 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	retries := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := ts.connect("root", rootPW, "shop")
			for i := 0; i < per; i++ {
				for {
					_, err := conn.Exec("UPDATE hits SET n = n + 1 WHERE id = 1")
					if err == nil {
						break
					}
					if code, _ := mysqlErr(err); code != 1213 {
						t.Error(err)
						return
					}
					mu.Lock()
					retries++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	var n int
	if err := db.QueryRow("SELECT n FROM hits WHERE id = 1").Scan(&n); err != nil || n != workers*per || retries != 0 {
		t.Fatalf("n = %d (%v), want %d; %d retries on 1213, want none", n, err, workers*per, retries)
	}
	// In an explicit transaction too the UPDATE reads the latest committed
	// row (InnoDB's current read), not the transaction's snapshot.
	other := ts.connect("root", rootPW, "shop")
	tx, _ := other.Begin()
	var before int
	tx.QueryRow("SELECT n FROM hits WHERE id = 1").Scan(&before)
	mustExec(t, db, "UPDATE hits SET n = n + 1 WHERE id = 1")
	if _, err := tx.Exec("UPDATE hits SET n = n + 100 WHERE id = 1"); err != nil {
		t.Fatalf("update of a row changed after the snapshot: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT n FROM hits WHERE id = 1").Scan(&n); err != nil || n != before+101 {
		t.Fatalf("n = %d (%v), want %d", n, err, before+101)
	}
}
