package rel

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/mechanism/bound"
	"github.com/dpsql/dpsql/noise"
)

// Unit-level DP_MEAN and DP_HISTOGRAM (docs/privacy/units.md §8): the
// functions compile into this compiler's AVG and binned COUNT, so their
// proofs are §3's; these tests check the compilation (scales, events,
// tables), person-level sensitivity on adversarial neighbours and a
// Clopper–Pearson audit of each with a row-level must-fail variant.

// amountBins are n equal bins over orders.amount's declared [0, 100] (the
// last one closed), as DP_HISTOGRAM's bins=n builds them.
func amountBins(n int) ([]string, func(any) int) {
	labels := make([]string, n)
	for i := range labels {
		labels[i] = fmt.Sprintf("[%g, %g)", 100*float64(i)/float64(n), 100*float64(i+1)/float64(n))
	}
	return labels, func(v any) int {
		f, ok := functions.ToFloat(v)
		if !ok || math.IsNaN(f) || f < 0 || f > 100 {
			return -1
		}
		return min(int(f/100*float64(n)), n-1)
	}
}

func histReq(table, column string, eps float64, bins, k, c int) functions.UnitRequest {
	labels, of := amountBins(bins)
	return functions.UnitRequest{Kind: functions.UnitHistogram, DB: "s", Table: table, Column: column, Epsilon: eps,
		MaxGroups: k, MaxRows: c, Labels: labels, BinOf: of, BinKey: fmt.Sprint("amount", bins)}
}

func meanReq(table, column string, eps float64) functions.UnitRequest {
	return functions.UnitRequest{Kind: functions.UnitMean, DB: "s", Table: table, Column: column, Epsilon: eps}
}

// addVictim adds a customer whose orders have the given amounts, each with
// one item of quantity 10.
func addVictim(m *mem, id int64, amounts []float64) {
	m.rows["s.customers"] = append(m.rows["s.customers"], []any{id, "north"})
	for i, a := range amounts {
		o := nextOrder.Add(1)
		var v any = a
		if math.IsNaN(a) {
			v = nil
		}
		m.rows["s.orders"] = append(m.rows["s.orders"], []any{o, id, v, int64(i % 3)})
		m.rows["s.items"] = append(m.rows["s.items"], []any{o, o, int64(10)})
	}
}

