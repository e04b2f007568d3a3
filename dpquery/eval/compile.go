package eval

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// Public limits, checked at compile time (before any charge).
const (
	// MaxNodes bounds the size of a compiled predicate (its per-row cost).
	MaxNodes = 4096
	// MaxLiteralBytes bounds one string literal or parameter; a comparison
	// with it reads that many bytes of the row's value.
	MaxLiteralBytes = 4096
	// MaxLiteralTotal bounds all string literals of one predicate together.
	MaxLiteralTotal = 64 << 10
	// MaxNumericText bounds a string literal read as a number.
	MaxNumericText = 256
	// MaxStringWidth bounds the declared byte length of a column compared
	// with another column or matched with LIKE (the fixed number of bytes
	// read per row).
	MaxStringWidth = 4096
)

// Column is one column of the scanned row, in row order.
type Column struct {
	Name string
	Type sql.Type
}

// Refused is a compile-time refusal: Op names the operator or operand, Why
// says what to change.
type Refused struct {
	Op, Why string
}

func (r *Refused) Error() string { return fmt.Sprintf("%s: %s", r.Op, r.Why) }

// ErrRefused matches every *Refused with errors.Is.
var ErrRefused = errors.New("refused by the DP expression compiler")

func (r *Refused) Is(target error) bool { return target == ErrRefused }

func refuse(op sql.Expression, format string, a ...any) error {
	return &Refused{Op: op.String(), Why: fmt.Sprintf(format, a...)}
}

// Pred is a compiled WHERE predicate. Match is total and its cost depends
// only on the compiled program and the public column widths.
type Pred struct {
	root boolNode
	text string
}

// Match reports whether the predicate is TRUE on row (FALSE and NULL leave
// the row out). It never panics: a panic from a bug is recovered here and
// the row is left out, like FALSE (defence in depth; the nodes are total).
func (p *Pred) Match(row []any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return p.root.evalBool(row) == tru
}

// String is the predicate's text as the analyser bound it (for cache keys).
func (p *Pred) String() string { return p.text }

// Compile translates a bound predicate (GetField indexes into cols) into a
// total program, folding constant subexpressions and checking every public
// limit. A refusal is a *Refused naming the operator.
func Compile(e sql.Expression, cols []Column) (*Pred, error) {
	c := &compiler{cols: cols}
	n, err := c.compile(e)
	if err != nil {
		return nil, err
	}
	b, err := c.toBool(e, n)
	if err != nil {
		return nil, err
	}
	return &Pred{root: b, text: e.String()}, nil
}

type compiler struct {
	cols     []Column
	nodes    int
	litBytes int
}

// cnode is a compiled subexpression: one of the typed node interfaces, its
// kind, whether it reads a column (else it is folded to a constant), and
// for string columns their declared byte width.
type cnode struct {
	k      kind
	b      boolNode
	n      numNode
	s      strNode
	t      timeNode
	hasCol bool
	width  int // kStr: public bound on the value's byte length
}

func (c *compiler) compile(e sql.Expression) (cnode, error) {
	c.nodes++
	if c.nodes > MaxNodes {
		return cnode{}, &Refused{Op: "WHERE", Why: fmt.Sprintf("the predicate has more than %d operators and operands", MaxNodes)}
	}
	n, err := c.compile1(e)
	if err != nil {
		return n, err
	}
	if !n.hasCol {
		n = fold(n)
	}
	return n, nil
}

// fold evaluates a column-free subexpression once (the nodes are total, so
// this cannot fail) and keeps the constant.
func fold(n cnode) cnode {
	switch n.k {
	case kBool:
		n.b = boolConst{n.b.evalBool(nil)}
	case kNum:
		n.n = numConst{n.n.evalNum(nil)}
	case kStr:
		s, ok := n.s.evalStr(nil)
		n.s = strConst{s: s, null: !ok}
		n.width = len(s)
	case kTime:
		t, ok := n.t.evalTime(nil)
		n.t = timeConst{t: t, null: !ok}
	}
	return n
}

