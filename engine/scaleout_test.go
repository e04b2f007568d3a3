package engine_test

import (
	"bufio"
	"database/sql"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dpsql/dpsql/engine"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/mechanism/linreg"
)

// Scale-out (issue 14): tests against a MariaDB Spider cluster started once
// per test binary by testdata/spider/up.sh (a head and 2 shards on loopback
// ports). They are skipped, with a message, only where mariadbd is not
// installed; CI installs it (.ci/run).

var spider struct {
	once   sync.Once
	dir    string
	head   string   // 127.0.0.1:port of the head node
	shards []string // the shards' addresses
	err    error
}

const spiderShards = 2

func needSpider(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("mariadbd"); err != nil {
		if os.Getenv("DPSQL_REQUIRE_MARIADB") != "" { // .ci/run installed it: a skip would hide the gap
			t.Fatal("mariadbd is not installed but DPSQL_REQUIRE_MARIADB is set")
		}
		t.Skip("mariadbd is not installed: apt-get install -y mariadb-server mariadb-plugin-spider to run the MariaDB/Spider backend tests")
	}
	spider.once.Do(func() {
		dir, err := os.MkdirTemp("", "dpsql-spider-")
		if err != nil {
			spider.err = err
			return
		}
		spider.dir = dir
		out, err := exec.Command("bash", "../testdata/spider/up.sh", dir, strconv.Itoa(spiderShards)).CombinedOutput()
		if err != nil {
			spider.err = fmt.Errorf("up.sh: %v\n%s", err, out)
			return
		}
		f, err := os.Open(filepath.Join(dir, "env"))
		if err != nil {
			spider.err = err
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), "=")
			v = strings.Trim(v, `"'`)
			switch k {
			case "HEAD_PORT":
				spider.head = "127.0.0.1:" + v
			case "SHARD_PORTS":
				for _, p := range strings.Fields(v) {
					spider.shards = append(spider.shards, "127.0.0.1:"+p)
				}
			}
		}
	})
	if spider.err != nil {
		t.Fatalf("start the Spider cluster: %v", spider.err)
	}
}

// stopSpider tears the cluster down (TestMain).
func stopSpider() {
	if spider.dir != "" {
		_ = exec.Command("bash", "../testdata/spider/down.sh", spider.dir).Run()
	}
}

func spiderDSN() string { return "dpsql:dpsql@tcp(" + spider.head + ")/" }

func headConn(t testing.TB) *sql.DB { return connectAddr(t, spider.head, "dpsql", "dpsql", "") }
func shardConn(t testing.TB, i int) *sql.DB {
	return connectAddr(t, spider.shards[i], "spider", "spider", "")
}

// createSharded creates db.name (cols, primary key id) on every shard and
// the Spider table over them on the head, hash-partitioned on id.
func createSharded(t testing.TB, db, name, cols string) {
	t.Helper()
	var parts []string
	for i := range spider.shards {
		s := shardConn(t, i)
		mustExec(t, s, "CREATE DATABASE IF NOT EXISTS "+db)
		mustExec(t, s, fmt.Sprintf("CREATE TABLE %s.%s (%s) ENGINE=InnoDB", db, name, cols))
		parts = append(parts, fmt.Sprintf(`PARTITION p%d COMMENT = 'srv "s%d"'`, i+1, i+1))
	}
	h := headConn(t)
	mustExec(t, h, "CREATE DATABASE IF NOT EXISTS "+db)
	mustExec(t, h, fmt.Sprintf(`CREATE TABLE %s.%s (%s) ENGINE=SPIDER COMMENT='wrapper "mysql", database "%s", table "%s"' PARTITION BY HASH (id) (%s)`,
		db, name, cols, db, name, strings.Join(parts, ", ")))
}

// createShardedVia is createSharded with the last shard reached through a
// server definition of its own, named via (to be broken by the test).
func createShardedVia(t testing.TB, db, name, cols, via string) {
	t.Helper()
	var parts []string
	h := headConn(t)
	last := len(spider.shards) - 1
	_, lastPort, _ := strings.Cut(spider.shards[last], ":")
	mustExec(t, h, fmt.Sprintf("CREATE SERVER IF NOT EXISTS %s FOREIGN DATA WRAPPER mysql OPTIONS (HOST '127.0.0.1', DATABASE '%s', USER 'spider', PASSWORD 'spider', PORT %s)", via, db, lastPort))
	for i := range spider.shards {
		s := shardConn(t, i)
		mustExec(t, s, "CREATE DATABASE IF NOT EXISTS "+db)
		mustExec(t, s, fmt.Sprintf("CREATE TABLE %s.%s (%s) ENGINE=InnoDB", db, name, cols))
		srv := fmt.Sprintf("s%d", i+1)
		if i == last {
			srv = via
		}
		parts = append(parts, fmt.Sprintf(`PARTITION p%d COMMENT = 'srv "%s"'`, i+1, srv))
	}
	mustExec(t, h, "CREATE DATABASE IF NOT EXISTS "+db)
	mustExec(t, h, fmt.Sprintf(`CREATE TABLE %s.%s (%s) ENGINE=SPIDER COMMENT='wrapper "mysql", database "%s", table "%s"' PARTITION BY HASH (id) (%s)`,
		db, name, cols, db, name, strings.Join(parts, ", ")))
}

