package eval

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

// The test schema: one column of each admitted family.
var testCols = []Column{
	{"i", types.Int64},
	{"f", types.Float64},
	{"d", types.MustCreateDecimalType(10, 2)},
	{"s", types.MustCreateStringWithDefaults(sqltypes.VarChar, 32)},
	{"t", types.DatetimeMaxPrecision},
	{"txt", types.LongText},
	{"u", types.Uint64},
}

func col(i int) *expression.GetField {
	return expression.NewGetField(i, testCols[i].Type, testCols[i].Name, true)
}

func lit(v any) *expression.Literal {
	switch v.(type) {
	case nil:
		return expression.NewLiteral(nil, types.Null)
	case int64:
		return expression.NewLiteral(v, types.Int64)
	case float64:
		return expression.NewLiteral(v, types.Float64)
	case decimal.Decimal:
		return expression.NewLiteral(v, types.MustCreateDecimalType(65, 10))
	case string:
		return expression.NewLiteral(v, types.LongText)
	}
	panic(fmt.Sprintf("lit %T", v))
}

func mustCompile(t testing.TB, e sql.Expression) *Pred {
	t.Helper()
	p, err := Compile(e, testCols)
	if err != nil {
		t.Fatalf("Compile(%s): %v", e, err)
	}
	return p
}

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// benign values: where go-mysql-server evaluates without error, the two
// evaluators must agree.
func benignRow(r *rand.Rand) []any {
	pick := func(vs ...any) any { return vs[r.IntN(len(vs))] }
	return []any{
		pick(nil, int64(-5), int64(-1), int64(0), int64(1), int64(2), int64(7), int64(1)<<40),
		pick(nil, -2.5, 0.0, 0.5, 3.25, 7.0, 1e10),
		pick(nil, decimal.RequireFromString("1.25"), decimal.RequireFromString("-3.00"), decimal.RequireFromString("7.00")),
		pick(nil, "", "a", "ab", "b", "person1", "person12", "é", "aé", "a%b", "A"),
		pick(nil, t0, t0.Add(36*time.Hour), t0.AddDate(-1, 0, 0)),
		pick(nil, "", "abc", "person1"),
		pick(nil, uint64(0), uint64(3), uint64(1)<<63+5),
	}
}

type gen struct {
	r *rand.Rand
}

func (g gen) num(depth int) sql.Expression {
	r := g.r
	if depth <= 0 || r.IntN(3) == 0 {
		switch r.IntN(7) {
		case 0:
			return col(0)
		case 1:
			return col(1)
		case 2:
			return col(2)
		case 3:
			return lit(int64(r.IntN(11) - 3))
		case 4:
			return lit([]float64{0.5, -1.5, 2.25, 0}[r.IntN(4)])
		case 5:
			return lit(decimal.RequireFromString([]string{"0.50", "2", "-1.25"}[r.IntN(3)]))
		default:
			return col(6)
		}
	}
	a, b := g.num(depth-1), g.num(depth-1)
	switch r.IntN(8) {
	case 0:
		return expression.NewPlus(a, b)
	case 1:
		return expression.NewMinus(a, b)
	case 2:
		return expression.NewMult(a, b)
	case 3:
		return expression.NewDiv(a, b)
	case 4:
		return expression.NewIntDiv(a, b)
	case 5:
		return expression.NewMod(a, b)
	case 6:
		return expression.NewUnaryMinus(a)
	default:
		return expression.NewConvert(a, expression.ConvertToSigned)
	}
}

