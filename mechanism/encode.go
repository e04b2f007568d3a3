package mechanism

import (
	"fmt"
	"math"
	"strconv"
)

// Encodings of a model's raw input column (docs/mechanisms/encoding.md).
const (
	// EncodeNumeric: the value, transformed and clipped to the declared
	// bounds; NULL becomes the midpoint of the bounds (the public fill) and,
	// with Indicator, a 0/1 coordinate says it was NULL.
	EncodeNumeric = "numeric"
	// EncodeOneHot: one 0/1 coordinate per declared level (the public
	// domain), plus one for NULL (and any value outside the domain) when the
	// column may hold NULL.
	EncodeOneHot = "onehot"
)

// Input is one raw input column of a model and its public encoding. Every
// field comes from the catalog (bounds, domain, transform) and the schema
// (nullability), never from the rows.
type Input struct {
	Column   string `json:"column"`
	Encoding string `json:"encoding"`
	// Levels is the declared domain in order (onehot).
	Levels []string `json:"levels,omitempty"`
	// NullLevel adds a coordinate for NULL and values outside Levels (onehot).
	NullLevel bool `json:"null_level,omitempty"`
	// Lo, Hi are the declared bounds, on the transformed scale (numeric).
	Lo float64 `json:"lo,omitempty"`
	Hi float64 `json:"hi,omitempty"`
	// Transform is the declared public transform (numeric; "" = identity).
	Transform string `json:"transform,omitempty"`
	// Indicator adds a coordinate 1 when the value is NULL, else 0 (numeric).
	Indicator bool `json:"missing_indicator,omitempty"`
}

// Width is the number of encoded coordinates of the input.
func (in Input) Width() int {
	if in.Encoding == EncodeOneHot {
		w := len(in.Levels)
		if in.NullLevel {
			w++
		}
		return w
	}
	if in.Indicator {
		return 2
	}
	return 1
}

// Encoder maps raw rows (one value per Input) to the numeric feature rows
// the mechanisms train on. The map is fixed by public inputs, and every
// encoded row lies in the box Bounds() returns — the only property each
// kind's sensitivity proof uses of its rows (encoding.md §2) — so it adds
// no privacy cost.
type Encoder struct {
	Inputs []Input
	off    []int
	index  []map[string]int
	dim    int
}

// NewEncoder validates the inputs and precomputes the level indices.
func NewEncoder(inputs []Input) (*Encoder, error) {
	e := &Encoder{Inputs: append([]Input(nil), inputs...), off: make([]int, len(inputs)), index: make([]map[string]int, len(inputs))}
	for i, in := range inputs {
		e.off[i] = e.dim
		switch in.Encoding {
		case EncodeOneHot:
			if len(in.Levels) == 0 {
				return nil, fmt.Errorf("encoder: categorical input %s has no levels", in.Column)
			}
			e.index[i] = make(map[string]int, len(in.Levels))
			for k, l := range in.Levels {
				if _, dup := e.index[i][l]; dup {
					return nil, fmt.Errorf("encoder: level %q of %s listed twice", l, in.Column)
				}
				e.index[i][l] = k
			}
		case EncodeNumeric:
			if !(in.Lo < in.Hi) || math.IsInf(in.Lo, 0) || math.IsInf(in.Hi, 0) {
				return nil, fmt.Errorf("encoder: bounds of %s must be finite with lower < upper, got [%v, %v]", in.Column, in.Lo, in.Hi)
			}
			if !ValidTransform(in.Transform) {
				return nil, fmt.Errorf("encoder: unknown transform %q of %s", in.Transform, in.Column)
			}
		default:
			return nil, fmt.Errorf("encoder: unknown encoding %q of %s", in.Encoding, in.Column)
		}
		e.dim += in.Width()
	}
	if e.dim == 0 {
		return nil, fmt.Errorf("encoder: no inputs")
	}
	return e, nil
}

// Dim is the number of encoded coordinates.
func (e *Encoder) Dim() int { return e.dim }

// Features names the encoded coordinates: the column for a numeric value,
// column#missing for its indicator, column=level for a level, column=NULL
// for the NULL level.
func (e *Encoder) Features() []string {
	out := make([]string, 0, e.dim)
	for _, in := range e.Inputs {
		if in.Encoding == EncodeOneHot {
			for _, l := range in.Levels {
				out = append(out, in.Column+"="+l)
			}
			if in.NullLevel {
				out = append(out, in.Column+"=NULL")
			}
			continue
		}
		out = append(out, in.Column)
		if in.Indicator {
			out = append(out, in.Column+"#missing")
		}
	}
	return out
}

