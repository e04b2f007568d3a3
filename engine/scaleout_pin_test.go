package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/functions"
)

// TestScaleOutStatementsPerRelease pins the statements the Spider head
// receives for each pushed-down release, read from the head's general log
// (log_output = TABLE): one public COUNT(*) per release call (shared by the
// memory estimate, kind=auto and the plan), before the snapshot; then one
// snapshot holding every statement that reads rows — for DP_LSQ's centred
// default call the label mean and the statistics together. The must-fail
// variant restores the reads before (functions.SetSeparateReadsForTest: a
// count per use, the mean in a snapshot of its own) and must be caught.
func TestScaleOutStatementsPerRelease(t *testing.T) {
	needSpider(t)
	const n = 3000
	createSharded(t, "pin", "pts", pointCols)
	insertRows(t, headConn(t), "pin.pts", renderRows(inBounds(pointRows(n, false))))

	ts := startBackendServer(t, t.TempDir())
	root := ts.connect("root", rootPW, "")
	mustExec(t, root, "CALL dp_attach('pin.pts')")
	for i, c := range pointCfg.Features {
		mustExec(t, root, fmt.Sprintf("CALL dp_bounds('pin.pts', '%s', %v, %v)", c, pointCfg.Lo[i], pointCfg.Hi[i]))
	}
	mustExec(t, root, "CALL dp_bounds('pin.pts', 'y', -1, 1)")
	mustExec(t, root, "CALL dp_protect('pin.pts', 100, 1e-5)")
	owner := ts.connect("root", rootPW, "pin")

	glog := newGeneralLog(t)
	releases := []struct {
		name, query string
		want        string // the statements, classified by headStatement
	}{
		{"DP_LSQ default call (centred objective)", "SELECT DP_LSQ('pts', 0.5, 'linear', 'label=y')",
			"count iso start mean inside outside rollback"},
		{"DP_LSQ method=output", "SELECT DP_LSQ('pts', 0.5, 'linear', 'label=y; method=output; delta=0')",
			"count iso start inside outside rollback"},
		{"DP_TRAIN lsq (the default call through DP_TRAIN)", "SELECT DP_TRAIN('pts', 0.5, 'lsq', 'label=y')",
			"count iso start mean inside outside rollback"},
		{"DP_TRAIN linreg", "SELECT DP_TRAIN('pts', 0.5, 'linreg', 'label=y')",
			"count iso start inside outside rollback"},
		{"DP_TRAIN auto (kind chosen from the public n)", "SELECT DP_TRAIN('pts', 0.5, 'auto', 'label=y')",
			"count iso start inside outside rollback"},
		{"DP_MEAN", "SELECT DP_MEAN('pts', 'x2', 0.5)",
			"count iso start mean rollback"},
	}
	run := func(query string) []string {
		t.Helper()
		glog.start()
		var out sql.NullString
		if err := owner.QueryRow(query).Scan(&out); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return glog.stop()
	}
	for _, r := range releases {
		got := run(r.query)
		if err := checkStatements(got, r.want); err != nil {
			t.Errorf("%s: %v", r.name, err)
		} else {
			t.Logf("%s: %s", r.name, strings.Join(kinds(got), " "))
		}
	}
	// Every pushed-down DP_LSQ release read the whole table (n of the
	// snapshot) and was recorded.
	if got := queryFloat(t, owner, "SELECT COUNT(*) FROM dpsql.dp_models WHERE n = ?", n); got != 5 {
		t.Fatalf("%v models with n = %d, want 5", got, n)
	}

	// Must-fail: the reads before — the estimate, kind=auto and the plan
	// each count, and the centring mean has a snapshot of its own.
	functions.SetSeparateReadsForTest(true)
	defer functions.SetSeparateReadsForTest(false)
	for _, r := range releases {
		if !strings.Contains(r.name, "default call") && !strings.Contains(r.name, "auto") {
			continue
		}
		got := run(r.query)
		err := checkStatements(got, r.want)
		if err == nil {
			t.Fatalf("must-fail: %s with separate reads passed the check (%s): the check has no teeth", r.name, strings.Join(kinds(got), " "))
		}
		t.Logf("must-fail %s caught: %v", r.name, err)
	}
}