func (c *compiler) compile1(e sql.Expression) (cnode, error) {
	switch x := e.(type) {
	case *expression.GetField:
		return c.column(x)
	case *expression.Literal:
		return c.literal(x)
	case expression.Tuple:
		if len(x) == 1 {
			return c.compile(x[0])
		}
		return cnode{}, refuse(e, "row constructors (tuples) are not supported in DP WHERE")
	case *expression.And:
		return c.logic(x.LeftChild, x.RightChild, func(l, r boolNode) boolNode { return andNode{l, r} })
	case *expression.Or:
		return c.logic(x.LeftChild, x.RightChild, func(l, r boolNode) boolNode { return orNode{l, r} })
	case *expression.Xor:
		return c.logic(x.LeftChild, x.RightChild, func(l, r boolNode) boolNode { return xorNode{l, r} })
	case *expression.Not:
		v, err := c.compile(x.Child)
		if err != nil {
			return v, err
		}
		b, err := c.toBool(x.Child, v)
		if err != nil {
			return v, err
		}
		return cnode{k: kBool, b: notNode{b}, hasCol: v.hasCol}, nil
	case *expression.IsNull:
		return c.isNull(x.Child)
	case *expression.IsTrue:
		v, err := c.compile(x.Child)
		if err != nil {
			return v, err
		}
		b, err := c.toBool(x.Child, v)
		if err != nil {
			return v, err
		}
		want := tru
		if strings.HasSuffix(x.String(), expression.IsFalseStr) {
			want = fls
		}
		return cnode{k: kBool, b: isTrueNode{b, want}, hasCol: v.hasCol}, nil
	case *expression.Equals:
		return c.compare(e, opEq, x.Left(), x.Right())
	case *expression.NullSafeEquals:
		return c.compare(e, opNullSafeEq, x.Left(), x.Right())
	case *expression.LessThan:
		return c.compare(e, opLt, x.Left(), x.Right())
	case *expression.LessThanOrEqual:
		return c.compare(e, opLe, x.Left(), x.Right())
	case *expression.GreaterThan:
		return c.compare(e, opGt, x.Left(), x.Right())
	case *expression.GreaterThanOrEqual:
		return c.compare(e, opGe, x.Left(), x.Right())
	case *expression.InTuple:
		return c.in(e, x.Left(), x.Right())
	case *expression.HashInTuple:
		return c.in(e, x.Left(), x.Right())
	case *expression.Between:
		lo, err := c.compare(e, opGe, x.Val, x.Lower)
		if err != nil {
			return lo, err
		}
		hi, err := c.compare(e, opLe, x.Val, x.Upper)
		if err != nil {
			return hi, err
		}
		return cnode{k: kBool, b: andNode{lo.b, hi.b}, hasCol: lo.hasCol || hi.hasCol}, nil
	case *expression.Like:
		return c.like(x)
	case *expression.Arithmetic:
		return c.arith(e, x.Operator(), x.LeftChild, x.RightChild)
	case *expression.Div:
		return c.arith(e, "/", x.LeftChild, x.RightChild)
	case *expression.IntDiv:
		return c.arith(e, "div", x.LeftChild, x.RightChild)
	case *expression.Mod:
		return c.arith(e, "%", x.LeftChild, x.RightChild)
	case *expression.UnaryMinus:
		v, err := c.compile(x.Child)
		if err != nil {
			return v, err
		}
		nn, err := c.toNum(x.Child, v)
		if err != nil {
			return v, err
		}
		return cnode{k: kNum, n: negNode{nn}, hasCol: v.hasCol}, nil
	case *expression.Convert:
		return c.convert(x)
	case *expression.BindVar:
		return cnode{}, refuse(e, "a parameter was not bound")
	}
	if _, ok := e.(sql.ExpressionWithNodes); ok {
		return cnode{}, &Refused{Op: "a subquery", Why: "subqueries read other rows and are not supported in DP WHERE"}
	}
	return cnode{}, refuse(e, "this operator or function is not supported in DP WHERE (its cost or its failures could depend on the row's values); use columns, constants, comparisons, AND/OR/XOR/NOT, IN, BETWEEN, LIKE with a constant pattern, IS [NOT] NULL, IS [NOT] TRUE/FALSE, + - * / DIV %% and CAST between numeric types")
}

