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
