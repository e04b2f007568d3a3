package mechanism

import (
	"math"
	"testing"

	"github.com/dpsql/dpsql/budget"
)

// σ is the smallest that meets δ: the event validates, and 0.1% less σ needs
// a larger δ than claimed.
func TestGaussianSigmaIsTight(t *testing.T) {
	for _, c := range []struct{ sens, eps, delta float64 }{{1, 1, 1e-5}, {2.5, 0.1, 1e-6}, {0.01, 10, 1e-9}} {
		s, err := GaussianSigma(c.sens, c.eps, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		if err := GaussianEvent(c.sens, s, c.eps, c.delta).Validate(); err != nil {
			t.Errorf("%+v: σ=%v: %v", c, s, err)
		}
		if need := budget.GaussianDelta(c.eps, c.sens/(s*0.999)); need <= c.delta {
			t.Errorf("%+v: σ=%v is not minimal: 0.999σ needs δ=%v", c, s, need)
		}
		// Scale equivariance in the sensitivity.
		s1, _ := GaussianSigma(1, c.eps, c.delta)
		if math.Abs(s/(s1*c.sens)-1) > 1e-9 {
			t.Errorf("%+v: σ not proportional to Δ₂: %v vs %v", c, s, s1*c.sens)
		}
	}
	for _, bad := range [][3]float64{{0, 1, 1e-5}, {1, 0, 1e-5}, {1, 1, 0}, {1, 1, 1}, {math.Inf(1), 1, 1e-5}} {
		if _, err := GaussianSigma(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("GaussianSigma%v: want an error", bad)
		}
	}
}
