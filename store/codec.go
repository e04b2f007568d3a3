package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// kind is the physical encoding of one column. Several SQL types share a
// kind (YEAR is an int16, ENUM a uint16, SET and BIT a uint64); the kind also
// fixes the Go type a decoded value has, which is the one the engine expects
// for the column type.
type kind uint8

const (
	kInt8 kind = iota + 1
	kInt16
	kInt32
	kInt64
	kUint8
	kUint16
	kUint32
	kUint64
	kFloat32
	kFloat64
	kDecimal  // decimal.Decimal, stored as its canonical string
	kString   // string
	kBytes    // []byte
	kTime     // time.Time (DATE, DATETIME, TIMESTAMP), seconds + nanoseconds
	kTimespan // types.Timespan (TIME), microseconds
	kJSON     // sql.JSONWrapper, stored as JSON text
	kGeometry // types.GeometryValue, stored as EWKB (SRID + WKB)
)

// fixedSize is the encoded size of a kind, or 0 for length-prefixed kinds.
var fixedSize = [...]int{
	kInt8: 1, kInt16: 2, kInt32: 4, kInt64: 8,
	kUint8: 1, kUint16: 2, kUint32: 4, kUint64: 8,
	kFloat32: 4, kFloat64: 8, kTime: 12, kTimespan: 8,
	kDecimal: 0, kString: 0, kBytes: 0, kJSON: 0, kGeometry: 0,
}

// rowFormatV1 is the first byte of every stored row; it lets a later format
// coexist with rows already on disk.
const rowFormatV1 = 1

// errUnsupportedType is returned by kindOf for column types the backend
// cannot store (spatial, vector, extended types).
var errUnsupportedType = errors.New("column type not supported by the dpsql storage backend")

// kindOf maps a column type to its physical encoding.
func kindOf(t sql.Type) (kind, error) {
	switch {
	case types.IsGeometry(t):
		return kGeometry, nil
	case isSpatial(t):
		return kGeometry, nil
	case types.IsExtendedType(t):
		return 0, fmt.Errorf("%w: %s", errUnsupportedType, t.String())
	case types.IsDecimal(t):
		return kDecimal, nil
	case types.IsJSON(t):
		return kJSON, nil
	case types.IsTimespan(t):
		return kTimespan, nil
	case types.IsTime(t):
		return kTime, nil
	case types.IsEnum(t):
		return kUint16, nil
	case types.IsSet(t), types.IsBit(t):
		return kUint64, nil
	case types.IsYear(t):
		return kInt16, nil
	}
	vt := t.ValueType()
	if vt == nil {
		return 0, fmt.Errorf("%w: %s", errUnsupportedType, t.String())
	}
	switch vt.Kind() {
	case reflect.Int8:
		return kInt8, nil
	case reflect.Int16:
		return kInt16, nil
	case reflect.Int32:
		return kInt32, nil
	case reflect.Int64, reflect.Int:
		return kInt64, nil
	case reflect.Uint8:
		return kUint8, nil
	case reflect.Uint16:
		return kUint16, nil
	case reflect.Uint32:
		return kUint32, nil
	case reflect.Uint64, reflect.Uint:
		return kUint64, nil
	case reflect.Float32:
		return kFloat32, nil
	case reflect.Float64:
		return kFloat64, nil
	case reflect.String:
		return kString, nil
	case reflect.Slice:
		if vt.Elem().Kind() == reflect.Uint8 {
			return kBytes, nil
		}
	}
	return 0, fmt.Errorf("%w: %s", errUnsupportedType, t.String())
}

// isSpatial covers the spatial types types.IsGeometry leaves out
// (MULTIPOINT, MULTILINESTRING, MULTIPOLYGON, GEOMETRYCOLLECTION).
func isSpatial(t sql.Type) bool {
	_, ok := t.(sql.SpatialColumnType)
	return ok
}

// numericType reports whether ScanFloats yields the column's value (and not
// NaN): integers, floats, decimals, YEAR and BIT.
func numericType(t sql.Type) bool {
	if types.IsEnum(t) || types.IsSet(t) {
		return false
	}
	return types.IsNumber(t) || types.IsYear(t) || types.IsBit(t)
}

