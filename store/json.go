package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// JSON values are stored in a typed binary form, so that what JSON_TYPE
// reports survives the round trip (an UNSIGNED INTEGER stays unsigned, a
// DECIMAL stays a decimal), as in MySQL's binary JSON. The form starts with
// jsonTyped, a byte no JSON text starts with; values written as JSON text
// by earlier versions still decode.

const jsonTyped = 0xFF

const (
	jNull byte = iota
	jFalse
	jTrue
	jInt
	jUint
	jFloat
	jDecimal
	jString
	jArray
	jObject
	jTime
)

func encodeJSON(dst []byte, w sql.JSONWrapper) ([]byte, error) {
	v, err := w.ToInterface()
	if err != nil {
		return nil, err
	}
	body, err := appendJSONValue([]byte{jsonTyped}, v)
	if err != nil {
		// Anything this form does not know is stored as text.
		if body, err = types.MarshallJson(w); err != nil {
			return nil, err
		}
	}
	return appendBytes(dst, body), nil
}

func appendJSONValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, jNull), nil
	case bool:
		if x {
			return append(dst, jTrue), nil
		}
		return append(dst, jFalse), nil
	case int:
		return binary.AppendVarint(append(dst, jInt), int64(x)), nil
	case int8:
		return binary.AppendVarint(append(dst, jInt), int64(x)), nil
	case int16:
		return binary.AppendVarint(append(dst, jInt), int64(x)), nil
	case int32:
		return binary.AppendVarint(append(dst, jInt), int64(x)), nil
	case int64:
		return binary.AppendVarint(append(dst, jInt), x), nil
	case uint:
		return binary.AppendUvarint(append(dst, jUint), uint64(x)), nil
	case uint8:
		return binary.AppendUvarint(append(dst, jUint), uint64(x)), nil
	case uint16:
		return binary.AppendUvarint(append(dst, jUint), uint64(x)), nil
	case uint32:
		return binary.AppendUvarint(append(dst, jUint), uint64(x)), nil
	case uint64:
		return binary.AppendUvarint(append(dst, jUint), x), nil
	case float32:
		return binary.LittleEndian.AppendUint64(append(dst, jFloat), math.Float64bits(float64(x))), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(dst, jFloat), math.Float64bits(x)), nil
	case decimal.Decimal:
		return appendBytes(append(dst, jDecimal), []byte(x.String())), nil
	case string:
		return appendBytes(append(dst, jString), []byte(x)), nil
	case time.Time:
		return appendBytes(append(dst, jTime), []byte(x.Format(time.RFC3339Nano))), nil
	case []any:
		dst = binary.AppendUvarint(append(dst, jArray), uint64(len(x)))
		for _, e := range x {
			var err error
			if dst, err = appendJSONValue(dst, e); err != nil {
				return nil, err
			}
		}
		return dst, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		dst = binary.AppendUvarint(append(dst, jObject), uint64(len(x)))
		for _, k := range keys {
			dst = appendBytes(dst, []byte(k))
			var err error
			if dst, err = appendJSONValue(dst, x[k]); err != nil {
				return nil, err
			}
		}
		return dst, nil
	}
	return nil, fmt.Errorf("JSON value of type %T", v)
}

func decodeJSON(b []byte) (any, error) {
	if len(b) == 0 || b[0] != jsonTyped {
		v, _, err := types.JSON.Convert(context.Background(), string(b))
		return v, err
	}
	v, rest, err := readJSONValue(b[1:])
	if err == nil && len(rest) != 0 {
		err = errCorruptRow
	}
	if err != nil {
		return nil, err
	}
	return types.JSONDocument{Val: v}, nil
}

func readJSONValue(b []byte) (any, []byte, error) {
	if len(b) == 0 {
		return nil, nil, errCorruptRow
	}
	tag, b := b[0], b[1:]
	readBytes := func() ([]byte, error) {
		l, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < l {
			return nil, errCorruptRow
		}
		out := b[w : w+int(l)]
		b = b[w+int(l):]
		return out, nil
	}
	switch tag {
	case jNull:
		return nil, b, nil
	case jFalse:
		return false, b, nil
	case jTrue:
		return true, b, nil
	case jInt:
		v, w := binary.Varint(b)
		if w <= 0 {
			return nil, nil, errCorruptRow
		}
		return v, b[w:], nil
	case jUint:
		v, w := binary.Uvarint(b)
		if w <= 0 {
			return nil, nil, errCorruptRow
		}
		return v, b[w:], nil
	case jFloat:
		if len(b) < 8 {
			return nil, nil, errCorruptRow
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8:], nil
	case jDecimal:
		s, err := readBytes()
		if err != nil {
			return nil, nil, err
		}
		d, err := decimal.NewFromString(string(s))
		return d, b, err
	case jString:
		s, err := readBytes()
		return string(s), b, err
	case jTime:
		s, err := readBytes()
		if err != nil {
			return nil, nil, err
		}
		t, err := time.Parse(time.RFC3339Nano, string(s))
		return t, b, err
	case jArray:
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)) {
			return nil, nil, errCorruptRow
		}
		b = b[w:]
		arr := make([]any, n)
		for i := range arr {
			var err error
			if arr[i], b, err = readJSONValue(b); err != nil {
				return nil, nil, err
			}
		}
		return arr, b, nil
	case jObject:
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)) {
			return nil, nil, errCorruptRow
		}
		b = b[w:]
		obj := make(map[string]any, n)
		for i := uint64(0); i < n; i++ {
			k, err := readBytes()
			if err != nil {
				return nil, nil, err
			}
			var v any
			if v, b, err = readJSONValue(b); err != nil {
				return nil, nil, err
			}
			obj[string(k)] = v
		}
		return obj, b, nil
	}
	return nil, nil, errCorruptRow
}
