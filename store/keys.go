package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// Row keys. A table with a primary key stores each row under an encoding of
// its key columns that is equal exactly when the values are equal for the
// column types (collation-aware for strings), so bbolt's key uniqueness is
// the primary-key constraint. Numbers, times and strings are also
// order-preserving, so a scan returns rows in primary-key order as InnoDB
// does; decimals are encoded by their canonical text (equality only). A
// table without a primary key stores rows under an 8-byte big-endian
// sequence number.

// keyEncoder encodes the primary key of rows of one schema.
type keyEncoder struct {
	ords       []int
	kinds      []kind
	cols       []*sql.Column
	orderedDec bool // decimals in order-preserving form (else canonical text)
}

func newKeyEncoder(sch sql.Schema, ords []int, kinds []kind, orderedDec bool) (*keyEncoder, error) {
	e := &keyEncoder{ords: ords, orderedDec: orderedDec}
	for _, o := range ords {
		if kinds[o] == kJSON || kinds[o] == kGeometry {
			return nil, fmt.Errorf("column %q: JSON and spatial columns cannot be part of a primary key", sch[o].Name)
		}
		e.kinds = append(e.kinds, kinds[o])
		e.cols = append(e.cols, sch[o])
	}
	return e, nil
}

// key appends the key of row to dst.
func (e *keyEncoder) key(ctx context.Context, dst []byte, row sql.Row) ([]byte, error) {
	for i, o := range e.ords {
		v := row[o]
		if v == nil {
			return nil, sql.ErrInsertIntoNonNullableProvidedNull.New(e.cols[i].Name)
		}
		v, err := normalize(ctx, e.kinds[i], e.cols[i].Type, v)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", e.cols[i].Name, err)
		}
		if e.kinds[i] == kDecimal && e.orderedDec {
			dst = appendDecimalKey(dst, v.(decimal.Decimal))
		} else {
			dst = appendKeyPart(dst, e.kinds[i], e.cols[i].Type, v)
		}
	}
	return dst, nil
}

func appendKeyPart(dst []byte, k kind, t sql.Type, v any) []byte {
	be := binary.BigEndian
	switch k {
	case kInt8:
		return be.AppendUint64(dst, uint64(int64(v.(int8)))^1<<63)
	case kInt16:
		return be.AppendUint64(dst, uint64(int64(v.(int16)))^1<<63)
	case kInt32:
		return be.AppendUint64(dst, uint64(int64(v.(int32)))^1<<63)
	case kInt64:
		return be.AppendUint64(dst, uint64(v.(int64))^1<<63)
	case kUint8:
		return be.AppendUint64(dst, uint64(v.(uint8)))
	case kUint16:
		return be.AppendUint64(dst, uint64(v.(uint16)))
	case kUint32:
		return be.AppendUint64(dst, uint64(v.(uint32)))
	case kUint64:
		return be.AppendUint64(dst, v.(uint64))
	case kFloat32:
		return be.AppendUint64(dst, floatKey(float64(v.(float32))))
	case kFloat64:
		return be.AppendUint64(dst, floatKey(v.(float64)))
	case kDecimal:
		return appendEscaped(dst, []byte(v.(decimal.Decimal).String()))
	case kString:
		return appendStringKey(dst, t, v.(string))
	case kBytes:
		return appendEscaped(dst, v.([]byte))
	case kTime:
		tm := v.(time.Time)
		dst = be.AppendUint64(dst, uint64(tm.Unix())^1<<63)
		return be.AppendUint32(dst, uint32(tm.Nanosecond()))
	case kTimespan:
		return be.AppendUint64(dst, uint64(int64(v.(types.Timespan)))^1<<63)
	}
	return dst
}

// floatKey maps a float to an unsigned integer with the same order; −0 and
// +0 map to the same key, as MySQL considers them equal.
func floatKey(f float64) uint64 {
	if f == 0 {
		f = 0
	}
	b := math.Float64bits(f)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

// appendEscaped writes b so that no encoding is a prefix of another and byte
// order is kept: 0x00 becomes 0x00 0xFF and the part ends with 0x00 0x01.
func appendEscaped(dst, b []byte) []byte {
	for _, c := range b {
		if c == 0 {
			dst = append(dst, 0, 0xFF)
		} else {
			dst = append(dst, c)
		}
	}
	return append(dst, 0, 1)
}

// appendStringKey encodes a string by the weights of its collation, so that
// strings the collation calls equal ('a' and 'A' under a _ci collation,
// trailing spaces under PAD SPACE) collide as MySQL's unique keys do.
func appendStringKey(dst []byte, t sql.Type, s string) []byte {
	coll := sql.Collation_Default
	if ct, ok := t.(sql.TypeWithCollation); ok {
		coll = ct.Collation()
	}
	if coll.PadAttribute() == "PAD SPACE" {
		s = strings.TrimRight(s, " ")
	}
	sorter := coll.Sorter()
	if coll == sql.Collation_binary || sorter == nil || !utf8.ValidString(s) {
		return appendEscaped(dst, []byte(s))
	}
	var w [4]byte
	for _, r := range s {
		binary.BigEndian.PutUint32(w[:], uint32(sorter(r)))
		for _, c := range w {
			if c == 0 {
				dst = append(dst, 0, 0xFF)
			} else {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, 0, 1)
}

// seqKey is the key of the n-th row of a table without a primary key.
func seqKey(n uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), n)
}
