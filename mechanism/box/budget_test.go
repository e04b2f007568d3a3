package box

import (
	"math"
	"testing"
)

// TestEpsForRatioMemo: the memo hands back exactly the bits of the
// bisection, for the splits DP_TRAIN plans and after it was cleared.
func TestEpsForRatioMemo(t *testing.T) {
	type arg struct{ r, eps, delta float64 }
	var args []arg
	for _, eps := range []float64{0.1, 1} {
		for _, delta := range []float64{1e-6} {
			for _, d := range []int{1, 20} {
				s, err := newSplit(eps, delta, d, Share, Quantiles, true)
				if err != nil {
					t.Fatal(err)
				}
				args = append(args, arg{s.R2, eps, delta})
			}
		}
	}
	check := func() {
		for _, a := range args {
			want, err := bisectEpsForRatio(a.r, a.eps, a.delta)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // computed, then from the memo
				got, err := epsForRatio(a.r, a.eps, a.delta)
				if err != nil || math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("%+v: %v (%v), want %v", a, got, err, want)
				}
			}
		}
	}
	check()
	// A full memo is cleared before the next entry: still bounded, still exact.
	ratioMemo.Lock()
	for i := len(ratioMemo.m); i < ratioMemoSize; i++ {
		ratioMemo.m[[3]uint64{uint64(i), 0, 0}] = -1
	}
	ratioMemo.Unlock()
	if _, err := epsForRatio(args[0].r*(1-1e-9), args[0].eps, args[0].delta); err != nil {
		t.Fatal(err)
	}
	ratioMemo.Lock()
	n := len(ratioMemo.m)
	ratioMemo.Unlock()
	if n != 1 {
		t.Fatalf("memo holds %d entries after clearing, want 1", n)
	}
	check()
	// A ratio no ε reaches is an error, and stays one.
	for range 2 {
		if _, err := epsForRatio(0, 1, 1e-6); err == nil {
			t.Fatal("ratio 0 accepted")
		}
	}
}
