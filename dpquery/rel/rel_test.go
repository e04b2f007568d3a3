package rel

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/dpquery/eval"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/mechanism/bound"
)

// mem is an in-memory catalog and storage: tables are rows of values in
// schema order (the real store is exercised over the wire by the engine's
// tests once the compiler is wired).
type mem struct {
	entries map[string]catalog.Table
	schema  map[string][]string
	rows    map[string][][]any
}

func (m *mem) Table(key string) (catalog.Table, bool) { e, ok := m.entries[key]; return e, ok }

func (m *mem) Columns(db, table string) ([]string, error) {
	c, ok := m.schema[catalog.Key(db, table)]
	if !ok {
		return nil, fmt.Errorf("no table %s.%s", db, table)
	}
	return c, nil
}

func (m *mem) ScanValues(db, table string, cols []string, fn func(row []any) error) (int64, error) {
	key := catalog.Key(db, table)
	sch := m.schema[key]
	idx := make([]int, len(cols))
	for i, c := range cols {
		idx[i] = -1
		for j, s := range sch {
			if strings.EqualFold(s, c) {
				idx[i] = j
			}
		}
		if idx[i] < 0 {
			return 0, fmt.Errorf("no column %s in %s", c, key)
		}
	}
	out := make([]any, len(cols))
	for _, r := range m.rows[key] {
		for i, j := range idx {
			out[i] = r[j]
		}
		if err := fn(out); err != nil {
			return 0, err
		}
	}
	return int64(len(m.rows[key])), nil
}

func (m *mem) clone() *mem {
	c := &mem{entries: m.entries, schema: m.schema, rows: map[string][][]any{}}
	for k, v := range m.rows {
		c.rows[k] = append([][]any(nil), v...)
	}
	return c
}

