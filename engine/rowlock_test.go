package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpsql/dpsql/engine"
)

// Row locks (issue 13, store/lock.go) over the wire. Each scenario
// runs against dpsql and, where mariadbd is installed, against a MariaDB
// InnoDB server (a shard of the Spider test cluster), and must behave the
// same on both.

type lockBackend struct {
	name string
	// conn opens a new pool on the scenario's database.
	conn func(t *testing.T) *sql.DB
	// waiting is the number of lock waits in progress.
	waiting func(t *testing.T) int
	// held is the number of row locks held (-1: not known).
	held func(t *testing.T) int
	// poll is the interval between looks at waiting.
	poll time.Duration
}

// lockBackends returns dpsql and MariaDB, each with a fresh database and
// table acct (id INT PRIMARY KEY, bal INT) holding (1, 100), (2, 50).
func runLockScenario(t *testing.T, fn func(t *testing.T, b lockBackend)) {
	t.Run("dpsql", func(t *testing.T) {
		ts := startServer(t, t.TempDir())
		mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE lk")
		b := lockBackend{
			name: "dpsql",
			poll: 5 * time.Millisecond,
			conn: func(t *testing.T) *sql.DB { return ts.connect("root", rootPW, "lk") },
			waiting: func(*testing.T) int {
				_, w := ts.e.Store.LockStats()
				return w
			},
			held: func(*testing.T) int {
				h, _ := ts.e.Store.LockStats()
				return h
			},
		}
		setupAcct(t, b)
		fn(t, b)
	})
	t.Run("mariadb", func(t *testing.T) {
		needSpider(t)
		db := fmt.Sprintf("lk_%d", time.Now().UnixNano())
		root := shardConn(t, 0)
		mustExec(t, root, "CREATE DATABASE "+db)
		t.Cleanup(func() { root.Exec("DROP DATABASE " + db) })
		// InnoDB refreshes information_schema.innodb_trx only when it
		// was not read for 0.1 s.
		b := lockBackend{
			name: "mariadb",
			poll: 250 * time.Millisecond,
			conn: func(t *testing.T) *sql.DB { return connectAddr(t, spider.shards[0], "spider", "spider", db) },
			waiting: func(t *testing.T) int {
				return int(queryFloat(t, root, "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'"))
			},
			held: func(*testing.T) int { return -1 },
		}
		setupAcct(t, b)
		fn(t, b)
	})
}

func setupAcct(t *testing.T, b lockBackend) {
	db := b.conn(t)
	mustExec(t, db, "CREATE TABLE acct (id INT PRIMARY KEY, bal INT)")
	mustExec(t, db, "INSERT INTO acct VALUES (1, 100), (2, 50)")
}

// awaitWaiters blocks until n lock waits are in progress (a test that
// hangs here has a writer that did not wait as it should).
func awaitWaiters(t *testing.T, b lockBackend, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for b.waiting(t) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d lock waits never showed up", b.name, n)
		}
		time.Sleep(b.poll)
	}
}

func balances(t *testing.T, db *sql.DB) string {
	t.Helper()
	return fmt.Sprint(queryStrings(t, db, "SELECT CONCAT(id, ':', bal) FROM acct ORDER BY id"))
}

