package mechanism

import (
	"math"
	"testing"
)

func TestScalerUnitBallAndPrepared(t *testing.T) {
	s, err := NewScaler([]float64{0, -5, 10}, []float64{16, 5, 20}, true)
	if err != nil {
		t.Fatal(err)
	}
	p := s.Prepare()
	for _, x := range [][]float64{
		{0, -5, 10}, {16, 5, 20}, {8, 0, 15}, {-100, 100, math.NaN()}, {1e300, -1e300, 19.999},
	} {
		a := s.Transform(nil, x)
		b := p.Transform(nil, x)
		var n2 float64
		for j := range a {
			if math.Abs(a[j]-b[j]) > 1e-15 {
				t.Fatalf("x=%v: Transform %v, Prepared %v", x, a, b)
			}
			n2 += a[j] * a[j]
		}
		if n2 > 1+1e-12 {
			t.Fatalf("x=%v: ‖φ(x)‖² = %v > 1", x, n2)
		}
	}
	// Exact values: midpoint maps to 0, bounds to ±1/√F, NaN to 0.
	got := s.Transform(nil, []float64{8, 5, math.NaN()})
	inv := 1 / 2.0 // F = 4
	want := []float64{0, inv, 0, inv}
	for j := range want {
		if math.Abs(got[j]-want[j]) > 1e-15 {
			t.Fatalf("Transform = %v, want %v", got, want)
		}
	}
	if _, err := NewScaler([]float64{1}, []float64{1}, false); err == nil {
		t.Fatal("lo == hi accepted")
	}
}

func TestRFFIsUnitNorm(t *testing.T) {
	for _, k := range []string{"rbf", "laplacian", "cauchy"} {
		r, err := NewRFF(k, 3, 50, 0.7)
		if err != nil {
			t.Fatal(err)
		}
		phi := r.Map(nil, []float64{0.1, -0.3, 0.2})
		var n2 float64
		for _, v := range phi {
			n2 += v * v
		}
		if math.Abs(n2-1) > 1e-12 || len(phi) != 100 {
			t.Fatalf("%s: ‖φ̂‖² = %v, dim %d", k, n2, len(phi))
		}
	}
	if _, err := NewRFF("poly", 3, 10, 1); err == nil {
		t.Fatal("unknown kernel accepted")
	}
	if _, err := NewRFF("rbf", 3, 0, 1); err == nil {
		t.Fatal("dim 0 accepted")
	}
}

// TestScalerTransforms: a declared log1p is applied before the affine map by
// both Transform and Prepared; bounds are on the transformed scale; values
// ≤ −1 map to the lower bound and NaN to 0; ‖φ(x)‖ ≤ 1 still holds.
func TestScalerTransforms(t *testing.T) {
	s, err := NewScaler([]float64{0, 0}, []float64{math.Log1p(99), 10}, false)
	if err != nil {
		t.Fatal(err)
	}
	s, err = s.WithTransforms([]string{TransformLog1p, ""})
	if err != nil {
		t.Fatal(err)
	}
	p := s.Prepare()
	inv := 1 / math.Sqrt2
	for _, c := range []struct{ x, want []float64 }{
		{[]float64{99, 5}, []float64{inv, 0}},                  // log1p(99) is the upper bound
		{[]float64{0, 10}, []float64{-inv, inv}},               // log1p(0) = 0 is the lower bound
		{[]float64{math.Sqrt(100) - 1, 0}, []float64{0, -inv}}, // log1p(9) = log(100)/2: the midpoint
		{[]float64{-1, math.NaN()}, []float64{-inv, 0}},        // ≤ −1 ↦ lower bound
		{[]float64{-5, 1e300}, []float64{-inv, inv}},           // clipped
		{[]float64{math.NaN(), -1e300}, []float64{0, -inv}},    // NULL ↦ 0
		{[]float64{1e300, 0}, []float64{inv, -inv}},            // clipped above
	} {
		a, b := s.Transform(nil, c.x), p.Transform(nil, c.x)
		for j := range c.want {
			if math.Abs(a[j]-c.want[j]) > 1e-12 || math.Abs(b[j]-c.want[j]) > 1e-12 {
				t.Fatalf("x=%v: Transform %v, Prepared %v, want %v", c.x, a, b, c.want)
			}
		}
	}
	if _, err := s.WithTransforms([]string{"sqrt", ""}); err == nil {
		t.Fatal("unknown transform accepted")
	}
	if _, err := s.WithTransforms([]string{TransformLog1p}); err == nil {
		t.Fatal("one transform for two features accepted")
	}
	id, err := s.WithTransforms([]string{TransformIdentity, ""})
	if err != nil || id.Transforms != nil {
		t.Fatalf("identity transforms recorded: %v %v", id.Transforms, err)
	}
	if v := InverseTransform(TransformLog1p, ApplyTransform(TransformLog1p, 123.5)); math.Abs(v-123.5) > 1e-9 {
		t.Fatalf("expm1(log1p(123.5)) = %v", v)
	}
}
