package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/engine"
)

// Issue 25: the analyst's WHERE must not turn one row into an error bit or a
// timing signal. Neighbouring tables n0 and n1 differ in one row (id 7: age
// 50 in n0, 10 in n1); the unit of privacy is one row.

func setupNeighbours(t *testing.T, ts *testServer, rows int) *sql.DB {
	t.Helper()
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE IF NOT EXISTS demo")
	root := ts.connect("root", rootPW, "demo")
	for side, age7 := range []int{50, 10} {
		mustExec(t, root, fmt.Sprintf("CREATE TABLE n%d (id BIGINT PRIMARY KEY, age DOUBLE, name VARCHAR(64), town INT)", side))
		var b strings.Builder
		for i := 0; i < rows; i++ {
			if b.Len() > 0 {
				b.WriteString(",")
			}
			age := 20 + i%50
			if i == 7 {
				age = age7
			}
			fmt.Fprintf(&b, "(%d, %d, 'person%d', %d)", i, age, i, i%3)
		}
		mustExec(t, root, fmt.Sprintf("INSERT INTO n%d VALUES %s", side, b.String()))
		mustExec(t, root, fmt.Sprintf("CALL dp_bounds('n%d', 'age', 0, 100)", side))
		mustExec(t, root, fmt.Sprintf("CALL dp_protect('n%d', 1000, 0)", side))
	}
	mustExec(t, root, "CREATE USER IF NOT EXISTS 'ana'@'%' IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "GRANT SELECT, INSERT, EXECUTE ON demo.* TO 'ana'@'%'")
	return root
}

// freshSession is an analyst connection that pays every query (no answer
// cache), at ε.
func freshSession(t *testing.T, ts *testServer, eps float64) *sql.Conn {
	t.Helper()
	c := aggSession(t, ts, eps)
	if _, err := c.ExecContext(context.Background(), "SET SESSION dp_fresh = 1"); err != nil {
		t.Fatal(err)
	}
	return c
}

// errorBitSampler runs the first attack: the error outcome is 10¹²,
// far from any noisy count (scale 10⁵ at ε = 10⁻⁵).
func errorBitSampler(t *testing.T, c *sql.Conn, errs *[2]int) audit.Sampler {
	const q = "SELECT COUNT(*) FROM n%d WHERE id = 7 AND CONVERT(age * 9.9871840825684212e+306, DECIMAL) IS NULL"
	return func(side int) float64 {
		var n float64
		if err := c.QueryRowContext(context.Background(), fmt.Sprintf(q, side)).Scan(&n); err != nil {
			errs[side]++
			return 1e12
		}
		return n
	}
}

// TestDPAggErrorBitAudit: the same outcome on both neighbours every time
// (no error), and a Clopper–Pearson audit at the claimed ε = 10⁻⁵ passes.
// Must-fail: go-mysql-server's evaluator (its CONVERT panics on +Inf, and
// AND gates it on row 7) is caught.
func TestDPAggErrorBitAudit(t *testing.T) {
	ts := startServer(t, t.TempDir())
	setupNeighbours(t, ts, 200)
	c := freshSession(t, ts, 1e-5)
	cfg := audit.Config{N: 100}

	var errs [2]int
	audit.RequirePass(t, errorBitSampler(t, c, &errs), 1e-5, cfg)
	if errs != [2]int{} {
		t.Fatalf("errors on the neighbours: %v of %d each", errs, cfg.N)
	}

	restore := engine.SetLegacyDPFilter(true)
	defer restore()
	var legacy [2]int
	audit.RequireCatch(t, errorBitSampler(t, c, &legacy), 1e-5, cfg)
	t.Logf("legacy evaluator: errors %v of %d per side", legacy, cfg.N)
}

// latencies runs q on both neighbours, interleaved, and returns the median
// latency of each side (interquartile mean, see midMean) and how many
// runs failed on each.
func latencies(t *testing.T, c *sql.Conn, q string, args []any, n int) (med [2]time.Duration, errs [2]int, msgs [2]string) {
	t.Helper()
	var d [2][]time.Duration
	for i := 0; i < n+3; i++ {
		for k := 0; k < 2; k++ {
			side := (i + k) % 2 // alternate which side goes first
			start := time.Now()
			rows, err := c.QueryContext(context.Background(), fmt.Sprintf(q, side), args...)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			el := time.Since(start)
			if i < 3 {
				continue // warm-up
			}
			d[side] = append(d[side], el)
			if err != nil {
				errs[side]++
				msgs[side] = err.Error()
			}
		}
	}
	for side := range d {
		med[side] = midMean(d[side])
	}
	return med, errs, msgs
}

// midMean is the interquartile mean: the mean of the middle half of the
// samples, a median-like location that does not jump between the modes of
// a bimodal latency distribution (garbage collection, a loaded machine).
func midMean(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	mid := s[len(s)/4 : len(s)-len(s)/4]
	var sum time.Duration
	for _, x := range mid {
		sum += x
	}
	return sum / time.Duration(len(mid))
}

func medianRatio(m [2]time.Duration) float64 {
	a, b := float64(m[0]), float64(m[1])
	return math.Max(a, b) / math.Min(a, b)
}

// stableLatencies is latencies measured up to three times until the two
// sides' interquartile means are within 1.5×: a value-dependent cost shows
// on every attempt (the legacy evaluator's is 5–7×), while a loaded machine
// (CI runs several test binaries on 2 cores) rarely skews three in a row.
func stableLatencies(t *testing.T, c *sql.Conn, q string, args []any, n int) (med [2]time.Duration, errs [2]int, msgs [2]string, r float64) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		med, errs, msgs = latencies(t, c, q, args, n)
		r = medianRatio(med)
		if r <= 1.5 || attempt == 3 {
			return med, errs, msgs, r
		}
		t.Logf("attempt %d: latencies %v / %v (ratio %.2f): measuring again", attempt, med[0], med[1], r)
	}
}

