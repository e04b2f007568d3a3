package rel

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/dpsql/dpsql/dpquery/syntax"
)

// parseGroupBy parses q with go-mysql-server's planbuilder over empty
// in-memory copies of the shop's schema (the plan shape the engine's
// pre-analysis rule sees) and returns its GroupBy.
func parseGroupBy(t *testing.T, q string) *plan.GroupBy {
	t.Helper()
	db := memory.NewDatabase("s")
	pro := memory.NewDBProvider(db)
	col := func(name string, typ sql.Type, pk bool) *sql.Column {
		return &sql.Column{Name: name, Type: typ, Nullable: !pk, PrimaryKey: pk}
	}
	for name, sch := range map[string]sql.Schema{
		"customers": {col("id", types.Int64, true), col("region", types.Text, false)},
		"orders":    {col("id", types.Int64, true), col("customer_id", types.Int64, false), col("amount", types.Float64, false), col("product_id", types.Int64, false)},
		"items":     {col("id", types.Int64, true), col("order_id", types.Int64, false), col("qty", types.Int64, false)},
		"products":  {col("id", types.Int64, true), col("category", types.Text, false)},
	} {
		for _, c := range sch {
			c.Source = name
		}
		db.AddTable(name, memory.NewTable(db, name, sql.NewPrimaryKeySchema(sch), nil))
	}
	ctx := sql.NewContext(context.Background(), sql.WithSession(memory.NewSession(sql.NewBaseSession(), pro)))
	ctx.SetCurrentDatabase("s")
	n, _, err := planbuilder.Parse(ctx, analyzer.NewDefault(pro).Catalog, q)
	if err != nil {
		t.Fatalf("parse %s: %v", q, err)
	}
	var gb *plan.GroupBy
	transform.Inspect(n, func(c sql.Node) bool {
		if g, ok := c.(*plan.GroupBy); ok && gb == nil {
			gb = g
		}
		return gb == nil
	})
	if gb == nil {
		t.Fatalf("no GroupBy in %s", sql.DebugString(n))
	}
	return gb
}

// bigQuery runs a BigQuery-syntax statement end to end on the in-memory
// shop: syntax.Rewrite, planbuilder, FromGroupBy, Compile, Run.
func bigQuery(t *testing.T, m *mem, q string) (*Plan, [][]any, error) {
	t.Helper()
	rw, err := syntax.Rewrite(q)
	if err != nil {
		return nil, nil, err
	}
	opt := Options{Epsilon: rw.Options.Epsilon, Delta: rw.Options.Delta, MaxGroups: rw.Options.MaxGroups, MaxRows: rw.Options.MaxRows, AutoRows: rw.Options.AutoRows}
	if c := rw.Options.PrivacyUnitColumn; c != "" {
		tbl, name, ok := strings.Cut(c, ".")
		if !ok {
			tbl, name = "", c
		}
		opt.PrivacyUnitColumn = &Col{Table: tbl, Column: name}
	}
	var bounds []ArgBounds
	for _, b := range rw.Bounds {
		bounds = append(bounds, ArgBounds{Func: b.Func, Arg: b.Arg, Bounds: [2]float64{b.Lo, b.Hi}, Auto: b.Auto})
	}
	gq, outs, err := FromGroupBy(parseGroupBy(t, rw.SQL), opt, bounds)
	if err != nil {
		return nil, nil, err
	}
	p, err := Compile(gq, m)
	if err != nil {
		return nil, nil, err
	}
	res, err := p.Run(m, nil)
	if err != nil {
		return nil, nil, err
	}
	var rows [][]any
	for _, r := range res.Rows {
		row := make([]any, len(outs))
		for i, o := range outs {
			if o.Group >= 0 {
				row[i] = r[o.Group]
			} else {
				row[i] = r[len(gq.GroupBy)+o.Agg]
			}
		}
		rows = append(rows, row)
	}
	return p, rows, nil
}

func TestBigQuerySyntaxEndToEnd(t *testing.T) {
	m := shop(t, 100, 3)
	addCustomer(m, 5000, "north", 500, 100) // the heavy customer
	_, rows, err := bigQuery(t, m, `SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1e7, max_rows_contributed_per_group = 3, privacy_unit_column = c.id)
		SUM(o.amount, contribution_bounds_per_group => (0, 150)), c.region, COUNT(*) AS n
		FROM orders AS o JOIN customers AS c ON c.id = o.customer_id
		WHERE o.amount >= 0 GROUP BY c.region`)
	if err != nil {
		t.Fatal(err)
	}
	// Columns in the GroupBy's order (the projection above restores the
	// select order); per person: SUM 3·v clamped to [0, 150] (v = c%50 ≤ 49
	// → ≤ 147; the heavy customer 500·100 → 150), COUNT ≤ 3.
	want := map[string][2]float64{"north": {3*1200 + 150, 153}, "south": {3 * 1250, 150}}
	if len(rows) != 2 {
		t.Fatalf("rows %v", rows)
	}
	for _, r := range rows {
		var region string
		var sum float64
		var n int64
		for _, v := range r {
			switch x := v.(type) {
			case string:
				region = x
			case float64:
				sum = x
			case int64:
				n = x
			}
		}
		w := want[region]
		if math.Abs(sum-w[0]) > 0.01 || n != int64(w[1]) {
			t.Fatalf("%v, want %v", r, w)
		}
	}
	// Three tables, grouped by a customer attribute.
	_, rows, err = bigQuery(t, m, `SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1e7, max_rows_contributed_per_group = 10)
		c.region, COUNT(*), SUM(i.qty) FROM items i JOIN orders o ON i.order_id = o.id JOIN customers c ON o.customer_id = c.id GROUP BY c.region`)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		var region string
		var got int64
		for _, v := range r {
			switch x := v.(type) {
			case string:
				region = x
			case int64:
				got = x
			}
		}
		n := int64(150)
		if region == "north" {
			n = 160 // 50 × 3 + the heavy customer's 10
		}
		if got != n {
			t.Fatalf("items %v, want %d", r, n)
		}
	}
	// Refusals, before anything runs.
	for q, frag := range map[string]string{
		`SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, privacy_unit_column = o.id) COUNT(*) FROM orders o`:                             "does not hold the person",
		`SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) COUNT(*) FROM orders o JOIN customers c ON o.id = c.id`:                         "does not preserve",
		`SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) COUNT(*) FROM orders o LEFT JOIN customers c ON o.customer_id = c.id`:           "inner joins",
		`SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) MAX(o.amount) FROM orders o`:                                                    "not supported",
		`SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) COUNT(*) FROM orders o WHERE o.id IN (SELECT id FROM customers)`:                "WHERE",
		`SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) SUM(o.amount + 1) FROM orders o`:                                                "plain column",
		`SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1) COUNT(*), SUM(o.amount, contribution_bounds_per_group => (0, 1)) FROM orders o`: "",
	} {
		_, _, err := bigQuery(t, m, q)
		if frag == "" {
			if err != nil {
				t.Errorf("%s: %v", q, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), frag) {
			t.Errorf("%s: got %v, want a refusal naming %q", q, err, frag)
		}
	}
}
