package mysqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// snapshot runs fn on one connection inside a read-only REPEATABLE READ
// transaction started WITH CONSISTENT SNAPSHOT: every statement of fn sees
// the same committed state. The transaction is always rolled back (it
// writes nothing).
func (b *Backend) snapshot(ctx context.Context, fn func(c *sql.Conn) error) error {
	c, err := b.pool.Conn(ctx)
	if err != nil {
		return b.fail("connect", err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"); err != nil {
		return b.fail("set isolation", err)
	}
	if _, err := c.ExecContext(ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"); err != nil {
		return b.fail("start snapshot", err)
	}
	ferr := fn(c)
	if _, err := c.ExecContext(context.Background(), "ROLLBACK"); err != nil && ferr == nil {
		ferr = b.fail("end snapshot", err)
	}
	return ferr
}

// columns resolves column names (case-insensitive; none = all) to the
// backend's spelling and kinds.
func (t *table) columns(cols []string) ([]string, []kind, error) {
	if len(cols) == 0 {
		out := make([]string, len(t.schema))
		for i, c := range t.schema {
			out[i] = c.Name
		}
		return out, append([]kind(nil), t.kinds...), nil
	}
	names, kinds := make([]string, len(cols)), make([]kind, len(cols))
	for i, c := range cols {
		j := t.schema.IndexOfColName(c)
		if j < 0 {
			return nil, nil, fmt.Errorf("table %s has no column %q", t.name, c)
		}
		names[i], kinds[i] = t.schema[j].Name, t.kinds[j]
	}
	return names, kinds, nil
}

// isDouble reports whether the column (as columns spells it) is stored as
// DOUBLE on the backend.
func (t *table) isDouble(name string) bool {
	j := t.schema.IndexOfColName(name)
	return j >= 0 && j < len(t.double) && t.double[j]
}

func (t *table) from() string { return quote(t.db) + "." + quote(t.name) }

func selectList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	return strings.Join(q, ", ")
}

// RowCount returns the number of rows of an attached table (COUNT(*), one
// statement, hence one snapshot).
func (b *Backend) RowCount(db, name string) (int64, error) {
	t, ok := b.lookup(db, name)
	if !ok {
		return 0, fmt.Errorf("table %s.%s is not attached", db, name)
	}
	var n int64
	if err := b.pool.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM "+t.from()).Scan(&n); err != nil {
		return 0, b.fail("count rows of "+t.from(), err)
	}
	return n, nil
}

// stream runs SELECT cols FROM t in one snapshot with the binary protocol
// (a prepared statement: DOUBLE values arrive as their 8 IEEE bytes, so no
// decimal text round trip can change them) and calls fn with every row.
func (b *Backend) stream(db, name string, cols []string, fn func(vals []any, kinds []kind) error) (int64, error) {
	t, ok := b.lookup(db, name)
	if !ok {
		return 0, fmt.Errorf("table %s.%s is not attached", db, name)
	}
	names, kinds, err := t.columns(cols)
	if err != nil {
		return 0, err
	}
	var n int64
	err = b.snapshot(context.Background(), func(c *sql.Conn) error {
		st, err := c.PrepareContext(context.Background(), "SELECT "+selectList(names)+" FROM "+t.from())
		if err != nil {
			return b.fail("prepare scan of "+t.from(), err)
		}
		defer st.Close()
		rows, err := st.QueryContext(context.Background())
		if err != nil {
			return b.fail("scan "+t.from(), err)
		}
		defer rows.Close()
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return b.fail("read row of "+t.from(), err)
			}
			if err := fn(vals, kinds); err != nil {
				return err
			}
			n++
		}
		return b.fail("scan "+t.from(), rows.Err())
	})
	return n, err
}

// ScanFloats calls fn with the requested columns of every row as float64
// (NULL and non-numeric values are NaN), as store does.
func (b *Backend) ScanFloats(db, name string, cols []string, fn func(row []float64) error) (int64, error) {
	var row []float64
	return b.stream(db, name, cols, func(vals []any, kinds []kind) error {
		if row == nil {
			row = make([]float64, len(vals))
		}
		for i, v := range vals {
			if kinds[i] == kindText || kinds[i] == kindTime {
				row[i] = math.NaN() // as store: non-numeric values are NaN
				continue
			}
			row[i] = toFloat(v)
		}
		return fn(row)
	})
}

// ScanValues calls fn with the requested columns of every row as the
// engine's Go values (int64, uint64, float64, string, time.Time; nil for
// NULL).
func (b *Backend) ScanValues(db, name string, cols []string, fn func(row []any) error) (int64, error) {
	var row []any
	return b.stream(db, name, cols, func(vals []any, kinds []kind) error {
		if row == nil {
			row = make([]any, len(vals))
		}
		for i, v := range vals {
			row[i] = toValue(v, kinds[i])
		}
		return fn(row)
	})
}

// toFloat converts a driver value as store's decodeFloats does.
func toFloat(v any) float64 {
	switch x := v.(type) {
	case nil:
		return math.NaN()
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case float64:
		return x
	case float32:
		return float64(x)
	case []byte:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return math.NaN()
		}
		return f
	}
	return math.NaN()
}

// toValue converts a driver value to the engine's type for kind k.
func toValue(v any, k kind) any {
	if v == nil {
		return nil
	}
	switch k {
	case kindInt:
		switch x := v.(type) {
		case int64:
			return x
		case uint64:
			return int64(x)
		case []byte:
			i, _ := strconv.ParseInt(string(x), 10, 64)
			return i
		}
	case kindUint:
		switch x := v.(type) {
		case int64:
			return uint64(x)
		case uint64:
			return x
		case []byte:
			u, _ := strconv.ParseUint(string(x), 10, 64)
			return u
		}
	case kindFloat:
		return toFloat(v)
	case kindTime:
		if t, ok := v.(time.Time); ok {
			return t
		}
	}
	switch x := v.(type) {
	case []byte:
		return string(x)
	case time.Time:
		return x.Format("2006-01-02 15:04:05.999999")
	}
	return fmt.Sprint(v)
}