// shop: customers(id, region) ← orders(id, customer_id, amount) ←
// items(id, order_id, qty); products(id, category) public; sellers a
// second unit; audit a row-level protected table. nCust customers, each
// with ordersPer orders of one item.
func shop(t testing.TB, nCust, ordersPer int) *mem {
	m := &mem{entries: map[string]catalog.Table{}, schema: map[string][]string{
		"s.customers": {"id", "region"},
		"s.orders":    {"id", "customer_id", "amount", "product_id"},
		"s.items":     {"id", "order_id", "qty"},
		"s.products":  {"id", "category"},
		"s.sellers":   {"id", "name"},
		"s.audit":     {"id", "note"},
	}, rows: map[string][][]any{}}
	members, err := catalog.ResolveUnits([]catalog.Explicit{
		{Table: "s.customers", Column: "id", Unit: "s.customer"},
		{Table: "s.sellers", Column: "id", Unit: "s.seller"},
	}, catalog.Schema{
		FKs: []catalog.ForeignKey{
			{Table: "s.orders", Column: "customer_id", Parent: "s.customers", ParentColumn: "id"},
			{Table: "s.items", Column: "order_id", Parent: "s.orders", ParentColumn: "id"},
		},
		PrimaryKey: map[string]string{"s.customers": "id", "s.orders": "id", "s.items": "id"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range m.schema {
		e := catalog.Table{Name: k, Protected: k != "s.products", Bounds: map[string]catalog.Bound{}, Labels: map[string][]string{}}
		if mm, ok := members[k]; ok {
			mm := mm
			e.Unit = &mm
		}
		m.entries[k] = e
	}
	m.entries["s.customers"].Labels["region"] = []string{"north", "south"}
	m.entries["s.products"].Labels["category"] = []string{"a", "b", "c"}
	m.entries["s.orders"].Bounds["amount"] = catalog.Bound{Lo: 0, Hi: 100}
	m.entries["s.items"].Bounds["qty"] = catalog.Bound{Lo: 0, Hi: 10}
	for p := 0; p < 3; p++ {
		m.rows["s.products"] = append(m.rows["s.products"], []any{int64(p), []string{"a", "b", "c"}[p]})
	}
	for c := 0; c < nCust; c++ {
		addCustomer(m, int64(c), []string{"north", "south"}[c%2], ordersPer, float64(c%50))
	}
	return m
}

// nextOrder numbers orders across tests, some of them parallel.
var nextOrder = func() *atomic.Int64 { var n atomic.Int64; n.Store(1 << 40); return &n }()

// addCustomer adds a customer with n orders (product n%3) of amount v and
// one item each.
func addCustomer(m *mem, id int64, region string, n int, v float64) {
	m.rows["s.customers"] = append(m.rows["s.customers"], []any{id, region})
	for i := 0; i < n; i++ {
		o := nextOrder.Add(1)
		m.rows["s.orders"] = append(m.rows["s.orders"], []any{o, id, v, int64(i % 3)})
		m.rows["s.items"] = append(m.rows["s.items"], []any{o, o, int64(2)})
	}
}

func col(t, c string) *Col { return &Col{Table: t, Column: c} }

var ordersByRegion = Query{
	From:    Join{Left: Scan{DB: "s", Table: "orders", Alias: "o"}, Right: Scan{DB: "s", Table: "customers", Alias: "c"}, LeftCol: Col{"o", "customer_id"}, RightCol: Col{"c", "id"}},
	GroupBy: []Col{{"c", "region"}},
	Aggs:    []Agg{{Kind: bound.Count}, {Kind: bound.Sum, Col: col("o", "amount")}, {Kind: bound.Avg, Col: col("o", "amount")}},
	Options: Options{Epsilon: 1},
}

func itemsByRegion(opt Options) Query {
	return Query{
		From: Join{
			Left:    Join{Left: Scan{DB: "s", Table: "items", Alias: "i"}, Right: Scan{DB: "s", Table: "orders", Alias: "o"}, LeftCol: Col{"i", "order_id"}, RightCol: Col{"o", "id"}},
			Right:   Scan{DB: "s", Table: "customers", Alias: "c"},
			LeftCol: Col{"o", "customer_id"}, RightCol: Col{"c", "id"},
		},
		GroupBy: []Col{{"c", "region"}},
		Aggs:    []Agg{{Kind: bound.Count}, {Kind: bound.Sum, Col: col("i", "qty")}},
		Options: opt,
	}
}

func TestCompileShop(t *testing.T) {
	m := shop(t, 10, 2)
	p, err := Compile(ordersByRegion, m)
	if err != nil {
		t.Fatal(err)
	}
	if p.Unit != "s.customer" || strings.Join(p.Tables, ",") != "s.customers,s.orders" {
		t.Fatalf("unit %s tables %v", p.Unit, p.Tables)
	}
	if len(p.spec.Domain) != 2 || p.spec.MaxGroups != 1 || p.spec.MaxRows != 1 {
		t.Fatalf("spec %+v", p.spec)
	}
	// SUM default bounds: C·[min(lo,0), max(hi,0)]; AVG: declared bounds.
	if s := p.spec.Measures[1]; s.Lo != 0 || s.Hi != 100 {
		t.Fatalf("sum bounds %+v", s)
	}
	// items alone reads orders to find each item's customer.
	q := Query{From: Scan{DB: "s", Table: "items"}, Aggs: []Agg{{Kind: bound.Count}}, Options: Options{Epsilon: 1, MaxRows: 5}}
	p2, err := Compile(q, m)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p2.Tables, ",") != "s.items,s.orders" {
		t.Fatalf("items alone reads %v", p2.Tables)
	}
	// The plan key is stable and changes with every public input.
	two := ordersByRegion // reads of two columns of one table
	two.Aggs = append(append([]Agg(nil), two.Aggs...), Agg{Kind: bound.Avg, Col: col("o", "product_id"), Bounds: &[2]float64{0, 3}})
	first, err := Compile(two, m)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		again, err := Compile(two, m)
		if err != nil || again.Key() != first.Key() {
			t.Fatalf("plan key not stable: %v\n%s\n%s", err, again.Key(), first.Key())
		}
	}
	q.Options.MaxRows = 6
	p3, _ := Compile(q, m)
	if p2.Key() == p3.Key() {
		t.Fatal("plan key ignores max_rows_contributed_per_group")
	}
	// privacy_unit_column: the person column is accepted, another refused.
	ok := ordersByRegion
	ok.Options.PrivacyUnitColumn = col("o", "customer_id")
	if _, err := Compile(ok, m); err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(itemsByRegion(Options{Epsilon: 1, PrivacyUnitColumn: col("c", "id")}), m); err != nil {
		t.Fatal(err)
	}
}

// TestCompileRefusals: everything refused is refused at compile time (no
// run, no charge) with the reason.
func TestCompileRefusals(t *testing.T) {
	m := shop(t, 4, 1)
	o, c := Scan{DB: "s", Table: "orders", Alias: "o"}, Scan{DB: "s", Table: "customers", Alias: "c"}
	count := []Agg{{Kind: bound.Count}}
	cases := map[string]struct {
		q    Query
		want string
	}{
		"join on non-unit key": {Query{From: Join{Left: o, Right: c, LeftCol: Col{"o", "id"}, RightCol: Col{"c", "id"}}, Aggs: count, Options: Options{Epsilon: 1}}, "does not preserve"},
		"two units":            {Query{From: Join{Left: o, Right: Scan{DB: "s", Table: "sellers"}, LeftCol: Col{"o", "customer_id"}, RightCol: Col{"sellers", "id"}}, Aggs: count, Options: Options{Epsilon: 1}}, "two privacy units"},
		"row-level table":      {Query{From: Join{Left: o, Right: Scan{DB: "s", Table: "audit"}, LeftCol: Col{"o", "id"}, RightCol: Col{"audit", "id"}}, Aggs: count, Options: Options{Epsilon: 1}}, "row level"},
		"public only":          {Query{From: Scan{DB: "s", Table: "products"}, Aggs: count, Options: Options{Epsilon: 1}}, "no table of a privacy unit"},
		"unit column mismatch": {func() Query {
			q := ordersByRegion
			q.Options.PrivacyUnitColumn = col("o", "id")
			return q
		}(), "does not hold the person"},
		"sum without bounds":         {Query{From: c, Aggs: []Agg{{Kind: bound.Sum, Col: col("c", "id")}}, Options: Options{Epsilon: 1}}, "needs bounds"},
		"undeclared group, no delta": {Query{From: o, GroupBy: []Col{{"o", "product_id"}}, Aggs: count, Options: Options{Epsilon: 1}}, "needs a δ"},
		"no epsilon":                 {Query{From: o, Aggs: count}, "epsilon"},
		"count with bounds":          {Query{From: o, Aggs: []Agg{{Kind: bound.Count, Bounds: &[2]float64{0, 1}}}, Options: Options{Epsilon: 1}}, "COUNT takes no"},
		"ambiguous column":           {Query{From: Join{Left: o, Right: c, LeftCol: Col{"o", "customer_id"}, RightCol: Col{"c", "id"}}, GroupBy: []Col{{"", "id"}}, Aggs: count, Options: Options{Epsilon: 1}}, "ambiguous"},
		"unknown table":              {Query{From: Scan{DB: "s", Table: "nope"}, Aggs: count, Options: Options{Epsilon: 1}}, "does not exist"},
		"k too large":                {Query{From: o, Aggs: count, Options: Options{Epsilon: 1, MaxGroups: 1 << 20}}, "max_groups_contributed"},
	}
	for name, tc := range cases {
		_, err := Compile(tc.q, m)
		if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a refusal naming %q", name, err, tc.want)
		}
	}
	// Protected ⨝ public on any key is allowed.
	q := Query{From: Join{Left: o, Right: Scan{DB: "s", Table: "products", Alias: "p"}, LeftCol: Col{"o", "product_id"}, RightCol: Col{"p", "id"}},
		GroupBy: []Col{{"p", "category"}}, Aggs: count, Options: Options{Epsilon: 1}}
	if _, err := Compile(q, m); err != nil {
		t.Fatalf("orders ⨝ products: %v", err)
	}
}

