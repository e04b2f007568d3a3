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
