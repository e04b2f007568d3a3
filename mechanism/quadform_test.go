package mechanism

import (
	"math"
	"testing"
)

// TestQuadraticFormMatchesPredict: QuadraticForm is x̃ᵀΦ_cx̃ on the scaled
// row (checked by hand on a 1-feature model) and its argmin is Predict's
// class.
func TestQuadraticFormMatchesPredict(t *testing.T) {
	sc, err := NewScaler([]float64{0}, []float64{10}, true)
	if err != nil {
		t.Fatal(err)
	}
	// D = 2, x̃ = (u, 1)/√2 with u = x/5 − 1.
	m := &Model{Kind: KindLMGC, Features: []string{"f"}, Classes: []string{"a", "b"}, Scaler: sc,
		Phi: [][]float64{{4, 0, 0, 0}, {0, 0, 0, 1.2}}}
	for _, x := range []float64{0, 2.5, 5, 7.5, 10} {
		u := x/5 - 1
		want0, want1 := 4*u*u/2, 0.6
		q0, q1 := m.QuadraticForm(0, []float64{x}), m.QuadraticForm(1, []float64{x})
		if math.Abs(q0-want0) > 1e-12 || math.Abs(q1-want1) > 1e-12 {
			t.Fatalf("x=%v: forms %v, %v, want %v, %v", x, q0, q1, want0, want1)
		}
		p, err := m.Predict([]float64{x})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: "a", false: "b"}[q0 < q1]; p.Class != want {
			t.Fatalf("x=%v: Predict %q, argmin of the forms %q", x, p.Class, want)
		}
	}
}