// Bounds is the public box of every encoded row: the declared bounds of a
// numeric value, [0, 1] for a 0/1 coordinate. The kinds map each box to
// [−1, 1], so a level is ±1 — the hand encoding's dummy column, which
// keeps every row on the surface of the kinds' unit ball (the largest
// signal for the noise the ball's radius calibrates; encoding.md §3).
func (e *Encoder) Bounds() (lo, hi []float64) {
	lo, hi = make([]float64, 0, e.dim), make([]float64, 0, e.dim)
	for _, in := range e.Inputs {
		if in.Encoding == EncodeNumeric {
			lo, hi = append(lo, in.Lo), append(hi, in.Hi)
		}
		for k := 0; k < in.Width(); k++ {
			if in.Encoding == EncodeNumeric && k == 0 {
				continue
			}
			lo, hi = append(lo, 0), append(hi, 1)
		}
	}
	return lo, hi
}

// Numeric reports, per encoded coordinate, whether it is a numeric value
// (true) or a 0/1 coordinate of a level or indicator (false).
func (e *Encoder) Numeric() []bool {
	out := make([]bool, 0, e.dim)
	for _, in := range e.Inputs {
		for k := 0; k < in.Width(); k++ {
			out = append(out, in.Encoding == EncodeNumeric && k == 0)
		}
	}
	return out
}

// Encode writes the encoded row of raw (one value per input: nil for NULL,
// or a string, []byte, integer or float) into dst (allocated if short).
// It never fails on a value: a numeric input that is not a number counts as
// NULL, a level outside the domain as the NULL level (all zeros when the
// column has none). Its work does not depend on the values beyond a map
// lookup per categorical input.
func (e *Encoder) Encode(dst []float64, raw []any) []float64 {
	if cap(dst) < e.dim {
		dst = make([]float64, e.dim)
	}
	dst = dst[:e.dim]
	for i, in := range e.Inputs {
		o := e.off[i]
		if in.Encoding == EncodeOneHot {
			e.encodeLevel(dst[o:], i, raw[i] != nil, raw[i])
			continue
		}
		v, ok := NumberOf(raw[i])
		e.encodeNumber(dst[o:], in, v, ok)
	}
	return dst
}

// EncodeFloats is Encode for rows read as numbers (NaN for NULL): a level
// of an integer-coded categorical input is the number's LevelString.
func (e *Encoder) EncodeFloats(dst, raw []float64) []float64 {
	if cap(dst) < e.dim {
		dst = make([]float64, e.dim)
	}
	dst = dst[:e.dim]
	for i, in := range e.Inputs {
		o := e.off[i]
		if in.Encoding == EncodeOneHot {
			e.encodeLevel(dst[o:], i, !math.IsNaN(raw[i]), raw[i])
			continue
		}
		e.encodeNumber(dst[o:], in, raw[i], !math.IsNaN(raw[i]))
	}
	return dst
}

// encodeLevel writes input i's one-hot block: the level of v (present: not
// NULL), else the NULL level (all zeros without one).
func (e *Encoder) encodeLevel(dst []float64, i int, present bool, v any) {
	w := e.Inputs[i].Width()
	for k := 0; k < w; k++ {
		dst[k] = 0
	}
	k, ok := -1, false
	if present {
		k, ok = e.index[i][LevelString(v)]
	}
	if ok {
		dst[k] = 1
	} else if e.Inputs[i].NullLevel {
		dst[w-1] = 1
	}
}

// encodeNumber: transform, clip to the bounds; NULL (or NaN after the
// transform) → the midpoint, the point every kind's scaling maps to 0.
func (e *Encoder) encodeNumber(dst []float64, in Input, v float64, ok bool) {
	missing := !ok || math.IsNaN(v)
	if !missing {
		v = ApplyTransform(in.Transform, v)
		missing = math.IsNaN(v)
	}
	if missing {
		dst[0] = in.Lo + (in.Hi-in.Lo)/2
	} else {
		dst[0] = Clip(v, in.Lo, in.Hi)
	}
	if in.Indicator {
		dst[1] = 0
		if missing {
			dst[1] = 1
		}
	}
}

// LevelString is the text form a categorical level is matched by: strings
// as they are, integral floats without a fraction ("3", not "3.0"). It is
// the same rule as the label domain's (functions.LabelString).
func LevelString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return LevelString(float64(x))
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int8:
		return strconv.FormatInt(int64(x), 10)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case uint32:
		return strconv.FormatUint(uint64(x), 10)
	case uint8:
		return strconv.FormatUint(uint64(x), 10)
	case uint16:
		return strconv.FormatUint(uint64(x), 10)
	}
	return fmt.Sprintf("%v", v)
}

// NumberOf converts a raw value to a number; NULL and non-numbers fail.
func NumberOf(v any) (float64, bool) {
	switch x := v.(type) {
	case nil:
		return 0, false
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case int16:
		return float64(x), true
	case int8:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint8:
		return float64(x), true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	case []byte:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	}
	return 0, false
}