// TestDPAggTimingAudit: the timing attack (an expensive conversion
// gated by AND on row 7) has the same outcome on both neighbours and
// latency medians within 1.5×; so does an admitted expensive operator (a
// long LIKE) gated the same way. Must-fail: the legacy evaluator's medians
// differ by more than 1.5×.
func TestDPAggTimingAudit(t *testing.T) {
	ts := startServer(t, t.TempDir())
	setupNeighbours(t, ts, 2000)
	c := freshSession(t, ts, 1e-5)
	long := []any{strings.Repeat("9", 100000)}
	attack := "SELECT COUNT(*) FROM n%d WHERE id = 7 AND age > 30 AND CONVERT(?, DECIMAL(65,30)) IS NOT NULL"

	// Refusals take about a millisecond, where scheduling noise is
	// relatively large: more samples.
	med, errs, msgs, r := stableLatencies(t, c, attack, long, 101)
	t.Logf("attack: latency (interquartile means) %v / %v, errors %v (%s)", med[0], med[1], errs, msgs[0])
	if errs != [2]int{101, 101} || !strings.Contains(msgs[0], "longer than") || msgs[0] != strings.ReplaceAll(msgs[1], "n1.", "n0.") {
		t.Fatalf("the long parameter must be refused before charging on both neighbours, every time: errors %v, %q / %q", errs, msgs[0], msgs[1])
	}
	if r > 1.5 {
		t.Fatalf("attack: latencies %v vs %v (ratio %.2f > 1.5 on three attempts)", med[0], med[1], r)
	}

	like := "SELECT COUNT(*) FROM n%d WHERE id = 7 AND age > 30 AND name LIKE '%%a%%b%%c%%d%%e%%f%%g%%h%%i%%j%%k%%l%%'"
	med, errs, _, r = stableLatencies(t, c, like, nil, 101)
	t.Logf("admitted LIKE: latency %v / %v", med[0], med[1])
	if errs != [2]int{} {
		t.Fatalf("admitted LIKE failed: %v", errs)
	}
	if r > 1.5 {
		t.Fatalf("admitted LIKE: latencies %v vs %v (ratio %.2f > 1.5 on three attempts)", med[0], med[1], r)
	}

	// Must-fail: go-mysql-server's evaluator converts the parameter only
	// when row 7 passes the left conjuncts.
	restore := engine.SetLegacyDPFilter(true)
	defer restore()
	med, errs, _ = latencies(t, c, attack, long, 11)
	r = medianRatio(med)
	t.Logf("legacy evaluator: latency %v / %v (ratio %.1f), errors %v", med[0], med[1], r, errs)
	if r <= 1.5 {
		t.Fatalf("the legacy evaluator's timing signal was not caught: ratio %.2f", r)
	}
}