// TestFunctionsExactScales: the compiled calls' scales, events and tables,
// and the bounded truth at a huge ε.
func TestFunctionsExactScales(t *testing.T) {
	m := shop(t, 100, 3) // 50 customers per region, 3 orders of amount c%50 each
	f := Functions{Meta: m, Src: m}
	sigma := bound.Sigma

	r, err := f.CompileUnit(meanReq("orders", "amount", 1))
	if err != nil {
		t.Fatal(err)
	}
	// AVG: ε split over the person count and the centred sum; half-width 50.
	if r.Unit != "s.customer" || strings.Join(r.Tables, ",") != "s.orders" ||
		r.Calibration["persons_laplace_scale"] != 2 || r.Calibration["sum_laplace_scale"] != 50*sigma/0.5 ||
		r.Calibration["persons_sensitivity"] != 1 || r.Calibration["sum_sensitivity"] != 50*sigma {
		t.Fatalf("mean: unit %s tables %v calibration %v", r.Unit, r.Tables, r.Calibration)
	}
	if len(r.Events) != 2 || r.Events[0] != (budget.Event{Kind: budget.Laplace, Epsilon: 0.5}) || r.Events[1] != r.Events[0] {
		t.Fatalf("mean events %v", r.Events)
	}
	for _, c := range []struct {
		k, c  int
		scale float64
	}{{0, 0, 2}, {1, 1, 2}, {3, 2, 12}, {4, 50, 400}} {
		r, err := f.CompileUnit(histReq("orders", "amount", 0.5, 4, c.k, c.c))
		if err != nil {
			t.Fatal(err)
		}
		if r.Calibration["laplace_scale"] != c.scale || len(r.Events) != 1 || r.Events[0].Epsilon != 0.5 || r.Delta != 0 {
			t.Fatalf("histogram k=%d C=%d: %v %v, want scale %v", c.k, c.c, r.Calibration, r.Events, c.scale)
		}
		if c.k == 0 && (r.MaxGroups != DefaultMaxGroups || r.MaxRows != DefaultMaxRows) {
			t.Fatalf("defaults k=%d C=%d", r.MaxGroups, r.MaxRows)
		}
	}

	// At ε = 10⁷ the releases are the bounded truth (noise ≪ 0.5).
	r, _ = f.CompileUnit(meanReq("orders", "amount", 1e7))
	v, err := r.Run(nil)
	if err != nil || math.Abs(v[0]-24.5) > 1e-3 {
		t.Fatalf("mean of person means %v (%v), want 24.5", v, err)
	}
	for _, c := range []struct {
		rows int
		want []float64
	}{{1, []float64{50, 50, 0, 0}}, {3, []float64{150, 150, 0, 0}}} {
		r, _ := f.CompileUnit(histReq("orders", "amount", 1e7, 4, 1, c.rows))
		v, err := r.Run(nil)
		if err != nil || fmt.Sprint(v) != fmt.Sprint(c.want) {
			t.Fatalf("histogram C=%d: %v (%v), want %v", c.rows, v, err, c.want)
		}
	}
	// items reach the person through orders (orders.customer_id is the person).
	r, err = f.CompileUnit(meanReq("items", "qty", 1e7))
	if err != nil || strings.Join(r.Tables, ",") != "s.items,s.orders" {
		t.Fatalf("items: %v %v", r, err)
	}
	if v, err := r.Run(nil); err != nil || math.Abs(v[0]-2) > 1e-3 {
		t.Fatalf("mean qty %v (%v)", v, err)
	}
}

// TestFunctionsRefused: public refusals of the compiler, before any charge.
func TestFunctionsRefused(t *testing.T) {
	m := shop(t, 10, 1)
	f := Functions{Meta: m, Src: m}
	for name, c := range map[string]struct {
		r    functions.UnitRequest
		want string
	}{
		"row-level table":  {meanReq("audit", "id", 1), "row level"},
		"unbounded column": {meanReq("customers", "id", 1), "needs bounds"},
		"mean with k":      {func() functions.UnitRequest { r := meanReq("orders", "amount", 1); r.MaxGroups = 2; return r }(), "one mean"},
		"k too large":      {histReq("orders", "amount", 1, 4, bound.MaxGroupsCap+1, 1), "max_groups_contributed"},
		"bad epsilon":      {histReq("orders", "amount", math.NaN(), 4, 1, 1), "epsilon"},
		"no column":        {meanReq("orders", "nope", 1), "unknown column"},
	} {
		_, err := f.CompileUnit(c.r)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: %v, want a refusal mentioning %q", name, err, c.want)
		}
	}
}

