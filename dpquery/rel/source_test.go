package rel

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/bound"
)

// TestParseFrom: the training source's FROM text becomes the compiler's
// Node; everything but tables and inner equi-joins is refused.
func TestParseFrom(t *testing.T) {
	ok := map[string]string{
		"orders":        "s.orders AS ",
		"orders o":      "s.orders AS o",
		"x.orders AS o": "x.orders AS o",
		"orders o JOIN customers c ON o.customer_id = c.id":                                              "s.orders AS o JOIN s.customers AS c ON o.customer_id = c.id",
		"orders o INNER JOIN customers c ON c.id = o.customer_id JOIN products p ON o.product_id = p.id": "((s.orders AS o JOIN s.customers AS c ON c.id = o.customer_id) JOIN s.products AS p ON o.product_id = p.id)",
		"(orders o JOIN customers c ON o.customer_id = c.id)":                                            "s.orders AS o JOIN s.customers AS c ON o.customer_id = c.id",
	}
	for text, want := range ok {
		n, err := ParseFrom("s", text)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if got := nodeText(n); got != want && got != "("+want+")" {
			t.Fatalf("%q: %s, want %s", text, got, want)
		}
	}
	refused := map[string]string{
		"":                               "empty",
		"orders o WHERE o.amount > 3":    "more than a FROM clause",
		"orders o LIMIT 3":               "more than a FROM clause",
		"orders o; DROP TABLE customers": "not a FROM clause",
		"orders o, customers c":          "comma",
		"orders o LEFT JOIN customers c ON o.customer_id = c.id":      "LEFT JOIN",
		"orders o JOIN customers c USING (id)":                        "USING",
		"orders o JOIN customers c ON o.customer_id < c.id":           "one equality",
		"orders o JOIN customers c ON o.customer_id = c.id + 1":       "one equality",
		"orders o JOIN customers c ON o.customer_id = c.id AND 1 = 1": "one equality",
		"(SELECT * FROM orders) o":                                    "not a table",
		"orders o NATURAL JOIN customers c":                           "NATURAL JOIN",
	}
	for text, want := range refused {
		_, err := ParseFrom("s", text)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), want) {
			t.Fatalf("%q: %v, want a refusal saying %q", text, err, want)
		}
	}
	if _, err := ParseFrom("", "orders o"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "no database") {
		t.Fatalf("no database: %v", err)
	}
}

func nodeText(n Node) string {
	switch x := n.(type) {
	case Scan:
		return x.DB + "." + x.Table + " AS " + x.Alias
	case Join:
		return "(" + nodeText(x.Left) + " JOIN " + nodeText(x.Right) + " ON " + x.LeftCol.String() + " = " + x.RightCol.String() + ")"
	}
	return "?"
}

const ordersCustomersProducts = "orders o JOIN customers c ON o.customer_id = c.id JOIN products p ON o.product_id = p.id"

// TestCompileFrom: the joined source's columns, origins, unit and anchor,
// and the compiler's refusals (all before any charge).
func TestCompileFrom(t *testing.T) {
	m := shop(t, 4, 2)
	f := Functions{Meta: m, Src: m}
	sc, err := f.CompileFrom("s", ordersCustomersProducts, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "o.id,o.customer_id,o.amount,o.product_id,c.id,c.region,p.id,p.category"
	if strings.Join(sc.Columns, ",") != want || sc.Unit != "s.customer" || sc.Anchor != "s.orders" ||
		strings.Join(sc.Tables, ",") != "s.customers,s.orders" {
		t.Fatalf("columns %v unit %s anchor %s tables %v", sc.Columns, sc.Unit, sc.Anchor, sc.Tables)
	}
	if o := sc.Origins[7]; o.Table != "products" || o.Column != "category" || !o.Public || sc.Origins[2].Public {
		t.Fatalf("origins %+v", sc.Origins)
	}
	if sc.From != "s.orders AS o JOIN s.customers AS c ON o.customer_id = c.id JOIN s.products AS p ON o.product_id = p.id" {
		t.Fatalf("canonical %s", sc.From)
	}
	rows := 0
	if err := sc.Run(nil, func(person string, row []any) {
		rows++
		if keyOf(row[1]) != person || keyOf(row[4]) != person || row[3] != row[6] {
			t.Fatalf("person %s row %v", person, row)
		}
	}); err != nil || rows != 8 {
		t.Fatalf("%d rows, %v", rows, err)
	}
	refused := map[string]string{
		"audit a JOIN customers c ON a.id = c.id":   "row level",
		"customers c JOIN sellers s ON c.id = s.id": "two privacy units",
		"orders o JOIN customers c ON o.id = c.id":  "does not preserve the privacy unit",
		"products p": "public tables only",
		"orders o JOIN customers c ON o.customer_id = c.nope":          "unknown column",
		"orders o JOIN nosuch n ON o.id = n.id":                        "does not exist",
		"orders o JOIN customers o ON o.customer_id = o.id":            "alias o is used twice",
		"orders o JOIN customers c ON o.customer_id = c.id JOIN audit": "needs ON a = b",
	}
	for text, want := range refused {
		_, err := f.CompileFrom("s", text, nil)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), want) {
			t.Fatalf("%q: %v, want a refusal saying %q", text, err, want)
		}
	}
	// A table the account may not read is missing, whatever it is.
	_, err = f.CompileFrom("s", "orders o JOIN audit a ON o.id = a.id", func(db, table string) bool { return table != "audit" })
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "table s.audit does not exist") {
		t.Fatalf("unreadable table: %v", err)
	}
}

