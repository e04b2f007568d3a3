package linreg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randBall returns a random vector of dimension f with norm r.
func randBall(rng *rand.Rand, f int, r float64) []float64 {
	v := make([]float64, f)
	var s float64
	for j := range v {
		v[j] = rng.NormFloat64()
		s += v[j] * v[j]
	}
	for j := range v {
		v[j] *= r / math.Sqrt(s)
	}
	return v
}

// jointStat is ‖xxᵀ − x′x′ᵀ‖²_F + k‖xy − x′y′‖².
func jointStat(x, xp []float64, y, yp, k float64) float64 {
	var a, c float64
	for i := range x {
		for j := range x {
			d := x[i]*x[j] - xp[i]*xp[j]
			a += d * d
		}
		d := x[i]*y - xp[i]*yp
		c += d * d
	}
	return a + k*c
}

// TestJointBound: J(1, k) bounds ‖ΔA‖²_F + k‖Δc‖² for random neighbours in
// the unit ball (all norms, labels in [−1, 1], corners y = ±1) and is
// attained by unit rows with x·x′ = min(k/2, 1) and opposite labels.
func TestJointBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []float64{0.05, 0.5, 1, 1.9, 2, 3, 10} {
		bound := jointA(k)
		worst := 0.0
		for trial := 0; trial < 20000; trial++ {
			f := 2 + rng.IntN(5)
			x := randBall(rng, f, math.Sqrt(rng.Float64()))
			xp := randBall(rng, f, math.Sqrt(rng.Float64()))
			if trial%3 == 0 {
				x, xp = randBall(rng, f, 1), randBall(rng, f, 1)
			}
			y, yp := 2*rng.Float64()-1, 2*rng.Float64()-1
			if trial%2 == 0 {
				y, yp = 1, -1
			}
			v := jointStat(x, xp, y, yp, k)
			if v > bound*(1+1e-12) {
				t.Fatalf("k=%v: %v exceeds J = %v (x=%v x′=%v y=%v y′=%v)", k, v, bound, x, xp, y, yp)
			}
			worst = math.Max(worst, v)
		}
		// The extremal pair: unit x, x′ at inner product p* = min(k/2, 1).
		p := math.Min(k/2, 1)
		x := []float64{1, 0, 0}
		xp := []float64{p, math.Sqrt(1 - p*p), 0}
		if v := jointStat(x, xp, 1, -1, k); !near(v, bound, 1e-12) {
			t.Fatalf("k=%v: extremal pair gives %v, want J = %v", k, v, bound)
		}
		t.Logf("k=%v: J = %.4f, random search max %.4f", k, bound, worst)
	}
}

// neighbours returns a base table of n rows and, for each adversarial row
// (features, label), the table with row 0 replaced by it.
func cornerRows(d int) [][]float64 {
	var rows [][]float64
	for mask := 0; mask < 1<<d; mask++ {
		r := make([]float64, d+1)
		for j := 0; j < d; j++ {
			r[j] = -1
			if mask>>j&1 == 1 {
				r[j] = 1
			}
		}
		r[d] = 1
		rows = append(rows, r)
		r2 := append([]float64(nil), r...)
		r2[d] = -1
		rows = append(rows, r2)
	}
	// NULLs map to the midpoint.
	nan := make([]float64, d+1)
	for j := range nan {
		nan[j] = math.NaN()
	}
	rows = append(rows, nan)
	return rows
}

func replaceRow(ds dataset, row []float64) dataset {
	d := len(row) - 1
	out := dataset{x: append([][]float64(nil), ds.x...), y: append([]float64(nil), ds.y...)}
	out.x[0] = row[:d]
	out.y[0] = row[d]
	return out
}

func sqDist(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return s
}

func l1Dist(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	return s
}