// bounded runs the plan up to the bounded, pre-noise statistics.
func bounded(t testing.TB, p *Plan, src Source) *bound.Bounded {
	t.Helper()
	acc, err := p.collect(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := acc.Bound()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRunExact: at a huge ε the released values are the bounded truth.
func TestRunExact(t *testing.T) {
	m := shop(t, 100, 3) // 50 customers per region, 3 orders each, amounts c%50
	q := ordersByRegion
	q.Options = Options{Epsilon: 1e7, MaxRows: 3}
	_, res := compileRun(t, q, m)
	if len(res.Rows) != 2 {
		t.Fatalf("rows %v", res.Rows)
	}
	// north = even c: amounts c%50 ∈ {0, 2, …, 48} twice (Σ = 1200); a
	// person's sum is 3·v (within C·[0, 100]); AVG is the mean of person means.
	want := map[string][3]float64{"north": {150, 3 * 1200, 24}, "south": {150, 3 * 1250, 25}}
	for _, r := range res.Rows {
		w := want[r[0].(string)]
		if r[1].(int64) != int64(w[0]) || math.Abs(r[2].(float64)-w[1]) > 0.01 || math.Abs(r[3].(float64)-w[2]) > 1e-3 {
			t.Fatalf("%v, want %v", r, w)
		}
	}
	// The three-table join and a WHERE on a customer column.
	q2 := itemsByRegion(Options{Epsilon: 1e7, MaxRows: 2})
	q2.Where = Cmp{Col: Col{"c", "region"}, Op: "=", Value: "south"}
	_, res2 := compileRun(t, q2, m)
	for _, r := range res2.Rows {
		wc, ws := int64(100), 300.0 // COUNT: 50 customers × min(3 items, C = 2); SUM: 3·2 per person, within C·[0, 10]
		if r[0] == "north" {
			wc, ws = 0, 0
		}
		if r[1].(int64) != wc || math.Abs(r[2].(float64)-ws) > 0.01 {
			t.Fatalf("items %v, want %d, %v", r, wc, ws)
		}
	}
}

// TestEvalWhere: a WHERE compiled by dpquery/eval filters the joined rows.
func TestEvalWhere(t *testing.T) {
	m := shop(t, 100, 1) // amounts c%50
	gt := expression.NewGreaterThan(expression.NewGetField(0, types.Float64, "amount", true), expression.NewLiteral(float64(39), types.Float64))
	pr, err := eval.Compile(gt, []eval.Column{{Name: "amount", Type: types.Float64}})
	if err != nil {
		t.Fatal(err)
	}
	q := ordersByRegion
	q.Options = Options{Epsilon: 1e7}
	q.Where = EvalPred{Cols: []Col{{"o", "amount"}}, P: pr}
	p, res := compileRun(t, q, m)
	// amounts 40..49: five even (north) and five odd (south), twice each.
	for _, r := range res.Rows {
		if r[1].(int64) != 10 {
			t.Fatalf("%v: want 10 customers with amount > 39", r)
		}
	}
	if !strings.Contains(p.Key(), "where(") {
		t.Fatal("the WHERE is not in the plan key")
	}
}

// TestHeavyCustomer: a customer with 500 orders moves COUNT(*) FROM orders
// by at most k·C (plus noise), the first example.
func TestHeavyCustomer(t *testing.T) {
	m := shop(t, 200, 1)
	q := Query{From: Scan{DB: "s", Table: "orders"}, Aggs: []Agg{{Kind: bound.Count}}, Options: Options{Epsilon: 1e7}}
	p, err := Compile(q, m)
	if err != nil {
		t.Fatal(err)
	}
	m2 := m.clone()
	addCustomer(m2, 9999, "north", 500, 100)
	a, b := bounded(t, p, m), bounded(t, p, m2)
	if d := b.First[0][0] - a.First[0][0]; d != 1 {
		t.Fatalf("500 orders moved the bounded count by %v, want C = 1", d)
	}
}

func l1(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	return s
}

// TestSensitivityUnitNeighbours: for one-table, two-table and three-table
// queries (and public ⨝ unit), adding a customer with 1, 10,000 rows, in one
// group or all groups, moves every bounded vector by at most the plan's
// sensitivity. Groups that depend on the public side (product category)
// let one person reach every group; k caps it.
func TestSensitivityUnitNeighbours(t *testing.T) {
	// One order per base customer: each base person is in one group, so
	// only the added person's group sample is random.
	m := shop(t, 60, 1)
	o := Scan{DB: "s", Table: "orders", Alias: "o"}
	byCategory := func(k, c int) Query {
		return Query{From: Join{Left: o, Right: Scan{DB: "s", Table: "products", Alias: "p"}, LeftCol: Col{"o", "product_id"}, RightCol: Col{"p", "id"}},
			GroupBy: []Col{{"p", "category"}},
			Aggs:    []Agg{{Kind: bound.Count}, {Kind: bound.Sum, Col: col("o", "amount")}, {Kind: bound.Avg, Col: col("o", "amount")}},
			Options: Options{Epsilon: 1, MaxGroups: k, MaxRows: c}}
	}
	queries := map[string]Query{
		"orders alone":        {From: o, Aggs: []Agg{{Kind: bound.Count}, {Kind: bound.Sum, Col: col("o", "amount")}}, Options: Options{Epsilon: 1, MaxRows: 3}},
		"orders ⨝ customers":  func() Query { q := ordersByRegion; q.Options.MaxRows = 2; return q }(),
		"three tables":        itemsByRegion(Options{Epsilon: 1, MaxRows: 4}),
		"items alone":         {From: Scan{DB: "s", Table: "items"}, Aggs: []Agg{{Kind: bound.Count}, {Kind: bound.Avg, Col: col("items", "qty")}}, Options: Options{Epsilon: 1}},
		"⨝ public, k=1":       byCategory(1, 1),
		"⨝ public, k=2, C=5":  byCategory(2, 5),
		"⨝ public, k=3, C=50": byCategory(3, 50),
	}
	victims := map[string]int{"1 row": 1, "10,000 rows": 10000}
	for qn, q := range queries {
		p, err := Compile(q, m)
		if err != nil {
			t.Fatalf("%s: %v", qn, err)
		}
		b0 := bounded(t, p, m)
		for vn, n := range victims {
			for _, region := range []string{"north", "south"} {
				m2 := m.clone()
				addCustomer(m2, 77777, region, n, 100) // every product, so every category group
				for rep := 0; rep < 3; rep++ {
					b1 := bounded(t, p, m2)
					if len(b1.Keys) != len(b0.Keys) {
						t.Fatalf("%s: groups changed", qn)
					}
					for i := range p.spec.Measures {
						s1, s2 := p.bp.Sensitivity(i)
						if d := l1(b0.First[i], b1.First[i]); d > s1 {
							t.Fatalf("%s, %s in %s: measure %d moved %v > %v", qn, vn, region, i, d, s1)
						}
						if d := l1(b0.Second[i], b1.Second[i]); d > s2 {
							t.Fatalf("%s, %s in %s: measure %d (second) moved %v > %v", qn, vn, region, i, d, s2)
						}
					}
				}
			}
		}
	}
}

// TestAuditThreeTables: Clopper–Pearson audit of COUNT over items ⨝ orders
// ⨝ customers on neighbours differing by a customer with 100 items. Must
// fail: the same query where the catalog (wrongly) makes each item its own
// person — row-level sensitivity on unit-level neighbours.
func TestAuditThreeTables(t *testing.T) {
	t.Parallel()
	m := shop(t, 8, 1)
	m2 := m.clone()
	addCustomer(m2, 5555, "north", 100, 50)
	const eps = 1.0
	q := itemsByRegion(Options{Epsilon: eps})
	q.Aggs = q.Aggs[:1]
	cfg := audit.Config{N: 10000}
	sampler := func(p *Plan) audit.Sampler {
		a0, a1 := bounded(t, p, m).First[0], bounded(t, p, m2).First[0]
		return func(side int) float64 {
			src := m
			if side == 1 {
				src = m2
			}
			res, err := p.Run(src, nil)
			if err != nil {
				t.Fatal(err)
			}
			y := res.Bound.Values[0]
			s := 0.0
			for g := range y {
				s += math.Abs(y[g]-a1[g]) - math.Abs(y[g]-a0[g])
			}
			return s
		}
	}
	p, err := Compile(q, m)
	if err != nil {
		t.Fatal(err)
	}
	audit.RequirePass(t, sampler(p), eps, cfg)

	// Wrong unit: items declared as their own unit on items.id (each item
	// a "person"); the join with orders/customers is then refused, so the
	// broken catalog counts items alone.
	wrong := &mem{entries: map[string]catalog.Table{}, schema: m.schema, rows: m.rows}
	for k, e := range m.entries {
		wrong.entries[k] = e
	}
	e := wrong.entries["s.items"]
	e.Unit = &catalog.Member{Unit: "s.item", Column: "id"}
	wrong.entries["s.items"] = e
	wrong2 := &mem{entries: wrong.entries, schema: m2.schema, rows: m2.rows}
	pw, err := Compile(Query{From: Scan{DB: "s", Table: "items"}, Aggs: []Agg{{Kind: bound.Count}}, Options: Options{Epsilon: eps}}, wrong)
	if err != nil {
		t.Fatal(err)
	}
	a0, a1 := bounded(t, pw, wrong).First[0], bounded(t, pw, wrong2).First[0]
	audit.RequireCatch(t, func(side int) float64 {
		src := wrong
		if side == 1 {
			src = wrong2
		}
		res, err := pw.Run(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		y := res.Bound.Values[0]
		return math.Abs(y[0]-a1[0]) - math.Abs(y[0]-a0[0])
	}, eps, cfg)
}

// TestPartitionSelectionPersonLevel: undeclared group keys are selected by
// persons, not rows: a category bought by one customer 10,000 times stays
// hidden; categories with many customers appear.
func TestPartitionSelectionPersonLevel(t *testing.T) {
	m := shop(t, 3000, 3) // every customer buys products 0, 1, 2
	addCustomer(m, 424242, "north", 10000, 1)
	// A private product category only the heavy customer buys.
	m.rows["s.products"] = append(m.rows["s.products"], []any{int64(99), "secret"})
	for i := range m.rows["s.orders"] {
		if m.rows["s.orders"][i][1] == int64(424242) {
			r := append([]any(nil), m.rows["s.orders"][i]...)
			r[3] = int64(99)
			m.rows["s.orders"][i] = r
		}
	}
	q := Query{From: Join{Left: Scan{DB: "s", Table: "orders", Alias: "o"}, Right: Scan{DB: "s", Table: "products", Alias: "p"}, LeftCol: Col{"o", "product_id"}, RightCol: Col{"p", "id"}},
		GroupBy: []Col{{"o", "product_id"}}, Aggs: []Agg{{Kind: bound.Count}}, Options: Options{Epsilon: 1, Delta: 1e-6, MaxGroups: 3}}
	_, res := compileRun(t, q, m)
	var keys []string
	for _, r := range res.Rows {
		keys = append(keys, r[0].(string))
	}
	if strings.Join(keys, ",") != "0,1,2" {
		t.Fatalf("released groups %v, want the three shared products only", keys)
	}
}

// Cmp is a total comparison predicate Col Op Value (Op one of = != < <= >
// >=): numbers compare as float64, anything else by its label string; NULL
// compares false. The SQL path compiles WHERE with dpquery/eval (EvalPred).
type Cmp struct {
	Col   Col
	Op    string
	Value any
}

// Columns implements Predicate.
func (c Cmp) Columns() []Col { return []Col{c.Col} }

// String implements Predicate.
func (c Cmp) String() string {
	return fmt.Sprintf("%s %s %q", c.Col, c.Op, functions.LabelString(c.Value))
}

// Eval implements Predicate: no branch on the value can panic or fail.
func (c Cmp) Eval(vals []any) bool {
	v := vals[0]
	if v == nil || c.Value == nil {
		return false
	}
	var d int
	a, okA := functions.ToFloat(v)
	b, okB := functions.ToFloat(c.Value)
	if okA && okB {
		switch {
		case a < b:
			d = -1
		case a > b:
			d = 1
		case a == b:
		default:
			return false // NaN
		}
	} else {
		d = strings.Compare(functions.LabelString(v), functions.LabelString(c.Value))
	}
	switch c.Op {
	case "=":
		return d == 0
	case "!=", "<>":
		return d != 0
	case "<":
		return d < 0
	case "<=":
		return d <= 0
	case ">":
		return d > 0
	case ">=":
		return d >= 0
	}
	return false
}

// compileRun compiles q and runs it on m, failing the test on any error.
func compileRun(t *testing.T, q Query, m *mem) (*Plan, *Result) {
	t.Helper()
	p, err := Compile(q, m)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p, res
}