func (c *compiler) column(x *expression.GetField) (cnode, error) {
	i := x.Index()
	if i < 0 || i >= len(c.cols) {
		return cnode{}, refuse(x, "unknown column")
	}
	t := c.cols[i].Type
	name := c.cols[i].Name
	switch {
	case types.IsInteger(t), types.IsFloat(t), types.IsDecimal(t), types.IsYear(t), types.IsBit(t):
		return cnode{k: kNum, n: numCol{i}, hasCol: true}, nil
	case types.IsEnum(t), types.IsSet(t):
		return cnode{}, refuse(x, "ENUM and SET columns are not supported in DP WHERE")
	case types.IsText(t) || types.IsBinaryType(t):
		st, ok := t.(sql.StringType)
		if !ok {
			return cnode{}, refuse(x, "column %s of type %s is not supported in DP WHERE", name, t)
		}
		if coll := st.Collation(); !binaryCollation(coll) {
			return cnode{}, refuse(x, "column %s has collation %s; DP WHERE compares text byte by byte and supports only binary collations (utf8mb4_0900_bin, the default, or *_bin, binary)", name, coll)
		}
		w := st.MaxByteLength()
		if w <= 0 || w > math.MaxInt32 {
			w = math.MaxInt32
		}
		return cnode{k: kStr, s: strCol{i}, hasCol: true, width: int(w)}, nil
	case types.IsDateType(t), types.IsDatetimeType(t), types.IsTimestampType(t):
		return cnode{k: kTime, t: timeCol{i}, hasCol: true}, nil
	}
	return cnode{}, refuse(x, "column %s of type %s is not supported in DP WHERE", name, t)
}

func binaryCollation(id sql.CollationID) bool {
	if id == sql.Collation_binary {
		return true
	}
	return strings.HasSuffix(id.Name(), "_bin")
}

func (c *compiler) literal(x *expression.Literal) (cnode, error) {
	switch v := x.Value().(type) {
	case nil:
		return cnode{k: kNull}, nil
	case bool:
		if v {
			return cnode{k: kNum, n: numConst{numInt(1)}}, nil
		}
		return cnode{k: kNum, n: numConst{numInt(0)}}, nil
	case int8:
		return cnode{k: kNum, n: numConst{numInt(int64(v))}}, nil
	case int16:
		return cnode{k: kNum, n: numConst{numInt(int64(v))}}, nil
	case int32:
		return cnode{k: kNum, n: numConst{numInt(int64(v))}}, nil
	case int64:
		return cnode{k: kNum, n: numConst{numInt(v)}}, nil
	case int:
		return cnode{k: kNum, n: numConst{numInt(int64(v))}}, nil
	case uint8, uint16, uint32, uint64:
		return cnode{k: kNum, n: numConst{numCol{0}.evalNum([]any{v})}}, nil
	case float32:
		return cnode{k: kNum, n: numConst{numFloat(float64(v))}}, nil
	case float64:
		return cnode{k: kNum, n: numConst{numFloat(v)}}, nil
	case decimal.Decimal:
		if len(v.String()) > MaxNumericText {
			return cnode{}, refuse(x, "the number has more than %d digits", MaxNumericText)
		}
		return cnode{k: kNum, n: numConst{numFloat(v.InexactFloat64())}}, nil
	case string:
		return c.strLiteral(x, v)
	case []byte:
		return c.strLiteral(x, string(v))
	case time.Time:
		return cnode{k: kTime, t: timeConst{t: v.UnixMicro()}}, nil
	}
	return cnode{}, refuse(x, "a literal of type %T is not supported in DP WHERE", x.Value())
}

func (c *compiler) strLiteral(x sql.Expression, s string) (cnode, error) {
	if len(s) > MaxLiteralBytes {
		return cnode{}, refuse(shortExpr{x}, "a string literal or parameter of %d bytes is longer than the %d bytes DP WHERE accepts", len(s), MaxLiteralBytes)
	}
	c.litBytes += len(s)
	if c.litBytes > MaxLiteralTotal {
		return cnode{}, refuse(shortExpr{x}, "the string literals of the predicate exceed %d bytes together", MaxLiteralTotal)
	}
	return cnode{k: kStr, s: strConst{s: s}, width: len(s)}, nil
}

