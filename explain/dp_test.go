package explain

import (
	"math"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
)

func TestCandidate(t *testing.T) {
	for q, want := range map[string]bool{
		"EXPLAIN SELECT COUNT(*) FROM t":             true,
		"  /* c */ explain\nselect 1":                true,
		"DESCRIBE SELECT 1":                          true,
		"desc select 1":                              true,
		"EXPLAIN ANALYZE SELECT COUNT(*) FROM t":     true, // refused on a DP release
		"EXPLAIN FORMAT=TREE SELECT COUNT(*) FROM t": false,
		"EXPLAIN FORMAT = JSON SELECT 1":             false,
		"EXPLAIN PLAN SELECT 1":                      false,
		"SELECT 1":                                   false,
		"SELECT 'EXPLAIN SELECT 1'":                  false,
		"EXPLAINSELECT 1":                            false,
		"DESCRIBE t":                                 true, // parsed, then not an EXPLAIN
	} {
		if got := Candidate(q); got != want {
			t.Errorf("Candidate(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestNodeRows: absent numbers and empty strings are NULL, non-finite
// numbers too.
type fixed []Item

func (f fixed) ExplainRelease(*sql.Context) ([]Item, error) { return f, nil }
func (fixed) Resolved() bool                                { return true }
func (fixed) IsReadOnly() bool                              { return true }
func (fixed) Schema() sql.Schema                            { return nil }
func (fixed) Children() []sql.Node                          { return nil }
func (fixed) String() string                                { return "fixed" }
func (f fixed) WithChildren(...sql.Node) (sql.Node, error)  { return f, nil }

func TestNodeRows(t *testing.T) {
	it := Plain("column", "n", "COUNT(*)", "")
	it.Epsilon, it.NoiseScale = 0.5, math.Inf(1)
	n := &Node{R: fixed{it}}
	ctx := sql.NewEmptyContext()
	iter, err := n.RowIter(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	row, err := iter.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(row) != len(Schema) || row[0] != "column" || row[1] != "n" || row[2] != "COUNT(*)" || row[3] != nil ||
		row[4] != 0.5 || row[5] != nil || row[6] != nil || row[7] != nil || row[9] != nil {
		t.Fatalf("row %v", row)
	}
	if r, ok := Find(n.R); !ok || r == nil {
		t.Fatal("Find")
	}
}
