package engine_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestDPTrainConcurrentPooledBuffers: concurrent DP_TRAIN calls on two
// tables whose labels follow x1 in opposite directions, large enough that
// their row buffers and logreg's scaled copy come from internal/bigmem's
// pool and their rows are read by the parallel scan. Every model must
// predict its own table's direction: a buffer handed to two calls at once,
// or handed back before its reader finished, would train one table on the
// other's rows (or on zeros) and flip or flatten the predictions.
func TestDPTrainConcurrentPooledBuffers(t *testing.T) {
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE cp")
	root := ts.connect("root", rootPW, "cp")
	const n = 60000 // 60 000 × 4 DOUBLE = 1.9 MB of rows: above bigmem.PoolMin
	for ti, tbl := range []string{"a", "b"} {
		mustExec(t, root, fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, x1 DOUBLE, x2 DOUBLE, x3 DOUBLE, x4 DOUBLE, y INT)", tbl))
		rng := rand.New(rand.NewPCG(21, uint64(ti)))
		tuples := make([]string, n)
		for i := range tuples {
			x := [4]float64{rng.Float64()*2 - 1, rng.Float64()*2 - 1, rng.Float64()*2 - 1, rng.Float64()*2 - 1}
			s := 3*x[0] + 0.3*x[1] + rng.NormFloat64()*0.3
			if tbl == "b" {
				s = -s
			}
			y := 0
			if s > 0 {
				y = 1
			}
			tuples[i] = fmt.Sprintf("(%d, %.6f, %.6f, %.6f, %.6f, %d)", i, x[0], x[1], x[2], x[3], y)
		}
		insertRawRows(t, root, tbl, tuples)
		for j := 1; j <= 4; j++ {
			mustExec(t, root, fmt.Sprintf("CALL dp_bounds('%s', 'x%d', -1, 1)", tbl, j))
		}
		mustExec(t, root, fmt.Sprintf("CALL dp_labels('%s', 'y', '0,1')", tbl))
		mustExec(t, root, fmt.Sprintf("CALL dp_protect('%s', 1000, 1e-2)", tbl))
	}
	const clients, rounds = 6, 3
	var wg sync.WaitGroup
	errs := make(chan error, clients*rounds)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db := ts.connect("root", rootPW, "cp")
			for r := 0; r < rounds; r++ {
				tbl := []string{"a", "b"}[(c+r)%2]
				var m string
				if err := db.QueryRow(fmt.Sprintf("SELECT DP_TRAIN('%s', 20, 'logreg', 'delta=1e-6; prior=off')", tbl)).Scan(&m); err != nil {
					errs <- fmt.Errorf("client %d round %d: %w", c, r, err)
					return
				}
				for _, x1 := range []string{"0.9", "-0.9"} {
					var got string
					if err := db.QueryRow(fmt.Sprintf("SELECT DP_PREDICT('%s', %s, 0, 0, 0)", m, x1)).Scan(&got); err != nil {
						errs <- err
						return
					}
					want := map[bool]string{true: "1", false: "0"}[(x1 == "0.9") == (tbl == "a")]
					if got != want {
						errs <- fmt.Errorf("client %d round %d: model %s of table %s predicts %s at x1 = %s, want %s", c, r, m, tbl, got, x1, want)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
