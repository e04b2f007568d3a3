package store

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

func codecSchema(t *testing.T) (sql.Schema, sql.Row) {
	t.Helper()
	enum := types.MustCreateEnumType([]string{"lo", "hi"}, sql.Collation_Default)
	set := types.MustCreateSetType([]string{"a", "b", "c"}, sql.Collation_Default)
	dec := types.MustCreateDecimalType(12, 3)
	json, _, err := types.JSON.Convert(context.Background(), `{"k": [1, "two", null]}`)
	if err != nil {
		t.Fatal(err)
	}
	cols := []struct {
		typ sql.Type
		v   any
	}{
		{types.Int8, int8(-128)}, {types.Int16, int16(-300)}, {types.Int24, int32(-8388608)},
		{types.Int32, int32(math.MinInt32)}, {types.Int64, int64(math.MinInt64)},
		{types.Uint8, uint8(255)}, {types.Uint16, uint16(65535)}, {types.Uint24, uint32(16777215)},
		{types.Uint32, uint32(math.MaxUint32)}, {types.Uint64, uint64(math.MaxUint64)},
		{types.Float32, float32(-1.25)}, {types.Float64, math.SmallestNonzeroFloat64},
		{dec, decimal.RequireFromString("-12345.678")},
		{types.Text, "héllo\x00world"}, {types.MustCreateStringWithDefaults(sqltypes.Char, 10), "ch"},
		{types.Blob, []byte{0, 1, 2, 255}}, {types.Datetime, time.Date(2024, 2, 29, 23, 59, 58, 123456000, time.UTC)},
		{types.Date, time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)}, {types.Timestamp, time.Unix(1700000000, 0).UTC()},
		{types.Time, types.Timespan(-3723000001)}, {types.Year, int16(2155)}, {enum, uint16(2)}, {set, uint64(5)},
		{types.MustCreateBitType(12), uint64(4095)}, {types.Boolean, int8(1)}, {types.JSON, json},
	}
	var sch sql.Schema
	var row sql.Row
	for i, c := range cols {
		sch = append(sch, &sql.Column{Name: fmt.Sprintf("c%d", i), Type: c.typ, Nullable: true})
		row = append(row, c.v)
	}
	return sch, row
}

func TestCodecRoundTrip(t *testing.T) {
	sch, row := codecSchema(t)
	cd, err := newCodec(sch)
	if err != nil {
		t.Fatal(err)
	}
	ctx := sql.NewEmptyContext()
	all := newProjection(len(sch), seqOrds(len(sch)))
	check := func(in sql.Row) {
		t.Helper()
		enc, err := cd.encode(ctx, nil, in)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]any, len(sch))
		if err := cd.decode(enc, &all, out); err != nil {
			t.Fatal(err)
		}
		for i := range in {
			if in[i] == nil {
				if out[i] != nil {
					t.Errorf("column %d: %v, want NULL", i, out[i])
				}
				continue
			}
			if reflect.TypeOf(out[i]) != reflect.TypeOf(in[i]) && !types.IsJSON(sch[i].Type) {
				t.Errorf("column %d (%s): decoded %T, want %T", i, sch[i].Type, out[i], in[i])
			}
			if cmp, err := sch[i].Type.Compare(ctx, in[i], out[i]); err != nil || cmp != 0 {
				t.Errorf("column %d (%s): %v -> %v (%v)", i, sch[i].Type, in[i], out[i], err)
			}
		}
		// Any subset in any order decodes to the same values (columns
		// skipped without decoding).
		for trial := 0; trial < 20; trial++ {
			ords := rand.Perm(len(sch))[:1+rand.IntN(len(sch))]
			p := newProjection(len(sch), ords)
			sub := make([]any, len(ords))
			if err := cd.decode(enc, &p, sub); err != nil {
				t.Fatal(err)
			}
			for j, o := range ords {
				if !reflect.DeepEqual(sub[j], out[o]) {
					t.Errorf("projection %v: column %d = %v, want %v", ords, o, sub[j], out[o])
				}
			}
		}
	}
	check(row)
	nulls := make(sql.Row, len(row))
	check(nulls)
	mixed := append(sql.Row{}, row...)
	for i := 0; i < len(mixed); i += 3 {
		mixed[i] = nil
	}
	check(mixed)
	// Values in another Go type are converted through the column type.
	conv := append(sql.Row{}, row...)
	conv[4] = "42"
	conv[11] = int64(3)
	enc, err := cd.encode(ctx, nil, conv)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]any, len(sch))
	if err := cd.decode(enc, &all, out); err != nil || out[4] != int64(42) || out[11] != float64(3) {
		t.Errorf("conversion: %v %v %v", out[4], out[11], err)
	}
	// NOT NULL is enforced, corrupt rows are reported.
	sch[0].Nullable = false
	if _, err := cd.encode(ctx, nil, nulls); err == nil {
		t.Error("NULL accepted in a NOT NULL column")
	}
	sch[0].Nullable = true
	enc, _ = cd.encode(ctx, nil, row)
	if err := cd.decode(enc[:len(enc)-3], &all, out); err == nil {
		t.Error("truncated row decoded")
	}
}

