package engine_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/dpsql/dpsql/engine"
)

const crashChildEnv = "DPSQL_CRASH_CHILD_DIR"

func TestMain(m *testing.M) {
	// go-mysql-server logs every connection through the standard logger.
	logrus.SetLevel(logrus.ErrorLevel) // refused queries log at warn: thousands of lines that bury a failure
	if dir := os.Getenv(crashChildEnv); dir != "" {
		runCrashChild(dir)
		return
	}
	code := m.Run()
	stopSpider() // scale-out (issue 14): the shared MariaDB/Spider cluster, if started
	os.Exit(code)
}

// runCrashChild serves dir until it is killed.
func runCrashChild(dir string) {
	e, err := engine.Open(engine.Options{DataDir: dir, RootPassword: rootPW, Log: quietLog()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(3)
	}
	srv, err := e.NewServer("127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "child listen:", err)
		os.Exit(3)
	}
	tmp := filepath.Join(dir, "addr.tmp")
	if err := os.WriteFile(tmp, []byte(srv.Addr()), 0o600); err != nil {
		os.Exit(3)
	}
	_ = os.Rename(tmp, filepath.Join(dir, "addr"))
	_ = srv.Serve()
	select {}
}

func startChild(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	_ = os.Remove(filepath.Join(dir, "addr"))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(dir, "addr")); err == nil {
			return cmd, string(b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	t.Fatal("child server did not start")
	return nil, ""
}

// TestCrashKeepsAcknowledgedWork kills the server with SIGKILL in the middle
// of a stream of inserts and releases; after a restart every acknowledged row
// and every acknowledged release must be there.
func TestCrashKeepsAcknowledgedWork(t *testing.T) {
	dir := t.TempDir()
	cmd, addr := startChild(t, dir)
	defer cmd.Process.Kill()
	mustExec(t, connectAddr(t, addr, "root", rootPW, ""), "CREATE DATABASE demo")
	root := connectAddr(t, addr, "root", rootPW, "demo")
	mustExec(t, root, "CREATE TABLE people (id INT PRIMARY KEY, age DOUBLE)")
	mustExec(t, root, "INSERT INTO people VALUES (1, 30), (2, 40)")
	mustExec(t, root, "CALL dp_bounds('people', 'age', 0, 100)")
	mustExec(t, root, "CALL dp_protect('people', 1000000, 0)")
	mustExec(t, root, "CREATE TABLE events (id INT PRIMARY KEY, note VARCHAR(32))")

	var mu sync.Mutex
	var ackedRows []int
	acked := 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // inserts, one statement per row
		defer wg.Done()
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := root.Exec("INSERT INTO events VALUES (?, 'x')", i); err != nil {
				return
			}
			mu.Lock()
			ackedRows = append(ackedRows, i)
			mu.Unlock()
		}
	}()
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() { // releases
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var v float64
				if err := root.QueryRow("SELECT DP_MEAN('people', 'age', 0.5)").Scan(&v); err != nil {
					return
				}
				mu.Lock()
				acked++
				mu.Unlock()
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	close(stop)
	wg.Wait()
	mu.Lock()
	rowsAcked, releasesAcked := append([]int(nil), ackedRows...), acked
	mu.Unlock()
	if len(rowsAcked) == 0 || releasesAcked == 0 {
		t.Fatalf("nothing acknowledged before the kill (rows %d, releases %d)", len(rowsAcked), releasesAcked)
	}
	t.Logf("acknowledged before SIGKILL: %d inserts, %d releases", len(rowsAcked), releasesAcked)

	// Restart in a new child and check.
	cmd2, addr2 := startChild(t, dir)
	defer func() { cmd2.Process.Kill(); cmd2.Wait() }()
	root2 := connectAddr(t, addr2, "root", rootPW, "demo")
	present := map[int]bool{}
	rows, err := root2.Query("SELECT id FROM events")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		present[id] = true
	}
	rows.Close()
	for _, id := range rowsAcked {
		if !present[id] {
			t.Fatalf("acknowledged row %d lost after SIGKILL", id)
		}
	}
	var inLedger int
	if err := root2.QueryRow("SELECT COUNT(*) FROM dpsql.dp_ledger WHERE table_name = 'demo.people' AND function_name = 'DP_MEAN'").Scan(&inLedger); err != nil {
		t.Fatal(err)
	}
	if inLedger < releasesAcked {
		t.Fatalf("ledger has %d releases, but %d were acknowledged", inLedger, releasesAcked)
	}
	sp := spent(t, root2, "demo.people")
	if sp < 0.5*float64(releasesAcked)-1e-9 {
		t.Fatalf("spent %v < acknowledged %d × 0.5", sp, releasesAcked)
	}
	var statuses []string
	srows, _ := root2.Query("SELECT DISTINCT status FROM dpsql.dp_ledger")
	for srows.Next() {
		var s string
		srows.Scan(&s)
		statuses = append(statuses, s)
	}
	srows.Close()
	t.Logf("ledger statuses after restart: %s", strings.Join(statuses, ","))
}