// conn pins one connection of a new pool.
func pin(t *testing.T, b lockBackend) *sql.Conn {
	t.Helper()
	c, err := b.conn(t).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func execC(t *testing.T, c *sql.Conn, q string) {
	t.Helper()
	if _, err := c.ExecContext(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// async runs q on c and delivers its error.
func async(c *sql.Conn, q string) <-chan error {
	ch := make(chan error, 1)
	go func() {
		_, err := c.ExecContext(context.Background(), q)
		ch <- err
	}()
	return ch
}

// A second writer of a row waits for the first; once it commits, the
// waiting UPDATE computes from the committed row (current read): no error,
// no lost update.
func TestRowLockWriterWaits(t *testing.T) {
	runLockScenario(t, func(t *testing.T, b lockBackend) {
		a, c := pin(t, b), pin(t, b)
		execC(t, a, "BEGIN")
		execC(t, a, "UPDATE acct SET bal = bal + 1 WHERE id = 1")
		execC(t, c, "BEGIN")
		done := async(c, "UPDATE acct SET bal = bal + 10 WHERE id = 1")
		awaitWaiters(t, b, 1)
		execC(t, a, "COMMIT")
		if err := <-done; err != nil {
			t.Fatalf("%s: waiting UPDATE: %v", b.name, err)
		}
		execC(t, c, "COMMIT")
		if got := balances(t, b.conn(t)); got != "[1:111 2:50]" {
			t.Fatalf("%s: %s, want [1:111 2:50]", b.name, got)
		}
		if h := b.held(t); h > 0 {
			t.Fatalf("%s: %d row locks still held after both commits", b.name, h)
		}
	})
}

// An UPDATE in a transaction whose snapshot predates a commit to the row
// reads the committed row (the statement restarts on dpsql), and the
// transaction then sees its own result.
func TestRowLockStaleSnapshotUpdate(t *testing.T) {
	runLockScenario(t, func(t *testing.T, b lockBackend) {
		a := pin(t, b)
		execC(t, a, "BEGIN")
		var bal int
		if err := a.QueryRowContext(context.Background(), "SELECT bal FROM acct WHERE id = 1").Scan(&bal); err != nil || bal != 100 {
			t.Fatalf("%s: snapshot read %d, %v", b.name, bal, err)
		}
		mustExec(t, b.conn(t), "UPDATE acct SET bal = bal + 5 WHERE id = 1")
		execC(t, a, "UPDATE acct SET bal = bal + 1 WHERE id = 1")
		if err := a.QueryRowContext(context.Background(), "SELECT bal FROM acct WHERE id = 1").Scan(&bal); err != nil || bal != 106 {
			t.Fatalf("%s: after the UPDATE the transaction reads %d (%v), want 106", b.name, bal, err)
		}
		execC(t, a, "COMMIT")
		if got := balances(t, b.conn(t)); got != "[1:106 2:50]" {
			t.Fatalf("%s: %s", b.name, got)
		}
	})
}

// Two transactions that lock two rows in opposite orders: the one whose
// request closes the cycle gets 1213 at once and is rolled back; the other
// then gets its lock and commits.
func TestRowLockDeadlock(t *testing.T) {
	runLockScenario(t, func(t *testing.T, b lockBackend) {
		a, c := pin(t, b), pin(t, b)
		execC(t, a, "BEGIN")
		execC(t, c, "BEGIN")
		execC(t, a, "UPDATE acct SET bal = bal + 1 WHERE id = 1")
		execC(t, c, "UPDATE acct SET bal = bal + 1000 WHERE id = 2")
		done := async(a, "UPDATE acct SET bal = bal + 1 WHERE id = 2")
		awaitWaiters(t, b, 1)
		_, err := c.ExecContext(context.Background(), "UPDATE acct SET bal = bal + 1000 WHERE id = 1")
		if code, state := mysqlErr(err); code != 1213 || state != "40001" {
			t.Fatalf("%s: the request closing the cycle: %v (want 1213 / 40001)", b.name, err)
		}
		if err := <-done; err != nil {
			t.Fatalf("%s: the surviving transaction: %v", b.name, err)
		}
		execC(t, a, "COMMIT")
		// The victim was rolled back whole: its first UPDATE is gone and
		// its COMMIT commits nothing.
		execC(t, c, "COMMIT")
		if got := balances(t, b.conn(t)); got != "[1:101 2:51]" {
			t.Fatalf("%s: %s, want [1:101 2:51]", b.name, got)
		}
		if h := b.held(t); h > 0 {
			t.Fatalf("%s: %d row locks still held", b.name, h)
		}
	})
}

// A lock wait longer than innodb_lock_wait_timeout fails the statement
// with 1205; the transaction and its earlier writes stay.
func TestRowLockWaitTimeout(t *testing.T) {
	runLockScenario(t, func(t *testing.T, b lockBackend) {
		a, c := pin(t, b), pin(t, b)
		var def int
		if err := c.QueryRowContext(context.Background(), "SELECT @@innodb_lock_wait_timeout").Scan(&def); err != nil || def != 50 {
			t.Fatalf("%s: default innodb_lock_wait_timeout %d (%v), want 50", b.name, def, err)
		}
		execC(t, c, "SET SESSION innodb_lock_wait_timeout = 1")
		execC(t, a, "BEGIN")
		execC(t, a, "UPDATE acct SET bal = 0 WHERE id = 1")
		execC(t, c, "BEGIN")
		execC(t, c, "UPDATE acct SET bal = 7 WHERE id = 2")
		_, err := c.ExecContext(context.Background(), "UPDATE acct SET bal = 8 WHERE id = 1")
		if code, _ := mysqlErr(err); code != 1205 {
			t.Fatalf("%s: lock wait past the timeout: %v (want 1205)", b.name, err)
		}
		execC(t, c, "COMMIT")
		execC(t, a, "ROLLBACK")
		if got := balances(t, b.conn(t)); got != "[1:100 2:7]" {
			t.Fatalf("%s: %s, want [1:100 2:7]", b.name, got)
		}
	})
}

// ROLLBACK releases the locks: the waiting autocommitted UPDATE proceeds
// and reads the row as it was before the rolled-back change.
func TestRowLockRollbackReleases(t *testing.T) {
	runLockScenario(t, func(t *testing.T, b lockBackend) {
		a, c := pin(t, b), pin(t, b)
		execC(t, a, "BEGIN")
		execC(t, a, "UPDATE acct SET bal = 0 WHERE id = 1")
		done := async(c, "UPDATE acct SET bal = bal * 2 WHERE id = 1")
		awaitWaiters(t, b, 1)
		execC(t, a, "ROLLBACK")
		if err := <-done; err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
		if got := balances(t, b.conn(t)); got != "[1:200 2:50]" {
			t.Fatalf("%s: %s, want [1:200 2:50]", b.name, got)
		}
		if h := b.held(t); h > 0 {
			t.Fatalf("%s: %d row locks still held", b.name, h)
		}
	})
}

// An INSERT of a key another open transaction inserted waits for it: a
// duplicate once that one commits, a success if it rolls back.
func TestRowLockInsertWaits(t *testing.T) {
	runLockScenario(t, func(t *testing.T, b lockBackend) {
		a, c := pin(t, b), pin(t, b)
		execC(t, a, "BEGIN")
		execC(t, a, "INSERT INTO acct VALUES (3, 1)")
		done := async(c, "INSERT INTO acct VALUES (3, 2)")
		awaitWaiters(t, b, 1)
		execC(t, a, "COMMIT")
		if code, _ := mysqlErr(<-done); code != 1062 {
			t.Fatalf("%s: insert of a key committed meanwhile: want 1062", b.name)
		}
		execC(t, a, "BEGIN")
		execC(t, a, "INSERT INTO acct VALUES (4, 1)")
		done = async(c, "INSERT INTO acct VALUES (4, 2)")
		awaitWaiters(t, b, 1)
		execC(t, a, "ROLLBACK")
		if err := <-done; err != nil {
			t.Fatalf("%s: insert after the other rolled back: %v", b.name, err)
		}
		if got := balances(t, b.conn(t)); got != "[1:100 2:50 3:1 4:2]" {
			t.Fatalf("%s: %s", b.name, got)
		}
	})
}

// Concurrent transfers between random pairs of rows, in both orders, in
// explicit transactions retried on 1213 (deadlocks do happen here, as on
// InnoDB): every committed transfer is applied exactly once.
func TestRowLockConcurrentTransfers(t *testing.T) {
	runLockScenario(t, func(t *testing.T, b lockBackend) {
		db := b.conn(t)
		mustExec(t, db, "INSERT INTO acct VALUES (3, 0), (4, 0)")
		const workers, per = 8, 15
		var mu sync.Mutex
		net := map[int]int{}
		deadlocks := 0
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				conn := b.conn(t)
				conn.SetMaxOpenConns(1)
				for i := 0; i < per; i++ {
					from, to := 1+(w+i)%4, 1+(w+2*i+1)%4
					if from == to {
						to = 1 + to%4
					}
					for {
						err := func() error {
							tx, err := conn.Begin()
							if err != nil {
								return err
							}
							defer tx.Rollback()
							if _, err := tx.Exec("UPDATE acct SET bal = bal - 1 WHERE id = ?", from); err != nil {
								return err
							}
							if _, err := tx.Exec("UPDATE acct SET bal = bal + 1 WHERE id = ?", to); err != nil {
								return err
							}
							return tx.Commit()
						}()
						if err == nil {
							mu.Lock()
							net[from]--
							net[to]++
							mu.Unlock()
							break
						}
						if code, _ := mysqlErr(err); code != 1213 {
							t.Errorf("%s: %v", b.name, err)
							return
						}
						mu.Lock()
						deadlocks++
						mu.Unlock()
					}
				}
			}(w)
		}
		wg.Wait()
		want := fmt.Sprint([]string{fmt.Sprintf("1:%d", 100+net[1]), fmt.Sprintf("2:%d", 50+net[2]), fmt.Sprintf("3:%d", net[3]), fmt.Sprintf("4:%d", net[4])})
		if got := balances(t, db); got != want {
			t.Fatalf("%s: %s, want %s (%d deadlocks retried)", b.name, got, want, deadlocks)
		}
		t.Logf("%s: %d transfers, %d deadlocks retried", b.name, workers*per, deadlocks)
	})
}

// A DP release reads a snapshot and takes no row lock: a client
// transaction holding locks on the protected table does not make it wait,
// and a release inside that transaction does not either.
func TestRowLockReleaseNeverWaits(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 200, 1e6)
	c, err := root.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	execC(t, c, "BEGIN")
	execC(t, c, "UPDATE people SET age = 99 WHERE id < 100")
	if h, _ := ts.e.Store.LockStats(); h != 100 {
		t.Fatalf("%d row locks held, want 100", h)
	}
	other := ts.connect("root", rootPW, "demo")
	if v := queryFloat(t, other, "SELECT DP_MEAN('people', 'age', 1000)"); v > 60 {
		t.Fatalf("DP_MEAN from another connection %v: saw uncommitted rows", v)
	}
	var v float64
	if err := c.QueryRowContext(context.Background(), "SELECT DP_MEAN('people', 'age', 1000)").Scan(&v); err != nil {
		t.Fatal(err)
	}
	execC(t, c, "ROLLBACK")
	if h, w := ts.e.Store.LockStats(); h != 0 || w != 0 {
		t.Fatalf("after ROLLBACK: %d locks held, %d waits", h, w)
	}
}

