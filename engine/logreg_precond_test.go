package engine_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDPTrainLogRegPreconditionedOverTheWire: a two-class DP_TRAIN logreg
// at large n·ε runs the preconditioned rule by default (logreg.md §13: one
// private XᵀX release and T Böhning-preconditioned steps in the same
// Gaussian event), charges ε once, and predicts the obvious corners.
func TestDPTrainLogRegPreconditionedOverTheWire(t *testing.T) {
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE pc")
	root := ts.connect("root", rootPW, "pc")
	mustExec(t, root, "CREATE TABLE t (id INT PRIMARY KEY, x1 DOUBLE, x2 DOUBLE, cls VARCHAR(4))")
	rng := rand.New(rand.NewPCG(11, 12))
	tuples := make([]string, 20000)
	for i := range tuples {
		x1, x2 := rng.Float64()*2-1, rng.Float64()*2-1
		cls := "a"
		if 3*x1+2*x2+rng.NormFloat64()*0.5 > 0 {
			cls = "b"
		}
		tuples[i] = fmt.Sprintf("(%d, %.6f, %.6f, '%s')", i, x1, x2, cls)
	}
	insertRawRows(t, root, "t", tuples)
	mustExec(t, root, "CALL dp_bounds('t', 'x1', -1, 1)")
	mustExec(t, root, "CALL dp_bounds('t', 'x2', -1, 1)")
	mustExec(t, root, "CALL dp_labels('t', 'cls', 'a,b')")
	mustExec(t, root, "CALL dp_protect('t', 100, 1e-3)")
	mustExec(t, root, "CREATE USER IF NOT EXISTS 'ana'@'%' IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "GRANT SELECT, EXECUTE ON pc.* TO 'ana'@'%'")
	ana := ts.connect("ana", "ana-pw", "pc")

	before := spent(t, ana, "pc.t")
	m := queryString(t, ana, "SELECT DP_TRAIN('t', 10, 'logreg', 'delta=1e-6; prior=off')")
	if got := spent(t, ana, "pc.t") - before; math.Abs(got-10) > 1e-9 {
		t.Fatalf("charged ε = %v, want 10", got)
	}
	var rec struct {
		Model struct {
			Params map[string]float64 `json:"params"`
		} `json:"model"`
	}
	if err := json.Unmarshal([]byte(queryString(t, ana, "SELECT DP_MODEL_JSON('"+m+"')")), &rec); err != nil {
		t.Fatal(err)
	}
	p := rec.Model.Params
	if p["preconditioned"] != 1 || p["nesterov"] != 0 || p["steps"] < 12 || p["steps"] > 30 || !(p["gram_sigma"] > 0) || p["gram_share"] != 0.1 || !(p["ridge"] > 0) {
		t.Fatalf("params %v: want the preconditioned rule", p)
	}
	for _, c := range []struct{ x1, x2, want string }{{"0.9", "0.9", "b"}, {"-0.9", "-0.9", "a"}, {"0.8", "-0.2", "b"}, {"-0.8", "0.2", "a"}} {
		if got := queryString(t, ana, "SELECT DP_PREDICT('"+m+"', "+c.x1+", "+c.x2+")"); got != c.want {
			t.Fatalf("DP_PREDICT(%s, %s) = %q, want %q", c.x1, c.x2, got, c.want)
		}
	}
}