// createSingle creates db.name as an InnoDB table on the head: a single
// MariaDB server.
func createSingle(t testing.TB, db, name, cols string) {
	t.Helper()
	h := headConn(t)
	mustExec(t, h, "CREATE DATABASE IF NOT EXISTS "+db)
	mustExec(t, h, fmt.Sprintf("CREATE TABLE %s.%s (%s) ENGINE=InnoDB", db, name, cols))
}

func startBackendServer(t testing.TB, dir string) *testServer {
	return startBackendServerWith(t, dir, nil)
}

// startBackendServerWith calls prepare on the engine before it serves.
func startBackendServerWith(t testing.TB, dir string, prepare func(*engine.Engine)) *testServer {
	t.Helper()
	e, err := engine.Open(engine.Options{DataDir: dir, RootPassword: rootPW, Log: quietLog(), BackendDSN: spiderDSN()})
	if err != nil {
		t.Fatalf("open engine with the MariaDB backend: %v", err)
	}
	if prepare != nil {
		prepare(e)
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

// insertRows inserts rows (already rendered as SQL tuples) in batches.
func insertRows(t testing.TB, db *sql.DB, table string, rows []string) {
	t.Helper()
	for i := 0; i < len(rows); i += 500 {
		mustExec(t, db, "INSERT INTO "+table+" VALUES "+strings.Join(rows[i:min(i+500, len(rows))], ","))
	}
}

func sqlNum(v float64) string {
	if math.IsNaN(v) {
		return "NULL"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// pointRows returns n rows (id, x1, x2, x3, y). On the dyadic grid every
// per-row term and every partial sum is exact in float64, so any order
// of summation gives the same double; the rows include NULLs and values
// outside the declared bounds (clipped).
func pointRows(n int, dyadic bool) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		g := func(a, b int) float64 { // pseudo-random in [−1.5, 1.5]
			k := (i*a + b) % 97
			if dyadic {
				return float64(k-48) / 32
			}
			return float64(k-48)/32 + float64((i*7+a)%13)/1e3/3
		}
		x1, x2, x3, y := g(31, 7), 2+2*g(17, 3), 2*g(23, 11), g(41, 5)
		switch i % 11 {
		case 3:
			x1 = math.NaN()
		case 5:
			y = math.NaN()
		case 7:
			x2 = math.NaN()
		}
		out[i] = []float64{float64(i), x1, x2, x3, y}
	}
	return out
}

func renderRows(rows [][]float64) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		parts := make([]string, len(r))
		for j, v := range r {
			parts[j] = sqlNum(v)
		}
		out[i] = "(" + strings.Join(parts, ",") + ")"
	}
	return out
}

const pointCols = "id BIGINT NOT NULL PRIMARY KEY, x1 DOUBLE, x2 DOUBLE, x3 DOUBLE, y DOUBLE"

var pointCfg = linreg.Config{Epsilon: 1, Delta: 1e-6, Features: []string{"x1", "x2", "x3"},
	Lo: []float64{-1, 0, -2}, Hi: []float64{1, 4, 2}, Label: "y", LabelLo: -1, LabelHi: 1,
	Bounds: linreg.BoundsPublic} // [reg] the pushed-down public map

// inBounds clips the rows to pointCfg's bounds (dp_bounds refuses a table
// with values outside them); NULLs stay.
func inBounds(rows [][]float64) [][]float64 {
	for _, r := range rows {
		for j := range pointCfg.Features {
			if !math.IsNaN(r[1+j]) {
				r[1+j] = min(max(r[1+j], pointCfg.Lo[j]), pointCfg.Hi[j])
			}
		}
		if !math.IsNaN(r[4]) {
			r[4] = min(max(r[4], pointCfg.LabelLo), pointCfg.LabelHi)
		}
	}
	return rows
}

// adversarialRows are pointRows(n, false) with extreme values every few
// rows: the largest doubles, values far outside the bounds (they must
// clip, and x·mul + add must not overflow in MariaDB), the bounds and
// their neighbours, −0, subnormals (products underflow), NULLs.
func adversarialRows(n int) [][]float64 {
	rows := pointRows(n, false)
	ext := []float64{math.MaxFloat64, -math.MaxFloat64, 1e308, -1e300, 1, -1, math.Nextafter(1, 2), math.Nextafter(-1, -2),
		0, math.Copysign(0, -1), 1e-300, -5e-324, math.NaN(), 1000, 1001, math.Nextafter(1001, 2000), 999.9999999999999, 1e6, 3e6, -1e6}
	for i := 0; i < n; i += 3 {
		r := rows[i]
		for j := 1; j < len(r); j++ {
			r[j] = ext[(i/3*7+j*5)%len(ext)]
		}
	}
	return rows
}

// adversarialCfg puts each feature on another SQL path: x1 [−1, 1] (no
// arithmetic), x2 [0, 1] (mul = 2: the overflow guard), x3 [1000, 1001]
// (far from zero), and the label on the general map.
var adversarialCfg = linreg.Config{Epsilon: 1, Delta: 1e-6, Features: []string{"x1", "x2", "x3"},
	Lo: []float64{-1, 0, 1000}, Hi: []float64{1, 1, 1001}, Label: "y", LabelLo: -1e6, LabelHi: 3e6}

