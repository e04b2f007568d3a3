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
			for _, delta := range []float64{0, 1e-6} {
				kind, why := Choose(Inputs{Classification: true, N: n, D: 10, K: k, Epsilon: 1, Delta: delta})
				if (kind != "lda" && kind != "logreg") || why == "" {
					t.Fatalf("classification K=%d n=%d δ=%v chose %q (%q)", k, n, delta, kind, why)
				}
				// Pure ε: logreg's objective method for K ≤ 5 at n = 10⁴
				// (d = 10, uncapped), lda for K = 20 and at n = 10⁶.
				want := ""
				switch {
				case delta == 0 && k <= PureMaxClasses && n == 10000:
					want = "logreg"
				case delta == 0 && (k > PureMaxClasses || n == 1000000):
					want = "lda"
				}
				if want != "" && kind != want {
					t.Fatalf("pure ε K=%d n=%d chose %q (%q), want %s", k, n, kind, why, want)
				}
			}
		}
	}
}

// The documented rule at δ > 0: logreg in the measured regime (n ≤ 10⁴ at
// d = 10, every n ≤ 10⁵ at d = 40), lda once its noise edge is below
// LDAEdge (d = 10, n = 10⁵, E ≈ 0.0036), and the switch is monotone in n.
func TestChooseRule(t *testing.T) {
	for _, c := range []struct {
		n, d, k int
		want    string
	}{
		{1000, 10, 2, "logreg"}, {10000, 10, 2, "logreg"}, {10000, 10, 20, "logreg"}, {100000, 40, 5, "logreg"},
		{100000, 10, 2, "lda"}, {100000, 10, 20, "lda"}, {1000000, 40, 5, "lda"},
	} {
		in := Inputs{Classification: true, N: c.n, D: c.d, K: c.k, Epsilon: 1, Delta: 1e-6}
		if got, why := Choose(in); got != c.want {
			e, _ := LDANoiseEdge(in)
			t.Fatalf("n=%d d=%d K=%d: chose %s (%s, E=%v), want %s", c.n, c.d, c.k, got, why, e, c.want)
		}
	}
	prev := "logreg"
	for n := 1000; n <= 10000000; n *= 2 {
		got, _ := Choose(Inputs{Classification: true, N: n, D: 20, K: 5, Epsilon: 1, Delta: 1e-6})
		if prev == "lda" && got != "lda" {
			t.Fatalf("the rule switches back to %s at n=%d", got, n)
		}
		prev = got
	}
	if prev != "lda" {
		t.Fatal("lda never chosen at d=20, K=5 up to n=10⁷")
	}
}

// LDANoiseEdge falls as 1/n and as ε grows, and is unavailable for
// inputs lda cannot plan.
func TestLDANoiseEdge(t *testing.T) {
	in := Inputs{Classification: true, N: 10000, D: 10, K: 5, Epsilon: 1, Delta: 1e-6}
	e1, ok := LDANoiseEdge(in)
	in.N = 100000
	e2, ok2 := LDANoiseEdge(in)
	in.Epsilon = 10
	e3, ok3 := LDANoiseEdge(in)
	if !ok || !ok2 || !ok3 || !(e2 < e1/5) || !(e3 < e2) {
		t.Fatalf("edges %v %v %v", e1, e2, e3)
	}
	if _, ok := LDANoiseEdge(Inputs{N: 10, D: 0, K: 2, Epsilon: 1}); ok {
		t.Fatal("d = 0 planned")
	}
}

// Where logreg's default cannot be planned (n·F above its feature-cache
// limit) but lda can, auto falls back to lda instead of a refusal.
func TestChooseFallsBackToLDA(t *testing.T) {
	in := Inputs{Classification: true, N: 200000, D: 1000, K: 3, Epsilon: 1, Delta: 1e-6}
	if e, _ := LDANoiseEdge(in); e <= LDAEdge {
		t.Fatalf("test premise: E = %v should exceed LDAEdge", e)
	}
	if kind, why := Choose(in); kind != "lda" {
		t.Fatalf("chose %s (%s), want the lda fallback", kind, why)
	}
}
