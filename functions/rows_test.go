package functions

import (
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
)

// sliceRows serves fixed rows: RowSafe is tested alone here (the wire-level
// tests run it in front of the real store).
type sliceRows struct{ rows [][]any }

func (s sliceRows) TableSchema(string, string) (sql.Schema, error) { return nil, nil }
func (s sliceRows) RowCount(string, string) (int64, error)         { return int64(len(s.rows)), nil }
func (s sliceRows) ScanFloats(_, _ string, _ []string, fn func([]float64) error) (int64, error) {
	for i := range s.rows {
		if err := fn([]float64{float64(i)}); err != nil {
			return int64(i), err
		}
	}
	return int64(len(s.rows)), nil
}
func (s sliceRows) ScanValues(_, _ string, _ []string, fn func([]any) error) (int64, error) {
	for i, r := range s.rows {
		if err := fn(r); err != nil {
			return int64(i), err
		}
	}
	return int64(len(s.rows)), nil
}
func (s sliceRows) Attached(string, string) bool { return true }

// TestRowSafe: a panic in a per-row function leaves that row out and the
// scan goes on; errors still end it; optional interfaces survive the wrap.
func TestRowSafe(t *testing.T) {
	r := RowSafe(sliceRows{rows: [][]any{{1}, {2}, {3}}})
	seen := 0
	n, err := r.ScanValues("", "", nil, func(row []any) error {
		if row[0] == 2 {
			var m map[string]int
			m["boom"]++ // a nil-map write panics
		}
		seen++
		return nil
	})
	if err != nil || n != 3 || seen != 2 {
		t.Fatalf("ScanValues: n %d, seen %d, err %v", n, seen, err)
	}
	seen = 0
	if _, err := r.ScanFloats("", "", nil, func(row []float64) error {
		if row[0] == 0 {
			panic("boom")
		}
		seen++
		return nil
	}); err != nil || seen != 2 {
		t.Fatalf("ScanFloats: seen %d, err %v", seen, err)
	}
	if _, err := r.ScanValues("", "", nil, func([]any) error { return errStop }); err != errStop {
		t.Fatalf("an error must still end the scan: %v", err)
	}
	if _, ok := r.(attacher); !ok {
		t.Fatal("Attached lost by the wrap")
	}
}

var errStop = errorString("stop")

type errorString string

func (e errorString) Error() string { return string(e) }

// parallelRows hands its rows to fn in reverse order from two goroutines:
// scanRows must place row i at X[i] whatever the order.
type parallelRows struct{ sliceRows }

func (p parallelRows) ScanFloatsParallel(_, _ string, _ []string, start func(int64) error, fn func(int64, []float64)) (int64, bool, error) {
	n := int64(len(p.rows))
	if err := start(n); err != nil {
		return 0, true, err
	}
	done := make(chan bool)
	for w := int64(0); w < 2; w++ {
		go func() {
			defer func() { done <- true }()
			row := make([]float64, 2)
			for i := n - 1 - w; i >= 0; i -= 2 {
				row[0], row[1] = float64(i), float64(10*i)
				fn(i, row)
			}
		}()
	}
	<-done
	<-done
	return n, true, nil
}

// TestScanRowsParallel: rows land in table order; a row whose per-row
// function panicked is left out (RowSafe) with its label entry; storage
// without the parallel scan answers ok = false.
func TestScanRowsParallel(t *testing.T) {
	src := parallelRows{sliceRows{rows: make([][]any, 9)}}
	var ys []int
	read := func(r Rows) ([][]float64, bool, error) {
		X, _, ok, err := scanRows(r, tableRef{}, nil, 1, func(n int64) { ys = make([]int, n) }, func(i int64, v, r []float64) {
			if i == 4 {
				panic("boom")
			}
			r[0] = v[1]
			ys[i] = int(v[0])
		}, func(dst, src int) { ys[dst] = ys[src] })
		return X, ok, err
	}
	X, ok, err := read(RowSafe(src))
	if err != nil || !ok || len(X) != 8 {
		t.Fatalf("ok %v err %v rows %d", ok, err, len(X))
	}
	for k, r := range X {
		i := k
		if k >= 4 {
			i = k + 1
		}
		if r[0] != float64(10*i) || ys[k] != i {
			t.Errorf("row %d: %v label %d, want row %d", k, r, ys[k], i)
		}
	}
	if _, ok, _ := read(RowSafe(src.sliceRows)); ok {
		t.Error("storage without ScanFloatsParallel answered ok")
	}
}