func TestDecodeFloats(t *testing.T) {
	sch, row := codecSchema(t)
	cd, err := newCodec(sch)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := cd.encode(sql.NewEmptyContext(), nil, row)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(sch))
	all := newProjection(len(sch), seqOrds(len(sch)))
	if err := cd.decodeFloats(enc, &all, out); err != nil {
		t.Fatal(err)
	}
	want := []float64{-128, -300, -8388608, math.MinInt32, math.MinInt64, 255, 65535, 16777215, math.MaxUint32, math.MaxUint64,
		-1.25, math.SmallestNonzeroFloat64, -12345.678, math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(),
		math.NaN(), 2155, math.NaN(), math.NaN(), 4095, 1, math.NaN()}
	for i, w := range want {
		if !(out[i] == w || math.IsNaN(w) && math.IsNaN(out[i])) {
			t.Errorf("column %d (%s): %v, want %v", i, sch[i].Type, out[i], w)
		}
	}
}

// Keys must be equal exactly when the values are, and ordered like them.
func TestKeyOrder(t *testing.T) {
	ctx := sql.NewEmptyContext()
	ci := types.MustCreateString(sqltypes.VarChar, 20, sql.Collation_utf8mb4_0900_ai_ci)
	cases := []struct {
		typ  sql.Type
		gen  func() any
		less func(a, b any) bool
	}{
		{types.Int64, func() any { return int64(rand.Uint64()) >> rand.IntN(64) }, func(a, b any) bool { return a.(int64) < b.(int64) }},
		{types.Int8, func() any { return int8(rand.IntN(256) - 128) }, func(a, b any) bool { return a.(int8) < b.(int8) }},
		{types.Uint64, func() any { return rand.Uint64() >> rand.IntN(64) }, func(a, b any) bool { return a.(uint64) < b.(uint64) }},
		{types.Float64, func() any { return rand.NormFloat64() * math.Pow(10, float64(rand.IntN(40)-20)) }, func(a, b any) bool { return a.(float64) < b.(float64) }},
		{types.Text, func() any {
			b := make([]byte, rand.IntN(4))
			for i := range b {
				b[i] = "\x00ab"[rand.IntN(3)]
			}
			return string(b)
		}, func(a, b any) bool { return a.(string) < b.(string) }},
		{types.Datetime, func() any { return time.Unix(rand.Int64N(1e10)-5e9, rand.Int64N(1e9)).UTC() }, func(a, b any) bool { return a.(time.Time).Before(b.(time.Time)) }},
	}
	for _, c := range cases {
		vals := make([]any, 300)
		for i := range vals {
			vals[i] = c.gen()
		}
		sort.Slice(vals, func(i, j int) bool { return c.less(vals[i], vals[j]) })
		k, _ := kindOf(c.typ)
		for i := 1; i < len(vals); i++ {
			a := appendKeyPart(nil, k, c.typ, vals[i-1])
			b := appendKeyPart(nil, k, c.typ, vals[i])
			cmp := bytes.Compare(a, b)
			equal := !c.less(vals[i-1], vals[i])
			if equal && cmp != 0 || !equal && cmp >= 0 {
				t.Errorf("%s: %v, %v: key comparison %d", c.typ, vals[i-1], vals[i], cmp)
			}
		}
	}
	// Decimals (index keys and primary keys of new tables): numeric order,
	// 1.5 and 1.50 alike.
	decs := make([]decimal.Decimal, 400)
	for i := range decs {
		decs[i] = decimal.New(rand.Int64N(2000001)-1000000, int32(rand.IntN(12)-6))
	}
	decs = append(decs, decimal.RequireFromString("1.5"), decimal.RequireFromString("1.50"), decimal.RequireFromString("-0.12"), decimal.RequireFromString("-0.123"), decimal.Zero)
	sort.Slice(decs, func(i, j int) bool { return decs[i].LessThan(decs[j]) })
	for i := 1; i < len(decs); i++ {
		cmp := bytes.Compare(appendDecimalKey(nil, decs[i-1]), appendDecimalKey(nil, decs[i]))
		if want := decs[i-1].Cmp(decs[i]); cmp != want {
			t.Errorf("decimal keys of %v, %v compare %d, want %d", decs[i-1], decs[i], cmp, want)
		}
	}
	// Composite keys: the first part is prefix-free.
	sch := sql.Schema{{Name: "s", Type: types.Text}, {Name: "i", Type: types.Int64}}
	cd, _ := newCodec(sch)
	ke, _ := newKeyEncoder(sch, []int{0, 1}, cd.kinds, true)
	k1, _ := ke.key(ctx, nil, sql.Row{"a", int64(5)})
	k2, _ := ke.key(ctx, nil, sql.Row{"a\x00", int64(-5)})
	k3, _ := ke.key(ctx, nil, sql.Row{"ab", int64(-5)})
	if !(bytes.Compare(k1, k2) < 0 && bytes.Compare(k2, k3) < 0) {
		t.Errorf("composite keys out of order: %x %x %x", k1, k2, k3)
	}
	// Collation-aware equality; −0 and +0 are one key.
	k, _ := kindOf(ci)
	if !bytes.Equal(appendKeyPart(nil, k, ci, "abc"), appendKeyPart(nil, k, ci, "ABC")) {
		t.Error("case-insensitive collation gives different keys for 'abc' and 'ABC'")
	}
	if bytes.Equal(appendKeyPart(nil, kString, types.Text, "abc"), appendKeyPart(nil, kString, types.Text, "ABC")) {
		t.Error("binary collation conflates 'abc' and 'ABC'")
	}
	if !bytes.Equal(appendKeyPart(nil, kFloat64, types.Float64, math.Copysign(0, -1)), appendKeyPart(nil, kFloat64, types.Float64, 0.0)) {
		t.Error("-0 and +0 have different keys")
	}
}

func TestSchemaTypesSurviveReopen(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery(`CREATE TABLE t (e ENUM('lo','hi'), s SET('a','b'), v VARCHAR(3), c CHAR(2) COLLATE utf8mb4_0900_ai_ci,
		b VARBINARY(3), x TEXT, bl BLOB, j JSON, d DECIMAL(5,1) DEFAULT 1.5, n INT DEFAULT (1 + 1)) COLLATE utf8mb4_0900_ai_ci`)
	before := h.newTable("t").Schema()
	h.reopen()
	h.ctx.SetCurrentDatabase("db")
	after := h.newTable("t").Schema()
	for i := range before {
		if !before[i].Type.Equals(after[i].Type) {
			t.Errorf("column %s: %s became %s", before[i].Name, before[i].Type, after[i].Type)
		}
	}
	h.mustQuery("INSERT INTO t (e) VALUES ('hi')")
	expectRows(t, h, "SELECT e, d, n FROM t", "2,1.5,2") // ENUM values are indexes in the engine
}
