package engine_test

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestLoad64Clients runs 64 concurrent clients — analysts spending one
// table's budget (some under a quota), trainings racing for model names,
// owners inserting, and analysts trying bypasses — and then checks
// correctness, not speed: no overspend of the budget or of the quota, the
// spend equals the acknowledged releases, every acknowledged row and model
// is there, and no bypass got through.
func TestLoad64Clients(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 300, 20)
	mustExec(t, root, "CALL dp_bounds('people', 'town', 0, 2)")
	mustExec(t, root, "CALL dp_quota('ana', 'people', 3, 0)")
	mustExec(t, root, "CREATE USER IF NOT EXISTS 'bob'@'%' IDENTIFIED BY 'bob-pw'")
	mustExec(t, root, "GRANT SELECT, INSERT, EXECUTE ON demo.* TO 'bob'@'%'")
	mustExec(t, root, "CREATE TABLE demo.events (id INT PRIMARY KEY, who VARCHAR(16))")

	const (
		clients   = 64
		perClient = 12
		eps       = 0.1
	)
	var (
		mu          sync.Mutex
		acked       = map[string]float64{} // user → ε of acknowledged releases
		models      []string
		rows        []int
		bypassOK    []string
		unexpected  []error
		nextRow     atomic.Int64
		trainCharge atomic.Int64
	)
	record := func(err error, allowed ...string) {
		if err == nil {
			return
		}
		for _, a := range allowed {
			if strings.Contains(err.Error(), a) {
				return
			}
		}
		mu.Lock()
		unexpected = append(unexpected, err)
		mu.Unlock()
	}
	bypasses := []string{
		"SELECT AVG(age) FROM people", "SELECT * FROM people WHERE id = 7", "UPDATE people SET age = 0",
		"INSERT INTO people VALUES (9999, 'x', 1, 0)", "SELECT DP_MEAN('people', 'age', 0.1) FROM towns",
		"SET GLOBAL sql_mode = 'ANSI_QUOTES'", "SELECT @@secure_file_priv", "CREATE TABLE c AS SELECT * FROM people",
	}
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			var user, pw string
			switch {
			case c%8 == 0:
				user, pw = "root", rootPW
			case c%8 == 1:
				user, pw = "ana", "ana-pw"
			default:
				user, pw = "bob", "bob-pw"
			}
			db := ts.connect(user, pw, "demo")
			db.SetMaxOpenConns(1)
			for i := 0; i < perClient; i++ {
				switch {
				case user == "root" && i%2 == 0:
					id := int(nextRow.Add(1))
					if _, err := db.Exec("INSERT INTO events VALUES (?, 'root')", id); err != nil {
						record(err)
						continue
					}
					mu.Lock()
					rows = append(rows, id)
					mu.Unlock()
				case c%8 == 2 && i%4 == 0:
					// Trainings racing for a few model names.
					name := fmt.Sprintf("load_m%d", i%3)
					var m string
					err := db.QueryRow("SELECT DP_LSQ('people', 0.2, 'linear', 'label=age; features=town; model=" + name + "')").Scan(&m)
					record(err, "already taken", "privacy budget exceeded")
					if err == nil {
						trainCharge.Add(1)
						mu.Lock()
						models = append(models, m)
						acked[user] += 0.2
						mu.Unlock()
					}
				case c%8 == 3:
					q := bypasses[(c+i)%len(bypasses)]
					if _, err := db.Exec(q); err == nil {
						mu.Lock()
						bypassOK = append(bypassOK, q)
						mu.Unlock()
					}
				default:
					var v float64
					err := db.QueryRow("SELECT DP_MEAN('people', 'age', ?)", eps).Scan(&v)
					record(err, "privacy budget exceeded")
					if err == nil {
						if v < 0 || v > 100 {
							record(fmt.Errorf("DP_MEAN %v outside the bounds", v))
						}
						mu.Lock()
						acked[user] += eps
						mu.Unlock()
					}
				}
			}
		}(c)
	}
	wg.Wait()
	if len(unexpected) > 0 {
		t.Fatalf("%d unexpected errors, first: %v", len(unexpected), unexpected[0])
	}
	if len(bypassOK) > 0 {
		t.Fatalf("bypasses accepted under load: %v", bypassOK)
	}
	var total float64
	for _, v := range acked {
		total += v
	}
	sp := spent(t, root, "demo.people")
	t.Logf("64 clients: %d releases acknowledged for ε=%.1f, spent %v of 20; %d models; %d rows", int(math.Round(total/eps)), total, sp, len(models), len(rows))
	if sp > 20+1e-9 {
		t.Fatalf("budget overspent: %v > 20", sp)
	}
	if math.Abs(sp-total) > 1e-6 {
		t.Fatalf("spent %v but acknowledged releases total %v", sp, total)
	}
	if acked["ana"] > 3+1e-9 {
		t.Fatalf("ana's quota overspent: %v > 3", acked["ana"])
	}
	var anaSpent float64
	if err := ts.connect("ana", "ana-pw", "demo").QueryRow("SELECT my_epsilon_spent FROM dp_budget WHERE table_name = 'demo.people'").Scan(&anaSpent); err != nil {
		t.Fatal(err)
	}
	if math.Abs(anaSpent-acked["ana"]) > 1e-6 {
		t.Fatalf("ana's share %v, acknowledged %v", anaSpent, acked["ana"])
	}
	// The ledger agrees: every entry ok, one per acknowledged release.
	if n := ledgerCount(t, root, "table_name = 'demo.people' AND status <> 'ok'"); n != 0 {
		t.Fatalf("%d ledger entries are not ok", n)
	}
	var ledgerEps float64
	if err := root.QueryRow("SELECT COALESCE(SUM(epsilon), 0) FROM dpsql.dp_ledger WHERE table_name = 'demo.people'").Scan(&ledgerEps); err != nil {
		t.Fatal(err)
	}
	if math.Abs(ledgerEps-sp) > 1e-6 {
		t.Fatalf("ledger sums to %v, budget says %v", ledgerEps, sp)
	}
	// Each charged training saved exactly its model; names are unique.
	seen := map[string]bool{}
	for _, m := range models {
		if seen[m] {
			t.Fatalf("model %s acknowledged twice", m)
		}
		seen[m] = true
	}
	if n := queryFloat(t, root, "SELECT COUNT(*) FROM dp_models WHERE name LIKE 'load_m%'"); int(n) != len(models) {
		t.Fatalf("%v models saved, %d acknowledged", n, len(models))
	}
	if n := ledgerCount(t, root, "function_name = 'DP_LSQ'"); int64(n) != trainCharge.Load() {
		t.Fatalf("%d trainings charged, %d acknowledged (a refused name was charged?)", n, trainCharge.Load())
	}
	present := map[int]bool{}
	rs, err := root.Query("SELECT id FROM events")
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var id int
		rs.Scan(&id)
		present[id] = true
	}
	rs.Close()
	for _, id := range rows {
		if !present[id] {
			t.Fatalf("acknowledged row %d missing", id)
		}
	}
	wantErr(t, ts.connect("bob", "bob-pw", "demo"), "SELECT DP_MEAN('people', 'age', 100)", "privacy budget exceeded")
}