// TestFunctionsSensitivity: adding one customer — 1 order, 10,000 orders
// in one bin, 10,000 orders spread over every bin, NULL amounts — moves the
// bounded statistics of DP_HISTOGRAM and DP_MEAN (on orders, and on items,
// whose person is found through orders) by at most the compiled sensitivities, for several k, C.
func TestFunctionsSensitivity(t *testing.T) {
	m := shop(t, 60, 2) // base customers: one bin each (all their orders have one amount)
	spread := make([]float64, 10000)
	for i := range spread {
		spread[i] = float64(i % 101)
	}
	same := func(n int, v float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	victims := map[string][]float64{
		"1 row":                    {100},
		"10,000 rows in one bin":   same(10000, 100),
		"10,000 rows in every bin": spread,
		"NULLs and one value":      append(same(50, math.NaN()), 0),
	}
	f := Functions{Meta: m, Src: m}
	reqs := map[string]functions.UnitRequest{
		"mean orders":                 meanReq("orders", "amount", 1),
		"mean items (through orders)": meanReq("items", "qty", 1),
		"histogram k=1 C=1":           histReq("orders", "amount", 1, 5, 0, 0),
		"histogram k=2 C=3":           histReq("orders", "amount", 1, 5, 2, 3),
		"histogram k=5 C=100 (all)":   histReq("orders", "amount", 1, 5, 5, 100),
	}
	for rn, r := range reqs {
		p, err := f.compile(r)
		if err != nil {
			t.Fatalf("%s: %v", rn, err)
		}
		s1, s2 := p.Bound().Sensitivity(0)
		b0 := bounded(t, p, m)
		for vn, amounts := range victims {
			m2 := m.clone()
			addVictim(m2, 88888, amounts)
			worst := 0.0
			for rep := 0; rep < 5; rep++ { // several draws of the victim's bins
				b1 := bounded(t, p, m2)
				d1, d2 := l1(b0.First[0], b1.First[0]), l1(b0.Second[0], b1.Second[0])
				if d1 > s1 || d2 > s2 {
					t.Fatalf("%s, %s: moved (%v, %v) > sensitivity (%v, %v)", rn, vn, d1, d2, s1, s2)
				}
				worst = math.Max(worst, d1)
			}
			// The bound is attained by the heaviest victims: the tests can fail.
			if strings.HasPrefix(rn, "histogram") && vn == "10,000 rows in every bin" && worst != s1 {
				t.Fatalf("%s: the spread victim moved the counts by %v, want exactly k·C = %v", rn, worst, s1)
			}
		}
	}
}

// TestAuditFunctionsPersonLevel: Clopper–Pearson audits of the compiled
// DP_HISTOGRAM and DP_MEAN on neighbours differing by a customer with 200
// orders. Pass: the real releases. Must fail: the row-level mechanisms of
// DP_HISTOGRAM (raw row counts per bin, replace-one scale 2/ε) and DP_MEAN
// (mean of rows, scale (hi − lo)/(n·ε)) on these person-level neighbours,
// and a k-blind histogram scale (C/ε for a person in k = 2 bins).
func TestAuditFunctionsPersonLevel(t *testing.T) {
	t.Parallel()
	m := shop(t, 8, 1) // 8 customers, amounts 0..7: one bin each
	m2 := m.clone()
	victim := append(make([]float64, 0, 200), make([]float64, 100)...) // 100 orders at 0 …
	for i := 0; i < 100; i++ {
		victim = append(victim, 90) // … and 100 at 90: two bins, k = 2 keeps both
	}
	addVictim(m2, 4242, victim)
	const eps = 1.0
	cfg := audit.Config{N: 10000}
	f := Functions{Meta: m, Src: m}
	side := func(s int) *mem {
		if s == 1 {
			return m2
		}
		return m
	}

	// DP_HISTOGRAM, k = 2, C = 1.
	req := histReq("orders", "amount", eps, 4, 2, 1)
	p, err := f.compile(req)
	if err != nil {
		t.Fatal(err)
	}
	a0, a1 := bounded(t, p, m).First[0], bounded(t, p, m2).First[0]
	audit.RequirePass(t, func(s int) float64 {
		p2, _ := Functions{Meta: m, Src: side(s)}.compile(req)
		y, err := Functions{Meta: m, Src: side(s)}.release(p2, req).Run(nil)
		if err != nil {
			t.Fatal(err)
		}
		return llrVec(y, a0, a1)
	}, eps, cfg)
	_, binOf := amountBins(4)
	raw := func(src *mem) []float64 {
		c := make([]float64, 4)
		for _, row := range src.rows["s.orders"] {
			if b := binOf(row[2]); b >= 0 {
				c[b]++
			}
		}
		return c
	}
	r0, r1 := raw(m), raw(m2)
	audit.RequireCatch(t, func(s int) float64 {
		c := raw(side(s))
		if err := noise.AddLaplaceVec(c, 2/eps); err != nil {
			t.Fatal(err)
		}
		return llrVec(c, r0, r1)
	}, eps, cfg)
	audit.RequireCatch(t, func(s int) float64 {
		c := append([]float64(nil), bounded(t, p, side(s)).First[0]...)
		if err := noise.AddLaplaceVec(c, 1/eps); err != nil {
			t.Fatal(err)
		}
		return llrVec(c, a0, a1)
	}, eps, cfg)

	// DP_MEAN: the victim's person mean is 45 against base means 0..7.
	mr := meanReq("orders", "amount", eps)
	audit.RequirePass(t, func(s int) float64 {
		fs := Functions{Meta: m, Src: side(s)}
		p, err := fs.compile(mr)
		if err != nil {
			t.Fatal(err)
		}
		y, err := fs.release(p, mr).Run(nil)
		if err != nil {
			t.Fatal(err)
		}
		return y[0]
	}, eps, cfg)
	audit.RequireCatch(t, func(s int) float64 {
		var sum float64
		rows := side(s).rows["s.orders"]
		for _, row := range rows {
			sum += row[2].(float64)
		}
		n := float64(len(rows))
		v, err := noise.AddLaplace(sum/n, 100/(n*eps))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}, eps, cfg)
}

// llrVec is the Laplace privacy-loss statistic Σ |y − a1| − |y − a0|.
func llrVec(y, a0, a1 []float64) float64 {
	s := 0.0
	for g := range y {
		s += math.Abs(y[g]-a1[g]) - math.Abs(y[g]-a0[g])
	}
	return s
}

// TestFunctionsQuantile: DP_QUANTILE compiles into the scan with persons
// and mechanism/bound's quantile: scale 2⌈C·max(q, 1−q)⌉/ε, one Laplace
// event, the median of person values at a huge ε, and a customer with
// 10,000 orders keeps at most C values (through orders and through items).
func TestFunctionsQuantile(t *testing.T) {
	m := shop(t, 100, 3) // person values c%50, three orders each
	f := Functions{Meta: m, Src: m}
	req := func(table, col string, q, eps float64, c int) functions.UnitRequest {
		return functions.UnitRequest{Kind: functions.UnitQuantile, DB: "s", Table: table, Column: col, Epsilon: eps, Q: q, Grid: 101, MaxRows: c}
	}
	for _, c := range []struct {
		q     float64
		rows  int
		scale float64
	}{{0.5, 0, 2}, {0.5, 3, 4}, {0.9, 10, 18}} {
		r, err := f.CompileUnit(req("orders", "amount", c.q, 1, c.rows))
		if err != nil {
			t.Fatal(err)
		}
		if r.Calibration["laplace_scale"] != c.scale || len(r.Events) != 1 || r.Events[0] != (budget.Event{Kind: budget.Laplace, Epsilon: 1}) || r.Unit != "s.customer" {
			t.Fatalf("q=%v C=%d: %v %v", c.q, c.rows, r.Calibration, r.Events)
		}
	}
	r, err := f.CompileUnit(req("orders", "amount", 0.5, 1e7, 1))
	if err != nil {
		t.Fatal(err)
	}
	// One value per person: 0..49 twice, n = 100, rank 50 first reached at 24.
	if v, err := r.Run(nil); err != nil || v[0] != 24 {
		t.Fatalf("median %v (%v), want 24", v, err)
	}
	for _, bad := range []functions.UnitRequest{req("orders", "amount", 1.5, 1, 1), req("customers", "region", 0.5, 1, 1),
		func() functions.UnitRequest { x := req("orders", "amount", 0.5, 1, 1); x.MaxGroups = 2; return x }()} {
		if _, err := f.CompileUnit(bad); !errors.Is(err, ErrRefused) {
			t.Fatalf("%+v: %v, want a refusal", bad, err)
		}
	}
	// The heavy victim keeps at most C values, on orders and on items.
	for _, c := range []int{1, 4} {
		for _, tc := range [][2]string{{"orders", "amount"}, {"items", "qty"}} {
			rq := req(tc[0], tc[1], 0.5, 1, c)
			p, err := f.compile(rq)
			if err != nil {
				t.Fatal(err)
			}
			qm, err := quantileMech(p, rq)
			if err != nil {
				t.Fatal(err)
			}
			kept := func(src *mem) int64 {
				acc := qm.Accumulator()
				if err := p.each(src, nil, func(person, _ string, vals []float64) { acc.Row(person, vals[0]) }); err != nil {
					t.Fatal(err)
				}
				_, n, err := acc.Cells()
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			m2 := m.clone()
			addVictim(m2, 31337, make([]float64, 10000))
			if n0, n1 := kept(m), kept(m2); n1-n0 != int64(c) || n0 != int64(100*min(c, 3)) {
				t.Fatalf("%s, C=%d: kept %d then %d values, want %d + %d", tc[0], c, n0, n1, 100*min(c, 3), c)
			}
		}
	}
}

// TestCompileScanOneRowPerPerson (units.md §10): the trainings' scan with
// persons finds each row's customer through one FK hop (orders) and two
// (items → orders → customers); after bound.Sampler the data set has at
// most one row per customer, so a customer with 1 or 10,000 orders adds at
// most one row (the coupling of §10 then changes the m-row set in at most
// one position: mechanism/bound's TestOneRowCoupling). NULL and dangling
// keys are in no person. Refused outside a unit.
func TestCompileScanOneRowPerPerson(t *testing.T) {
	o, err := bound.NewOneRow(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, heavy := range []int{1, 10000} {
		m := shop(t, 40, 3)
		amounts := make([]float64, heavy)
		for i := range amounts {
			amounts[i] = 99
		}
		addVictim(m, 7777, amounts)
		m.rows["s.orders"] = append(m.rows["s.orders"], []any{int64(-1), nil, 5.0, int64(0)})    // NULL customer
		m.rows["s.items"] = append(m.rows["s.items"], []any{int64(-2), int64(-12345), int64(1)}) // dangling order
		f := Functions{Meta: m, Src: m}
		for _, table := range []string{"orders", "items"} {
			sc, err := f.CompileScan("s", table)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Unit != "s.customer" || strings.Join(sc.Columns, ",") != strings.Join(m.schema["s."+table], ",") {
				t.Fatalf("%s: unit %s columns %v", table, sc.Unit, sc.Columns)
			}
			s := o.Sampler()
			persons := map[string]int{}
			if err := sc.Run(nil, func(person string, row []any) {
				persons[person]++
				s.Row(person, row)
			}); err != nil {
				t.Fatal(err)
			}
			if s.Persons() != 41 || len(persons) != 41 || persons[keyOf(int64(7777))] != heavy {
				t.Fatalf("%s, heavy %d: %d persons, victim %d rows; want 41 customers (NULL and dangling rows in none) and %d", table, heavy, len(persons), persons[keyOf(int64(7777))], heavy)
			}
			rows, err := bound.Build(s.Kept(), 41, make([]any, len(sc.Columns)))
			if err != nil || len(rows) != 41 {
				t.Fatalf("%d rows (%v)", len(rows), err)
			}
		}
	}
	if _, err := (Functions{Meta: shop(t, 2, 1), Src: shop(t, 2, 1)}).CompileScan("s", "audit"); !errors.Is(err, ErrRefused) {
		t.Fatalf("a row-level table: %v, want a refusal", err)
	}
	if _, err := (Functions{Meta: shop(t, 2, 1), Src: shop(t, 2, 1)}).CompileScan("s", "products"); !errors.Is(err, ErrRefused) {
		t.Fatalf("a public table: %v, want a refusal", err)
	}
}