// absTerms returns Σ|z_j z_k| (F×F) and Σ|z_j y′| over the rows, the
// per-row values computed as the embedded path does (Prepared.Transform,
// linreg's label map): the scale of the rounding bound of each entry.
func absTerms(m functions.LinearMap, X [][]float64, y []float64) (absA, absC []float64) {
	d := len(m.Features)
	f := d
	if m.Intercept {
		f++
	}
	absA, absC = make([]float64, f*f), make([]float64, f)
	z := make([]float64, f)
	for i, r := range X {
		for j, v := range r {
			u := v*m.Mul[j] + m.Add[j]
			switch {
			case u != u:
				u = 0
			case u < -1:
				u = -1
			case u > 1:
				u = 1
			}
			z[j] = u * m.Inv
		}
		if m.Intercept {
			z[d] = m.Inv
		}
		yv := y[i]
		if yv != yv {
			yv = m.LabelNull
		}
		yu := min(max((min(max(yv, m.LabelLo), m.LabelHi)-m.Mid)/m.Half, -1), 1)
		for j := 0; j < f; j++ {
			for k := 0; k < f; k++ {
				absA[j*f+k] += math.Abs(z[j] * z[k])
			}
			absC[j] += math.Abs(z[j] * yu)
		}
	}
	return absA, absC
}

