package engine_test

import (
	"database/sql"
	"fmt"
	"math"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestKillNineLoop kills the server with SIGKILL 20 times in the middle of
// inserts, releases (some under a quota) and trainings, restarting it each
// time, and checks after every restart: every acknowledged row and model is
// there, the table's spend covers every acknowledged release and never
// exceeds its budget, the ledger sums to the spend, no release is left
// "reserved", and each account's share equals its ledger entries.
//
// Under the race detector (go test -race, CI's second pass) it runs 5
// cycles: each restart of a race-instrumented server costs ~5 s of CPU, and
// the full 20 cycles run in the plain pass.
func TestKillNineLoop(t *testing.T) {
	const (
		budget = 8.0
		eps    = 0.05
	)
	cycles := 20
	if raceEnabled {
		cycles = 5
	}
	dir := t.TempDir()
	cmd, addr := startChild(t, dir)
	mustExec(t, connectAddr(t, addr, "root", rootPW, ""), "CREATE DATABASE demo")
	root := connectAddr(t, addr, "root", rootPW, "demo")
	mustExec(t, root, "CREATE TABLE people (id INT PRIMARY KEY, x DOUBLE, y DOUBLE)")
	mustExec(t, root, "INSERT INTO people VALUES (1, 1, 2), (2, 2, 3), (3, 3, 5), (4, 4, 4)")
	mustExec(t, root, "CALL dp_bounds('people', 'x', 0, 10)")
	mustExec(t, root, "CALL dp_bounds('people', 'y', 0, 10)")
	mustExec(t, root, fmt.Sprintf("CALL dp_protect('people', %v, 0)", budget))
	mustExec(t, root, "CREATE TABLE events (id INT PRIMARY KEY)")
	mustExec(t, root, "CREATE USER ana IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "GRANT SELECT, EXECUTE ON demo.* TO ana")
	mustExec(t, root, "CALL dp_quota('ana', 'people', 2, 0)")

	var (
		ackRows   []int
		ackModels []string
		ackEps    = map[string]float64{}
		nextID    = 1
		model     = 0
	)
	for cycle := 0; cycle < cycles; cycle++ {
		if cycle > 0 {
			cmd, addr = startChild(t, dir)
		}
		root := connectAddr(t, addr, "root", rootPW, "demo")
		ana := connectAddr(t, addr, "ana", "ana-pw", "demo")
		verifyAfterCrash(t, cycle, root, ana, ackRows, ackModels, ackEps, budget)

		var mu sync.Mutex
		stop := make(chan struct{})
		var wg sync.WaitGroup
		worker := func(fn func() bool) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if !fn() {
						return
					}
				}
			}()
		}
		worker(func() bool { // inserts
			mu.Lock()
			id := nextID
			nextID++
			mu.Unlock()
			if _, err := root.Exec("INSERT INTO events VALUES (?)", id); err != nil {
				return false
			}
			mu.Lock()
			ackRows = append(ackRows, id)
			mu.Unlock()
			return true
		})
		for _, c := range []struct {
			user string
			db   *sql.DB
		}{{"root", root}, {"ana", ana}, {"root", root}} {
			worker(func() bool { // releases
				var v float64
				if err := c.db.QueryRow("SELECT DP_MEAN('people', 'x', ?)", eps).Scan(&v); err != nil {
					return isBudgetRefusal(err)
				}
				mu.Lock()
				ackEps[c.user] += eps
				mu.Unlock()
				return true
			})
		}
		worker(func() bool { // trainings with fresh names
			mu.Lock()
			model++
			name := fmt.Sprintf("crash_m%d", model)
			mu.Unlock()
			var m string
			if err := ana.QueryRow("SELECT DP_LSQ('people', 0.05, 'linear', 'label=y; model=" + name + "')").Scan(&m); err != nil {
				return isBudgetRefusal(err)
			}
			mu.Lock()
			ackModels = append(ackModels, m)
			ackEps["ana"] += 0.05
			mu.Unlock()
			return true
		})
		time.Sleep(time.Duration(150+10*cycle) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		close(stop)
		wg.Wait()
		root.Close()
		ana.Close()
	}
	cmd, addr = startChild(t, dir)
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	verifyAfterCrash(t, cycles, connectAddr(t, addr, "root", rootPW, "demo"), connectAddr(t, addr, "ana", "ana-pw", "demo"), ackRows, ackModels, ackEps, budget)
	t.Logf("%d SIGKILL cycles: %d rows, %d models and ε=%.2f (root) + %.2f (ana) of releases acknowledged, all kept", cycles, len(ackRows), len(ackModels), ackEps["root"], ackEps["ana"])
}

func isBudgetRefusal(err error) bool {
	return err != nil && strings.Contains(err.Error(), "privacy budget exceeded")
}

func verifyAfterCrash(t *testing.T, cycle int, root, ana *sql.DB, rows []int, models []string, ackEps map[string]float64, budget float64) {
	t.Helper()
	present := map[int]bool{}
	rs, err := root.Query("SELECT id FROM events")
	if err != nil {
		t.Fatalf("cycle %d: %v", cycle, err)
	}
	for rs.Next() {
		var id int
		rs.Scan(&id)
		present[id] = true
	}
	rs.Close()
	for _, id := range rows {
		if !present[id] {
			t.Fatalf("cycle %d: acknowledged row %d lost", cycle, id)
		}
	}
	for _, m := range models {
		if n := queryFloat(t, root, "SELECT COUNT(*) FROM dp_models WHERE name = ?", m); n != 1 {
			t.Fatalf("cycle %d: acknowledged model %s lost", cycle, m)
		}
	}
	sp := spent(t, root, "demo.people")
	if sp > budget+1e-9 {
		t.Fatalf("cycle %d: budget overspent: %v > %v", cycle, sp, budget)
	}
	if sp+1e-9 < ackEps["root"]+ackEps["ana"] {
		t.Fatalf("cycle %d: spent %v below the acknowledged %v", cycle, sp, ackEps["root"]+ackEps["ana"])
	}
	var ledgerEps float64
	if err := root.QueryRow("SELECT COALESCE(SUM(epsilon), 0) FROM dp_ledger WHERE table_name = 'demo.people'").Scan(&ledgerEps); err != nil {
		t.Fatal(err)
	}
	if math.Abs(ledgerEps-sp) > 1e-6 {
		t.Fatalf("cycle %d: ledger sums to %v, budget says %v", cycle, ledgerEps, sp)
	}
	if n := ledgerCount(t, root, "status = 'reserved'"); n != 0 {
		t.Fatalf("cycle %d: %d releases still reserved after restart", cycle, n)
	}
	var anaLedger, anaShare float64
	if err := root.QueryRow("SELECT COALESCE(SUM(epsilon), 0) FROM dp_ledger WHERE user = 'ana'").Scan(&anaLedger); err != nil {
		t.Fatal(err)
	}
	if err := ana.QueryRow("SELECT my_epsilon_spent FROM dp_budget WHERE table_name = 'demo.people'").Scan(&anaShare); err != nil {
		t.Fatal(err)
	}
	if math.Abs(anaShare-anaLedger) > 1e-6 || anaShare > 2+1e-9 || anaShare+1e-9 < ackEps["ana"] {
		t.Fatalf("cycle %d: ana's share %v, ledger %v, acknowledged %v, quota 2", cycle, anaShare, anaLedger, ackEps["ana"])
	}
}