// shortExpr prints a long expression shortened, for messages.
type shortExpr struct{ sql.Expression }

func (s shortExpr) String() string {
	t := s.Expression.String()
	if len(t) > 60 {
		return t[:40] + "…"
	}
	return t
}

// operands compiles both sides of a binary operator.
func (c *compiler) operands(l, r sql.Expression) (a, b cnode, err error) {
	if a, err = c.compile(l); err != nil {
		return a, b, err
	}
	b, err = c.compile(r)
	return a, b, err
}

func (c *compiler) logic(l, r sql.Expression, mk func(l, r boolNode) boolNode) (cnode, error) {
	a, b, err := c.operands(l, r)
	if err != nil {
		return a, err
	}
	ab, err := c.toBool(l, a)
	if err != nil {
		return a, err
	}
	bb, err := c.toBool(r, b)
	if err != nil {
		return b, err
	}
	return cnode{k: kBool, b: mk(ab, bb), hasCol: a.hasCol || b.hasCol}, nil
}

// toBool reads a value as a truth value: numbers (x ≠ 0) and NULL; a string
// or date would need a per-row conversion, so it is refused.
func (c *compiler) toBool(e sql.Expression, n cnode) (boolNode, error) {
	switch n.k {
	case kBool:
		return n.b, nil
	case kNum:
		return numTruth{n.n}, nil
	case kNull:
		return boolConst{unk}, nil
	}
	return nil, refuse(e, "%s is used as a truth value; compare it instead (e.g. col = 'x', col IS NOT NULL)", n.k)
}

// toNum reads a value as a number: truth values are 1/0, a constant string
// is converted once here (MySQL reads its longest numeric prefix), a string
// column is refused (its conversion would run on every row at a cost that
// depends on the value).
func (c *compiler) toNum(e sql.Expression, n cnode) (numNode, error) {
	switch n.k {
	case kNum:
		return n.n, nil
	case kBool:
		return boolNum{n.b}, nil
	case kNull:
		return numConst{numNull()}, nil
	case kStr:
		if n.hasCol {
			return nil, refuse(e, "a text column used as a number would be converted on every row, at a cost that depends on its value; compare it with a quoted string instead")
		}
		s, ok := n.s.evalStr(nil)
		if !ok {
			return numConst{numNull()}, nil
		}
		if len(s) > MaxNumericText {
			return nil, refuse(shortExpr{e}, "a string of %d bytes read as a number (at most %d)", len(s), MaxNumericText)
		}
		return numConst{numFloat(parseNumberPrefix(s))}, nil
	}
	return nil, refuse(e, "a date/time value cannot be used as a number in DP WHERE")
}

// parseNumberPrefix is MySQL's string-to-DOUBLE: leading spaces, then the
// longest prefix that is a number; no number is 0.
func parseNumberPrefix(s string) float64 {
	s = strings.TrimLeft(s, " \t\n\r")
	end := 0
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := false
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i, digits = i+1, true
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, digits = i+1, true
		}
	}
	if !digits {
		return 0
	}
	end = i
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			end = k
		}
	}
	d, err := decimal.NewFromString(strings.TrimSuffix(s[:end], "."))
	if err != nil {
		return 0
	}
	return d.InexactFloat64()
}

// toTime reads a value as a date/time: a constant string is parsed once
// here; anything else is refused.
func (c *compiler) toTime(e sql.Expression, n cnode) (timeNode, error) {
	switch n.k {
	case kTime:
		return n.t, nil
	case kNull:
		return timeConst{null: true}, nil
	case kStr:
		if !n.hasCol {
			s, ok := n.s.evalStr(nil)
			if !ok {
				return timeConst{null: true}, nil
			}
			v, _, err := types.DatetimeMaxPrecision.Convert(sql.NewEmptyContext(), s)
			if t, isTime := v.(time.Time); err == nil && isTime {
				return timeConst{t: t.UnixMicro()}, nil
			}
			return nil, refuse(e, "%q is not a date or datetime", s)
		}
	}
	return nil, refuse(e, "compares a date/time with %s; compare it with a date/time or a quoted date", n.k)
}