// TestDPAggAdversarialValuesOverTheWire evaluates every admitted operator
// through the real scan on tables that differ in one row holding extreme
// values (NULLs, ±1e308, −0, a subnormal, the largest DECIMAL and BIGINT
// UNSIGNED, empty, multibyte and 1 MiB strings, extreme dates): never an
// error, and per query the fastest latencies across the tables
// stay within a constant factor (3).
func TestDPAggAdversarialValuesOverTheWire(t *testing.T) {
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE IF NOT EXISTS demo")
	root := ts.connect("root", rootPW, "demo")
	mustExec(t, root, "CREATE USER IF NOT EXISTS 'ana'@'%' IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "GRANT SELECT ON demo.* TO 'ana'@'%'")
	big := strings.Repeat("x", 1<<20)
	variants := [][]any{
		{nil, nil, nil, nil, nil, nil},
		{1e308, "99999999.99", "", "9999-12-31 23:59:59", "", uint64(math.MaxUint64)},
		{-1e308, "-99999999.99", strings.Repeat("é", 32), "1000-01-01 00:00:00", big, uint64(0)},
		{math.Copysign(0, -1), "0.00", `%_\`, nil, strings.Repeat("x", 4096), uint64(1) << 63},
		{5e-324, "-0.01", "abcdefghijklmnopqrstuvwxyzabcdef", "2024-01-01 00:00:00", "\u00e9", uint64(7)},
	}
	for v, vals := range variants {
		name := fmt.Sprintf("adv%d", v)
		mustExec(t, root, fmt.Sprintf("CREATE TABLE %s (id BIGINT PRIMARY KEY, f DOUBLE, d DECIMAL(10,2), s VARCHAR(32), t DATETIME, txt LONGTEXT, u BIGINT UNSIGNED)", name))
		var b strings.Builder
		for i := 1; i <= 300; i++ {
			if b.Len() > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "(%d, %d.5, %d.25, 'row%d', '2020-01-%02d 10:00:00', 'text%d', %d)", i, i, i%100, i, 1+i%28, i, i)
		}
		mustExec(t, root, fmt.Sprintf("INSERT INTO %s VALUES %s", name, b.String()))
		mustExec(t, root, fmt.Sprintf("INSERT INTO %s VALUES (0, ?, ?, ?, ?, ?, ?)", name), vals...)
		mustExec(t, root, fmt.Sprintf("CALL dp_protect('%s', 1000, 0)", name))
	}
	preds := []string{
		"f * 9.9871840825684212e+306 IS NULL",
		"CONVERT(f * 1e300, DECIMAL(65,30)) IS NULL",
		"CAST(f AS SIGNED) > 0", "CAST(u AS SIGNED) < 0", "CAST(f AS UNSIGNED) = 1", "CAST(d AS DOUBLE) > 0", "CAST(f AS FLOAT) > 0",
		"CAST(f AS DECIMAL(5,0)) > 3",
		"id + u > 0", "u - id = 3", "id * u = 0", "f / d > 1", "u DIV id = 2", "u % 7 = 1", "-f < 0", "f / 0 IS NULL",
		"s = 'abc'", "s < 'zzz'", "s LIKE '%a_b%'", "s LIKE 'é%'", "s IN ('a', 'row3', NULL)", "s <=> NULL", "s NOT LIKE '%\\%%'",
		"txt = '" + strings.Repeat("x", 4096) + "'", "txt > ''", "txt IS NULL", "txt IN ('text1', '')",
		"t > '2024-01-01'", "t BETWEEN '1000-01-01' AND '2000-01-01'", "t <=> NULL",
		"(f > 0) XOR (d < 0)", "NOT (f > 0 OR s IS NULL)", "(f > 0) IS TRUE", "(d > 0) IS FALSE", "f BETWEEN -1e308 AND 1e308",
		"id = 0 AND f > 0 AND s LIKE '%a%b%c%d%e%f%'", "id = 0 OR f IN (1e308, -1e308, 0)",
	}
	c := freshSession(t, ts, 0.001)
	worst, worstPred := 0.0, ""
	for _, p := range preds {
		// The fastest run of each: load on the machine only adds time, and
		// the rest of a release (the durable reservation) does not depend
		// on the rows. A ratio above 3 is measured again (up to three
		// times): a value-dependent cost repeats, a burst of load does not.
		var meds []time.Duration
		var r float64
		for attempt := 0; attempt < 3; attempt++ {
			meds = fastest(t, c, p, len(variants))
			if r = float64(slices.Max(meds)) / float64(slices.Min(meds)); r <= 3 {
				break
			}
		}
		if r > worst {
			worst, worstPred = r, p
		}
		if r > 3 {
			t.Errorf("%s: fastest latencies %v across the variants (ratio %.1f)", short(p), meds, r)
		}
	}
	t.Logf("%d admitted predicates × %d variants: no error; worst ratio of fastest latencies %.2f (%s)", len(preds), len(variants), worst, short(worstPred))
}

// fastest runs predicate p on every variant table adv0…, round-robin (so
// that load on the machine hits every variant alike), 11 times, and returns
// each variant's fastest latency.
func fastest(t *testing.T, c *sql.Conn, p string, variants int) []time.Duration {
	t.Helper()
	d := make([][]time.Duration, variants)
	for rep := 0; rep < 11; rep++ {
		for v := range d {
			q := fmt.Sprintf("SELECT COUNT(*) FROM adv%d WHERE %s", v, p)
			start := time.Now()
			var n float64
			if err := c.QueryRowContext(context.Background(), q).Scan(&n); err != nil {
				t.Fatalf("%s on variant %d: %v", short(q), v, err)
			}
			d[v] = append(d[v], time.Since(start))
		}
	}
	out := make([]time.Duration, variants)
	for v := range d {
		out[v] = slices.Min(d[v])
	}
	return out
}

// TestAnswerCachePerAccount: an account never receives another account's
// cached answer (it pays its own release and sees no cache warning); each
// re-reads its own answer for free.
func TestAnswerCachePerAccount(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 300, 100)
	mustExec(t, root, "CREATE USER IF NOT EXISTS 'bob'@'%' IDENTIFIED BY 'bob-pw'")
	mustExec(t, root, "GRANT SELECT ON demo.* TO 'bob'@'%'")
	ctx := context.Background()
	session := func(user, pw string) *sql.Conn {
		c, err := ts.connect(user, pw, "demo").Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.ExecContext(ctx, "SET SESSION dp_epsilon = 0.5"); err != nil {
			t.Fatal(err)
		}
		return c
	}
	ana, bob := session("ana", "ana-pw"), session("bob", "bob-pw")
	q := "SELECT town, COUNT(*) FROM people GROUP BY town"
	mustExec(t, root, "CALL dp_labels('people', 'town', '0,1,2')")
	cacheWarned := func(c *sql.Conn) bool {
		for _, r := range queryRows(t, c, "SHOW WARNINGS") {
			if strings.Contains(strings.Join(r, " "), "answer cache") {
				return true
			}
		}
		return false
	}
	before := ledgerTotal(t, root)
	anaFirst := fmt.Sprint(queryRows(t, ana, q))
	if got := ledgerTotal(t, root); got != before+1 {
		t.Fatalf("ana's first query: ledger %d, want %d", got, before+1)
	}
	bobFirst := fmt.Sprint(queryRows(t, bob, q))
	if cacheWarned(bob) {
		t.Fatal("bob was answered from ana's cached release")
	}
	if got := ledgerTotal(t, root); got != before+2 {
		t.Fatalf("bob's query must be his own release: ledger %d, want %d", got, before+2)
	}
	if got := fmt.Sprint(queryRows(t, ana, q)); got != anaFirst || !cacheWarned(ana) {
		t.Fatalf("ana's repeat: %s (first %s), cache warning %v", got, anaFirst, cacheWarned(ana))
	}
	if got := fmt.Sprint(queryRows(t, bob, q)); got != bobFirst || !cacheWarned(bob) {
		t.Fatalf("bob's repeat: %s (first %s)", got, bobFirst)
	}
	if got := ledgerTotal(t, root); got != before+2 {
		t.Fatalf("repeats must be free: ledger %d, want %d", got, before+2)
	}
	var anaUser, bobUser int
	for _, r := range queryRows(t, root, "SELECT user FROM dp_ledger") {
		switch r[0] {
		case "ana":
			anaUser++
		case "bob":
			bobUser++
		}
	}
	if anaUser != 1 || bobUser != 1 {
		t.Fatalf("ledger entries per account: ana %d, bob %d", anaUser, bobUser)
	}
}

// TestRefusedWriteKeepsSnapshot: an analyst's refused INSERT into a
// protected table changes nothing: the cached answer stays valid for every
// account (no new charge), while an owner's write starts a new snapshot.
func TestRefusedWriteKeepsSnapshot(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 300, 100)
	c := aggSession(t, ts, 0.5)
	q := "SELECT COUNT(*) FROM people"
	q = "SELECT town, COUNT(*) FROM people GROUP BY town"
	mustExec(t, root, "CALL dp_labels('people', 'town', '0,1,2')")
	first := fmt.Sprint(queryRows(t, c, q))
	before := ledgerTotal(t, root)
	for _, w := range []string{
		"INSERT INTO people VALUES (9999, 'x', 30, 1)",
		"UPDATE people SET age = 1 WHERE id = 1",
		"DELETE FROM people WHERE id = 2",
	} {
		if _, err := c.ExecContext(context.Background(), w); err == nil {
			t.Fatalf("analyst write accepted: %s", w)
		}
	}
	if got := fmt.Sprint(queryRows(t, c, q)); got != first {
		t.Fatalf("after refused writes the answer changed: %s vs %s", got, first)
	}
	if got := ledgerTotal(t, root); got != before {
		t.Fatalf("after refused writes a new release was charged: ledger %d, want %d", got, before)
	}
	mustExec(t, root, "UPDATE people SET age = 31 WHERE id = 1")
	queryRows(t, c, q)
	if got := ledgerTotal(t, root); got != before+1 {
		t.Fatalf("an owner's write must start a new snapshot: ledger %d, want %d", got, before+1)
	}
}
