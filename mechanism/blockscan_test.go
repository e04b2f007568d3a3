package mechanism

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// TestStreamBlocks: every scanned row reaches exactly one fold call, in
// chunks of at most batch rows, each worker sees its chunks in scan order,
// and both a short row and the scan's own error end the pass with an error.
func TestStreamBlocks(t *testing.T) {
	const d, batch, workers, n = 3, 7, 3, 100
	scan := func(emit func([]float64) error) error {
		row := make([]float64, d+1)
		for i := 0; i < n; i++ {
			for j := range row {
				row[j] = float64(i*10 + j)
			}
			if err := emit(row); err != nil {
				return err
			}
		}
		return nil
	}
	var mu sync.Mutex
	seen := make([]int, n)
	last := make([]int, workers)
	for k := range last {
		last[k] = -1
	}
	err := StreamBlocks(d, batch, workers, scan, func(k, rows int, get func(r int) ([]float64, float64)) {
		if k < 0 || k >= workers || rows < 1 || rows > batch {
			t.Errorf("fold(k=%d, rows=%d)", k, rows)
			return
		}
		for r := 0; r < rows; r++ {
			x, y := get(r)
			i := int(x[0]) / 10
			if len(x) != d || y != float64(i*10+d) || x[d-1] != float64(i*10+d-1) {
				t.Errorf("row %d: x=%v y=%v", i, x, y)
			}
			mu.Lock()
			seen[i]++
			if i <= last[k] {
				t.Errorf("worker %d saw row %d after row %d", k, i, last[k])
			}
			last[k] = i
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("row %d folded %d times", i, c)
		}
	}

	err = StreamBlocks(d, batch, workers, func(emit func([]float64) error) error {
		return emit(make([]float64, d))
	}, func(int, int, func(int) ([]float64, float64)) {})
	if err == nil || !strings.Contains(err.Error(), "row has 3 values, want 4") {
		t.Fatalf("short row: %v", err)
	}
	boom := errors.New("boom")
	err = StreamBlocks(d, batch, workers, func(emit func([]float64) error) error {
		if err := emit(make([]float64, d+1)); err != nil {
			return err
		}
		return boom
	}, func(int, int, func(int) ([]float64, float64)) {})
	if !errors.Is(err, boom) {
		t.Fatalf("scan error: %v", err)
	}
}
