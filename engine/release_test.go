package engine_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestBudgetExhaustionAndRestart(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	setupProtected(t, ts, 200, 1.0)
	ana := ts.connect("ana", "ana-pw", "demo")

	for i := 0; i < 2; i++ {
		m := queryFloat(t, ana, "SELECT DP_MEAN('people', 'age', 0.5)")
		if m < 0 || m > 100 {
			t.Fatalf("DP_MEAN = %v outside the declared bounds", m)
		}
	}
	err := wantErr(t, ana, "SELECT DP_MEAN('people', 'age', 0.5)", "privacy budget exceeded", "demo.people")
	t.Logf("third release refused: %v", err)
	if s := spent(t, ana, "demo.people"); math.Abs(s-1.0) > 1e-9 {
		t.Fatalf("spent = %v, want 1.0", s)
	}

	// Restart: rows and spent budget survive.
	ts.stop()
	ts2 := startServer(t, dir)
	root := ts2.connect("root", rootPW, "demo")
	if n := queryFloat(t, root, "SELECT COUNT(*) FROM people"); n != 200 {
		t.Fatalf("rows after restart = %v", n)
	}
	ana2 := ts2.connect("ana", "ana-pw", "demo")
	if s := spent(t, ana2, "demo.people"); math.Abs(s-1.0) > 1e-9 {
		t.Fatalf("spent after restart = %v, want 1.0", s)
	}
	wantErr(t, ana2, "SELECT DP_MEAN('people', 'age', 0.01)", "privacy budget exceeded")
	wantErr(t, ana2, "SELECT * FROM people", "protected")
	// The ledger is for owners.
	wantErr(t, ana2, "SELECT * FROM dp_ledger", "owners")
	if n := queryFloat(t, root, "SELECT COUNT(*) FROM dpsql.dp_ledger WHERE table_name = 'demo.people' AND status = 'ok'"); n != 2 {
		t.Fatalf("ledger has %v ok releases, want 2", n)
	}
}

func TestDPMeanIsNoisyAndCentred(t *testing.T) {
	ts := startServer(t, t.TempDir())
	setupProtected(t, ts, 1000, 1e6)
	ana := ts.connect("ana", "ana-pw", "demo")
	// True mean of ages 20 + i%50 over 1000 rows is 44.5. At ε = 1 the
	// noise scale is 100/1000 = 0.1: 40 releases average within ±0.1
	// (≈ 6.3 standard errors) and are not all identical.
	var sum float64
	seen := map[float64]bool{}
	for i := 0; i < 40; i++ {
		v := queryFloat(t, ana, "SELECT DP_MEAN('people', 'age', 1)")
		sum += v
		seen[v] = true
	}
	if mean := sum / 40; math.Abs(mean-44.5) > 0.1 {
		t.Fatalf("average of 40 DP means = %v, want ≈ 44.5", mean)
	}
	if len(seen) < 35 {
		t.Fatalf("only %d distinct outputs in 40 releases: noise missing?", len(seen))
	}
}

