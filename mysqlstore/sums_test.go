package mysqlstore

import (
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/mechanism"
)

// The literals dpsql sends must parse back to the very same doubles
// (MariaDB's strtod is correctly rounded, as Go's ParseFloat).
func TestLiteralRoundTrip(t *testing.T) {
	vals := []float64{0, 1, -1, 0.1, 1.0 / 3, 2.0 / 7, math.SmallestNonzeroFloat64, math.MaxFloat64, -1e-300, 1 / math.Sqrt(21), math.Nextafter(1, 2)}
	for _, lo := range []float64{-1000, -3.7, 0, 1e-9} {
		for _, w := range []float64{1e-6, 0.3, 7, 1e12} {
			s, _ := mechanism.NewScaler([]float64{lo}, []float64{lo + w}, true)
			p := s.Prepare()
			mul, add, inv := p.Affine()
			vals = append(vals, mul[0], add[0], inv)
			if big := 1e300 / mul[0]; !math.IsInf(big, 0) {
				vals = append(vals, big)
			}
		}
	}
	for _, v := range vals {
		l := lit(v)
		if !strings.HasPrefix(l, "(") || !strings.HasSuffix(l, ")") {
			t.Fatalf("lit(%v) = %s is not parenthesised", v, l)
		}
		got, err := strconv.ParseFloat(l[1:len(l)-1], 64)
		if err != nil || got != v {
			t.Fatalf("lit(%v) = %s parses to %v (%v)", v, l, got, err)
		}
		if !strings.ContainsAny(l, "eE") {
			t.Fatalf("lit(%v) = %s is not an approximate-value (double) literal", v, l)
		}
	}
}

func testTable() *table {
	t := &table{db: "d", name: "t"}
	for _, c := range []struct {
		name string
		k    kind
		typ  gsql.Type
	}{{"a", kindFloat, types.Float64}, {"b", kindInt, types.Int64}, {"s", kindText, types.LongText}, {"y", kindFloat, types.Float64}} {
		t.schema = append(t.schema, &gsql.Column{Name: c.name, Type: c.typ})
		t.kinds = append(t.kinds, c.k)
		t.double = append(t.double, c.k == kindFloat)
	}
	return t
}

// Maps that SQL cannot evaluate exactly fall back to the row scan.
func TestLinearTermsFallback(t *testing.T) {
	tb := testTable()
	good := functions.LinearMap{Features: []string{"a", "b"}, Mul: []float64{1, 0.5}, Add: []float64{0, -1}, Inv: 1 / math.Sqrt(3),
		Intercept: true, Label: "y", LabelLo: -1, LabelHi: 1, Mid: 0, Half: 1, LabelNull: 0}
	terms, f, ok := linearTerms(tb, good)
	if !ok || f != 3 || len(terms) != 3*4/2+3 {
		t.Fatalf("good map: ok=%v f=%d terms=%d", ok, f, len(terms))
	}
	q := aggregateSQL(tb, terms)
	for _, want := range []string{"SELECT COUNT(*)", "FROM `d`.`t`", "DECIMAL(65,38)", "LEAST(GREATEST(COALESCE(`y`"} {
		if !strings.Contains(q, want) {
			t.Fatalf("query lacks %q", want)
		}
	}
	bad := []func(m *functions.LinearMap){
		func(m *functions.LinearMap) { m.Features = []string{"a", "s"} },  // text column
		func(m *functions.LinearMap) { m.Label = "s" },                    // text label
		func(m *functions.LinearMap) { m.Features = []string{"a", "zz"} }, // no such column
		func(m *functions.LinearMap) { m.Add = []float64{0, 1e300} },      // add too large
		func(m *functions.LinearMap) { m.Mul = []float64{1, math.Inf(1)} },
		func(m *functions.LinearMap) { m.Half = 0 },
		func(m *functions.LinearMap) { m.LabelHi = 1.5e308 },
		func(m *functions.LinearMap) { m.Mul = []float64{1} },
	}
	for i, mod := range bad {
		m := good
		m.Features = append([]string(nil), good.Features...)
		mod(&m)
		if _, _, ok := linearTerms(tb, m); ok {
			t.Fatalf("bad map %d accepted", i)
		}
	}
}