// A failed autocommitted statement releases the locks it took at once (a
// multi-row INSERT that locked key 5 before failing on key 1).
func TestRowLockFailedAutocommitReleases(t *testing.T) {
	runLockScenario(t, func(t *testing.T, b lockBackend) {
		a, c := pin(t, b), pin(t, b)
		_, err := a.ExecContext(context.Background(), "INSERT INTO acct VALUES (5, 1), (1, 1)")
		if code, _ := mysqlErr(err); code != 1062 {
			t.Fatalf("%s: %v (want 1062)", b.name, err)
		}
		if h := b.held(t); h > 0 {
			t.Fatalf("%s: %d row locks held after the failed statement", b.name, h)
		}
		execC(t, c, "SET SESSION innodb_lock_wait_timeout = 5")
		execC(t, c, "INSERT INTO acct VALUES (5, 2)")
		if got := balances(t, b.conn(t)); got != "[1:100 2:50 5:2]" {
			t.Fatalf("%s: %s", b.name, got)
		}
	})
}

// SELECT … FOR UPDATE takes no row lock here (docs/sql.md, Transactions),
// so a writer does not wait for it; instead it pins the transaction's
// snapshot: a later write of a row changed since fails with 1213 rather
// than overwriting the change with a value computed from the stale read
// (the lost update InnoDB prevents by locking). Through a prepared
// statement as well.
func TestRowLockSelectForUpdatePinsSnapshot(t *testing.T) {
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE lk")
	db := ts.connect("root", rootPW, "lk")
	mustExec(t, db, "CREATE TABLE acct (id INT PRIMARY KEY, bal INT)")
	mustExec(t, db, "INSERT INTO acct VALUES (1, 100), (2, 100)")
	for _, prepared := range []bool{false, true} {
		c, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		execC(t, c, "BEGIN")
		var bal int
		q := "SELECT bal FROM acct WHERE id = 1 FOR UPDATE"
		if prepared {
			err = c.QueryRowContext(context.Background(), "SELECT bal FROM acct WHERE id = ? FOR UPDATE", 1).Scan(&bal)
		} else {
			err = c.QueryRowContext(context.Background(), q).Scan(&bal)
		}
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if h, _ := ts.e.Store.LockStats(); h != 0 {
			t.Fatalf("SELECT … FOR UPDATE took %d row locks", h)
		}
		mustExec(t, db, "UPDATE acct SET bal = bal - 10 WHERE id = 1") // autocommit, does not wait
		// Untouched rows are still writable.
		execC(t, c, "UPDATE acct SET bal = bal + 1 WHERE id = 2")
		_, err = c.ExecContext(context.Background(), fmt.Sprintf("UPDATE acct SET bal = %d WHERE id = 1", bal-30))
		if code, _ := mysqlErr(err); code != 1213 {
			t.Fatalf("prepared=%v: write after a FOR UPDATE read of a row changed since: %v, want 1213", prepared, err)
		}
		c.ExecContext(context.Background(), "ROLLBACK")
		c.Close()
		want := "[1:90 2:100]"
		if prepared {
			want = "[1:80 2:100]"
		}
		if got := balances(t, db); got != want {
			t.Fatalf("prepared=%v: %s, want %s (lost update?)", prepared, got, want)
		}
	}
	// Without a locking read, a transaction's write reads the current row
	// (InnoDB's behaviour): no error.
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	execC(t, c, "BEGIN")
	queryStrings(t, db, "SELECT bal FROM acct WHERE id = 1")
	mustExec(t, db, "UPDATE acct SET bal = bal - 10 WHERE id = 1")
	execC(t, c, "UPDATE acct SET bal = bal - 5 WHERE id = 1")
	execC(t, c, "COMMIT")
	if got := balances(t, db); got != "[1:65 2:100]" {
		t.Fatalf("%s", got)
	}
}