func TestReleaseMustBeEvaluatedOnce(t *testing.T) {
	ts := startServer(t, t.TempDir())
	setupProtected(t, ts, 20, 10)
	ana := ts.connect("ana", "ana-pw", "demo")
	for _, q := range []string{
		"SELECT DP_MEAN('people', 'age', 0.1) FROM towns",
		"SELECT id FROM towns WHERE DP_MEAN('people', 'age', 0.1) > 0",
		"SELECT (SELECT DP_MEAN('people', 'age', 0.1))",
		"SELECT * FROM towns WHERE id IN (SELECT DP_MEAN('people', 'age', 0.1))",
		"SELECT DP_MEAN('people', 'age', 0.1) UNION SELECT 1",
		"SELECT DP_MEAN('people', 'age', 0.1) FROM towns t1 JOIN towns t2",
		"CREATE TABLE leak AS SELECT DP_MEAN('people', 'age', 0.1) AS m",
		"INSERT INTO towns SELECT 99, DP_MEAN('people', 'age', 0.1)",
		"SELECT tname, DP_MEAN('people', 'age', 0.1) FROM towns GROUP BY tname",
		"SELECT DP_MEAN('people', 'age', 0.1) ORDER BY 1 LIMIT 1",
	} {
		wantErr(t, ana, q, "exactly once")
	}
	if s := spent(t, ana, "demo.people"); s != 0 {
		t.Fatalf("refused plans charged %v", s)
	}
	// The plain form works, and so does a prepared statement.
	queryFloat(t, ana, "SELECT DP_MEAN('people', 'age', 0.1)")
	stmt, err := ana.Prepare("SELECT DP_MEAN(?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	var v float64
	if err := stmt.QueryRow("people", "age", 0.1).Scan(&v); err != nil {
		t.Fatalf("prepared DP_MEAN: %v", err)
	}
	if s := spent(t, ana, "demo.people"); math.Abs(s-0.2) > 1e-9 {
		t.Fatalf("spent = %v, want 0.2", s)
	}
}

func TestBadInputChargesNothing(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 20, 10)
	mustExec(t, root, "CREATE TABLE nobounds (id INT PRIMARY KEY, v DOUBLE)")
	mustExec(t, root, "INSERT INTO nobounds VALUES (1, 2)")
	mustExec(t, root, "CALL dp_protect('nobounds', 1, 0)")
	ana := ts.connect("ana", "ana-pw", "demo")
	cases := map[string]string{
		"SELECT DP_MEAN('people', 'age', 0)":                    "epsilon",
		"SELECT DP_MEAN('people', 'age', -1)":                   "epsilon",
		"SELECT DP_MEAN('people', 'age', 'nan')":                "number",
		"SELECT DP_MEAN('people', 'age', 1e308)":                "epsilon",
		"SELECT DP_MEAN('people', 'age', NULL)":                 "null",
		"SELECT DP_MEAN(NULL, 'age', 1)":                        "null",
		"SELECT DP_MEAN('', 'age', 1)":                          "empty",
		"SELECT DP_MEAN('people', '', 1)":                       "empty",
		"SELECT DP_MEAN('nosuch', 'age', 1)":                    "does not exist",
		"SELECT DP_MEAN('people', 'nosuch', 1)":                 "no column",
		"SELECT DP_MEAN('people', 'name', 1)":                   "bounds",
		"SELECT DP_MEAN('nobounds', 'v', 1)":                    "bounds",
		"SELECT DP_MEAN('towns', 'id', 1)":                      "not protected",
		"SELECT DP_MEAN('people; DROP TABLE people', 'age', 1)": "invalid table name",
		"SELECT DP_MEAN(1, 'age', 1)":                           "string",
		"SELECT DP_MEAN('people', 'age')":                       "arguments",
		"SELECT DP_MEAN('people', 'age', 1, '', 2)":             "arguments",
		"CALL dp_protect('people', 1, 0)":                       "only data owners",
		"CALL dp_bounds('people', 'age', 0, 1000)":              "only data owners",
		"CALL dp_labels('people', 'town', '0,1,2')":             "only data owners",
		"CALL dp_owner_add('ana')":                              "only root",
		"SELECT DP_SVM_TRAIN('people', 1, 'nokernel')":          "",
		"SELECT DP_PREDICT('nomodel', 1)":                       "does not exist",
		"SELECT DP_MODEL_JSON('nomodel')":                       "does not exist",
		"SELECT DP_EVALUATE('nomodel', 'people', 1)":            "does not exist",
	}
	for q, frag := range cases {
		if frag == "" {
			wantErr(t, ana, q)
			continue
		}
		wantErr(t, ana, q, frag)
	}
	ownerCases := map[string]string{
		"CALL dp_protect('people', 0, 0)":              "epsilon",
		"CALL dp_protect('people', 1, 1)":              "delta",
		"CALL dp_protect('people', 1, -0.1)":           "delta",
		"CALL dp_protect('nosuch', 1, 0)":              "does not exist",
		"CALL dp_protect('', 1, 0)":                    "empty",
		"CALL dp_protect('people', 1, 0, 'fancy')":     "accounting mode",
		"CALL dp_bounds('people', 'age', 5, 1)":        "lower < upper",
		"CALL dp_bounds('people', 'name', 0, 1)":       "not numeric",
		"CALL dp_bounds('people', 'nosuch', 0, 1)":     "no column",
		"CALL dp_bounds('people', 'age', 30, 40)":      "outside",
		"CALL dp_labels('people', 'town', '')":         "empty",
		"CALL dp_labels('people', 'town', '0,0')":      "twice",
		"CALL dp_labels('people', 'town', '0,1')":      "outside the declared domain",
		"INSERT INTO people VALUES (999, 'x', 101, 0)": "outside its declared bounds",
		"UPDATE people SET age = -5 WHERE id = 1":      "outside its declared bounds",
	}
	for q, frag := range ownerCases {
		if frag == "" {
			wantErr(t, root, q)
			continue
		}
		wantErr(t, root, q, frag)
	}
	if n := queryFloat(t, root, "SELECT COUNT(*) FROM people"); n != 20 {
		t.Fatalf("bad input changed the table: %v rows", n)
	}
	if s := spent(t, ana, "demo.people"); s != 0 {
		t.Fatalf("bad input charged %v", s)
	}
	if s := spent(t, ana, "demo.nobounds"); s != 0 {
		t.Fatalf("bad input charged %v on nobounds", s)
	}
}

func TestConcurrentReleasesNeverOverspend(t *testing.T) {
	ts := startServer(t, t.TempDir())
	setupProtected(t, ts, 100, 10)
	ana := ts.connect("ana", "ana-pw", "demo")
	ana.SetMaxOpenConns(64)
	ana.SetMaxIdleConns(64)
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for c := 0; c < 64; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := ana.Conn(t.Context())
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			for i := 0; i < 50; i++ {
				var v float64
				err := conn.QueryRowContext(t.Context(), "SELECT DP_MEAN('people', 'age', 0.01)").Scan(&v)
				switch {
				case err == nil:
					ok.Add(1)
				case strings.Contains(err.Error(), "privacy budget exceeded"):
					refused.Add(1)
				default:
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("unexpected error: %v", err)
	}
	if ok.Load() != 1000 || refused.Load() != 2200 {
		t.Fatalf("ok = %d, refused = %d; want 1000 and 2200", ok.Load(), refused.Load())
	}
	if s := spent(t, ana, "demo.people"); math.Abs(s-10) > 1e-9 {
		t.Fatalf("spent = %v, want 10", s)
	}
}

var _ = fmt.Sprint
var _ = os.Getenv
var _ = filepath.Join
