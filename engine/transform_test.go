package engine_test

import (
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 11 item 4: owner-declared clipping and public transforms, over the
// wire. Rows keep raw values; every DP read transforms, then clips.

// setupClip creates lab.m (id, x, cls, y): class a has x ∈ {0, 2, 4}, class b
// x ∈ {10, …, 9000} spread on a log scale; y = x.
func setupClip(t *testing.T, ts *testServer) (root, ana *sql.DB) {
	t.Helper()
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE IF NOT EXISTS lab")
	root = ts.connect("root", rootPW, "lab")
	mustExec(t, root, "CREATE TABLE m (id INT PRIMARY KEY, x DOUBLE, cls VARCHAR(8), y DOUBLE)")
	var b strings.Builder
	for i := 0; i < 400; i++ {
		x, cls := float64(i%6), "a"
		if i%2 == 1 {
			x, cls = math.Round(10*math.Pow(900, float64(i%40)/39)), "b"
		}
		if b.Len() > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d, %v, '%s', %v)", i, x, cls, x)
	}
	mustExec(t, root, "INSERT INTO m VALUES "+b.String())
	mustExec(t, root, "CALL dp_labels('m', 'cls', 'a,b')")
	mustExec(t, root, "CALL dp_protect('m', 100000, 0.001)")
	mustExec(t, root, "CREATE USER IF NOT EXISTS 'ana'@'%' IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "GRANT SELECT, EXECUTE ON lab.* TO 'ana'@'%'")
	return root, ts.connect("ana", "ana-pw", "lab")
}

func TestDPBoundsClip(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root, ana := setupClip(t, ts)
	// Without 'clip' the rows must lie within the bounds.
	wantErr(t, root, "CALL dp_bounds('m', 'x', 0, 10)", "outside [0, 10]")
	mustExec(t, root, "CALL dp_bounds('m', 'x', 0, 10, 'clip')")
	mustExec(t, root, "CALL dp_bounds('m', 'y', 0, 10, 'clip')")
	wantErr(t, root, "CALL dp_bounds('m', 'x', 0, 10, 'cut')", "must be 'clip'")
	// The owner keeps raw values, and may write new ones outside the bounds.
	mustExec(t, root, "INSERT INTO m VALUES (1000, 12345, 'b', 12345)")
	mustExec(t, root, "DELETE FROM m WHERE id = 1000")
	if v := queryFloat(t, root, "SELECT MAX(x) FROM m"); v != 9000 {
		t.Fatalf("owner's raw max %v, want 9000", v)
	}
	if v := queryFloat(t, ana, "SELECT COUNT(*) FROM dp_columns WHERE table_name = 'lab.m' AND clip AND transform = 'identity'"); v != 2 {
		t.Fatalf("dp_columns shows %v clipped columns, want 2", v)
	}
	// DP_MEAN clips: x ∈ {0, 2, 4} for half the rows, ≥ 11 ↦ 10 for the
	// other half, so the clipped mean is (2 + 10)/2 = 6 (raw mean ≈ 1000).
	m := queryFloat(t, ana, "SELECT DP_MEAN('m', 'x', 1000)")
	if math.Abs(m-6) > 0.1 {
		t.Fatalf("DP_MEAN of a clipped column = %v, want ≈ 6", m)
	}
	// DP GROUP BY clips per value: AVG(x) of class b is 10, of class a 2.
	mustExec(t, ana, "SET SESSION dp_epsilon = 1000")
	rows, err := ana.Query("SELECT cls, AVG(x), SUM(y) FROM m GROUP BY cls ORDER BY cls")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{"a": {2, 400}, "b": {10, 2000}}
	for rows.Next() {
		var c string
		var avg, sum float64
		if err := rows.Scan(&c, &avg, &sum); err != nil {
			t.Fatal(err)
		}
		if math.Abs(avg-want[c][0]) > 0.2 || math.Abs(sum-want[c][1]) > 5 {
			t.Fatalf("group %s: AVG(x) = %v, SUM(y) = %v, want %v", c, avg, sum, want[c])
		}
	}
	rows.Close()
	// DP_TRAIN reads clipped values: a regression of y on x (both clipped
	// to [0, 10]) is y = x on the clipped scale.
	model := queryString(t, ana, "SELECT DP_TRAIN('m', 1000, 'linreg', 'label=y; features=x')")
	for _, c := range []struct{ x, y float64 }{{2, 2}, {8, 8}, {5000, 10}} {
		p := queryFloat(t, ana, fmt.Sprintf("SELECT DP_PREDICT('%s', %v)", model, c.x))
		if math.Abs(p-c.y) > 0.5 {
			t.Fatalf("linreg on clipped columns predicts %v at x = %v, want ≈ %v", p, c.x, c.y)
		}
	}
	// Back to strict bounds: refused while rows lie outside.
	wantErr(t, root, "CALL dp_bounds('m', 'x', 0, 10)", "existing rows")
	// Analysts cannot declare anything.
	wantErr(t, ana, "CALL dp_bounds('m', 'x', 0, 1e9, 'clip')", "only data owners")
	wantErr(t, ana, "CALL dp_transform('m', 'x', 'identity')", "only data owners")
}

func TestDPTransformLog1p(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root, ana := setupClip(t, ts)
	mustExec(t, root, "CALL dp_bounds('m', 'x', 0, 10000)")
	// Identity scale: LDA's threshold lies near the midpoint of the class
	// means (2 and ≈ 2000), so x = 50 is class a.
	raw := queryString(t, ana, "SELECT DP_TRAIN('m', 1000, 'lda', 'label=cls; features=x')")
	if p := queryString(t, ana, fmt.Sprintf("SELECT DP_PREDICT('%s', 50)", raw)); p != "a" {
		t.Fatalf("identity-scale LDA predicts %s at x = 50, want a", p)
	}
	// The transform needs bounds on its scale unless they clip.
	wantErr(t, root, "CALL dp_transform('m', 'x', 'sqrt')", "'log1p' or 'identity'")
	wantErr(t, root, "CALL dp_bounds('m', 'x', 0, 10)", "existing rows")
	mustExec(t, root, "CALL dp_bounds('m', 'x', 0, 10, 'clip')")
	mustExec(t, root, "CALL dp_transform('m', 'x', 'log1p')")
	mustExec(t, root, "CALL dp_bounds('m', 'x', 0, 10)") // strict again: log1p(9000) ≈ 9.1 fits
	if s := queryString(t, ana, "SELECT transform FROM dp_columns WHERE table_name = 'lab.m' AND column_name = 'x'"); s != "log1p" {
		t.Fatalf("dp_columns transform = %q", s)
	}
	// Writes are checked on the transformed scale.
	wantErr(t, root, "INSERT INTO m VALUES (1000, 1e6, 'b', 1)", "log1p scale")
	mustExec(t, root, "INSERT INTO m VALUES (1000, 20000, 'b', 1)") // log1p = 9.9
	mustExec(t, root, "DELETE FROM m WHERE id = 1000")
	// The model is fitted on log1p(x) and applies log1p to raw inputs.
	logm := queryString(t, ana, "SELECT DP_TRAIN('m', 1000, 'lda', 'label=cls; features=x')")
	js := queryString(t, ana, fmt.Sprintf("SELECT DP_MODEL_JSON('%s')", logm))
	if !strings.Contains(js, `"transforms":["log1p"]`) {
		t.Fatalf("model JSON has no transform: %.300s", js)
	}
	for x, want := range map[float64]string{1: "a", 4: "a", 50: "b", 3000: "b"} {
		if p := queryString(t, ana, fmt.Sprintf("SELECT DP_PREDICT('%s', %v)", logm, x)); p != want {
			t.Fatalf("log1p LDA predicts %s at x = %v, want %s", p, x, want)
		}
	}
	// DP_MEAN is the mean of log1p(x): about (mean log1p over {0..5} + mean
	// over the log-spread class b) / 2.
	var sum float64
	for i := 0; i < 400; i++ {
		x := float64(i % 6)
		if i%2 == 1 {
			x = math.Round(10 * math.Pow(900, float64(i%40)/39))
		}
		sum += math.Log1p(x)
	}
	if m := queryFloat(t, ana, "SELECT DP_MEAN('m', 'x', 1000)"); math.Abs(m-sum/400) > 0.1 {
		t.Fatalf("DP_MEAN on the log1p scale = %v, want ≈ %v", m, sum/400)
	}
	// A transformed regression label: fitted on log1p(y) = log1p(x),
	// predictions mapped back to the raw scale, DP_EVALUATE's RMSE on the
	// log1p scale (where the label bounds are declared).
	mustExec(t, root, "CALL dp_bounds('m', 'y', 0, 10, 'clip')")
	mustExec(t, root, "CALL dp_transform('m', 'y', 'log1p')")
	reg := queryString(t, ana, "SELECT DP_TRAIN('m', 1000, 'linreg', 'label=y; features=x')")
	for _, x := range []float64{3, 50, 2000} {
		if p := queryFloat(t, ana, fmt.Sprintf("SELECT DP_PREDICT('%s', %v)", reg, x)); math.Abs(math.Log1p(p)-math.Log1p(x)) > 0.2 {
			t.Fatalf("log1p-label linreg predicts %v at x = %v", p, x)
		}
	}
	if r := queryFloat(t, ana, fmt.Sprintf("SELECT DP_EVALUATE('%s', 'm', 1000)", reg)); r > 0.2 {
		t.Fatalf("RMSE on the log1p scale = %v", r)
	}
	// Declarations survive a restart and a bulk import honours them.
	dir := ts.dir
	ts.stop()
	ts2 := startServer(t, dir)
	root2 := ts2.connect("root", rootPW, "lab")
	if s := queryString(t, root2, "SELECT CONCAT(transform, ':', clip) FROM dp_columns WHERE table_name = 'lab.m' AND column_name = 'x'"); s != "log1p:0" {
		t.Fatalf("after restart dp_columns x = %q", s)
	}
	csv := filepath.Join(t.TempDir(), "more.csv")
	if err := os.WriteFile(csv, []byte("id,x,cls,y\n2000,20000,b,500\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ts2.e.ImportCSVFile("lab.m", csv); err != nil {
		t.Fatalf("import of a row within log1p bounds and a clipped y: %v", err)
	}
	if err := os.WriteFile(csv, []byte("id,x,cls,y\n2001,1e9,b,1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ts2.e.ImportCSVFile("lab.m", csv); err == nil || !strings.Contains(err.Error(), "log1p scale") {
		t.Fatalf("import outside the log1p bounds: %v", err)
	}
}
