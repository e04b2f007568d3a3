package engine_test

import (
	"fmt"
	"testing"
)

// The statements of sysbench's oltp_read_write re-use their plans.
func TestPlanCacheSysbenchStatements(t *testing.T) {
	ts, root := planServer(t)
	for _, q := range []struct {
		q    string
		args func(i int) []any
	}{
		{"SELECT c FROM sb WHERE id=?", func(i int) []any { return []any{i} }},
		{"SELECT c FROM sb WHERE id BETWEEN ? AND ?", func(i int) []any { return []any{i, i + 9} }},
		{"SELECT SUM(k) FROM sb WHERE id BETWEEN ? AND ?", func(i int) []any { return []any{i, i + 9} }},
		{"SELECT c FROM sb WHERE id BETWEEN ? AND ? ORDER BY c", func(i int) []any { return []any{i, i + 9} }},
		{"SELECT DISTINCT c FROM sb WHERE id BETWEEN ? AND ? ORDER BY c", func(i int) []any { return []any{i, i + 9} }},
		{"UPDATE sb SET k=k+1 WHERE id=?", func(i int) []any { return []any{i} }},
		{"UPDATE sb SET c=? WHERE id=?", func(i int) []any { return []any{fmt.Sprintf("%020d", i), i} }},
		{"DELETE FROM sb WHERE id=?", func(i int) []any { return []any{i + 50} }},
		{"INSERT INTO sb (id, k, c) VALUES (?, ?, ?)", func(i int) []any { return []any{i + 50, i, fmt.Sprintf("%020d", i)} }},
	} {
		st := stmt(t, root, q.q)
		h := ts.e.PlanCacheHits()
		for i := 1; i <= 20; i++ {
			rows, err := st.Query(q.args(i)...)
			if err != nil {
				t.Fatal(err)
			}
			rows.Close()
		}
		hits := ts.e.PlanCacheHits() - h
		t.Logf("%3d hits: %s", hits, q.q)
		if hits < 15 {
			t.Errorf("%s: %d of 20 executions re-used the plan", q.q, hits)
		}
	}
}
