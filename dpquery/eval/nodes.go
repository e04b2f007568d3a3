package eval

import (
	"math"
	"time"

	"github.com/shopspring/decimal"
)

// Three-valued logic: SQL's FALSE, TRUE and UNKNOWN (NULL).
type tri uint8

const (
	fls tri = iota
	tru
	unk
)

// Truth tables, indexed [a][b]: a lookup instead of branches, so AND and OR
// cost the same whatever their operands are.
var (
	andTab = [3][3]tri{{fls, fls, fls}, {fls, tru, unk}, {fls, unk, unk}}
	orTab  = [3][3]tri{{fls, tru, unk}, {tru, tru, tru}, {unk, tru, unk}}
	xorTab = [3][3]tri{{fls, tru, unk}, {tru, fls, unk}, {unk, unk, unk}}
	notTab = [3]tri{tru, fls, unk}
)

// num is a numeric value: exact integers keep their int64 (so BIGINT keys
// compare exactly), everything else is a float64. Non-finite floats never
// appear: they are NULL.
type num struct {
	f     float64
	i     int64
	exact bool
	null  bool
}

func numNull() num       { return num{null: true} }
func numInt(i int64) num { return num{f: float64(i), i: i, exact: true} }
func numFloat(f float64) num {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return numNull()
	}
	return num{f: f}
}

// Node kinds, fixed at compile time.
type kind uint8

const (
	kNull kind = iota // the NULL literal: takes the kind of its context
	kBool
	kNum
	kStr
	kTime
)

func (k kind) String() string {
	return [...]string{"NULL", "a truth value", "a number", "a string", "a date/time"}[k]
}

type boolNode interface{ evalBool(row []any) tri }
type numNode interface{ evalNum(row []any) num }
type strNode interface {
	evalStr(row []any) (string, bool) // false: NULL
}
type timeNode interface {
	evalTime(row []any) (int64, bool) // microseconds since the epoch; false: NULL
}

// ---- leaves ----------------------------------------------------------------

type numCol struct{ idx int }

// evalNum reads any Go value the storage backends produce for a numeric
// column; anything else (it cannot happen for a numeric column) is NULL.
func (c numCol) evalNum(row []any) num {
	if c.idx >= len(row) {
		return numNull()
	}
	switch x := row[c.idx].(type) {
	case int64:
		return numInt(x)
	case int32:
		return numInt(int64(x))
	case int16:
		return numInt(int64(x))
	case int8:
		return numInt(int64(x))
	case int:
		return numInt(int64(x))
	case uint64:
		if x > math.MaxInt64 {
			return numFloat(float64(x))
		}
		return numInt(int64(x))
	case uint32:
		return numInt(int64(x))
	case uint16:
		return numInt(int64(x))
	case uint8:
		return numInt(int64(x))
	case bool:
		if x {
			return numInt(1)
		}
		return numInt(0)
	case float64:
		return numFloat(x)
	case float32:
		return numFloat(float64(x))
	case decimal.Decimal:
		return numFloat(decimalFloat(x))
	case decimal.NullDecimal:
		if !x.Valid {
			return numNull()
		}
		return numFloat(decimalFloat(x.Decimal))
	}
	return numNull()
}

// pow10 holds the powers of ten that are exact in float64.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// decimalFloat converts a DECIMAL value with one correctly rounded division
// when its coefficient and scale allow (every DECIMAL(p, s) with p ≤ 15),
// else through the library; both costs are bounded by the column's declared
// precision (≤ 65 digits), a public number.
func decimalFloat(d decimal.Decimal) float64 {
	if e := d.Exponent(); e <= 0 && e >= -22 {
		if c := d.Coefficient(); c.IsInt64() {
			if ci := c.Int64(); ci > -1<<53 && ci < 1<<53 {
				return float64(ci) / pow10[-e]
			}
		}
	}
	return d.InexactFloat64()
}

type strCol struct{ idx int }

func (c strCol) evalStr(row []any) (string, bool) {
	if c.idx >= len(row) {
		return "", false
	}
	switch x := row[c.idx].(type) {
	case string:
		return x, true
	case []byte:
		// No copy: the bytes are only read.
		return unsafeString(x), true
	}
	return "", false
}

type timeCol struct{ idx int }

func (c timeCol) evalTime(row []any) (int64, bool) {
	if c.idx >= len(row) {
		return 0, false
	}
	if t, ok := row[c.idx].(time.Time); ok {
		return t.UnixMicro(), true
	}
	return 0, false
}

type numConst struct{ v num }

func (c numConst) evalNum([]any) num { return c.v }

type strConst struct {
	s    string
	null bool
}

func (c strConst) evalStr([]any) (string, bool) { return c.s, !c.null }

type timeConst struct {
	t    int64
	null bool
}

func (c timeConst) evalTime([]any) (int64, bool) { return c.t, !c.null }

type boolConst struct{ v tri }

func (c boolConst) evalBool([]any) tri { return c.v }

// ---- logic -----------------------------------------------------------------