func (g gen) boolean(depth int) sql.Expression {
	r := g.r
	if depth <= 0 || r.IntN(3) == 0 {
		switch r.IntN(9) {
		case 0:
			return g.cmp(g.num(1), g.num(1))
		case 1:
			return g.cmp(col(3), lit([]string{"", "a", "b", "person1", "é", "ab"}[r.IntN(6)]))
		case 2:
			return g.cmp(col(4), lit([]string{"2024-01-01", "2024-01-02 12:00:00", "2023-01-01"}[r.IntN(3)]))
		case 3:
			return expression.NewIsNull([]sql.Expression{col(0), col(3), col(4), g.num(1)}[r.IntN(4)])
		case 4:
			return expression.NewInTuple(col(0), expression.NewTuple(lit(int64(1)), lit(int64(7)), lit(nil)))
		case 5:
			return expression.NewBetween(g.num(0), lit(int64(0)), lit(int64(5)))
		case 6:
			pats := []string{"a%", "%b", "_", "__", "%", "person_", "a\\%b", "%é", "_é", "p%1%", ""}
			return expression.NewLike(col(3), lit(pats[r.IntN(len(pats))]), nil)
		case 7:
			return expression.NewInTuple(col(3), expression.NewTuple(lit("a"), lit("person1")))
		default:
			return g.cmp(col(5), lit([]string{"abc", "", "zz"}[r.IntN(3)]))
		}
	}
	a, b := g.boolean(depth-1), g.boolean(depth-1)
	switch r.IntN(5) {
	case 0:
		return expression.NewAnd(a, b)
	case 1:
		return expression.NewOr(a, b)
	case 2:
		return expression.NewXor(a, b)
	case 3:
		return expression.NewNot(a)
	default:
		return expression.NewIsTrue(a)
	}
}

func (g gen) cmp(a, b sql.Expression) sql.Expression {
	switch g.r.IntN(6) {
	case 0:
		return expression.NewEquals(a, b)
	case 1:
		return expression.NewNullSafeEquals(a, b)
	case 2:
		return expression.NewLessThan(a, b)
	case 3:
		return expression.NewLessThanOrEqual(a, b)
	case 4:
		return expression.NewGreaterThan(a, b)
	default:
		return expression.NewGreaterThanOrEqual(a, b)
	}
}

func gmsTruth(v any) tri {
	if v == nil {
		return unk
	}
	if b, err := sql.ConvertToBool(sql.NewEmptyContext(), v); err == nil && b {
		return tru
	}
	return fls
}

// TestAgreesWithGMS: on benign values where go-mysql-server evaluates the
// predicate without error, both evaluators give the same truth value.
func TestAgreesWithGMS(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	g := gen{r}
	ctx := sql.NewEmptyContext()
	agree, skipped, compared := 0, 0, 0
	var mismatches []string
	for i := 0; i < 3000; i++ {
		e := g.boolean(3)
		p, err := Compile(e, testCols)
		if err != nil {
			t.Fatalf("benign expression refused: %s: %v", e, err)
		}
		for j := 0; j < 20; j++ {
			row := benignRow(r)
			want, gerr := func() (v any, err error) {
				defer func() {
					if x := recover(); x != nil {
						err = fmt.Errorf("panic: %v", x)
					}
				}()
				return e.Eval(ctx, sql.Row(row))
			}()
			if gerr != nil {
				skipped++
				continue
			}
			compared++
			got := p.root.evalBool(row)
			if got == gmsTruth(want) {
				agree++
				continue
			}
			if len(mismatches) < 20 {
				mismatches = append(mismatches, fmt.Sprintf("%s on %v: dp %v, gms %v", e, row, got, want))
			}
		}
	}
	t.Logf("compared %d, agreed %d, GMS errors skipped %d", compared, agree, skipped)
	if compared < 30000 {
		t.Fatalf("only %d comparisons", compared)
	}
	// Known divergences (docs/sql.md): an integer overflow is NULL here (an
	// error in MySQL, a wrap-around in GMS), and BIGINT UNSIGNED values above
	// 2⁶³ and DECIMAL arithmetic are computed in DOUBLE.
	if rate := float64(compared-agree) / float64(compared); rate > 0.002 {
		t.Fatalf("disagreement rate %.4f; first cases:\n%s", rate, strings.Join(mismatches, "\n"))
	} else if len(mismatches) > 0 {
		t.Logf("disagreements (rate %.5f):\n%s", rate, strings.Join(mismatches, "\n"))
	}
}