// TestComputedStatsSensitivity runs the real pass (Scaler, label map,
// accumulation) on neighbouring tables that differ in one corner or NULL
// row and checks the released vectors: the Gaussian joint statistic
// ‖ΔvA‖² + Kappa‖Δc‖² ≤ J(1, Kappa), reached within 1% by some corner pair
// (the intercept keeps x·x′ on a grid of 2/F); the ℓ₁ distances within
// their bounds, Δ₁(Xᵀy) = 2√F reached exactly and Δ₁(XᵀX) ≥ 0.6 of its
// bound (the bound is for the ball; corners reach about F/2 of F/√2).
func TestComputedStatsSensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range []int{3, 6} {
		base := synthLinear(rng, synthBeta(rng, d), 40, 0.3)
		tr := mustPlan(t, synthConfig(d, 40, 1, 1e-5))
		rows := cornerRows(d)
		type packed struct{ ag, al, c []float64 }
		var ps []packed
		for _, r := range rows {
			st := tr.stats(replaceRow(base, r).x, replaceRow(base, r).y)
			ps = append(ps, packed{packA(st.a, tr.f, true), packA(st.a, tr.f, false), st.c})
		}
		j := jointA(Kappa)
		l1A, l1C := l1SensA(tr.f), 2*math.Sqrt(float64(tr.f))
		var worstJ, worstA, worstC float64
		for i := range ps {
			for k := range ps {
				v := sqDist(ps[i].ag, ps[k].ag) + Kappa*sqDist(ps[i].c, ps[k].c)
				if v > j*(1+1e-9) {
					t.Fatalf("d=%d: joint statistic %v > J = %v for rows %v / %v", d, v, j, rows[i], rows[k])
				}
				a, c := l1Dist(ps[i].al, ps[k].al), l1Dist(ps[i].c, ps[k].c)
				if a > l1A*(1+1e-9) || c > l1C*(1+1e-9) {
					t.Fatalf("d=%d: ℓ₁ distances %v, %v exceed %v, %v", d, a, c, l1A, l1C)
				}
				worstJ, worstA, worstC = math.Max(worstJ, v), math.Max(worstA, a), math.Max(worstC, c)
			}
		}
		t.Logf("d=%d: joint %.4f of J %.4f; ℓ₁(XᵀX) %.4f of %.4f; ℓ₁(Xᵀy) %.4f of %.4f", d, worstJ, j, worstA, l1A, worstC, l1C)
		if worstJ < 0.99*j || worstA < 0.6*l1A || !near(worstC, l1C, 1e-9) {
			t.Fatalf("d=%d: adversarial pairs do not come near the bounds (%v/%v, %v/%v, %v/%v)", d, worstJ, j, worstA, l1A, worstC, l1C)
		}
	}
}

// TestL1BoundBall: the ℓ₁ bound √((F−1)(F+4)/2) on the upper triangle of
// ΔA (intercept entry left out) holds for random rows of the form
// (u, 1/√F) with ‖u‖² ≤ 1 − 1/F (the shape the Scaler produces).
func TestL1BoundBall(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, f := range []int{2, 3, 5, 12} {
		bound := l1SensA(f)
		s := 1 / math.Sqrt(float64(f))
		worst := 0.0
		for trial := 0; trial < 20000; trial++ {
			u := randBall(rng, f-1, math.Sqrt(1-s*s)*math.Pow(rng.Float64(), 0.1))
			up := randBall(rng, f-1, math.Sqrt(1-s*s)*math.Pow(rng.Float64(), 0.1))
			x, xp := append(u, s), append(up, s)
			var v float64
			for j := 0; j < f; j++ {
				for k := j; k < f; k++ {
					v += math.Abs(x[j]*x[k] - xp[j]*xp[k])
				}
			}
			if v > bound*(1+1e-12) {
				t.Fatalf("F=%d: ℓ₁ %v > bound %v", f, v, bound)
			}
			worst = math.Max(worst, v)
		}
		t.Logf("F=%d: bound %.4f, random max %.4f", f, bound, worst)
	}
}

// TestLambdaStatisticSensitivity: for fixed unit directions (random
// orthonormal sets and the axes) the minimum Rayleigh quotient moves by at
// most 1 between neighbours, and by exactly 1 on the pair B + e₁e₁ᵀ vs
// B + e₂e₂ᵀ with B = diag(0, 10, 10).
func TestLambdaStatisticSensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const f = 3
	outer := func(b []float64, x []float64) []float64 {
		a := append([]float64(nil), b...)
		for i := 0; i < f; i++ {
			for j := 0; j < f; j++ {
				a[i*f+j] += x[i] * x[j]
			}
		}
		return a
	}
	for trial := 0; trial < 5000; trial++ {
		// A random PSD base from 5 rows and a random orthonormal basis.
		b := make([]float64, f*f)
		for r := 0; r < 5; r++ {
			b = outer(b, randBall(rng, f, rng.Float64()))
		}
		g := make([]float64, f*f)
		for i := range g {
			g[i] = rng.NormFloat64()
		}
		sym := make([]float64, f*f)
		for i := 0; i < f; i++ {
			for j := 0; j < f; j++ {
				sym[i*f+j] = g[i*f+j] + g[j*f+i]
			}
		}
		dirs := directions(unpackA(packA(sym, f, false), f, false, sym[f*f-1]))
		x, xp := randBall(rng, f, 1), randBall(rng, f, rng.Float64())
		q, qp := rayleighMin(outer(b, x), f, dirs), rayleighMin(outer(b, xp), f, dirs)
		if math.Abs(q-qp) > 1+1e-12 {
			t.Fatalf("λ-statistic moved by %v", q-qp)
		}
	}
	b := []float64{0, 0, 0, 0, 10, 0, 0, 0, 10}
	axes := [][]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	q := rayleighMin(outer(b, []float64{1, 0, 0}), f, axes)
	qp := rayleighMin(outer(b, []float64{0, 1, 0}), f, axes)
	if q != 1 || qp != 0 {
		t.Fatalf("extremal pair: %v, %v, want 1, 0", q, qp)
	}
}