// A large multi-row INSERT (the bulk writer's path, fastpath/bulkload.go)
// whose row 300 was inserted by an open transaction waits for it inside a
// batch and, once that transaction rolls back, writes every row exactly
// once: the rows of the batch before the wait are not inserted again.
func TestRowLockBulkInsertWaitsMidBatch(t *testing.T) {
	runLockScenario(t, func(t *testing.T, b lockBackend) {
		a, c := pin(t, b), pin(t, b)
		var sb strings.Builder
		sb.WriteString("INSERT INTO acct VALUES ")
		for i := 10; i < 1010; i++ {
			if i > 10 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d, %d)", i, i)
		}
		execC(t, a, "BEGIN")
		execC(t, a, "INSERT INTO acct VALUES (300, -1)")
		done := async(c, sb.String())
		awaitWaiters(t, b, 1)
		execC(t, a, "ROLLBACK")
		if err := <-done; err != nil {
			t.Fatalf("%s: bulk insert after the other rolled back: %v", b.name, err)
		}
		db := b.conn(t)
		if got := queryStrings(t, db, "SELECT CONCAT(COUNT(*), ':', SUM(bal)) FROM acct WHERE id >= 10"); fmt.Sprint(got) != "[1000:509500]" {
			t.Fatalf("%s: %v", b.name, got)
		}
	})
}

func TestIsLoadData(t *testing.T) {
	for q, want := range map[string]bool{
		"LOAD DATA LOCAL INFILE 'x' INTO TABLE t":     true,
		"  /* c */ load data infile 'x' into table t": true,
		"-- c\n# d\nLoad XML INFILE 'x' INTO TABLE t": true,
		"UPDATE t SET a = 1":                          false,
		"/* LOAD */ SELECT 1":                         false,
	} {
		if got := engine.IsLoadData(q); got != want {
			t.Errorf("%q: %v", q, got)
		}
	}
	for q, want := range map[string]bool{
		"SELECT bal FROM acct FOR UPDATE":                   true,
		" /* x */ (select 1 from t for share)":              true,
		"WITH a AS (SELECT 1) SELECT * FROM a FOR UPDATE":   true,
		"select * from t lock in share mode":                true,
		"SELECT 'for update'":                               true, // over-pins: safe
		"SELECT * FROM t":                                   false,
		"INSERT INTO t VALUES ('for update')":               false,
		"UPDATE t SET a = 1 WHERE b = 'lock in share mode'": false,
	} {
		if got := engine.IsLockingRead(q); got != want {
			t.Errorf("locking read %q: %v", q, got)
		}
	}
}