// generalLog captures the statements the Spider head receives from other
// connections (dpsql's backend pool) between start and stop.
type generalLog struct {
	t    *testing.T
	conn *sql.Conn
	self int64
}

func newGeneralLog(t *testing.T) *generalLog {
	t.Helper()
	c, err := headConn(t).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	g := &generalLog{t: t, conn: c}
	if err := c.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&g.self); err != nil {
		t.Fatal(err)
	}
	g.exec("SET GLOBAL log_output = 'TABLE'")
	t.Cleanup(func() {
		g.exec("SET GLOBAL general_log = 0")
		g.exec("SET GLOBAL log_output = 'FILE'")
		c.Close()
	})
	return g
}

func (g *generalLog) exec(q string) {
	g.t.Helper()
	if _, err := g.conn.ExecContext(context.Background(), q); err != nil {
		g.t.Fatalf("%s: %v", q, err)
	}
}

func (g *generalLog) start() {
	g.t.Helper()
	g.exec("SET GLOBAL general_log = 0")
	g.exec("TRUNCATE TABLE mysql.general_log")
	g.exec("SET GLOBAL general_log = 1")
}

// stop returns the statements logged since start, in order (the CSV log
// table returns rows in the order written).
func (g *generalLog) stop() []string {
	g.t.Helper()
	g.exec("SET GLOBAL general_log = 0")
	rows, err := g.conn.QueryContext(context.Background(),
		"SELECT CAST(argument AS CHAR) FROM mysql.general_log WHERE thread_id <> ? AND command_type IN ('Query', 'Execute')", g.self)
	if err != nil {
		g.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			g.t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		g.t.Fatal(err)
	}
	return out
}

var (
	reCount = regexp.MustCompile("^SELECT COUNT\\(\\*\\) FROM `[^`]+`\\.`[^`]+`$")
	reSums  = regexp.MustCompile(`^SELECT COUNT\(\*\), SUM\(`)
)

// headStatement classifies one statement dpsql sent to the head.
func headStatement(q string) string {
	q = strings.TrimSpace(q)
	switch {
	case reCount.MatchString(q):
		return "count" // the public row count, before the charge
	case q == "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ":
		return "iso"
	case q == "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY":
		return "start"
	case q == "ROLLBACK":
		return "rollback"
	case reSums.MatchString(q):
		switch {
		case strings.Count(q, "SUM(") == 1:
			return "mean" // a one-term sum: the (label) mean
		case strings.Contains(q, ") IS NOT TRUE"):
			return "outside"
		case strings.Contains(q, ") IS TRUE"):
			return "inside"
		}
		return "stats" // the one-statement or exact statistics
	case strings.HasPrefix(q, "SELECT "):
		return "scan"
	}
	return "other[" + q[:min(len(q), 60)] + "]"
}

func kinds(qs []string) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = headStatement(q)
	}
	return out
}

// checkStatements compares the classified statements with want and checks
// the order the releases rely on: the count before the snapshot, every
// aggregate inside it, one snapshot.
func checkStatements(qs []string, want string) error {
	got := kinds(qs)
	if g := strings.Join(got, " "); g != want {
		return fmt.Errorf("head received %q, want %q", g, want)
	}
	open, snapshots := false, 0
	for i, k := range got {
		switch k {
		case "start":
			open, snapshots = true, snapshots+1
		case "rollback":
			open = false
		case "count":
			if open {
				return fmt.Errorf("statement %d: row count inside the snapshot", i)
			}
		case "mean", "inside", "outside", "stats", "scan":
			if !open {
				return fmt.Errorf("statement %d (%s) outside the snapshot", i, k)
			}
		}
	}
	if snapshots != 1 {
		return fmt.Errorf("%d snapshots, want 1", snapshots)
	}
	return nil
}
