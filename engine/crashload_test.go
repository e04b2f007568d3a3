package engine_test

import (
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// TestCrashDuringLargeLoad: a LOAD DATA whose commit is too large for the
// write-ahead log (over 32 MiB: bbolt commits it directly and a checkpoint
// makes it durable, wal bigCommit) is all or nothing across a
// SIGKILL: killed at several moments of the load, the restarted server has
// none of its rows or all of them, all when the client got its OK; and a
// load acknowledged just before the kill is there in full.
func TestCrashDuringLargeLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 36 MB six times (-short)")
	}
	const rows = 44000
	pad := strings.Repeat("p", 800)
	var b strings.Builder
	for i := 1; i <= rows; i++ {
		fmt.Fprintf(&b, "%d,%s%06d\n", i, pad, i)
	}
	data := b.String()
	dir := t.TempDir()
	cmd, addr := startChild(t, dir)
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	mustExec(t, connectAddr(t, addr, "root", rootPW, ""), "CREATE DATABASE lc")
	load := func(addr, table string) error {
		db := connectAddr(t, addr, "root", rootPW, "lc")
		defer db.Close()
		mustExec(t, db, "CREATE TABLE "+table+" (id BIGINT PRIMARY KEY, s VARCHAR(1000))")
		name := "crashload_" + table
		mysql.RegisterReaderHandler(name, func() io.Reader { return strings.NewReader(data) })
		defer mysql.DeregisterReaderHandler(name)
		_, err := db.Exec("LOAD DATA LOCAL INFILE 'Reader::" + name + "' INTO TABLE " + table + " FIELDS TERMINATED BY ','")
		return err
	}
	restart := func() {
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		cmd, addr = startChild(t, dir)
	}
	count := func(table string) (n int, last string) {
		db := connectAddr(t, addr, "root", rootPW, "lc")
		defer db.Close()
		if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		if n > 0 {
			last = queryString(t, db, fmt.Sprintf("SELECT s FROM %s WHERE id = %d", table, rows))
		}
		return n, last
	}
	want := fmt.Sprintf("%s%06d", pad, rows)
	start := time.Now()
	if err := load(addr, "acked"); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	restart()
	if n, last := count("acked"); n != rows || last != want {
		t.Fatalf("an acknowledged load killed at once: %d of %d rows, last %.20q…", n, rows, last)
	}
	// Kills spread over a load's duration (its commit is the last part).
	for i, f := range []float64{0.3, 0.6, 0.8, 0.9, 1.0} {
		delay := time.Duration(f * float64(took))
		table := fmt.Sprintf("t%d", i)
		done := make(chan error, 1)
		a := addr
		go func() { done <- load(a, table) }()
		time.Sleep(delay)
		restart()
		err := <-done
		n, last := count(table)
		t.Logf("kill after %v (a load took %v): client %v, %d rows after the restart", delay, took, err, n)
		switch {
		case n != 0 && n != rows:
			t.Fatalf("kill after %v: %d of %d rows survived (not all or nothing)", delay, n, rows)
		case err == nil && n != rows:
			t.Fatalf("kill after %v: the load was acknowledged, %d rows survived", delay, n)
		case n == rows && last != want:
			t.Fatalf("kill after %v: the last row reads %.20q…", delay, last)
		}
	}
}