// The fast statement: the same fallbacks as the exact one, no DECIMAL,
// the short clip where the map is the identity, the overflow guard where
// v·mul + add could overflow, and assemble puts each sum in its place.
func TestLinearFast(t *testing.T) {
	tb := testTable()
	good := functions.LinearMap{Features: []string{"a", "b"}, Mul: []float64{1, 2}, Add: []float64{0, -1}, Inv: 0.5,
		Intercept: true, Label: "y", LabelLo: -1, LabelHi: 1, Mid: 0, Half: 1, LabelNull: 0}
	fs, ok := linearFast(tb, good)
	if !ok || fs.f != 3 || len(fs.terms) != 2*3/2+2+2+1 {
		t.Fatalf("good map: ok=%v f=%d terms=%d", ok, fs.f, len(fs.terms))
	}
	q := aggregateSQL(tb, fs.terms)
	if strings.Contains(q, "DECIMAL") || strings.Contains(q, "COALESCE") {
		t.Fatalf("fast query has DECIMAL or COALESCE: %s", q)
	}
	if want := "SUM(LEAST(GREATEST(`a`, -1e0), 1e0) * LEAST(GREATEST(`a`, -1e0), 1e0))"; !strings.Contains(q, want) {
		t.Fatalf("query lacks the short clip %s: %s", want, q)
	}
	if want := "LEAST(GREATEST(`b`, (-5e+299)), (5e+299)) * (2e+00)"; !strings.Contains(q, want) {
		t.Fatalf("query lacks the overflow guard %s: %s", want, q)
	}
	// mul ≤ ½: no guard needed.
	half := good
	half.Mul = []float64{1, 0.5}
	fs2, _ := linearFast(tb, half)
	if q2 := aggregateSQL(tb, fs2.terms); strings.Contains(q2, "e+299") {
		t.Fatalf("guard written for mul = ½: %s", q2)
	}
	// A label map whose NULL value is not 0 keeps the COALESCE.
	lab := good
	lab.LabelLo, lab.LabelHi, lab.Mid, lab.Half, lab.LabelNull = 0, 3, 1.5, 1.5, 1
	fs3, _ := linearFast(tb, lab)
	if q3 := aggregateSQL(tb, fs3.terms); !strings.Contains(q3, "COALESCE(`y`, (1e+00))") {
		t.Fatalf("label NULL lost: %s", q3)
	}
	// assemble: sums 1…9 in term order.
	out := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	a, c := fs.assemble(out, 10)
	wantA := []float64{
		0.25, 0.5, 1,
		0.5, 0.75, 1.25,
		1, 1.25, 2.5,
	}
	wantC := []float64{3, 3.5, 4}
	for i := range wantA {
		if a[i] != wantA[i] {
			t.Fatalf("A = %v, want %v", a, wantA)
		}
	}
	for i := range wantC {
		if c[i] != wantC[i] {
			t.Fatalf("c = %v, want %v", c, wantC)
		}
	}
	bad := []func(m *functions.LinearMap){
		func(m *functions.LinearMap) { m.Features = []string{"a", "s"} },
		func(m *functions.LinearMap) { m.Label = "s" },
		func(m *functions.LinearMap) { m.Features = []string{"a", "zz"} },
		func(m *functions.LinearMap) { m.Add = []float64{0, 1e300} },
		func(m *functions.LinearMap) { m.Mul = []float64{1, math.Inf(1)} },
		func(m *functions.LinearMap) { m.Half = 0 },
		func(m *functions.LinearMap) { m.LabelHi = 1.5e308 },
		func(m *functions.LinearMap) { m.Mul = []float64{1} },
		func(m *functions.LinearMap) { m.Inv = 0 },
	}
	for i, mod := range bad {
		m := good
		m.Features = append([]string(nil), good.Features...)
		mod(&m)
		if _, ok := linearFast(tb, m); ok {
			t.Fatalf("bad map %d accepted", i)
		}
	}
}