// compare builds l op r after MySQL's type rules, refusing the ones that
// would convert a column's value on every row.
func (c *compiler) compare(e sql.Expression, op cmpOp, l, r sql.Expression) (cnode, error) {
	a, b, err := c.operands(l, r)
	if err != nil {
		return a, err
	}
	hasCol := a.hasCol || b.hasCol
	out := cnode{k: kBool, hasCol: hasCol}
	switch {
	case a.k == kTime || b.k == kTime:
		at, err := c.toTime(e, a)
		if err != nil {
			return a, err
		}
		bt, err := c.toTime(e, b)
		if err != nil {
			return b, err
		}
		out.b = timeCmp{op, at, bt}
	case a.k == kStr && b.k == kStr:
		w := max(a.width, b.width)
		if a.hasCol && b.hasCol && w > MaxStringWidth {
			return a, refuse(e, "compares two text columns declared up to %d bytes; DP WHERE compares text columns of at most %d bytes (compare with a quoted string instead)", w, MaxStringWidth)
		}
		// Against a literal, width+1 bytes decide the order: the literal's.
		switch {
		case !a.hasCol:
			w = a.width
		case !b.hasCol:
			w = b.width
		}
		out.b = strCmp{op: op, l: a.s, r: b.s, width: w}
	case (a.k == kStr && a.hasCol && b.k != kNull) || (b.k == kStr && b.hasCol && a.k != kNull):
		return a, refuse(e, "compares a text column with a number, which converts every row's text to a number at a cost that depends on the value; compare it with a quoted string")
	case a.k == kNull && b.k == kNull:
		out.b = boolConst{op.nulls(true, true)}
	case a.k == kStr && b.k == kNull, a.k == kNull && b.k == kStr:
		as, bs := a.s, b.s
		if as == nil {
			as = strConst{null: true}
		}
		if bs == nil {
			bs = strConst{null: true}
		}
		out.b = strCmp{op: op, l: as, r: bs}
	default:
		an, err := c.toNum(l, a)
		if err != nil {
			return a, err
		}
		bn, err := c.toNum(r, b)
		if err != nil {
			return b, err
		}
		out.b = numCmp{op, an, bn}
	}
	return out, nil
}

func (c *compiler) isNull(x sql.Expression) (cnode, error) {
	v, err := c.compile(x)
	if err != nil {
		return v, err
	}
	var null func(row []any) bool
	switch v.k {
	case kNull:
		null = func([]any) bool { return true }
	case kBool:
		b := v.b
		null = func(row []any) bool { return b.evalBool(row) == unk }
	case kNum:
		n := v.n
		null = func(row []any) bool { return n.evalNum(row).null }
	case kStr:
		s := v.s
		null = func(row []any) bool { _, ok := s.evalStr(row); return !ok }
	case kTime:
		t := v.t
		null = func(row []any) bool { _, ok := t.evalTime(row); return !ok }
	}
	return cnode{k: kBool, b: isNullNode{null}, hasCol: v.hasCol}, nil
}

func (c *compiler) in(e sql.Expression, l, r sql.Expression) (cnode, error) {
	tup, ok := r.(expression.Tuple)
	if !ok {
		return cnode{}, refuse(e, "IN takes a list of values in DP WHERE")
	}
	if _, ok := l.(expression.Tuple); ok && len(l.(expression.Tuple)) != 1 {
		return cnode{}, refuse(e, "row constructors (tuples) are not supported in DP WHERE")
	}
	out := cnode{k: kBool}
	var items []boolNode
	for _, it := range tup {
		eq, err := c.compare(e, opEq, l, it)
		if err != nil {
			return eq, err
		}
		items = append(items, eq.b)
		out.hasCol = out.hasCol || eq.hasCol
	}
	out.b = anyNode{items}
	return out, nil
}

