package wal_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/wal"
	bolt "go.etcd.io/bbolt"
)

// TestBudgetReserveSurvivesPowerLoss: with the log on, a reservation is
// durable when Reserve returns (wal.Update checkpoints before returning),
// even with group commits logged since the last checkpoint. The power loss
// keeps exactly what was fdatasynced: bbolt's file as of its last
// fdatasync and the log as of its last one.
func TestBudgetReserveSurvivesPowerLoss(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dpsql.db")
	var durDB, durLog []byte
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	db, err := wal.OpenHooked(path, &bolt.Options{InitialMmapSize: 2 << 20},
		func() { durDB = read(path) }, func() { durLog = read(wal.LogPath(path)) })
	if err != nil {
		t.Fatal(err)
	}
	defer wal.Close(db)
	a, err := budget.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Protect("db.t", 10, 0, budget.Basic); err != nil {
		t.Fatal(err)
	}
	if err := wal.Update(db, func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("rows")); return err }); err != nil {
		t.Fatal(err)
	}
	spent := 0.0
	for i := range 2 {
		// Group commits in between: the log holds records past the checkpoint.
		for j := range 3 {
			err := wal.Logged(db, func(tx *bolt.Tx, rec *wal.Rec) error {
				k, v := []byte(fmt.Sprintf("r%d-%d", i, j)), []byte("v")
				rec.Put([][]byte{[]byte("rows")}, k, v)
				return tx.Bucket([]byte("rows")).Put(k, v)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if _, err := a.Reserve(budget.Request{Table: "db.t", User: "ana", Function: "DP_MEAN", Requested: [2]float64{0.5, 0}, Events: []budget.Event{{Kind: budget.Laplace, Epsilon: 0.5}}}); err != nil {
			t.Fatal(err)
		}
		spent += 0.5
		// Power loss now: only the fdatasynced bytes survive.
		np := filepath.Join(t.TempDir(), "dpsql.db")
		if err := os.WriteFile(np, durDB, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(wal.LogPath(np), durLog, 0o600); err != nil {
			t.Fatal(err)
		}
		db2, err := wal.Open(np, &bolt.Options{InitialMmapSize: 2 << 20})
		if err != nil {
			t.Fatal(err)
		}
		a2, err := budget.Open(db2)
		if err != nil {
			t.Fatal(err)
		}
		st, err := a2.Status("db.t")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		db2.View(func(tx *bolt.Tx) error { n = tx.Bucket([]byte("rows")).Stats().KeyN; return nil })
		wal.Close(db2)
		if st.EpsilonSpent < spent-1e-9 {
			t.Fatalf("after %d reservations and a power loss the table's spend is %v, want %v", i+1, st.EpsilonSpent, spent)
		}
		if n != 3*(i+1) {
			t.Fatalf("after a power loss %d of %d logged rows", n, 3*(i+1))
		}
	}
}