// adversarial values of every admitted column family, each column with
// values of its own type (as the storage backends produce them); junk adds
// values of the wrong type and rows too short, for totality only.
func adversarialRows(junk bool) [][]any {
	big := strings.Repeat("x", 1<<20)
	ints := []any{nil, int64(0), int64(1), int64(-1), int64(math.MaxInt64), int64(math.MinInt64), int64(7)}
	floats := []any{nil, math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1), 1e308, -1e308, 5e-324, 0.0, 30.5}
	decs := []any{nil, decimal.RequireFromString("99999999.99"), decimal.RequireFromString("-0.01"), decimal.RequireFromString("0.00")}
	strs := []any{nil, "", big, "\xff\xfe", "é", strings.Repeat("é", 8), "%_\\", "abcdefgh"}
	bigStrs := []any{nil, "", big, strings.Repeat("x", MaxLiteralBytes), "\xff"}
	times := []any{nil, time.Time{}, time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC), time.Unix(-1<<40, 0), t0}
	uints := []any{nil, uint64(0), uint64(math.MaxUint64), uint64(1) << 63}
	lists := [][]any{ints, floats, decs, strs, times, bigStrs, uints}
	var rows [][]any
	for i := 0; i < 40; i++ {
		row := make([]any, len(lists))
		for c, l := range lists {
			row[c] = l[(i*(c+1)+c)%len(l)]
		}
		rows = append(rows, row)
	}
	if junk {
		wrong := []any{"not a number", []byte{0xff}, true, struct{}{}, float32(3.4e38), int8(-1), decimal.NullDecimal{}, math.NaN(), 7.0, "2024-01-01"}
		for i := range wrong {
			row := make([]any, len(lists))
			for c := range row {
				row[c] = wrong[(i+c)%len(wrong)]
			}
			rows = append(rows, row)
		}
		rows = append(rows, []any{}, []any{nil}) // columns missing entirely
	}
	return rows
}

// adversarialExprs covers every admitted node type with extreme constants.
func adversarialExprs(r *rand.Rand) []sql.Expression {
	g := gen{r}
	out := []sql.Expression{
		expression.NewIsNull(expression.NewConvertWithLengthAndScale(expression.NewMult(col(1), lit(9.9871840825684212e+306)), expression.ConvertToDecimal, 65, 30)),
		expression.NewEquals(expression.NewConvert(col(0), expression.ConvertToUnsigned), lit(int64(1))),
		expression.NewGreaterThan(expression.NewConvert(expression.NewMult(col(1), col(1)), expression.ConvertToFloat), lit(0.0)),
		expression.NewGreaterThan(expression.NewConvertWithLengthAndScale(col(2), expression.ConvertToDecimal, 5, 0), lit(int64(3))),
		expression.NewEquals(expression.NewIntDiv(col(0), lit(int64(-1))), lit(int64(1))),
		expression.NewEquals(expression.NewMod(col(0), lit(int64(-1))), lit(int64(0))),
		expression.NewEquals(expression.NewMult(col(0), lit(int64(-1))), lit(int64(1))),
		expression.NewEquals(expression.NewPlus(col(0), col(6)), lit(int64(1))),
		expression.NewEquals(expression.NewMinus(col(6), col(0)), lit(int64(1))),
		expression.NewEquals(expression.NewUnaryMinus(col(0)), lit(int64(1))),
		expression.NewEquals(expression.NewDiv(col(1), col(2)), lit(int64(1))),
		expression.NewLike(col(3), lit("%x%x%_é%"), nil),
		expression.NewLike(col(3), lit("a|%"), lit("|")),
		expression.NewEquals(col(5), lit(strings.Repeat("x", MaxLiteralBytes))),
		expression.NewLessThan(col(3), col(3)),
		expression.NewGreaterThan(col(4), lit("2024-01-01 10:00:00")),
		expression.NewNullSafeEquals(col(4), lit(nil)),
		expression.NewInTuple(col(5), expression.NewTuple(lit(""), lit(nil), lit("x"))),
		expression.NewIsTrue(expression.NewXor(col(0), col(1))),
		expression.NewIsFalse(col(6)),
		expression.NewBetween(col(1), lit(math.Inf(-1)), lit(1e308)),
	}
	for i := 0; i < 200; i++ {
		out = append(out, g.boolean(4))
	}
	return out
}

