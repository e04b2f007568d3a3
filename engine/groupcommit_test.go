package engine_test

import (
	"fmt"
	"sync"
	"testing"
)

// Group commit (store/txn.go) under 8 concurrent connections over the
// wire, with plain-text statements as sysbench sends them: every acknowledged
// commit is applied once, AUTO_INCREMENT values are unique, autocommitted
// increments of one hot row lose no update and none fails (row locks), and all
// of it survives a reopen.
func TestGroupCommitConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE sb")
	db := ts.connect("root", rootPW, "sb")
	mustExec(t, db, "CREATE TABLE ins (id INT AUTO_INCREMENT PRIMARY KEY, w INT, i INT, KEY by_w (w))")
	mustExec(t, db, "CREATE TABLE hot (id INT PRIMARY KEY, n INT)")
	mustExec(t, db, "INSERT INTO hot VALUES (1, 0)")

	const workers, per = 8, 30
	ids := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			conn := ts.connect("root", rootPW, "sb")
			conn.SetMaxOpenConns(1)
			for i := 0; i < per; i++ {
				res, err := conn.Exec(fmt.Sprintf("INSERT INTO ins (w, i) VALUES (%d, %d)", w, i))
				if err != nil {
					t.Errorf("insert: %v", err)
					return
				}
				id, err := res.LastInsertId()
				if err != nil {
					t.Errorf("last insert id: %v", err)
					return
				}
				ids[w] = append(ids[w], id)
				// Row locks: the increments queue on the row's lock and
				// none fails (InnoDB gives no error here either).
				if _, err := conn.Exec("UPDATE hot SET n = n + 1 WHERE id = 1"); err != nil {
					t.Errorf("update: %v", err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	check := func(label string) {
		t.Helper()
		db := ts.connect("root", rootPW, "sb")
		seen := map[int64]bool{}
		for w := range ids {
			for i, id := range ids[w] {
				if seen[id] {
					t.Fatalf("%s: AUTO_INCREMENT %d handed out twice", label, id)
				}
				seen[id] = true
				var gw, gi int
				if err := db.QueryRow(fmt.Sprintf("SELECT w, i FROM ins WHERE id = %d", id)).Scan(&gw, &gi); err != nil {
					t.Fatalf("%s: row %d acknowledged to worker %d: %v", label, id, w, err)
				}
				if gw != w || gi != i {
					t.Fatalf("%s: row %d is (%d, %d), want (%d, %d)", label, id, gw, gi, w, i)
				}
			}
		}
		if n := countTableRows(t, db, "ins"); n != workers*per {
			t.Fatalf("%s: %d rows, want %d", label, n, workers*per)
		}
		if n := int(queryFloat(t, db, "SELECT n FROM hot WHERE id = 1")); n != workers*per {
			t.Fatalf("%s: hot counter %d after %d acknowledged increments: updates lost", label, n, workers*per)
		}
	}
	check("before reopen")

	// Durability: every acknowledged commit is in the file.
	ts.stop()
	ts = startServer(t, dir)
	check("after reopen")
}