func (c *compiler) like(x *expression.Like) (cnode, error) {
	a, err := c.compile(x.LeftChild)
	if err != nil {
		return a, err
	}
	p, err := c.compile(x.RightChild)
	if err != nil {
		return p, err
	}
	if p.hasCol || (p.k != kStr && p.k != kNull) {
		return p, refuse(x, "LIKE takes a constant string pattern in DP WHERE")
	}
	esc := '\\'
	if x.Escape != nil {
		ev, err := c.compile(x.Escape)
		if err != nil {
			return ev, err
		}
		if ev.k == kStr && !ev.hasCol {
			s, _ := ev.s.evalStr(nil)
			if utf8.RuneCountInString(s) > 1 {
				return ev, refuse(x, "ESCAPE takes one character")
			}
			if r, _ := utf8.DecodeRuneInString(s); s != "" {
				esc = r
			}
		} else if ev.k != kNull {
			return ev, refuse(x, "ESCAPE takes a constant character")
		}
	}
	if a.k == kNull || p.k == kNull {
		return cnode{k: kBool, b: boolConst{unk}, hasCol: a.hasCol}, nil
	}
	if a.k != kStr {
		return a, refuse(x, "LIKE on %s would convert it to text on every row; LIKE applies to text columns in DP WHERE", a.k)
	}
	pat, _ := p.s.evalStr(nil)
	w := a.width
	if a.hasCol && w > MaxStringWidth {
		return a, refuse(x, "LIKE reads the whole value, and this column is declared up to %d bytes (DP WHERE matches LIKE on text columns of at most %d bytes, e.g. VARCHAR(1024) in utf8mb4)", w, MaxStringWidth)
	}
	n, err := compileLike(a.s, pat, esc, w)
	if err != nil {
		return a, refuse(x, "%v", err)
	}
	return cnode{k: kBool, b: n, hasCol: a.hasCol}, nil
}

func (c *compiler) arith(e sql.Expression, op string, l, r sql.Expression) (cnode, error) {
	var o arithOp
	switch strings.ToLower(op) {
	case "+":
		o = opAdd
	case "-":
		o = opSub
	case "*":
		o = opMul
	case "/":
		o = opDiv
	case "div":
		o = opIntDiv
	case "%", "mod":
		o = opMod
	default:
		return cnode{}, refuse(e, "operator %s is not supported in DP WHERE (use + - * / DIV %%)", op)
	}
	a, b, err := c.operands(l, r)
	if err != nil {
		return a, err
	}
	an, err := c.toNum(l, a)
	if err != nil {
		return a, err
	}
	bn, err := c.toNum(r, b)
	if err != nil {
		return b, err
	}
	return cnode{k: kNum, n: arith{o, an, bn}, hasCol: a.hasCol || b.hasCol}, nil
}

func (c *compiler) convert(x *expression.Convert) (cnode, error) {
	v, err := c.compile(x.Child)
	if err != nil {
		return v, err
	}
	t := x.Type()
	n := castNode{}
	switch {
	case types.IsSigned(t):
		n.to = castSigned
	case types.IsUnsigned(t):
		n.to = castUnsigned
	case t == types.Float32:
		n.to = castFloat
	case types.IsFloat(t):
		n.to = castDouble
	case types.IsDecimal(t):
		dt, ok := t.(sql.DecimalType)
		if !ok {
			return v, refuse(x, "unsupported DECIMAL type")
		}
		n.to = castDecimal
		p, s := int(dt.Precision()), int(dt.Scale())
		n.scale = s
		n.pow10s = math.Pow(10, float64(s))
		n.limit = math.Pow(10, float64(p-s)) - 1/n.pow10s
	default:
		return v, refuse(x, "CAST/CONVERT to %s is not supported in DP WHERE (only to SIGNED, UNSIGNED, DOUBLE, FLOAT, REAL or DECIMAL of a number)", t)
	}
	if v.k == kStr && v.hasCol {
		return v, refuse(x, "converting a text column to a number runs on every row at a cost that depends on the value")
	}
	num, err := c.toNum(x.Child, v)
	if err != nil {
		return v, err
	}
	n.x = num
	return cnode{k: kNum, n: n, hasCol: v.hasCol}, nil
}