// and, or and xor evaluate both operands on every row: no short-circuit, so
// the cost of the right operand never depends on the left one's value.
type andNode struct{ l, r boolNode }

func (n andNode) evalBool(row []any) tri {
	a, b := n.l.evalBool(row), n.r.evalBool(row)
	return andTab[a][b]
}

type orNode struct{ l, r boolNode }

func (n orNode) evalBool(row []any) tri {
	a, b := n.l.evalBool(row), n.r.evalBool(row)
	return orTab[a][b]
}

type xorNode struct{ l, r boolNode }

func (n xorNode) evalBool(row []any) tri {
	a, b := n.l.evalBool(row), n.r.evalBool(row)
	return xorTab[a][b]
}

type notNode struct{ x boolNode }

func (n notNode) evalBool(row []any) tri { return notTab[n.x.evalBool(row)] }

// anyNode is IN: TRUE if any item is TRUE, else UNKNOWN if any is UNKNOWN;
// every item is evaluated.
type anyNode struct{ items []boolNode }

func (n anyNode) evalBool(row []any) tri {
	r := fls
	for _, it := range n.items {
		r = orTab[r][it.evalBool(row)]
	}
	return r
}

// isTrue is IS TRUE / IS FALSE: never UNKNOWN.
type isTrueNode struct {
	x    boolNode
	want tri
}

func (n isTrueNode) evalBool(row []any) tri {
	if n.x.evalBool(row) == n.want {
		return tru
	}
	return fls
}

// isNull is IS NULL over any kind.
type isNullNode struct{ null func(row []any) bool }

func (n isNullNode) evalBool(row []any) tri {
	if n.null(row) {
		return tru
	}
	return fls
}

// numTruth is a number used as a truth value (x ≠ 0).
type numTruth struct{ x numNode }

func (n numTruth) evalBool(row []any) tri {
	v := n.x.evalNum(row)
	if v.null {
		return unk
	}
	if v.f != 0 {
		return tru
	}
	return fls
}

// boolNum is a truth value used as a number (1, 0, NULL).
type boolNum struct{ x boolNode }

func (n boolNum) evalNum(row []any) num {
	switch n.x.evalBool(row) {
	case tru:
		return numInt(1)
	case fls:
		return numInt(0)
	}
	return numNull()
}

// ---- comparisons -------------------------------------------------------------

type cmpOp uint8

const (
	opEq cmpOp = iota
	opNullSafeEq
	opLt
	opLe
	opGt
	opGe
)

// fromOrder turns c = sign(a − b) into the comparison's truth value.
func (op cmpOp) fromOrder(c int) tri {
	var ok bool
	switch op {
	case opEq, opNullSafeEq:
		ok = c == 0
	case opLt:
		ok = c < 0
	case opLe:
		ok = c <= 0
	case opGt:
		ok = c > 0
	case opGe:
		ok = c >= 0
	}
	if ok {
		return tru
	}
	return fls
}

// nulls is the result when either side is NULL: UNKNOWN, except for <=>,
// which is TRUE when both are NULL and FALSE when one is.
func (op cmpOp) nulls(an, bn bool) tri {
	if op == opNullSafeEq {
		if an && bn {
			return tru
		}
		return fls
	}
	return unk
}

type numCmp struct {
	op   cmpOp
	l, r numNode
}