// codec encodes and decodes the rows of one schema.
//
// Row layout: a format byte, a NULL bitmap of ⌈n/8⌉ bytes (bit set = NULL),
// then the non-NULL values in column order: fixed-width little-endian for
// numbers and times, uvarint length + bytes for strings, bytes, decimals and
// JSON. Fixed widths let a reader skip columns it does not need without
// decoding them.
type codec struct {
	sch     sql.Schema
	kinds   []kind
	numeric []bool
	nbitmap int
}

func newCodec(sch sql.Schema) (*codec, error) {
	c := &codec{
		sch:     sch,
		kinds:   make([]kind, len(sch)),
		numeric: make([]bool, len(sch)),
		nbitmap: (len(sch) + 7) / 8,
	}
	for i, col := range sch {
		k, err := kindOf(col.Type)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", col.Name, err)
		}
		c.kinds[i] = k
		c.numeric[i] = numericType(col.Type)
	}
	return c, nil
}

// encode appends the encoding of row to dst. Values are expected in the Go
// type the column type produces; anything else goes through the column's
// Convert first.
func (c *codec) encode(ctx context.Context, dst []byte, row sql.Row) ([]byte, error) {
	if len(row) != len(c.sch) {
		return nil, fmt.Errorf("row has %d values, table has %d columns", len(row), len(c.sch))
	}
	dst = append(dst, rowFormatV1)
	bm := len(dst)
	for i := 0; i < c.nbitmap; i++ {
		dst = append(dst, 0)
	}
	for i, v := range row {
		if v == nil {
			if !c.sch[i].Nullable {
				return nil, sql.ErrInsertIntoNonNullableProvidedNull.New(c.sch[i].Name)
			}
			dst[bm+i/8] |= 1 << (i % 8)
			continue
		}
		var err error
		dst, err = appendValue(ctx, dst, c.kinds[i], c.sch[i].Type, v)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.sch[i].Name, err)
		}
	}
	return dst, nil
}

func appendValue(ctx context.Context, dst []byte, k kind, t sql.Type, v any) ([]byte, error) {
	v, err := normalize(ctx, k, t, v)
	if err != nil {
		return nil, err
	}
	switch k {
	case kInt8:
		return append(dst, byte(v.(int8))), nil
	case kInt16:
		return binary.LittleEndian.AppendUint16(dst, uint16(v.(int16))), nil
	case kInt32:
		return binary.LittleEndian.AppendUint32(dst, uint32(v.(int32))), nil
	case kInt64:
		return binary.LittleEndian.AppendUint64(dst, uint64(v.(int64))), nil
	case kUint8:
		return append(dst, v.(uint8)), nil
	case kUint16:
		return binary.LittleEndian.AppendUint16(dst, v.(uint16)), nil
	case kUint32:
		return binary.LittleEndian.AppendUint32(dst, v.(uint32)), nil
	case kUint64:
		return binary.LittleEndian.AppendUint64(dst, v.(uint64)), nil
	case kFloat32:
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(v.(float32))), nil
	case kFloat64:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.(float64))), nil
	case kDecimal:
		// Keep the scale (12.50 stays 12.50, not 12.5).
		d := v.(decimal.Decimal)
		txt := d.String()
		if e := d.Exponent(); e < 0 {
			txt = d.StringFixed(-e)
		}
		return appendBytes(dst, []byte(txt)), nil
	case kString:
		s := v.(string)
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...), nil
	case kBytes:
		return appendBytes(dst, v.([]byte)), nil
	case kTime:
		tm := v.(time.Time)
		dst = binary.LittleEndian.AppendUint64(dst, uint64(tm.Unix()))
		return binary.LittleEndian.AppendUint32(dst, uint32(tm.Nanosecond())), nil
	case kTimespan:
		return binary.LittleEndian.AppendUint64(dst, uint64(v.(types.Timespan))), nil
	case kJSON:
		return encodeJSON(dst, v.(sql.JSONWrapper))
	case kGeometry:
		return appendBytes(dst, v.(types.GeometryValue).Serialize()), nil
	}
	return nil, fmt.Errorf("unknown column kind %d", k)
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// normalize returns v in the Go type of kind k, converting through the column
// type when the engine handed over something else (wrappers, wider ints).
func normalize(ctx context.Context, k kind, t sql.Type, v any) (any, error) {
	if goTypeMatches(k, v) {
		return v, nil
	}
	if w, ok := v.(sql.AnyWrapper); ok {
		u, err := w.UnwrapAny(ctx)
		if err != nil {
			return nil, err
		}
		v = u
		if goTypeMatches(k, v) {
			return v, nil
		}
	}
	cv, _, err := t.Convert(ctx, v)
	if err != nil {
		return nil, err
	}
	if w, ok := cv.(sql.AnyWrapper); ok {
		if cv, err = w.UnwrapAny(ctx); err != nil {
			return nil, err
		}
	}
	switch k {
	case kString:
		if b, ok := cv.([]byte); ok {
			cv = string(b)
		}
	case kBytes:
		if s, ok := cv.(string); ok {
			cv = []byte(s)
		}
	}
	if !goTypeMatches(k, cv) {
		return nil, fmt.Errorf("cannot store value of type %T in a %s column", v, t.String())
	}
	return cv, nil
}

