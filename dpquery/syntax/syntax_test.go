package syntax

import (
	"errors"
	"strings"
	"testing"
)

func TestRewrite(t *testing.T) {
	q := `SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, delta = 1e-5, max_groups_contributed = 2, privacy_unit_column = o.customer_id)
  c.region, COUNT(*), SUM(o.amount, contribution_bounds_per_group => (0, 500)), AVG(o.amount, contribution_bounds_per_group=>(-2.5, 1E2))
FROM orders o JOIN customers c ON o.customer_id = c.id -- a comment: SUM(x, contribution_bounds_per_group => (1, 2))
WHERE c.name <> 'SUM(contribution_bounds_per_group)' GROUP BY c.region`
	r, err := Rewrite(q)
	if err != nil {
		t.Fatal(err)
	}
	o := r.Options
	if o.Epsilon != 1 || o.Delta != 1e-5 || !o.HasDelta || o.MaxGroups != 2 || o.MaxRows != 0 || o.PrivacyUnitColumn != "o.customer_id" {
		t.Fatalf("options %+v", o)
	}
	if len(r.Bounds) != 2 || r.Bounds[0] != (Bounded{"sum", "o.amount", Bounds{Lo: 0, Hi: 500}}) || r.Bounds[1] != (Bounded{"avg", "o.amount", Bounds{Lo: -2.5, Hi: 100}}) {
		t.Fatalf("bounds %v", r.Bounds)
	}
	want := `SELECT
  c.region, COUNT(*), SUM(o.amount), AVG(o.amount)
FROM orders o JOIN customers c ON o.customer_id = c.id -- a comment: SUM(x, contribution_bounds_per_group => (1, 2))
WHERE c.name <> 'SUM(contribution_bounds_per_group)' GROUP BY c.region`
	if r.SQL != want {
		t.Fatalf("rewritten:\n%s\nwant:\n%s", r.SQL, want)
	}
	if Has("SELECT COUNT(*) FROM t") || !Has("select  with\ndifferential_privacy options(epsilon=1) count(*) from t") {
		t.Fatal("Has")
	}
}

// TestRewriteAuto: max_rows_contributed_per_group = auto and
// contribution_bounds_per_group => auto (docs/privacy/units.md §3a).
func TestRewriteAuto(t *testing.T) {
	r, err := Rewrite(`SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, max_rows_contributed_per_group = AUTO) c.region, COUNT(*), SUM(o.amount, contribution_bounds_per_group => auto) FROM o GROUP BY c.region`)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Options.AutoRows || r.Options.MaxRows != 0 {
		t.Fatalf("options %+v", r.Options)
	}
	if len(r.Bounds) != 1 || r.Bounds[0] != (Bounded{"sum", "o.amount", Bounds{Auto: true}}) {
		t.Fatalf("bounds %+v", r.Bounds)
	}
	if want := "SELECT c.region, COUNT(*), SUM(o.amount) FROM o GROUP BY c.region"; r.SQL != want {
		t.Fatalf("rewritten %q, want %q", r.SQL, want)
	}
}

func TestRewriteRefusals(t *testing.T) {
	for q, frag := range map[string]string{
		"SELECT WITH DIFFERENTIAL_PRIVACY COUNT(*) FROM t":                                                                "OPTIONS",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(delta = 1e-5) COUNT(*) FROM t":                                          "epsilon",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0) COUNT(*) FROM t":                                           "positive",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, epsilon = 2) COUNT(*) FROM t":                              "twice",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, max_groups_contributed = 0) COUNT(*) FROM t":               "positive integer",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, k_anonymity = 3) COUNT(*) FROM t":                          "unknown option",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0x10) COUNT(*) FROM t":                                        "unexpected",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1e999) COUNT(*) FROM t":                                       "finite decimal",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) SUM(x, contribution_bounds_per_group => (5, 1)) FROM t":    "below upper",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) SUM(x, contribution_bounds_per_group => (0, 1), 3) FROM t": "last argument",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, delta = 1) COUNT(*) FROM t":                                "delta",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) COUNT(*) FROM t WHERE a = 'x":                              "unterminated",
		"SELECT COUNT(*) FROM t": "does not start",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, max_rows_contributed_per_group = automatic) COUNT(*) FROM t": "positive integer or auto",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, max_groups_contributed = auto) COUNT(*) FROM t":              "positive integer",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, max_rows_contributed_per_group = 'auto') COUNT(*) FROM t":    "positive integer or auto",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) SUM(x, contribution_bounds_per_group => auto, 3) FROM t":     "last argument",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) SUM(x, contribution_bounds_per_group => automatic) FROM t":   "expected",
	} {
		_, err := Rewrite(q)
		if err == nil || !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), frag) {
			t.Errorf("%s: got %v, want %q", q, err, frag)
		}
	}
}

// TestRewriteExplain: EXPLAIN (DESCRIBE, DESC) before the clause is kept
// and flagged; the options are those of the query.
func TestRewriteExplain(t *testing.T) {
	for _, kw := range []string{"EXPLAIN", "describe", "Desc"} {
		q := "/* c */ " + kw + ` SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 2, max_groups_contributed = 3) region, SUM(x, contribution_bounds_per_group => (0, 9)) FROM t GROUP BY region`
		if !Has(q) {
			t.Fatalf("%s: Has", kw)
		}
		r, err := Rewrite(q)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Explain || r.Options.Epsilon != 2 || r.Options.MaxGroups != 3 || len(r.Bounds) != 1 {
			t.Fatalf("%s: %+v", kw, r)
		}
		if want := kw + " SELECT region, SUM(x) FROM t GROUP BY region"; r.SQL != want {
			t.Fatalf("rewritten %q, want %q", r.SQL, want)
		}
	}
	r, err := Rewrite("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) COUNT(*) FROM t")
	if err != nil || r.Explain {
		t.Fatalf("plain query flagged as EXPLAIN: %+v %v", r, err)
	}
	if Has("EXPLAIN FORMAT=TREE SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) COUNT(*) FROM t") || Has("EXPLAIN EXPLAIN SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) COUNT(*) FROM t") {
		t.Fatal("Has takes EXPLAIN with options")
	}
}

// TestRewritePlaceholders: a prepared statement's parameters are taken in
// the query's body (they stay in the rewritten text, for the server to
// bind) and refused in OPTIONS and contribution bounds.
func TestRewritePlaceholders(t *testing.T) {
	r, err := Rewrite("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) COUNT(*), SUM(amount, contribution_bounds_per_group => (0, 10)) FROM orders WHERE amount > ? AND region = '?' HAVING COUNT(*) > ?")
	if err != nil {
		t.Fatal(err)
	}
	if want := "SELECT COUNT(*), SUM(amount) FROM orders WHERE amount > ? AND region = '?' HAVING COUNT(*) > ?"; r.SQL != want {
		t.Fatalf("rewritten %q, want %q", r.SQL, want)
	}
	for _, q := range []string{
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = ?) COUNT(*) FROM t",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, delta = ?) COUNT(*) FROM t",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, max_groups_contributed = ?) COUNT(*) FROM t",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) SUM(x, contribution_bounds_per_group => (?, 10)) FROM t",
		"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) SUM(x, contribution_bounds_per_group => (0, ?)) FROM t",
	} {
		_, err := Rewrite(q)
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "placeholder") {
			t.Errorf("%s: %v, want the placeholder refusal", q, err)
		}
	}
}
