package store

import (
	"fmt"
	"runtime"
	"sync"

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

// openRows calls start with the snapshot's row count and returns a cursor
// over its rows.
func openRows(tx *bolt.Tx, ts *tableState, m *tableMeta, start func(n int64) error) (*bolt.Cursor, error) {
	tb := tableBucket(tx, ts.db.key, ts.id)
	st, err := readStat(tb, m)
	if err != nil {
		return nil, err
	}
	if start != nil {
		if err := start(int64(st.count)); err != nil {
			return nil, err
		}
	}
	return tb.Bucket(bucketRows).Cursor(), nil
}

func (s *Store) scan(ts *tableState, m *tableMeta, start func(n int64) error, fn func(v []byte) error) (int64, error) {
	var n int64
	s.mv.settled()
	err := s.db.View(func(tx *bolt.Tx) error {
		c, err := openRows(tx, ts, m, start)
		if err != nil {
			return err
		}
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

// scanBatchRows is the number of rows ScanFloatsParallel hands a worker at
// a time: enough to make the channel's cost per row negligible, few enough
// that the workers finish close together.
const scanBatchRows = 512

// ScanFloatsParallel is ScanFloatsCounted with the decoding spread over the
// cores: one goroutine walks the cursor and hands the raw rows of the read
// transaction in batches to GOMAXPROCS workers, which decode them and call
// fn(i, row) for row i of the snapshot (table order, from 0). fn is called
// concurrently for different i, each worker with its own row slice (reused
// between its calls). Every row costs the same whichever worker takes it,
// and i does not depend on the schedule, so a caller that writes row i to
// slot i gets what the serial scan would give. ok is always true (the
// functions' storage interface has storages that cannot).
func (s *Store) ScanFloatsParallel(db, table string, cols []string, start func(n int64) error, fn func(i int64, row []float64)) (n int64, ok bool, err error) {
	ts, m, p, width, err := s.scanPlan(db, table, cols)
	if err != nil {
		return 0, true, err
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	s.mv.settled()
	err = s.db.View(func(tx *bolt.Tx) error {
		c, err := openRows(tx, ts, m, start)
		if err != nil {
			return err
		}
		type batch struct {
			first int64
			vs    [][]byte
		}
		jobs := make(chan batch, 2*workers)
		free := make(chan [][]byte, 4*workers)
		for range 4 * workers {
			free <- make([][]byte, 0, scanBatchRows)
		}
		errs := make([]error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				row := make([]float64, width)
				for b := range jobs {
					for k, v := range b.vs {
						if errs[w] != nil {
							break
						}
						if err := m.codec.decodeFloats(v, &p, row); err != nil {
							errs[w] = fmt.Errorf("table %s: %w", m.name, err)
							break
						}
						fn(b.first+int64(k), row)
					}
					free <- b.vs[:0]
				}
			}()
		}
		// The values are views into the read transaction's pages: they stay
		// valid until View returns, which waits for the workers.
		vs := <-free
		for k, v := c.First(); k != nil; k, v = c.Next() {
			vs = append(vs, v)
			n++
			if len(vs) == scanBatchRows {
				jobs <- batch{n - scanBatchRows, vs}
				vs = <-free
			}
		}
		if len(vs) > 0 {
			jobs <- batch{n - int64(len(vs)), vs}
		}
		close(jobs)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	})
	return n, true, err
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