// TestTotalOnAdversarialValues: every admitted node evaluates every
// adversarial value without panicking. The nodes are called directly,
// without Match's recover, so a panic fails the test.
func TestTotalOnAdversarialValues(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	rows := adversarialRows(true)
	for _, e := range adversarialExprs(r) {
		p := mustCompile(t, e)
		for _, row := range rows {
			func() {
				defer func() {
					if x := recover(); x != nil {
						t.Fatalf("%s panicked on %v: %v", e, shortRow(row), x)
					}
				}()
				_ = p.root.evalBool(row)
			}()
		}
	}
}

func shortRow(row []any) string {
	s := fmt.Sprint(row)
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// TestCostIndependentOfValues: per expression, the time to evaluate it on
// each adversarial row is within a constant factor of the time on every
// other row (min of repeated batches; a 1 MiB string, NULL, ±Inf and NaN
// included). A short-circuit or a value-dependent operator shows up as a
// factor of tens to thousands.
func TestCostIndependentOfValues(t *testing.T) {
	if testing.Short() {
		t.Skip("timing ratios need a few seconds")
	}
	r := rand.New(rand.NewPCG(5, 6))
	rows := adversarialRows(false)
	exprs := adversarialExprs(r)[:21]
	exprs = append(exprs,
		// the timing pattern: an expensive right operand gated on
		// the left ones.
		expression.NewAnd(expression.NewAnd(expression.NewEquals(col(0), lit(int64(7))), expression.NewGreaterThan(col(1), lit(int64(30)))),
			expression.NewLike(col(3), lit("%a%b%c%d%e%f%g%h%"), nil)),
	)
	worst := 0.0
	for _, e := range exprs {
		p := mustCompile(t, e)
		lo, hi := math.Inf(1), 0.0
		for _, row := range rows {
			d := minBatch(p, row)
			lo, hi = math.Min(lo, d), math.Max(hi, d)
		}
		ratio := hi / lo
		worst = math.Max(worst, ratio)
		if ratio > maxCostRatio {
			t.Errorf("%s: cost ratio %.1f across values (%.0f–%.0f ns)", e, ratio, lo, hi)
		}
	}
	t.Logf("worst cost ratio across adversarial values: %.2f", worst)
}

// maxCostRatio is the constant factor allowed between the cheapest and the
// dearest value of one expression: what remains is a NULL check or a DECIMAL
// conversion of a few tens of nanoseconds, against factors of hundreds to
// millions for the value-dependent operators this test exists to catch.
const maxCostRatio = 6

func minBatch(p *Pred, row []any) float64 {
	best := math.Inf(1)
	for rep := 0; rep < 15; rep++ {
		start := time.Now()
		for i := 0; i < 200; i++ {
			p.Match(row)
		}
		best = math.Min(best, float64(time.Since(start).Nanoseconds())/200)
	}
	return best
}

// TestShortCircuitVariantIsCaught: the cost test above catches an
// evaluator that short-circuits AND (must-fail variant).
func TestShortCircuitVariantIsCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("timing ratios need a few seconds")
	}
	e := expression.NewAnd(expression.NewEquals(col(0), lit(int64(7))), expression.NewLike(col(3), lit("%a%b%c%d%e%f%g%h%"), nil))
	p := mustCompile(t, e)
	and := p.root.(andNode)
	p.root = shortAnd(and)
	match := []any{int64(7), 0.0, nil, "zzzzzzzzzzzzzzzz", nil, nil, nil}
	miss := []any{int64(8), 0.0, nil, "zzzzzzzzzzzzzzzz", nil, nil, nil}
	ratio := minBatch(p, match) / minBatch(p, miss)
	if ratio < maxCostRatio {
		t.Fatalf("short-circuit variant not caught: cost ratio %.2f", ratio)
	}
	t.Logf("short-circuit variant: cost ratio %.1f (caught)", ratio)
}

type shortAnd andNode

func (n shortAnd) evalBool(row []any) tri {
	if a := n.l.evalBool(row); a == fls {
		return fls
	}
	return andTab[n.l.evalBool(row)][n.r.evalBool(row)]
}