// Scanned values convert as store's: NULL and text are NaN.
func TestToFloat(t *testing.T) {
	cases := []struct {
		in   any
		want float64
	}{{nil, math.NaN()}, {int64(-3), -3}, {uint64(7), 7}, {2.5, 2.5}, {[]byte("0.1"), 0.1}, {[]byte("x"), math.NaN()}}
	for _, c := range cases {
		got := toFloat(c.in)
		if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Fatalf("toFloat(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if v := toValue([]byte("abc"), kindText); v != "abc" {
		t.Fatalf("text value %v", v)
	}
	if v := toValue(int64(5), kindUint); v != uint64(5) {
		t.Fatalf("uint value %v", v)
	}
}

// DP_LSQ's centring shift: both statements subtract it after the overflow
// guard, NULL stays NULL (then the label's NULL value), and a shift beyond
// 10³⁰¹ falls back to the rows.
func TestLabelShift(t *testing.T) {
	tb := testTable()
	m := functions.LinearMap{Features: []string{"a", "b"}, Mul: []float64{1, 0.5}, Add: []float64{0, -1}, Inv: 1 / math.Sqrt(3),
		Intercept: true, Label: "y", LabelLo: 0, LabelHi: 3, Mid: 1.5, Half: 1.5, LabelNull: 1.5, LabelShift: 0.25}
	want := "(LEAST(GREATEST(`y`, -1e305), 1e305) - (1.4411518807585587e+17 * 1.734723475976807e-18))"
	fs, ok := linearFast(tb, m)
	if !ok {
		t.Fatal("fast statement refused a shift")
	}
	if q := aggregateSQL(tb, fs.terms); !strings.Contains(q, want) {
		t.Fatalf("fast statement lacks %s: %s", want, q)
	}
	// The in-box split: the label's box on the raw column, the shift
	// without the guard inside.
	a, b, ok := shiftBox(0, 3, 0.25)
	if !ok {
		t.Fatal("no box for the shift")
	}
	// Its ends are not shardSafe: the condition is on the scaled column.
	if wantBox := "(`y` * (2.7755575615628914e-17)) BETWEEN " + lit(a*0x1p-55) + " AND " + lit(b*0x1p-55); !strings.Contains(strings.Join(fs.box, " AND "), wantBox) || boxCond("`y`", a, b) != wantBox {
		t.Fatalf("box %v lacks %s", fs.box, wantBox)
	}
	in := aggregateSQL(tb, fs.inTerms)
	if wantIn := "((`y` - (1.4411518807585587e+17 * 1.734723475976807e-18)) - " + rowLit(1.5) + ") / " + rowLit(1.5); !strings.Contains(in, wantIn) || strings.Contains(in, "1e305") {
		t.Fatalf("inside statement lacks %s or keeps the guard: %s", wantIn, in)
	}
	terms, _, ok := linearTerms(tb, m)
	if !ok {
		t.Fatal("exact statement refused a shift")
	}
	if q := aggregateSQL(tb, terms); !strings.Contains(q, "COALESCE("+want+", (1.5e+00))") {
		t.Fatalf("exact statement lacks the shifted label with its NULL value: %s", q)
	}
	m.LabelShift = 0
	if fs, _ := linearFast(tb, m); strings.Contains(aggregateSQL(tb, fs.terms), "1e305") {
		t.Fatal("guard written without a shift")
	}
	for _, bad := range []float64{2e301, math.Inf(1), math.NaN()} {
		m.LabelShift = bad
		if _, ok := linearFast(tb, m); ok {
			t.Fatalf("fast statement accepted shift %v", bad)
		}
		if _, _, ok := linearTerms(tb, m); ok {
			t.Fatalf("exact statement accepted shift %v", bad)
		}
	}
}

// unitBox: on [a, b] the transform lands in [−1, 1] (checked at the ends
// and on a grid inside, the map being monotone), and the box is the
// declared bounds up to a few ulps, so in-bounds rows are summed unclamped.
func TestUnitBox(t *testing.T) {
	for _, lo := range []float64{-1000, -3.7, -1, 0, 1e-9, 1000, 7.3e5} {
		for _, w := range []float64{1e-6, 0.3, 1, 2, 7, 1e12} {
			s, _ := mechanism.NewScaler([]float64{lo}, []float64{lo + w}, true)
			p := s.Prepare()
			mul, add, _ := p.Affine()
			a, b, ok := unitBox(mul[0], add[0])
			if !ok {
				t.Fatalf("[%v, %v]: no box", lo, lo+w)
			}
			for i := 0; i <= 1000; i++ {
				v := a + (b-a)*float64(i)/1000
				if i == 1000 {
					v = b
				}
				if u := v*mul[0] + add[0]; u < -1 || u > 1 {
					t.Fatalf("[%v, %v]: box [%v, %v], u(%v) = %v", lo, lo+w, a, b, v, u)
				}
			}
			if math.Abs(a-lo) > 8*ulp(lo)+8*ulp(w) || math.Abs(b-(lo+w)) > 8*ulp(lo+w)+8*ulp(w) {
				t.Fatalf("[%v, %v]: box [%v, %v] is not the bounds", lo, lo+w, a, b)
			}
		}
	}
	if _, _, ok := unitBox(1e-320, 0); ok {
		t.Fatal("box for a subnormal factor")
	}
}

func ulp(v float64) float64 { return math.Abs(math.Nextafter(v, math.Inf(1)) - v) }

// The in-box split: two statements over complementary predicates (IS TRUE
// / IS NOT TRUE, so a NULL row is in the second), the same number of
// terms; inside, DOUBLE columns are bare (identity map) or bare arithmetic,
// other types keep the clamp and add no condition; the label has no clip.
func TestInBoxSplit(t *testing.T) {
	tb := testTable()
	m := functions.LinearMap{Features: []string{"a", "b"}, Mul: []float64{1, 0.5}, Add: []float64{0, -1}, Inv: 0.5,
		Intercept: true, Label: "y", LabelLo: -1, LabelHi: 1, Mid: 0, Half: 1, LabelNull: 0}
	fs, ok := linearFast(tb, m)
	if !ok {
		t.Fatal("refused")
	}
	ps := fs.parts(true)
	if len(ps) != 2 || len(ps[0].terms) != len(fs.terms) || len(ps[1].terms) != len(fs.terms) {
		t.Fatalf("parts %d", len(ps))
	}
	in, out := ps[0].sql(tb), ps[1].sql(tb)
	wantBox := "(`a` BETWEEN (-1e+00) AND (1e+00) AND `y` BETWEEN (-1e+00) AND (1e+00))"
	wantGroup := " GROUP BY CASE WHEN (`a` BETWEEN (-1e+00) AND (1e+00)) IS NOT TRUE THEN 1 WHEN (`y` BETWEEN (-1e+00) AND (1e+00)) IS NOT TRUE THEN 2 ELSE 0 END"
	if !strings.HasSuffix(in, " WHERE "+wantBox+" IS TRUE") || !strings.HasSuffix(out, " WHERE "+wantBox+" IS NOT TRUE"+wantGroup) {
		t.Fatalf("predicates:\n%s\n%s", in, out)
	}
	if !strings.Contains(in, "SUM(`a` * `a`)") || !strings.Contains(in, "SUM(`a` * `y`)") || !strings.Contains(in, "SUM(`y`)") {
		t.Fatalf("in-box terms not bare: %s", in)
	}
	// b is an integer column: clamped in both parts, no condition.
	if !strings.Contains(in, "LEAST(GREATEST(`b` * "+rowLit(0.5)+" + (-1e+00), -1e0), 1e0)") {
		t.Fatalf("integer column: %s", in)
	}
	if out != aggregateSQL(tb, fs.terms)+" WHERE "+wantBox+" IS NOT TRUE"+wantGroup {
		t.Fatalf("outside part is not the clamped statement: %s", out)
	}
	if one := fs.parts(false); len(one) != 1 || one[0].where != "" {
		t.Fatal("one-statement form")
	}
	// General maps: a DOUBLE feature with bounds [0, 4] and a label on
	// [0, 3] (mid 1.5, half 1.5) are bare arithmetic inside the box.
	tb.double[1] = true
	tb.kinds[1] = kindFloat
	m.Mul, m.Add = []float64{1, 0.5}, []float64{0, -1}
	m.LabelLo, m.LabelHi, m.Mid, m.Half, m.LabelNull = 0, 3, 1.5, 1.5, 1.5
	fs, _ = linearFast(tb, m)
	in = fs.parts(true)[0].sql(tb)
	for _, want := range []string{"`b` BETWEEN (0e+00) AND (4e+00)", "`y` BETWEEN (0e+00) AND (3e+00)",
		"(`b` * " + rowLit(0.5) + " + (-1e+00)) * ((`y` - " + rowLit(1.5) + ") / " + rowLit(1.5) + ")"} {
		if !strings.Contains(in, want) {
			t.Fatalf("in-box part lacks %s: %s", want, in)
		}
	}
	if strings.Contains(in, "LEAST") || strings.Contains(in, "COALESCE") {
		t.Fatalf("in-box part clamps: %s", in)
	}
	// Every number in both parts (general map, and centred) is one Spider
	// passes on as a DOUBLE or exact integer literal (rowLit).
	m.LabelShift = 0.3
	fs, _ = linearFast(tb, m)
	// In the WHERE and GROUP BY no product of two literals either: a
	// Spider head folds it and prints the value in fixed notation (boxCond).
	constProduct := regexp.MustCompile(`[0-9.]e[-+]?[0-9]+\)? \* \(?-?[0-9]`)
	for _, p := range fs.parts(true) {
		requireDoubleLiterals(t, p.sql(tb))
		if constProduct.MatchString(p.where) || constProduct.MatchString(p.group) {
			t.Fatalf("constant product in the box: %s %s", p.where, p.group)
		}
	}
	m.LabelShift = 0
	// No DOUBLE column at all: no split.
	for i := range tb.double {
		tb.double[i] = false
	}
	fs, _ = linearFast(tb, m)
	if len(fs.parts(true)) != 1 {
		t.Fatal("split without DOUBLE columns")
	}
}

// rowLit: the text evaluates to exactly v, and every number in it is one
// that Spider's re-printing (MariaDB's my_gcvt) keeps in exponent form or
// prints as an exact integer, so the shard reads DOUBLE (or integer)
// literals, never DECIMAL ones.
func TestRowLit(t *testing.T) {
	survives := func(x float64) bool {
		ax := math.Abs(x)
		return ax == 0 || ax < 1e-16 || ax >= 1e17 || (x == math.Trunc(x) && ax < 1<<53)
	}
	vals := []float64{0, 1, -1, 3, 0.25, -3.633827127302869e-05, 1e-5, 9.99e-6, 3e-8, 1.2e-15, 9.99e-16, 1e-16, 0.1, 1.0 / 3, 730000 + 1.0/3, -2.9e6,
		1e16 + 2, 99999999999999.5, 1e17, -1e300, 5e-324, math.MaxFloat64, 1 << 53, 1<<53 + 2}
	for i := -30; i <= 30; i++ {
		vals = append(vals, math.Pi*math.Pow(10, float64(i)), -math.E*math.Pow(2, float64(3*i)))
	}
	for _, v := range vals {
		s := strings.Trim(rowLit(v), "()")
		parts := strings.Split(s, " * ")
		got := 1.0
		for _, p := range parts {
			x, err := strconv.ParseFloat(p, 64)
			if err != nil {
				t.Fatalf("%v: %q: %v", v, s, err)
			}
			if !survives(x) {
				t.Fatalf("%v: factor %v of %q would reach a shard as a DECIMAL literal", v, x, s)
			}
			got *= x
		}
		if got != v || len(parts) > 2 {
			t.Fatalf("%v: %q evaluates to %v", v, s, got)
		}
	}
}

// shiftBox: on [a, b] the centred label fl(y − s) lies in [lo, hi] (the
// ends and a grid inside, the map being monotone), and the box is
// [lo + s, hi + s] up to a few ulps.
func TestShiftBox(t *testing.T) {
	for _, c := range []struct{ lo, hi, s float64 }{
		{-1, 1, -3.633827127302869e-05}, {-1, 1, 0.3}, {0, 3, 0.25}, {1000, 1001, 730000 + 1.0/3}, {-1e300, 1e300, 1e301},
		{0, 1e-300, 0.5}, {-5, 5, -2.9e6},
	} {
		a, b, ok := shiftBox(c.lo, c.hi, c.s)
		if !ok {
			t.Fatalf("%+v: no box", c)
		}
		for i := 0; i <= 100; i++ {
			y := a + (b-a)*float64(i)/100
			if i == 100 {
				y = b
			}
			if v := y - c.s; v < c.lo || v > c.hi {
				t.Fatalf("%+v: y = %v in [%v, %v] gives %v", c, y, a, b, v)
			}
		}
		if ulps := math.Abs(a-(c.lo+c.s)) / math.Max(ulp(a), ulp(c.lo+c.s)); ulps > 4 {
			t.Fatalf("%+v: a = %v is %v ulps from lo + s", c, a, ulps)
		}
		if ulps := math.Abs(b-(c.hi+c.s)) / math.Max(ulp(b), ulp(c.hi+c.s)); ulps > 4 {
			t.Fatalf("%+v: b = %v is %v ulps from hi + s", c, b, ulps)
		}
	}
}

// requireDoubleLiterals fails if a number in q (outside backquoted names)
// is one that MariaDB's my_gcvt would print in fixed notation with a
// fraction, i.e. would reach a Spider shard as a DECIMAL literal.
func requireDoubleLiterals(t *testing.T, q string) {
	t.Helper()
	q = regexp.MustCompile("`[^`]*`").ReplaceAllString(q, "")
	for _, num := range regexp.MustCompile(`[0-9][0-9.]*(e[-+]?[0-9]+)?`).FindAllString(q, -1) {
		x, err := strconv.ParseFloat(num, 64)
		if err != nil {
			t.Fatalf("%q: %v", num, err)
		}
		if !(x == 0 || x < 1e-16 || x >= 1e17 || x == math.Trunc(x) && x < 1<<53) {
			t.Fatalf("literal %s would reach a shard as DECIMAL: %s", num, q)
		}
	}
}

// ShiftAlgebraic: the inside part sums the raw label (no per-row
// subtraction), and shiftFix turns its sums into those of
// y′ = (y − s − mid)/half exactly (checked against the exact rational sums
// of random rows); without an intercept (no Σu in the statement) the
// per-row shift stays.
func TestShiftAlgebraic(t *testing.T) {
	tb := testTable()
	tb.double[1], tb.kinds[1] = true, kindFloat
	m := functions.LinearMap{Features: []string{"a", "b"}, Mul: []float64{1, 0.5}, Add: []float64{0, -1}, Inv: 1 / math.Sqrt(3),
		Intercept: true, Label: "y", LabelLo: 0, LabelHi: 3, Mid: 1.5, Half: 1.5, LabelNull: 1.5, LabelShift: 0.3, ShiftAlgebraic: true}
	fs, ok := linearFast(tb, m)
	if !ok || fs.inShift == nil {
		t.Fatal("no algebraic shift")
	}
	in := aggregateSQL(tb, fs.inTerms)
	if !strings.Contains(in, "SUM(`a` * `y`)") || !strings.Contains(in, "SUM(`y`)") || strings.Contains(in, "`y` -") {
		t.Fatalf("inside part does not sum the raw label: %s", in)
	}
	if ps := fs.parts(true); ps[0].fix != fs.inShift || ps[1].fix != nil {
		t.Fatal("the fix is not on the inside part alone")
	}
	// shiftFix against exact sums: d = 2, rows (u1, u2, y).
	rows := [][3]float64{{0.5, -0.25, 1.7}, {-1, 0.125, 0.31}, {0.3, 0.7, 2.9}, {1, -1, 0.3}}
	d := 2
	nt := d*(d+1)/2 + 2*d + 1
	sums := make([]*big.Rat, nt)
	want := make([]*big.Rat, nt)
	for i := range sums {
		sums[i], want[i] = new(big.Rat), new(big.Rat)
	}
	r := func(v float64) *big.Rat { return new(big.Rat).SetFloat64(v) }
	off := new(big.Rat).Add(r(m.LabelShift), r(m.Mid))
	for _, row := range rows {
		u := []*big.Rat{r(row[0]), r(row[1])}
		yv := r(row[2])
		yp := new(big.Rat).Quo(new(big.Rat).Sub(yv, off), r(m.Half))
		base := d * (d + 1) / 2
		for j := 0; j < d; j++ {
			sums[base+j].Add(sums[base+j], u[j])
			want[base+j].Add(want[base+j], u[j])
			sums[base+d+j].Add(sums[base+d+j], new(big.Rat).Mul(u[j], yv))
			want[base+d+j].Add(want[base+d+j], new(big.Rat).Mul(u[j], yp))
		}
		sums[base+2*d].Add(sums[base+2*d], yv)
		want[base+2*d].Add(want[base+2*d], yp)
	}
	fs.inShift.apply(sums, int64(len(rows)))
	for i := range sums {
		if sums[i].Cmp(want[i]) != 0 {
			t.Fatalf("sum %d: %v, want %v", i, sums[i].FloatString(20), want[i].FloatString(20))
		}
	}
	m.Intercept = false
	if fs, _ := linearFast(tb, m); fs.inShift != nil {
		t.Fatal("algebraic shift without the intercept's Σu")
	}
	m.Intercept, m.ShiftAlgebraic = true, false
	if fs, _ := linearFast(tb, m); fs.inShift != nil {
		t.Fatal("algebraic shift not asked for")
	}
}

// boxCond: the scaled condition fl(y·2⁻ʲ) ∈ [a·2⁻ʲ, b·2⁻ʲ] holds for exactly
// the doubles y in [a, b] (ends, their neighbours, −0, subnormals, values
// whose scaled product underflows, huge values), its literals are
// shardSafe and no constant product is left for the head to fold; ends it
// cannot scale exactly (a zero end beside an unsafe one) keep the rowLit
// form, and safe ends the plain one.
func TestBoxCond(t *testing.T) {
	a1, b1, _ := shiftBox(-1, 1, -3.633827127302869e-05)
	a2, b2, _ := shiftBox(0, 3, 0.25)
	a3, b3, _ := unitBox(0.37, -0.2)
	a4, b4, _ := shiftBox(-1e300, 1e300, 1e301)
	cases := [][2]float64{{a1, b1}, {a2, b2}, {a3, b3}, {a4, b4}, {-1.0012345678901233, 0.9987654321098766},
		{1e-300, 2e-300}, {-3e-310, 0.5}, {5e-324, 1.5}, {-0.75, -0.5}, {1000.125, 1001.3}, {0.1, 1e17 + 0.5}, {-1e-5, 1e-5}}
	nScaled := 0
	for _, c := range cases {
		a, b := c[0], c[1]
		cond := boxCond("`y`", a, b)
		requireDoubleLiterals(t, cond)
		scale, sa, sb, scaled := scaledBox(a, b)
		switch {
		case shardSafe(a) && shardSafe(b):
			if cond != "`y` BETWEEN "+lit(a)+" AND "+lit(b) {
				t.Fatalf("[%v, %v]: %s", a, b, cond)
			}
			continue
		case !scaled:
			if cond != "`y` BETWEEN "+rowLit(a)+" AND "+rowLit(b) {
				t.Fatalf("[%v, %v]: %s", a, b, cond)
			}
			continue
		}
		nScaled++
		if strings.Count(cond, "*") != 1 || !strings.HasPrefix(cond, "(`y` * ") {
			t.Fatalf("[%v, %v]: a constant product or no scaling: %s", a, b, cond)
		}
		ys := []float64{0, math.Copysign(0, -1), 5e-324, -5e-324, 0x1p-1022, -0x1p-1022, 1e-300, -1e-300, 1, -1,
			math.MaxFloat64, -math.MaxFloat64, 1e300, -1e300}
		for _, e := range []float64{a, b} {
			y := e
			for i := 0; i < 4; i++ {
				y = math.Nextafter(y, math.Inf(-1))
			}
			for i := 0; i < 9; i++ {
				ys = append(ys, y, math.Ldexp(y, -1), math.Ldexp(y, 1))
				y = math.Nextafter(y, math.Inf(1))
			}
		}
		for i := 0; i <= 64; i++ {
			ys = append(ys, a+(b-a)*float64(i)/64)
		}
		for _, y := range ys {
			v := y * scale
			if got, want := sa <= v && v <= sb, a <= y && y <= b; got != want {
				t.Fatalf("[%v, %v]: y = %v: scaled condition %v, box %v", a, b, y, got, want)
			}
		}
	}
	if nScaled != 8 {
		t.Fatalf("%d of %d boxes scaled", nScaled, len(cases))
	}
	if _, _, _, ok := scaledBox(0, 0.3); ok {
		t.Fatal("a zero end was scaled")
	}
	if got := boxCond("`y`", 0, 0.3); got != "`y` BETWEEN "+rowLit(0)+" AND "+rowLit(0.3) {
		t.Fatalf("zero end: %s", got)
	}
	if got := boxCond("`y`", -1, 1); got != "`y` BETWEEN (-1e+00) AND (1e+00)" {
		t.Fatalf("safe ends: %s", got)
	}
}