func (n numCmp) evalBool(row []any) tri {
	a, b := n.l.evalNum(row), n.r.evalNum(row)
	if a.null || b.null {
		return n.op.nulls(a.null, b.null)
	}
	var c int
	if a.exact && b.exact {
		c = cmpInt(a.i, b.i)
	} else {
		c = cmpFloat(a.f, b.f)
	}
	return n.op.fromOrder(c)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// strCmp compares bytewise (binary collations) in a fixed number of steps:
// width+1 bytes, where width is public (the literal's length, or the
// columns' declared byte length). A longer stored value than width can only
// come from outside the declared type; it compares on its first width+1
// bytes, which still decides the order against a literal of length width.
type strCmp struct {
	op    cmpOp
	l, r  strNode
	width int
}

func (n strCmp) evalBool(row []any) tri {
	a, an := n.l.evalStr(row)
	b, bn := n.r.evalStr(row)
	// The comparison runs on NULL too (as ""), so NULL costs the same.
	r := n.op.fromOrder(fixedCompare(a, b, n.width))
	if !an || !bn {
		return n.op.nulls(!an, !bn)
	}
	return r
}

// fixedCompare returns sign(a − b) in byte order, reading exactly width+1
// positions of each (past its end a string reads as −1, below every byte).
func fixedCompare(a, b string, width int) int {
	c := 0
	for i := 0; i <= width; i++ {
		x, y := byteAt(a, i), byteAt(b, i)
		d := 0
		if x < y {
			d = -1
		} else if x > y {
			d = 1
		}
		if c == 0 {
			c = d
		}
	}
	return c
}

func byteAt(s string, i int) int {
	if i < len(s) {
		return int(s[i])
	}
	return -1
}

type timeCmp struct {
	op   cmpOp
	l, r timeNode
}

func (n timeCmp) evalBool(row []any) tri {
	a, an := n.l.evalTime(row)
	b, bn := n.r.evalTime(row)
	if !an || !bn {
		return n.op.nulls(!an, !bn)
	}
	return n.op.fromOrder(cmpInt(a, b))
}

// ---- arithmetic ----------------------------------------------------------------

type arithOp uint8

const (
	opAdd arithOp = iota
	opSub
	opMul
	opDiv
	opIntDiv
	opMod
)

// arith follows MySQL: exact integer +, −, × stay exact (overflow is NULL,
// where MySQL would fail the statement); / is DOUBLE; DIV truncates; a zero
// divisor is NULL; a non-finite result is NULL.
type arith struct {
	op   arithOp
	l, r numNode
}

func (n arith) evalNum(row []any) num {
	a, b := n.l.evalNum(row), n.r.evalNum(row)
	if a.null || b.null {
		return numNull()
	}
	exact := a.exact && b.exact
	switch n.op {
	case opAdd:
		if exact {
			s := a.i + b.i
			if (s > a.i) == (b.i > 0) {
				return numInt(s)
			}
			return numNull()
		}
		return numFloat(a.f + b.f)
	case opSub:
		if exact {
			s := a.i - b.i
			if (s < a.i) == (b.i > 0) {
				return numInt(s)
			}
			return numNull()
		}
		return numFloat(a.f - b.f)
	case opMul:
		if exact {
			p := a.i * b.i
			if a.i == 0 || (p/a.i == b.i && !(a.i == -1 && b.i == math.MinInt64) && !(b.i == -1 && a.i == math.MinInt64)) {
				return numInt(p)
			}
			return numNull()
		}
		return numFloat(a.f * b.f)
	case opDiv:
		if b.f == 0 {
			return numNull()
		}
		return numFloat(a.f / b.f)
	case opIntDiv:
		if exact {
			if b.i == 0 || (a.i == math.MinInt64 && b.i == -1) {
				return numNull()
			}
			return numInt(a.i / b.i)
		}
		if b.f == 0 {
			return numNull()
		}
		q := math.Trunc(a.f / b.f)
		if math.Abs(q) < 0x1p63 {
			return numInt(int64(q))
		}
		return numNull()
	case opMod:
		if exact {
			if b.i == 0 {
				return numNull()
			}
			if b.i == -1 {
				return numInt(0)
			}
			return numInt(a.i % b.i)
		}
		if b.f == 0 {
			return numNull()
		}
		return numFloat(math.Mod(a.f, b.f))
	}
	return numNull()
}

type negNode struct{ x numNode }

func (n negNode) evalNum(row []any) num {
	v := n.x.evalNum(row)
	if v.null {
		return v
	}
	if v.exact {
		if v.i == math.MinInt64 {
			return numNull()
		}
		return numInt(-v.i)
	}
	return numFloat(-v.f)
}

// ---- casts between numeric types ----------------------------------------------

type castKind uint8

const (
	castSigned castKind = iota
	castUnsigned
	castDouble
	castFloat
	castDecimal
)

// castNode converts a number to another numeric type as MySQL's CAST does,
// with out-of-range values clamped to the type's range (MySQL warns and
// clamps) and nothing that can fail.
type castNode struct {
	to           castKind
	x            numNode
	scale        int     // DECIMAL(p, s): s
	limit        float64 // DECIMAL(p, s): 10^(p−s) − 10^−s
	pow10s, half float64
}

func (n castNode) evalNum(row []any) num {
	v := n.x.evalNum(row)
	if v.null {
		return v
	}
	switch n.to {
	case castSigned:
		if v.exact {
			return v
		}
		r := math.Round(v.f) // half away from zero, as MySQL
		switch {
		case r >= 0x1p63:
			return numInt(math.MaxInt64)
		case r < -0x1p63:
			return numInt(math.MinInt64)
		}
		return numInt(int64(r))
	case castUnsigned:
		var i int64
		if v.exact {
			i = v.i
		} else {
			r := math.Round(v.f)
			switch {
			case r >= 0x1p64:
				return numFloat(0x1p64 - 1)
			case r >= 0x1p63:
				return numFloat(r)
			case r < -0x1p63:
				i = math.MinInt64
			default:
				i = int64(r)
			}
		}
		if i >= 0 {
			return numInt(i)
		}
		return numFloat(float64(uint64(i))) // MySQL wraps negatives modulo 2⁶⁴
	case castDouble:
		return numFloat(v.f)
	case castFloat:
		if math.Abs(v.f) > math.MaxFloat32 {
			return numNull()
		}
		return numFloat(float64(float32(v.f)))
	case castDecimal:
		f := v.f
		if math.Abs(f) < 0x1p52/n.pow10s {
			f = math.Round(f*n.pow10s) / n.pow10s
		}
		if f > n.limit {
			f = n.limit
		} else if f < -n.limit {
			f = -n.limit
		}
		if n.scale == 0 && math.Abs(f) < 0x1p63 {
			return numInt(int64(f))
		}
		return numFloat(f)
	}
	return numNull()
}
