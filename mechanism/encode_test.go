package mechanism

import (
	"math"
	"math/rand/v2"
	"testing"
)

func testEncoder(t *testing.T) *Encoder {
	t.Helper()
	enc, err := NewEncoder([]Input{
		{Column: "x", Encoding: EncodeNumeric, Lo: 0, Hi: 10, Indicator: true},
		{Column: "c", Encoding: EncodeOneHot, Levels: []string{"a", "b", "3"}, NullLevel: true},
		{Column: "k", Encoding: EncodeOneHot, Levels: []string{"u", "v"}}, // NOT NULL: no NULL level
		{Column: "z", Encoding: EncodeNumeric, Lo: -1, Hi: 1, Transform: TransformLog1p},
	})
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// rawValues are adversarial raw values for every input: NULL, out of
// range, NaN text, levels, outside the domain, integer codes, bytes.
var rawValues = []any{nil, -5.0, 0.0, 3.5, 10.0, 1e300, math.Inf(1), "7", "nope", "a", "b", int64(3), 3.0, []byte("b"), "u", "v", "w", -2.0, 0.5}

// TestEncodeInBox: every encoded row lies in the declared box, 0/1
// coordinates are 0 or 1, and a block has at most one 1.
func TestEncodeInBox(t *testing.T) {
	enc := testEncoder(t)
	lo, hi := enc.Bounds()
	if enc.Dim() != 2+4+2+1 || len(lo) != enc.Dim() || len(enc.Features()) != enc.Dim() {
		t.Fatalf("dim %d, bounds %d, names %v", enc.Dim(), len(lo), enc.Features())
	}
	num := enc.Numeric()
	for _, a := range rawValues {
		for _, b := range rawValues {
			for _, c := range rawValues {
				x := enc.Encode(nil, []any{a, b, c, a})
				for j, v := range x {
					if !(v >= lo[j] && v <= hi[j]) {
						t.Fatalf("raw %v %v %v: coordinate %d (%s) = %v outside [%v, %v]", a, b, c, j, enc.Features()[j], v, lo[j], hi[j])
					}
					if !num[j] && v != 0 && v != 1 {
						t.Fatalf("0/1 coordinate %d = %v", j, v)
					}
				}
				if s := x[2] + x[3] + x[4] + x[5]; s != 1 {
					t.Fatalf("nullable block of %v sums to %v, want 1 (a level or NULL)", b, s)
				}
				if s := x[6] + x[7]; s > 1 {
					t.Fatalf("NOT NULL block of %v sums to %v", c, s)
				}
			}
		}
	}
}

// TestEncodeNeighbours: replacing one raw value by another (a row moving
// between levels, NULL ↔ value, outside the domain ↔ level) changes a
// categorical block in at most two coordinates by 1 each (‖Δ‖₁ ≤ 2,
// ‖Δ‖₂ ≤ √2), and a numeric input by at most its width (and its indicator
// by at most 1): the box bound every kind's proof uses.
func TestEncodeNeighbours(t *testing.T) {
	enc := testEncoder(t)
	lo, hi := enc.Bounds()
	for _, a := range rawValues {
		for _, b := range rawValues {
			x := enc.Encode(nil, []any{a, a, a, a})
			y := enc.Encode(nil, []any{b, b, b, b})
			var l1 float64
			for j := 2; j < 6; j++ {
				l1 += math.Abs(x[j] - y[j])
			}
			if l1 > 2 {
				t.Fatalf("%v → %v moves the categorical block by ℓ₁ %v", a, b, l1)
			}
			for j := range x {
				if math.Abs(x[j]-y[j]) > hi[j]-lo[j] {
					t.Fatalf("%v → %v moves coordinate %d by %v", a, b, j, x[j]-y[j])
				}
			}
		}
	}
	// NULL ↔ value: the NULL level and the indicator switch, the numeric
	// value is the midpoint.
	x := enc.Encode(nil, []any{nil, nil, "u", nil})
	if x[0] != 5 || x[1] != 1 || x[5] != 1 || x[8] != 0 {
		t.Fatalf("NULL row encodes to %v", x)
	}
}

// TestEncodeFloatsMatches: rows read as numbers (NaN = NULL) encode like
// the same values read as any.
func TestEncodeFloatsMatches(t *testing.T) {
	enc, err := NewEncoder([]Input{
		{Column: "x", Encoding: EncodeNumeric, Lo: 0, Hi: 10, Indicator: true},
		{Column: "c", Encoding: EncodeOneHot, Levels: []string{"1", "2", "3"}, NullLevel: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{math.NaN(), 0, 1, 2, 2.5, 3, 11, -1} {
		var raw any = v
		if math.IsNaN(v) {
			raw = nil
		}
		a := enc.Encode(nil, []any{raw, raw})
		b := enc.EncodeFloats(nil, []float64{v, v})
		for j := range a {
			if a[j] != b[j] {
				t.Fatalf("%v: Encode %v, EncodeFloats %v", v, a, b)
			}
		}
	}
}

func TestNewEncoderRefusals(t *testing.T) {
	for _, in := range [][]Input{
		nil,
		{{Column: "c", Encoding: EncodeOneHot}},
		{{Column: "c", Encoding: EncodeOneHot, Levels: []string{"a", "a"}}},
		{{Column: "x", Encoding: EncodeNumeric, Lo: 1, Hi: 1}},
		{{Column: "x", Encoding: EncodeNumeric, Lo: 0, Hi: 1, Transform: "sqrt"}},
		{{Column: "x", Encoding: "hash"}},
	} {
		if _, err := NewEncoder(in); err == nil {
			t.Fatalf("NewEncoder(%+v) accepted", in)
		}
	}
}

// TestLogitAdjust: the balanced scorer's class scores are the model's
// minus log π̃_k (linear) and its quadratic score plus 2 log π̃_k.
func TestLogitAdjust(t *testing.T) {
	sc, _ := NewScaler([]float64{0}, []float64{1}, true)
	m := &Model{Kind: KindLogReg, Features: []string{"x"}, Classes: []string{"a", "b", "c"}, Scaler: sc,
		Weights: [][]float64{{0, 0}, {0, 0}, {0, 0}}}
	counts := []float64{80, 15, -3} // the last clipped to 1
	if err := LogitAdjust(m, counts, 0); err != nil {
		t.Fatal(err)
	}
	phi := sc.Transform(nil, []float64{0.5})
	lp := []float64{math.Log(80.0 / 96), math.Log(15.0 / 96), math.Log(1.0 / 96)}
	for k, w := range m.Weights {
		if got := dot(w, phi); math.Abs(got+lp[k]) > 1e-12 {
			t.Fatalf("class %d score %v, want %v", k, got, -lp[k])
		}
	}
	if p, _ := m.Predict([]float64{0.5}); p.Class != "c" {
		t.Fatalf("balanced constant model predicts %q, want the rarest class", p.Class)
	}
	m.Kind = KindSVM
	if err := LogitAdjust(m, counts, 0); err == nil {
		t.Fatal("svm accepted objective=balanced")
	}
}

// TestLogitAdjustFloor: noisy counts under the floor count as the floor, so
// a class without rows gets a boost of at most log(total/floor).
func TestLogitAdjustFloor(t *testing.T) {
	sc, _ := NewScaler([]float64{0}, []float64{1}, true)
	m := &Model{Kind: KindLogReg, Features: []string{"x"}, Classes: []string{"a", "b", "c"}, Scaler: sc,
		Weights: [][]float64{{0, 0}, {0, 0}, {0, 0}}}
	const floor = 50
	if err := LogitAdjust(m, []float64{900, 49, -30}, floor); err != nil {
		t.Fatal(err)
	}
	phi := sc.Transform(nil, []float64{0.5})
	tot := 900.0 + floor + floor
	for k, c := range []float64{900, floor, floor} {
		if got, want := dot(m.Weights[k], phi), -math.Log(c/tot); math.Abs(got-want) > 1e-12 {
			t.Fatalf("class %d score %v, want %v", k, got, want)
		}
	}
}

// TestPriorFloor: the floor is (2/ε)·ln(K/(2β)), and on a class of 0 rows
// the largest of K noisy counts exceeds it in at most β of the draws (a
// binomial 4-s.e. margin).
func TestPriorFloor(t *testing.T) {
	if got, want := PriorFloor(7, 1), 2*math.Log(7/(2*priorFloorLevel)); math.Abs(got-want) > 1e-12 {
		t.Fatalf("PriorFloor(7, 1) = %v, want %v", got, want)
	}
	if PriorFloor(2, 1e6) != 1 {
		t.Fatalf("PriorFloor at ε = 1e6 = %v, want the floor of 1", PriorFloor(2, 1e6))
	}
	const k, eps, draws = 7, 0.5, 20000
	floor, over := PriorFloor(k, eps), 0
	for i := 0; i < draws; i++ {
		c, err := PriorCounts(nil, k, eps)
		if err != nil {
			t.Fatal(err)
		}
		if c[argmax(c)] > floor {
			over++
		}
	}
	if p, lim := float64(over)/draws, priorFloorLevel+4*math.Sqrt(priorFloorLevel*(1-priorFloorLevel)/draws); p > lim {
		t.Fatalf("largest noisy count of empty classes above the floor in %.4f of draws, bound %.4f", p, lim)
	}
}

// TestPriorAlone: the public rule's two conditions, at their boundaries.
func TestPriorAlone(t *testing.T) {
	for _, c := range []struct {
		n       int64
		d, k    int
		eps     float64
		alone   bool
		because string
	}{
		{325, 13, 3, 0.1, true, "s = 0.81 < 1 (r = 0.77)"},
		{400, 13, 3, 0.1, false, "s = 1, r = 0.95"},
		{399, 13, 3, 0.1, true, "s just under 1"},
		{10000, 99, 2, 0.004, true, "r = 0.4 < 0.5 (s = 1)"},
		{10000, 39, 2, 0.004, false, "r = 1, s = 1"},
		{2338, 6, 5, 0.01, true, "weather-sized at ε = 0.01: s = 0.58"},
	} {
		if got := PriorAlone(c.n, c.d, c.k, c.eps); got != c.alone {
			t.Errorf("PriorAlone(%d, %d, %d, %v) = %v, want %v (%s; r = %.3g, s = %.3g)", c.n, c.d, c.k, c.eps, got, c.alone,
				c.because, PriorRatio(c.n, c.d, c.k, c.eps), PriorResolution(c.n, c.eps))
		}
	}
}

// TestCountLabel: the prior model's correct count without predictions
// equals Correct of the prior model.
func TestCountLabel(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	sc, err := NewScaler([]float64{-1, 0}, []float64{1, 5}, true)
	if err != nil {
		t.Fatal(err)
	}
	like := &Model{Kind: KindLogReg, Features: []string{"a", "b"}, Classes: []string{"x", "y", "z"}, Scaler: sc}
	X, y := make([][]float64, 5000), make([]int, 5000)
	for i := range X {
		X[i] = []float64{rng.Float64()*2 - 1, rng.Float64() * 5}
		y[i] = rng.IntN(3)
	}
	for class := range like.Classes {
		want, err := Correct(NewPriorModel(like, class), X, y)
		if err != nil {
			t.Fatal(err)
		}
		if got := CountLabel(y, class); got != want || got == 0 {
			t.Errorf("class %d: CountLabel %d, Correct %d", class, got, want)
		}
	}
}