// TestCompileFromOneRowPerPerson (units.md §10, joined sources): a person
// with 1 or 10,000 orders — each matching several rows of a public table
// on a non-unique key — contributes exactly one joined row to the training
// set, and every kept row is its person's own.
func TestCompileFromOneRowPerPerson(t *testing.T) {
	o, err := bound.NewOneRow(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, heavy := range []int{1, 10000} {
		m := shop(t, 40, 3)
		// products.id is not unique: every order matches 3 product rows.
		for rep := 0; rep < 2; rep++ {
			for p := 0; p < 3; p++ {
				m.rows["s.products"] = append(m.rows["s.products"], []any{int64(p), []string{"a", "b", "c"}[p]})
			}
		}
		amounts := make([]float64, heavy)
		addVictim(m, 7777, amounts)
		f := Functions{Meta: m, Src: m}
		sc, err := f.CompileFrom("s", ordersCustomersProducts, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := o.Sampler()
		joined := map[string]int{}
		if err := sc.Run(nil, func(person string, row []any) {
			joined[person]++
			s.Row(person, row)
		}); err != nil {
			t.Fatal(err)
		}
		victim := keyOf(int64(7777))
		if s.Persons() != 41 || joined[victim] != 3*heavy {
			t.Fatalf("heavy %d: %d persons, victim %d joined rows; want 41 and %d", heavy, s.Persons(), joined[victim], 3*heavy)
		}
		kept := s.Kept()
		perPerson := map[string]int{}
		for _, r := range kept {
			p := keyOf(r[4]) // c.id: the person of the row
			perPerson[p]++
			if keyOf(r[1]) != p {
				t.Fatalf("a kept row %v mixes two persons", r)
			}
		}
		if len(kept) != 41 || perPerson[victim] != 1 {
			t.Fatalf("heavy %d: %d kept rows, victim %d; want 41 and 1", heavy, len(kept), perPerson[victim])
		}
		for p, c := range perPerson {
			if c != 1 {
				t.Fatalf("person %s kept %d rows", p, c)
			}
		}
		rows, err := bound.Build(kept, 41, make([]any, len(sc.Columns)))
		if err != nil || len(rows) != 41 {
			t.Fatalf("%d rows (%v)", len(rows), err)
		}
	}
}

// joinedMean is the trainings' reduction on a joined source around the
// row-level DP_MEAN of o.amount (public n = m): one joined row per person,
// the noisy person count, the m-row set, then the replace-one mechanism.
func joinedMean(t *testing.T, o *bound.OneRow, sc *functions.UnitScan) float64 {
	s := o.Sampler()
	if err := sc.Run(nil, s.Row); err != nil {
		t.Fatal(err)
	}
	set, _, err := s.Release(make([]any, len(sc.Columns)))
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]float64, len(set))
	for i, r := range set {
		vals[i] = math.NaN()             // the padding row's NULL
		if f, ok := r[2].(float64); ok { // o.amount
			vals[i] = f
		}
	}
	return amountMean(t, o.Eps2, vals)
}

// amountMean is the row-level DP_MEAN of amounts in [0, 100] at ε with
// public n = len(vals).
func amountMean(t *testing.T, eps float64, vals []float64) float64 {
	mm, err := mechanism.NewMean(0, 100, eps, int64(len(vals)))
	if err != nil {
		t.Fatal(err)
	}
	acc := mm.Accumulator()
	for _, v := range vals {
		acc.Add(v)
	}
	out, err := acc.Release()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAuditJoinedOneRow (units.md §10, joined sources): Clopper–Pearson
// audit of the reduction on orders ⨝ customers ⨝ products (public, every
// order matching 3 product rows) for person neighbours: D = 30 customers
// with 1–3 orders at amount 0, D′ = D + a customer with 200 orders at 100
// (600 joined rows). ε = 4. Must fail: the row-level mean over every joined
// row with its public-n calibration on the same neighbours.
func TestAuditJoinedOneRow(t *testing.T) {
	t.Parallel()
	const eps = 4.0
	o, err := bound.NewOneRow(eps)
	if err != nil {
		t.Fatal(err)
	}
	d := shop(t, 0, 0)
	for rep := 0; rep < 2; rep++ {
		for p := 0; p < 3; p++ {
			d.rows["s.products"] = append(d.rows["s.products"], []any{int64(p), []string{"a", "b", "c"}[p]})
		}
	}
	for c := 0; c < 30; c++ {
		addCustomer(d, int64(c), "north", 1+c%3, 0)
	}
	d1 := d.clone()
	addCustomer(d1, 9999, "south", 200, 100)
	scans := [2]*functions.UnitScan{}
	for i, m := range []*mem{d, d1} {
		if scans[i], err = (Functions{Meta: m, Src: m}).CompileFrom("s", ordersCustomersProducts, nil); err != nil {
			t.Fatal(err)
		}
	}
	cfg := audit.Config{N: 10000}
	audit.RequirePass(t, func(side int) float64 { return joinedMean(t, o, scans[side]) }, eps, cfg)

	rowLevel := func(side int) float64 {
		var vals []float64
		if err := scans[side].Run(nil, func(_ string, row []any) { vals = append(vals, row[2].(float64)) }); err != nil {
			t.Fatal(err)
		}
		return amountMean(t, eps, vals)
	}
	audit.RequireCatch(t, rowLevel, eps, cfg)
}