// TestScaleOutExactStatistics checks the noise-free statistics of DP_TRAIN
// linreg and DP_MEAN on the embedded store, a single MariaDB and the Spider
// cluster. The exact (DECIMAL) statement: bit for bit on dyadic data (where
// the embedded path's float sums are exact), and between MariaDB and Spider
// on any data. The fast (DOUBLE) statement that releases use: within the
// proven any-order bound of the embedded sums on general and adversarial
// data (2·linreg.AnyOrderSumBound: each side errs by at most one bound),
// and bit for bit on dyadic data.
func TestScaleOutExactStatistics(t *testing.T) {
	needSpider(t)
	const n = 3000
	for _, set := range []string{"dy", "gen", "adv"} {
		var rows [][]float64
		cfg := pointCfg
		switch set {
		case "dy":
			rows = pointRows(n, true)
		case "gen":
			rows = pointRows(n, false)
		default:
			rows, cfg = adversarialRows(n), adversarialCfg
		}
		dyadic := set == "dy"
		suffix := set
		createSingle(t, "single_"+suffix, "pts", pointCols)
		createSharded(t, "sharded_"+suffix, "pts", pointCols)
		insertRows(t, headConn(t), "single_"+suffix+".pts", renderRows(rows))
		insertRows(t, headConn(t), "sharded_"+suffix+".pts", renderRows(rows))

		ts := startBackendServer(t, t.TempDir())
		root := ts.connect("root", rootPW, "")
		mustExec(t, root, "CREATE DATABASE emb")
		mustExec(t, root, "CREATE TABLE emb.pts ("+pointCols+")")
		insertRows(t, root, "emb.pts", renderRows(rows))
		mustExec(t, root, fmt.Sprintf("CALL dp_attach('single_%s.pts')", suffix))
		mustExec(t, root, fmt.Sprintf("CALL dp_attach('sharded_%s.pts')", suffix))

		// Shards really hold parts of the table.
		for i := range spider.shards {
			var k int
			if err := shardConn(t, i).QueryRow("SELECT COUNT(*) FROM sharded_" + suffix + ".pts").Scan(&k); err != nil {
				t.Fatal(err)
			}
			if k == 0 || k == n {
				t.Fatalf("shard %d holds %d of %d rows", i, k, n)
			}
		}

		cfg.N = n
		tr, err := linreg.Plan(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// Embedded reference: the rows as the embedded store returns them.
		var X [][]float64
		var y []float64
		if _, err := ts.e.Store.ScanFloats("emb", "pts", []string{"x1", "x2", "x3", "y"}, func(r []float64) error {
			X = append(X, append([]float64(nil), r[:3]...))
			y = append(y, r[3])
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		aE, cE, err := tr.ExactStats(X, y)
		if err != nil {
			t.Fatal(err)
		}
		mul, add, inv, icept, lnull, mid, half := tr.Map()
		m := functions.LinearMap{Features: cfg.Features, Mul: mul, Add: add, Inv: inv, Intercept: icept,
			Label: "y", LabelLo: cfg.LabelLo, LabelHi: cfg.LabelHi, Mid: mid, Half: half, LabelNull: lnull}
		absA, absC := absTerms(m, X, y)
		type stats struct {
			name string
			a, c []float64
		}
		var got []stats
		for _, src := range []struct {
			name, db string
			exact    bool
			one      bool
		}{{"exact single MariaDB", "single_", true, false}, {"exact Spider", "sharded_", true, false},
			{"fast single MariaDB (in-box split)", "single_", false, false}, {"fast Spider (in-box split)", "sharded_", false, false},
			{"fast single MariaDB (one statement)", "single_", false, true}, {"fast Spider (one statement)", "sharded_", false, true}} {
			var a, c []float64
			var nB int64
			var ok bool
			switch {
			case src.exact:
				a, c, nB, ok, err = ts.e.Backend.LinearStatsExact(src.db+suffix, "pts", m)
			case src.one:
				a, c, nB, ok, err = ts.e.Backend.LinearStatsOneStatement(src.db+suffix, "pts", m)
			default:
				a, c, nB, ok, err = ts.e.Backend.LinearStats(src.db+suffix, "pts", m)
			}
			if err != nil || !ok || nB != n {
				t.Fatalf("%s %s: ok=%v n=%d err=%v", set, src.name, ok, nB, err)
			}
			got = append(got, stats{src.name, a, c})
		}
		// Exact statements: single MariaDB = Spider bit for bit, any data.
		for i := range aE {
			if got[0].a[i] != got[1].a[i] {
				t.Fatalf("%s: XᵀX[%d]: exact single MariaDB %v ≠ Spider %v", set, i, got[0].a[i], got[1].a[i])
			}
		}
		for i := range cE {
			if got[0].c[i] != got[1].c[i] {
				t.Fatalf("%s: Xᵀy[%d]: exact single MariaDB %v ≠ Spider %v", set, i, got[0].c[i], got[1].c[i])
			}
		}
		var worst, worstRatio float64
		for _, g := range got {
			for i := range aE {
				diff := math.Abs(aE[i] - g.a[i])
				bound := 2 * linreg.AnyOrderSumBound(n, absA[i])
				if dyadic && diff != 0 || diff > bound {
					t.Fatalf("%s: XᵀX[%d]: embedded %v, %s %v: |Δ| = %v, bound %v (dyadic: 0)", set, i, aE[i], g.name, g.a[i], diff, bound)
				}
				worst = max(worst, diff)
				if bound > 0 {
					worstRatio = max(worstRatio, diff/bound)
				}
			}
			for i := range cE {
				diff := math.Abs(cE[i] - g.c[i])
				bound := 2 * linreg.AnyOrderSumBound(n, absC[i])
				if dyadic && diff != 0 || diff > bound {
					t.Fatalf("%s: Xᵀy[%d]: embedded %v, %s %v: |Δ| = %v, bound %v (dyadic: 0)", set, i, cE[i], g.name, g.c[i], diff, bound)
				}
				worst = max(worst, diff)
				if bound > 0 {
					worstRatio = max(worstRatio, diff/bound)
				}
			}
		}
		inside := splitRows(t, ts, "single_"+suffix, m, true)
		t.Logf("%s: n=%d (%d inside the box), %d+%d statistics; max |embedded − backend| = %v (%.3g of the proven bound); exact single MariaDB = Spider bit for bit",
			set, n, inside, len(aE), len(cE), worst, worstRatio)

		// DP_MEAN's shifted sum, with NULLs and clipping.
		var want float64
		for _, r := range X {
			v := r[1] // x2, bounds [0, 4]
			if math.IsNaN(v) {
				v = 2
			}
			want += min(max(v, 0), 4) - 0
		}
		sS, nS2, ok, err := ts.e.Backend.ShiftedSum("single_"+suffix, "pts", "x2", 0, 4, true)
		if err != nil || !ok || nS2 != n {
			t.Fatalf("mean single: %v %v %v", ok, nS2, err)
		}
		sP, _, _, err := ts.e.Backend.ShiftedSum("sharded_"+suffix, "pts", "x2", 0, 4, true)
		if err != nil || sS != sP {
			t.Fatalf("mean: single %v ≠ Spider %v (%v)", sS, sP, err)
		}
		if dyadic && sS != want {
			t.Fatalf("mean: MariaDB %v ≠ embedded-order sum %v", sS, want)
		}
		// The DOUBLE form (DP_LSQ's centring at large n): within the
		// any-order bound of the exact sum, single and Spider, with the
		// same n; equal on dyadic data.
		for _, where := range []string{"single_", "sharded_"} {
			sF, nF, ok, err := ts.e.Backend.ShiftedSum(where+suffix, "pts", "x2", 0, 4, false)
			if err != nil || !ok || nF != n {
				t.Fatalf("fast mean %s: %v %v %v", where, ok, nF, err)
			}
			bound := float64(n+8) * 0x1p-53 * 4 * float64(n) * 2
			if math.Abs(sF-sS) > bound || dyadic && sF != sS {
				t.Fatalf("fast mean %s: %v against exact %v (bound %v)", where, sF, sS, bound)
			}
		}
		ts.stop()
	}
}

// splitRows runs the in-box part of the fast statistics directly and
// returns its row count, checking that the parts add up to n and, with
// both, that each holds rows (so the equalities cover both statements).
func splitRows(t *testing.T, ts *testServer, db string, m functions.LinearMap, both bool) int64 {
	t.Helper()
	qs, ok := ts.e.Backend.LinearStatsQuery(db, "pts", m, false)
	if !ok || len(qs) != 2 {
		t.Fatalf("%s: %d statements, want the in-box split", db, len(qs))
	}
	var in, out int64
	for i, p := range []*int64{&in, &out} {
		rows, err := headConn(t).Query(qs[i])
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var k int64
		rest := []any{&k}
		for range cols[1:] {
			rest = append(rest, new(any))
		}
		for rows.Next() { // the outside part: one row per group
			if err := rows.Scan(rest...); err != nil {
				t.Fatal(err)
			}
			*p += k
		}
		rows.Close()
	}
	var n int64
	if err := headConn(t).QueryRow("SELECT COUNT(*) FROM " + db + ".pts").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if in+out != n || both && (in == 0 || out == 0) {
		t.Fatalf("%s: %d rows inside the box, %d outside, of %d", db, in, out, n)
	}
	return in
}

// backendLeak matches what an analyst must never see of the backend: its
// account, its address.
func backendLeak(err error) bool {
	s := err.Error()
	if strings.Contains(s, "dpsql:dpsql") || strings.Contains(s, "spider") || strings.Contains(s, "127.0.0.1") || strings.Contains(s, "foreign data source") || strings.Contains(s, "s2down") || strings.Contains(s, "Error 14") {
		return true
	}
	for _, a := range append([]string{spider.head}, spider.shards...) {
		_, port, _ := strings.Cut(a, ":")
		if strings.Contains(s, port) {
			return true
		}
	}
	return false
}

// TestScaleOutReleases runs DP functions on a protected table attached
// from the Spider cluster, as an analyst.
func TestScaleOutReleases(t *testing.T) {
	needSpider(t)
	const n = 3000
	createSharded(t, "rel", "pts", pointCols)
	insertRows(t, headConn(t), "rel.pts", renderRows(inBounds(pointRows(n, false))))
	createSingle(t, "rel", "pub", "id INT PRIMARY KEY, label VARCHAR(16), v DOUBLE")
	mustExec(t, headConn(t), "INSERT INTO rel.pub VALUES (1, 'one', 1.5), (2, 'two', NULL)")

	ts := startBackendServer(t, t.TempDir())
	root := ts.connect("root", rootPW, "")
	mustExec(t, root, "CREATE USER ana IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "CREATE DATABASE rel")
	mustExec(t, root, "GRANT SELECT, EXECUTE ON rel.* TO ana")
	ana := ts.connect("ana", "ana-pw", "rel")
	if err := wantErr(t, ana, "CALL dp_attach('rel.pts')", "only data owners"); backendLeak(err) {
		t.Fatalf("leak: %v", err)
	}
	if err := wantErr(t, root, "CALL dp_attach('rel.nosuch')", "no such table"); backendLeak(err) {
		t.Fatalf("leak: %v", err)
	}
	mustExec(t, root, "CALL dp_attach('rel.pts')")
	mustExec(t, root, "CALL dp_attach('rel.pub')")
	for i, c := range pointCfg.Features {
		mustExec(t, root, fmt.Sprintf("CALL dp_bounds('rel.pts', '%s', %v, %v)", c, pointCfg.Lo[i], pointCfg.Hi[i]))
	}
	mustExec(t, root, "CALL dp_bounds('rel.pts', 'y', -1, 1)")
	mustExec(t, root, "CALL dp_protect('rel.pts', 10, 1e-5)")

	// Owners read with SQL; analysts only through DP functions.
	if got := queryFloat(t, root, "SELECT COUNT(*) FROM rel.pts"); got != n {
		t.Fatalf("owner's COUNT(*) = %v, want %d", got, n)
	}
	for _, q := range []string{"SELECT * FROM pts", "SELECT AVG(x1) FROM pts", "SELECT COUNT(*) FROM pts WHERE x1 > 0", "INSERT INTO pts VALUES (99999, 0, 0, 0, 0)", "DELETE FROM pts"} {
		if err := queryErr(ana, q); err == nil || backendLeak(err) {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if got := queryFloat(t, ana, "SELECT v FROM pub WHERE id = 1"); got != 1.5 {
		t.Fatalf("unprotected attached table: v = %v", got)
	}
	var tbl, ddl string
	if err := ana.QueryRow("SHOW CREATE TABLE pts").Scan(&tbl, &ddl); err != nil || !strings.Contains(ddl, "x1") {
		t.Fatalf("SHOW CREATE TABLE: %v %q", err, ddl)
	}

	// Pushed-down releases: a few kilobytes cross the wire, not the rows.
	before := ts.e.Backend.BytesMoved()
	mean := queryFloat(t, ana, "SELECT DP_MEAN('pts', 'x2', 0.5)")
	if !(mean >= 0 && mean <= 4) {
		t.Fatalf("DP_MEAN = %v", mean)
	}
	var model string
	if err := ana.QueryRow("SELECT DP_TRAIN('pts', 1, 'linreg', 'label=y; model=m_lin')").Scan(&model); err != nil {
		t.Fatal(err)
	}
	moved := ts.e.Backend.BytesMoved() - before
	if moved > 64<<10 {
		t.Fatalf("pushed-down DP_MEAN + DP_TRAIN moved %d bytes", moved)
	}
	// DP_LSQ (linear kernel) is pushed down too, for every method: the
	// default call (centred: the label mean, then the statistics of the
	// shifted labels), output with Laplace, objective and input.
	before = ts.e.Backend.BytesMoved()
	for i, opts := range []string{"label=y", "label=y; method=output; delta=0", "label=y; method=objective", "label=y; method=input"} {
		if err := ana.QueryRow(fmt.Sprintf("SELECT DP_LSQ('pts', 0.5, 'linear', '%s; model=m_lsq%d')", opts, i)).Scan(&model); err != nil {
			t.Fatalf("DP_LSQ %s: %v", opts, err)
		}
		if got := queryFloat(t, root, fmt.Sprintf("SELECT n FROM dpsql.dp_models WHERE name = 'm_lsq%d'", i)); got != n {
			t.Fatalf("DP_LSQ %s: model n = %v", opts, got)
		}
	}
	lsqMoved := ts.e.Backend.BytesMoved() - before
	if lsqMoved > 4*(64<<10) {
		t.Fatalf("pushed-down DP_LSQ (4 releases) moved %d bytes", lsqMoved)
	}
	// A streamed release (the rbf kernel's random features need the rows).
	before = ts.e.Backend.BytesMoved()
	if err := ana.QueryRow("SELECT DP_LSQ('pts', 0.5, 'rbf', 'label=y; dim=8; model=m_rbf')").Scan(&model); err != nil {
		t.Fatal(err)
	}
	streamed := ts.e.Backend.BytesMoved() - before
	if streamed < int64(n)*8*4 {
		t.Fatalf("DP_LSQ rbf moved only %d bytes for %d rows", streamed, n)
	}
	t.Logf("bytes on the wire: DP_MEAN + DP_TRAIN linreg (pushed down) %d, 4 × DP_LSQ linear (pushed down) %d, DP_LSQ rbf (streamed) %d", moved, lsqMoved, streamed)
	if got := queryFloat(t, root, "SELECT n FROM dpsql.dp_models WHERE name = 'm_lin'"); got != n {
		t.Fatalf("model n = %v", got)
	}
	if got := spent(t, ts.connect("root", rootPW, "rel"), "rel.pts"); math.Abs(got-4) > 1e-9 {
		t.Fatalf("spent %v, want 4", got)
	}
}

// TestScaleOutShardDown: a release on a Spider table one of whose shards is
// down is charged, fails with a clear error that names neither the backend
// nor its account, and the ledger records the failure.
func TestScaleOutShardDown(t *testing.T) {
	needSpider(t)
	// Partition p2 lives on shard 2 through server "s2down", which is
	// pointed at a dead port once the table is protected.
	createShardedVia(t, "down", "pts", pointCols, "s2down")
	insertRows(t, headConn(t), "down.pts", renderRows(inBounds(pointRows(100, true))))
	var down *downAfterCount
	ts := startBackendServerWith(t, t.TempDir(), func(e *engine.Engine) {
		down = &downAfterCount{Rows: e.Env.Store}
		e.Env.Store = down
	})
	root := ts.connect("root", rootPW, "")
	mustExec(t, root, "CREATE USER ana IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "CALL dp_attach('down.pts')")
	mustExec(t, root, "GRANT SELECT, EXECUTE ON down.* TO ana")
	mustExec(t, root, "CALL dp_bounds('down.pts', 'x2', 0, 4)")
	mustExec(t, root, "CALL dp_bounds('down.pts', 'x1', -1, 1)")
	mustExec(t, root, "CALL dp_bounds('down.pts', 'y', -1, 1)")
	mustExec(t, root, "CALL dp_protect('down.pts', 10, 1e-5)")
	ana := ts.connect("ana", "ana-pw", "down")
	h := headConn(t)
	mustExec(t, h, fmt.Sprintf("ALTER SERVER s2down OPTIONS (PORT %d)", freePort(t)))
	mustExec(t, h, "FLUSH TABLES")
	// The row count is read before charging: a shard down then is refused
	// with nothing charged.
	err := wantErr(t, ana, "SELECT DP_MEAN('pts', 'x2', 0.5)")
	if backendLeak(err) {
		t.Fatalf("error leaks the backend: %v", err)
	}
	if got := spent(t, ts.connect("root", rootPW, "down"), "down.pts"); got != 0 {
		t.Fatalf("a release refused before reading was charged %v", got)
	}
	t.Logf("shard down before the release: %v", err)

	// Down between planning and reading: the charge stays, the analyst
	// gets the backend error, the ledger says failed.
	down.fake.Store(true)
	err = wantErr(t, ana, "SELECT DP_MEAN('pts', 'x2', 0.5)", "storage backend failed", "charge is kept")
	if backendLeak(err) {
		t.Fatalf("error leaks the backend: %v", err)
	}
	err = wantErr(t, ana, "SELECT DP_TRAIN('pts', 1, 'linreg', 'label=y; features=x1,x2')", "storage backend failed")
	if backendLeak(err) {
		t.Fatalf("error leaks the backend: %v", err)
	}
	if got := spent(t, ts.connect("root", rootPW, "down"), "down.pts"); math.Abs(got-1.5) > 1e-9 {
		t.Fatalf("spent %v after two failed releases, want 1.5 (the charges stay)", got)
	}
	if got := queryFloat(t, root, "SELECT COUNT(*) FROM dpsql.dp_ledger WHERE table_name = 'down.pts' AND status = 'failed'"); got != 2 {
		t.Fatalf("ledger has %v failed releases, want 2", got)
	}
}

// downAfterCount, once fake is set, answers the row count from a fixed
// public value (as if the shard failed after planning): the release is
// planned and charged, then its aggregate reaches the dead shard.
type downAfterCount struct {
	functions.Rows
	fake atomic.Bool
}

func (d *downAfterCount) RowCount(db, table string) (int64, error) {
	if d.fake.Load() {
		return 100, nil
	}
	return d.Rows.RowCount(db, table)
}

func (d *downAfterCount) ShiftedSum(db, table, col string, lo, hi float64, exact bool) (float64, int64, bool, error) {
	return d.Rows.(functions.Pushdown).ShiftedSum(db, table, col, lo, hi, exact)
}

func (d *downAfterCount) Pushes(db, table string) bool {
	return d.Rows.(functions.Pushdown).Pushes(db, table)
}

func (d *downAfterCount) LinearStats(db, table string, m functions.LinearMap, exact bool) ([]float64, []float64, int64, bool, error) {
	return d.Rows.(functions.Pushdown).LinearStats(db, table, m, exact)
}

// freePort returns a loopback port with nothing listening.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return p
}

// TestScaleOutBypassSuite runs the analyst bypass suite unchanged with
// demo.people on the Spider cluster (attached) instead of the embedded
// store.
func TestScaleOutBypassSuite(t *testing.T) {
	needSpider(t)
	createSharded(t, "demo", "people", "id INT NOT NULL PRIMARY KEY, name VARCHAR(64), age DOUBLE, town INT")
	var rows []string
	for i := 0; i < 50; i++ {
		rows = append(rows, fmt.Sprintf("(%d, 'person%d', %d, %d)", i, i, 20+i%50, i%3))
	}
	insertRows(t, headConn(t), "demo.people", rows)
	ts := startBackendServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE demo")
	root := ts.connect("root", rootPW, "demo")
	mustExec(t, root, "CALL dp_attach('demo.people')")
	mustExec(t, root, "CREATE TABLE demo.towns (id INT PRIMARY KEY, tname VARCHAR(64))")
	mustExec(t, root, "INSERT INTO demo.towns VALUES (0,'a'),(1,'b'),(2,'c')")
	mustExec(t, root, "CALL dp_bounds('people', 'age', 0, 100)")
	mustExec(t, root, "CALL dp_protect('people', 10, 0)")
	mustExec(t, root, "CREATE USER IF NOT EXISTS 'ana'@'%' IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, CREATE VIEW, DROP, ALTER, EXECUTE, TRIGGER ON demo.* TO 'ana'@'%'")
	runBypassSuite(t, ts, root)
}

func (d *downAfterCount) CountOutside(db, table, col string, lo, hi float64) (int64, bool, error) {
	return d.Rows.(functions.Pushdown).CountOutside(db, table, col, lo, hi)
}

// TestScaleOutSplitMinRow: Spider's head re-checks a pushed-down
// aggregate's WHERE on the row of each shard's column-wise minima and drops
// the shard when it fails (mysqlstore fastStats.parts). Rows outside the
// box whose minima lie inside it — (2, 0, 0) and (0, 2, 0) and NULLs, on
// every shard — made an ungrouped outside part return nothing. The split
// must give the one-statement sums bit for bit (dyadic values) and all n.
func TestScaleOutSplitMinRow(t *testing.T) {
	needSpider(t)
	var rows [][]float64
	for i := 0; i < 40; i++ {
		switch i % 5 {
		case 0:
			rows = append(rows, []float64{float64(i), 2, 0, 0, 0.5})
		case 1:
			rows = append(rows, []float64{float64(i), 0, 2, 0, -0.5})
		case 2:
			rows = append(rows, []float64{float64(i), math.NaN(), 0.25, 0, 0.5})
		case 3:
			rows = append(rows, []float64{float64(i), 0.5, 0.25, 0, math.NaN()})
		default:
			rows = append(rows, []float64{float64(i), 0.5, 0.5, 0.5, 0.5})
		}
	}
	cfg := linreg.Config{Epsilon: 1, Delta: 1e-6, Features: []string{"x1", "x2", "x3"}, Lo: []float64{-1, -1, -1}, Hi: []float64{1, 1, 1},
		Label: "y", LabelLo: -1, LabelHi: 1, Bounds: linreg.BoundsPublic, N: len(rows)}
	tr, err := linreg.Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mul, add, inv, icept, lnull, mid, half := tr.Map()
	m := functions.LinearMap{Features: cfg.Features, Mul: mul, Add: add, Inv: inv, Intercept: icept,
		Label: "y", LabelLo: -1, LabelHi: 1, Mid: mid, Half: half, LabelNull: lnull}
	createSingle(t, "minrow_single", "pts", pointCols)
	createSharded(t, "minrow_sharded", "pts", pointCols)
	insertRows(t, headConn(t), "minrow_single.pts", renderRows(rows))
	insertRows(t, headConn(t), "minrow_sharded.pts", renderRows(rows))
	ts := startBackendServer(t, t.TempDir())
	defer ts.stop()
	root := ts.connect("root", rootPW, "")
	for _, db := range []string{"minrow_single", "minrow_sharded"} {
		mustExec(t, root, fmt.Sprintf("CALL dp_attach('%s.pts')", db))
		a1, c1, n1, ok1, err1 := ts.e.Backend.LinearStatsOneStatement(db, "pts", m)
		a2, c2, n2, ok2, err2 := ts.e.Backend.LinearStats(db, "pts", m)
		if err1 != nil || err2 != nil || !ok1 || !ok2 || n1 != int64(len(rows)) || n2 != n1 {
			t.Fatalf("%s: n one statement %d, split %d (%v %v %v %v)", db, n1, n2, ok1, ok2, err1, err2)
		}
		for i := range a1 {
			if a1[i] != a2[i] {
				t.Fatalf("%s: A[%d]: one statement %v, split %v", db, i, a1[i], a2[i])
			}
		}
		for i := range c1 {
			if c1[i] != c2[i] {
				t.Fatalf("%s: c[%d]: one statement %v, split %v", db, i, c1[i], c2[i])
			}
		}
		if in := splitRows(t, ts, db, m, true); in != 8 {
			t.Fatalf("%s: %d rows inside the box, want 8", db, in)
		}
	}
	// The ungrouped outside part really loses rows on this cluster (the
	// reason for the grouping); if Spider is fixed this only logs.
	qs, _ := ts.e.Backend.LinearStatsQuery("minrow_sharded", "pts", m, false)
	where := qs[1][strings.Index(qs[1], " WHERE "):strings.Index(qs[1], " GROUP BY ")]
	var k int64
	if err := headConn(t).QueryRow("SELECT COUNT(*) FROM minrow_sharded.pts" + where).Scan(&k); err != nil {
		t.Fatal(err)
	}
	t.Logf("ungrouped outside part on Spider: %d of 32 rows", k)
}

// The box conditions on the scaled column (mysqlstore boxCond, helper
// shard4): on a single MariaDB and through Spider, the inside part of the
// split holds exactly the rows whose values lie in the intended interval
// [A/c, B/c] read back from the statement — on rows at the centred
// label's box ends and a general feature's ends, their ±3-ulp neighbours,
// ±0, subnormals, huge values and NULLs — and the split's statistics equal
// the one-statement form's (same per-row values, summed in another order).
func TestScaleOutBoxEnds(t *testing.T) {
	needSpider(t)
	const s = -3.633827127302869e-05
	m := functions.LinearMap{Features: []string{"x1", "x2", "x3"}, Mul: []float64{1, 1, 1}, Add: []float64{0, 0, -0.7}, Inv: 0.5,
		Intercept: true, Label: "y", LabelLo: -1, LabelHi: 1, Mid: 0, Half: 1, LabelNull: 0, LabelShift: s}
	near := func(vs ...float64) []float64 {
		var out []float64
		for _, v := range vs {
			for i := -3; i <= 3; i++ {
				w := v
				for k := 0; k < i; k++ {
					w = math.Nextafter(w, math.Inf(1))
				}
				for k := 0; k > i; k-- {
					w = math.Nextafter(w, math.Inf(-1))
				}
				out = append(out, w)
			}
		}
		return append(out, 0, math.Copysign(0, -1), 5e-324, -5e-324, 1e-310, -1e-310, 2, -2, 1e300, -1e300, math.NaN(), 0.25)
	}
	var rows [][]float64
	for _, y := range near(-1+s, 1+s) {
		rows = append(rows, []float64{float64(len(rows)), 0.5, -0.5, 0.25, y})
	}
	for _, x := range near(-0.3, 1.7) {
		rows = append(rows, []float64{float64(len(rows)), 0.5, -0.5, x, 0.25})
	}
	createSingle(t, "boxends_single", "pts", pointCols)
	createSharded(t, "boxends_sharded", "pts", pointCols)
	insertRows(t, headConn(t), "boxends_single.pts", renderRows(rows))
	insertRows(t, headConn(t), "boxends_sharded.pts", renderRows(rows))
	ts := startBackendServer(t, t.TempDir())
	defer ts.stop()
	root := ts.connect("root", rootPW, "")
	scaled := func(q, col string) (lo, hi float64) {
		re := regexp.MustCompile(`\(` + "`" + col + "`" + ` \* \(([^)]+)\)\) BETWEEN \(([^)]+)\) AND \(([^)]+)\)`)
		g := re.FindStringSubmatch(q)
		if g == nil {
			t.Fatalf("no scaled condition on %s: %s", col, q)
		}
		var v [3]float64
		for i := range v {
			var err error
			if v[i], err = strconv.ParseFloat(g[i+1], 64); err != nil {
				t.Fatal(err)
			}
		}
		return v[1] / v[0], v[2] / v[0] // exact: c is a power of two, the ends normal
	}
	for _, algebraic := range []bool{false, true} {
		m.ShiftAlgebraic = algebraic
		for _, db := range []string{"boxends_single", "boxends_sharded"} {
			if !algebraic {
				mustExec(t, root, fmt.Sprintf("CALL dp_attach('%s.pts')", db))
			}
			qs, ok := ts.e.Backend.LinearStatsQuery(db, "pts", m, false)
			if !ok || len(qs) != 2 {
				t.Fatalf("%s: no split", db)
			}
			ya, yb := scaled(qs[0], "y")
			xa, xb := scaled(qs[0], "x3")
			want := int64(0)
			for _, r := range rows {
				if r[3] >= xa && r[3] <= xb && r[4] >= ya && r[4] <= yb { // NaN (NULL) is never inside
					want++
				}
			}
			if in := splitRows(t, ts, db, m, true); in != want {
				t.Fatalf("%s (algebraic %v): %d rows inside the box, want %d (y in [%v, %v], x3 in [%v, %v])", db, algebraic, in, want, ya, yb, xa, xb)
			}
			t.Logf("%s (algebraic %v): %d of %d rows inside the box", db, algebraic, want, len(rows))
			if algebraic {
				continue
			}
			a1, c1, n1, ok1, err1 := ts.e.Backend.LinearStatsOneStatement(db, "pts", m)
			a2, c2, n2, ok2, err2 := ts.e.Backend.LinearStats(db, "pts", m)
			if err1 != nil || err2 != nil || !ok1 || !ok2 || n1 != int64(len(rows)) || n2 != n1 {
				t.Fatalf("%s: n one statement %d, split %d (%v %v %v %v)", db, n1, n2, ok1, ok2, err1, err2)
			}
			for i, v := range append(append([]float64(nil), a1...), c1...) {
				w := append(append([]float64(nil), a2...), c2...)[i]
				if math.Abs(v-w) > 1e-12 {
					t.Fatalf("%s: statistic %d: one statement %v, split %v", db, i, v, w)
				}
			}
		}
	}
}