func goTypeMatches(k kind, v any) bool {
	switch k {
	case kInt8:
		_, ok := v.(int8)
		return ok
	case kInt16:
		_, ok := v.(int16)
		return ok
	case kInt32:
		_, ok := v.(int32)
		return ok
	case kInt64:
		_, ok := v.(int64)
		return ok
	case kUint8:
		_, ok := v.(uint8)
		return ok
	case kUint16:
		_, ok := v.(uint16)
		return ok
	case kUint32:
		_, ok := v.(uint32)
		return ok
	case kUint64:
		_, ok := v.(uint64)
		return ok
	case kFloat32:
		_, ok := v.(float32)
		return ok
	case kFloat64:
		_, ok := v.(float64)
		return ok
	case kDecimal:
		_, ok := v.(decimal.Decimal)
		return ok
	case kString:
		_, ok := v.(string)
		return ok
	case kBytes:
		_, ok := v.([]byte)
		return ok
	case kTime:
		_, ok := v.(time.Time)
		return ok
	case kTimespan:
		_, ok := v.(types.Timespan)
		return ok
	case kJSON:
		_, ok := v.(sql.JSONWrapper)
		return ok
	case kGeometry:
		_, ok := v.(types.GeometryValue)
		return ok
	}
	return false
}

var errCorruptRow = errors.New("corrupt stored row")

// projection is a decoding plan: out[slot[i]] receives column i when
// slot[i] >= 0; columns after last are never looked at.
type projection struct {
	slot []int
	last int
}

// newProjection plans decoding of the given column ordinals (in output
// order).
func newProjection(ncols int, ords []int) projection {
	p := projection{slot: make([]int, ncols), last: -1}
	for i := range p.slot {
		p.slot[i] = -1
	}
	for out, o := range ords {
		p.slot[o] = out
		if o > p.last {
			p.last = o
		}
	}
	return p
}

// valueSpan returns the bytes of the value of column i starting at buf[off]
// and the offset just past it.
func (c *codec) valueSpan(buf []byte, off, i int) ([]byte, int, error) {
	if n := fixedSize[c.kinds[i]]; n > 0 {
		if off+n > len(buf) {
			return nil, 0, errCorruptRow
		}
		return buf[off : off+n], off + n, nil
	}
	l, w := binary.Uvarint(buf[off:])
	if w <= 0 || uint64(len(buf)-off-w) < l {
		return nil, 0, errCorruptRow
	}
	start := off + w
	return buf[start : start+int(l)], start + int(l), nil
}

// decode fills out (len = number of projected columns) from the stored row.
// Strings and byte slices are copied: buf belongs to bbolt.
func (c *codec) decode(buf []byte, p *projection, out []any) error {
	if len(buf) < 1+c.nbitmap || buf[0] != rowFormatV1 {
		return errCorruptRow
	}
	bm := buf[1 : 1+c.nbitmap]
	off := 1 + c.nbitmap
	for i := 0; i <= p.last; i++ {
		s := p.slot[i]
		if bm[i/8]&(1<<(i%8)) != 0 {
			if s >= 0 {
				out[s] = nil
			}
			continue
		}
		if s < 0 {
			if n := fixedSize[c.kinds[i]]; n > 0 {
				off += n
				continue
			}
		}
		b, next, err := c.valueSpan(buf, off, i)
		if err != nil {
			return err
		}
		off = next
		if s < 0 {
			continue
		}
		v, err := decodeValue(c.kinds[i], b)
		if err != nil {
			return fmt.Errorf("column %q: %w", c.sch[i].Name, err)
		}
		out[s] = v
	}
	return nil
}

