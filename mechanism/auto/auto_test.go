package auto

import "testing"

func TestDefaultDelta(t *testing.T) {
	if d := DefaultDelta(0); d != 0 {
		t.Fatalf("no δ budget: default δ = %v, want 0 (pure ε)", d)
	}
	if d := DefaultDelta(1e-5); d > 1e-6 || d < 0.999999e-6 || d*DeltaReleases > 1e-5 {
		t.Fatalf("δ budget 1e-5: default δ = %v, want 1e-6", d)
	}
}

// The choice depends on the public inputs only and always names a kind.
func TestChooseKinds(t *testing.T) {
	reg, _ := Choose(Inputs{N: 100, D: 3, Epsilon: 1})
	if reg != "linreg" {
		t.Fatalf("regression chose %q", reg)
	}
	for _, k := range []int{2, 5, 20} {
		for _, n := range []int{100, 10000, 1000000} {
			kind, why := Choose(Inputs{Classification: true, N: n, D: 10, K: k, Epsilon: 1, Delta: 1e-6})
			if kind == "" || kind == "linreg" || why == "" {
				t.Fatalf("classification K=%d n=%d chose %q (%q)", k, n, kind, why)
			}
		}
	}
}