// TestRefusals: operators whose cost or failures depend on values are
// refused at compile time, naming the operator.
func TestRefusals(t *testing.T) {
	ctx := sql.NewEmptyContext()
	_ = ctx
	long := strings.Repeat("9", 100000)
	cases := []struct {
		e    sql.Expression
		want string
	}{
		{expression.NewIsNull(expression.NewConvertWithLengthAndScale(lit(long), expression.ConvertToDecimal, 65, 30)), "longer than"},
		{expression.NewIsNull(expression.NewConvertWithLengthAndScale(col(3), expression.ConvertToDecimal, 65, 30)), "text column"},
		{expression.NewIsNull(expression.NewConvert(col(1), expression.ConvertToChar)), "not supported"},
		{expression.NewIsNull(expression.NewConvert(col(1), expression.ConvertToJSON)), "not supported"},
		{expression.NewEquals(col(3), lit(int64(5))), "text column"},
		{expression.NewLike(col(5), lit("%a%"), nil), "LIKE reads the whole value"},
		{expression.NewLike(col(3), col(3), nil), "constant string pattern"},
		{expression.NewLike(col(3), lit(strings.Repeat("a", 64)), nil), "more than 63"},
		{expression.NewEquals(col(5), col(5)), "two text columns"},
		{col(3), "truth value"},
		{expression.NewGreaterThan(col(4), lit("yesterday")), "not a date"},
		{expression.NewEquals(col(4), lit(int64(3))), "date/time"},
		{expression.NewIsNull(expression.NewTuple(col(0), col(1))), "tuples"},
		{expression.NewEquals(col(0), expression.NewBindVar("v1")), "not bound"},
		{expression.NewEquals(col(1), lit(strings.Repeat("1", 300))), "read as a number"},
	}
	for _, c := range cases {
		_, err := Compile(c.e, testCols)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrRefused) {
			t.Errorf("Compile(%s): %v, want a refusal containing %q", shortExpr{c.e}, err, c.want)
		}
	}
	// An enormous predicate.
	var e sql.Expression = expression.NewEquals(col(0), lit(int64(1)))
	for i := 0; i < MaxNodes; i++ {
		e = expression.NewOr(e, expression.NewEquals(col(0), lit(int64(i))))
	}
	if _, err := Compile(e, testCols); err == nil || !strings.Contains(err.Error(), "operators") {
		t.Errorf("huge predicate: %v", err)
	}
}

// TestFolding: column-free subexpressions become constants at compile time.
func TestFolding(t *testing.T) {
	e := expression.NewAnd(expression.NewGreaterThan(expression.NewPlus(lit(int64(1)), lit(int64(2))), lit(int64(2))), expression.NewIsNull(col(0)))
	p := mustCompile(t, e)
	and := p.root.(andNode)
	if _, ok := and.l.(boolConst); !ok {
		t.Fatalf("constant conjunct not folded: %T", and.l)
	}
	if got := p.root.evalBool([]any{nil}); got != tru {
		t.Fatalf("folded predicate on NULL: %v", got)
	}
}

// TestLikeAgreesWithGMS: the automaton against go-mysql-server's matcher on
// random patterns and strings, UTF-8 included.
func TestLikeAgreesWithGMS(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	alpha := []string{"a", "b", "é", "%", "_", "\\", "ü"}
	salpha := []string{"a", "b", "é", "%", "_", "ü", "\\"}
	ctx := sql.NewEmptyContext()
	n := 0
	for i := 0; i < 4000; i++ {
		var pb, sb strings.Builder
		for j := r.IntN(6); j > 0; j-- {
			pb.WriteString(alpha[r.IntN(len(alpha))])
		}
		for j := r.IntN(7); j > 0; j-- {
			sb.WriteString(salpha[r.IntN(len(salpha))])
		}
		pat, s := pb.String(), sb.String()
		e := expression.NewLike(col(3), lit(pat), nil)
		want, err := e.Eval(ctx, sql.Row{nil, nil, nil, s})
		if err != nil {
			continue
		}
		p, err := Compile(e, testCols)
		if err != nil {
			t.Fatalf("%q: %v", pat, err)
		}
		got := p.root.evalBool([]any{nil, nil, nil, s})
		if got != gmsTruth(want) {
			t.Errorf("%q LIKE %q: dp %v, gms %v", s, pat, got, want)
		}
		n++
	}
	if n < 3000 {
		t.Fatalf("only %d comparisons", n)
	}
}
