package logreg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// gradOf returns the computed gradient sum G(θ) of a table.
func gradOf(tr *Trainer, X [][]float64, y []int, theta []float64) []float64 {
	p := newProblem(X, y, tr.prep, tr.kp, tr.binary, 1, tr.p.clip)
	g := make([]float64, tr.kp*tr.f)
	slots := make([][]float64, (p.n+chunkRows-1)/chunkRows)
	for c := range slots {
		slots[c] = make([]float64, len(g))
	}
	p.gradSum(theta, g, slots)
	return g
}

func dist2(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}

func dist1(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	return s
}

// saturating returns θ whose class-a scores dominate every row: the
// intercept weight of class a is huge (binary: θ·x ≫ 0, so p ≈ 1).
func saturating(tr *Trainer, a int) []float64 {
	theta := make([]float64, tr.kp*tr.f)
	theta[a*tr.f+tr.f-1] = 1e4
	return theta
}

// corner returns the corner row with signs given by mask.
func corner(d int, mask int) []float64 {
	r := make([]float64, d)
	for j := range r {
		r[j] = -1
		if mask>>j&1 == 1 {
			r[j] = 1
		}
	}
	return r
}

// TestGradientSensitivity computes the clipped G(θ) on neighbouring tables
// (one row replaced by a corner row, a NULL row or a label flip) at many θ
// (zero, random, saturating), with the default clip C = L/4 and without
// clipping (C = L), and checks ‖ΔG‖₂ ≤ Δ₂ and ‖ΔG‖₁ ≤ Δ₁ everywhere, and
// that the adversarial pair — opposite corners with the same label at a θ
// that saturates another class — reaches √(d/F) of Δ₂ (the intercept is the
// same for every row, so the unit directions of x and x′ are at distance
// 2√(d/F)) and half of Δ₁.
func TestGradientSensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const d, n = 6, 12
	for _, c := range []struct {
		k    int
		clip float64
	}{{2, 0}, {3, 0}, {7, 0}, {2, 1}, {3, math.Sqrt2}, {7, math.Sqrt2}} {
		k := c.k
		cfg := testConfig(d, k, n, 1, 1e-6)
		cfg.Clip = c.clip
		tr := mustPlan(t, cfg)
		base := synthMixture(rng, 4, n, k, d, 1)
		var thetas [][]float64
		thetas = append(thetas, make([]float64, tr.kp*tr.f))
		for i := 0; i < 20; i++ {
			th := make([]float64, tr.kp*tr.f)
			for j := range th {
				th[j] = rng.NormFloat64() * math.Pow(10, float64(i%4))
			}
			thetas = append(thetas, th)
		}
		for a := 0; a < tr.kp; a++ {
			thetas = append(thetas, saturating(tr, a))
		}
		var rows [][]float64
		for m := 0; m < 1<<d; m += 5 {
			rows = append(rows, corner(d, m))
		}
		nan := make([]float64, d)
		for j := range nan {
			nan[j] = math.NaN()
		}
		rows = append(rows, nan, corner(d, 0), corner(d, 1<<d-1))
		var worst2, worst1 float64
		for _, th := range thetas {
			var grads [][]float64
			for _, r := range rows {
				for c := 0; c < k; c++ {
					X := append([][]float64{r}, base.x[1:]...)
					y := append([]int{c}, base.y[1:]...)
					grads = append(grads, gradOf(tr, X, y, th))
				}
			}
			for i := range grads {
				for j := range grads {
					d2, d1 := dist2(grads[i], grads[j]), dist1(grads[i], grads[j])
					if d2 > tr.p.l2 || d1 > tr.p.l1 {
						t.Fatalf("K=%d: ‖ΔG‖₂ = %v (Δ₂ %v), ‖ΔG‖₁ = %v (Δ₁ %v)", k, d2, tr.p.l2, d1, tr.p.l1)
					}
					worst2, worst1 = math.Max(worst2, d2), math.Max(worst1, d1)
				}
			}
		}
		frac := float64(d) / float64(d+1)
		_ = frac
		t.Logf("K=%d C=%.3f: max ‖ΔG‖₂ %.4f of %.4f, max ‖ΔG‖₁ %.4f of %.4f", k, tr.p.clip, worst2, tr.p.l2, worst1, tr.p.l1)
		if worst2 < 0.999*math.Sqrt(frac)*tr.p.l2 || worst1 < 0.5*tr.p.l1 {
			t.Fatalf("K=%d: adversarial pairs do not reach the bounds", k)
		}
	}
}
