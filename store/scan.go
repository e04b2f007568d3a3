package store

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	bolt "go.etcd.io/bbolt"
)

// Direct scans for the DP functions: no hooks, no privileges, no SQL. Each
// scan runs in one bbolt read transaction, so it sees one consistent
// snapshot. fn must not write to the bbolt file (a write transaction in the
// same goroutine as an open read transaction can deadlock when bbolt grows
// its memory map).

// scanPlan resolves column names (case-insensitive; none = all columns).
func (s *Store) scanPlan(db, table string, cols []string) (*tableState, *tableMeta, projection, int, error) {
	ts, err := s.lookup(db, table)
	if err != nil {
		return nil, nil, projection{}, 0, err
	}
	m := ts.meta.Load()
	var ords []int
	if len(cols) == 0 {
		ords = seqOrds(len(m.schema()))
	} else {
		ords = make([]int, len(cols))
		for i, c := range cols {
			o, ok := m.column(c)
			if !ok {
				return nil, nil, projection{}, 0, sql.ErrTableColumnNotFound.New(m.name, c)
			}
			ords[i] = o
		}
	}
	return ts, m, newProjection(len(m.schema()), ords), len(ords), nil
}

func (s *Store) scan(ts *tableState, m *tableMeta, start func(n int64) error, fn func(v []byte) error) (int64, error) {
	var n int64
	s.mv.settled()
	err := s.db.View(func(tx *bolt.Tx) error {
		tb := tableBucket(tx, ts.db.key, ts.id)
		st, err := readStat(tb, m)
		if err != nil {
			return err
		}
		if start != nil {
			if err := start(int64(st.count)); err != nil {
				return err
			}
		}
		c := tb.Bucket(bucketRows).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if err := fn(v); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// ScanFloats calls fn with the requested columns of every row as float64
// (NULL and non-numeric values are NaN). The slice is reused between calls.
// It returns the number of rows scanned.
func (s *Store) ScanFloats(db, table string, cols []string, fn func(row []float64) error) (int64, error) {
	return s.ScanFloatsCounted(db, table, cols, nil, fn)
}

// ScanFloatsCounted is ScanFloats with start called first with the exact
// row count of the snapshot being scanned (the n a mechanism must use when
// rows may be inserted concurrently); an error from start ends the scan.
func (s *Store) ScanFloatsCounted(db, table string, cols []string, start func(n int64) error, fn func(row []float64) error) (int64, error) {
	ts, m, p, width, err := s.scanPlan(db, table, cols)
	if err != nil {
		return 0, err
	}
	row := make([]float64, width)
	n, err := s.scan(ts, m, start, func(v []byte) error {
		if err := m.codec.decodeFloats(v, &p, row); err != nil {
			return fmt.Errorf("table %s: %w", m.name, err)
		}
		return fn(row)
	})
	return n, err
}

// ScanValues calls fn with the requested columns of every row as the
// engine's Go values (nil for NULL). The slice is reused between calls; the
// values themselves are not.
func (s *Store) ScanValues(db, table string, cols []string, fn func(row []any) error) (int64, error) {
	ts, m, p, width, err := s.scanPlan(db, table, cols)
	if err != nil {
		return 0, err
	}
	row := make([]any, width)
	n, err := s.scan(ts, m, nil, func(v []byte) error {
		if err := m.codec.decode(v, &p, row); err != nil {
			return fmt.Errorf("table %s: %w", m.name, err)
		}
		return fn(row)
	})
	return n, err
}
