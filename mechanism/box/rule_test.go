package box

import "testing"

// TestUsePrivateRule: the default is private exactly when n·ε_q reaches
// MinNEpsQ, with ε_q from the same split the release uses.
func TestUsePrivateRule(t *testing.T) {
	for _, c := range []struct {
		n, d       int
		eps, delta float64
	}{{1000, 10, 1, 1e-6}, {3680, 57, 1, 1e-6}, {500, 40, 1, 1e-6}, {100000, 10, 0.1, 1e-6}, {2000, 10, 1, 0}, {50, 4, 10, 1e-6}} {
		s, err := NewSplit(c.eps, c.delta, c.d)
		if err != nil {
			t.Fatal(err)
		}
		want := float64(c.n)*s.EpsQ >= MinNEpsQ
		if got := UsePrivate(c.n, c.d, c.eps, c.delta); got != want {
			t.Fatalf("%+v: UsePrivate = %v, n·ε_q = %v", c, got, float64(c.n)*s.EpsQ)
		}
	}
	if UsePrivate(10, 1000, 1e-3, 0) {
		t.Fatal("private at a tiny n·ε_q")
	}
}