func decodeValue(k kind, b []byte) (any, error) {
	le := binary.LittleEndian
	switch k {
	case kInt8:
		return int8(b[0]), nil
	case kInt16:
		return int16(le.Uint16(b)), nil
	case kInt32:
		return int32(le.Uint32(b)), nil
	case kInt64:
		return int64(le.Uint64(b)), nil
	case kUint8:
		return b[0], nil
	case kUint16:
		return le.Uint16(b), nil
	case kUint32:
		return le.Uint32(b), nil
	case kUint64:
		return le.Uint64(b), nil
	case kFloat32:
		return math.Float32frombits(le.Uint32(b)), nil
	case kFloat64:
		return math.Float64frombits(le.Uint64(b)), nil
	case kDecimal:
		return decimal.NewFromString(string(b))
	case kString:
		return string(b), nil
	case kBytes:
		return append([]byte{}, b...), nil
	case kTime:
		return time.Unix(int64(le.Uint64(b)), int64(le.Uint32(b[8:]))).UTC(), nil
	case kTimespan:
		return types.Timespan(int64(le.Uint64(b))), nil
	case kJSON:
		return decodeJSON(b)
	case kGeometry:
		v, _, err := types.GeometryType{}.Convert(context.Background(), append([]byte{}, b...))
		return v, err
	}
	return nil, fmt.Errorf("unknown column kind %d", k)
}

// decodeFloats fills out like decode, as float64: NULL and non-numeric
// columns give NaN.
func (c *codec) decodeFloats(buf []byte, p *projection, out []float64) error {
	if len(buf) < 1+c.nbitmap || buf[0] != rowFormatV1 {
		return errCorruptRow
	}
	bm := buf[1 : 1+c.nbitmap]
	off := 1 + c.nbitmap
	le := binary.LittleEndian
	for i := 0; i <= p.last; i++ {
		s := p.slot[i]
		if bm[i/8]&(1<<(i%8)) != 0 {
			if s >= 0 {
				out[s] = math.NaN()
			}
			continue
		}
		k := c.kinds[i]
		n := fixedSize[k]
		if n > 0 {
			if off+n > len(buf) {
				return errCorruptRow
			}
			if s >= 0 {
				b := buf[off : off+n]
				var f float64
				switch {
				case !c.numeric[i]:
					f = math.NaN()
				case k == kFloat64:
					f = math.Float64frombits(le.Uint64(b))
				case k == kInt64:
					f = float64(int64(le.Uint64(b)))
				case k == kFloat32:
					f = float64(math.Float32frombits(le.Uint32(b)))
				case k == kInt32:
					f = float64(int32(le.Uint32(b)))
				case k == kInt16:
					f = float64(int16(le.Uint16(b)))
				case k == kInt8:
					f = float64(int8(b[0]))
				case k == kUint64:
					f = float64(le.Uint64(b))
				case k == kUint32:
					f = float64(le.Uint32(b))
				case k == kUint16:
					f = float64(le.Uint16(b))
				case k == kUint8:
					f = float64(b[0])
				default:
					f = math.NaN()
				}
				out[s] = f
			}
			off += n
			continue
		}
		b, next, err := c.valueSpan(buf, off, i)
		if err != nil {
			return err
		}
		off = next
		if s < 0 {
			continue
		}
		if k == kDecimal && c.numeric[i] {
			f, err := strconv.ParseFloat(string(b), 64)
			if err != nil {
				f = math.NaN()
			}
			out[s] = f
		} else {
			out[s] = math.NaN()
		}
	}
	return nil
}

// sameRow reports whether two encodings hold equal values for the column
// types. Encodings of equal rows are normally identical; this covers values
// the engine handed over in another but equal form.
func (c *codec) sameRow(ctx *sql.Context, a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	full := newProjection(len(c.sch), seqOrds(len(c.sch)))
	ra, rb := make([]any, len(c.sch)), make([]any, len(c.sch))
	if c.decode(a, &full, ra) != nil || c.decode(b, &full, rb) != nil {
		return false
	}
	for i, col := range c.sch {
		if ra[i] == nil || rb[i] == nil {
			if ra[i] != rb[i] {
				return false
			}
			continue
		}
		cmp, err := col.Type.Compare(ctx, ra[i], rb[i])
		if err != nil || cmp != 0 {
			return false
		}
	}
	return true
}
