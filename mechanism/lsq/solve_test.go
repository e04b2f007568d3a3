package lsq

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// randomGram returns XᵀX for n random rows of dimension f (rank min(n, f)).
func randomGram(rng *rand.Rand, n, f int) *mat.SymDense {
	x := mat.NewDense(n, f, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < f; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	s := mat.NewSymDense(f, nil)
	s.SymOuterK(1, x.T())
	return s
}

func randomVec(rng *rand.Rand, f int, scale float64) []float64 {
	v := make([]float64, f)
	for i := range v {
		v[i] = scale * rng.NormFloat64()
	}
	return v
}

// TestRidgeSolveMatchesDenseSolve compares the Cholesky ridge solve with
// gonum's general LU solve of the same system.
func TestRidgeSolveMatchesDenseSolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range []int{1, 3, 12, 40} {
		s := randomGram(rng, 2*f+3, f)
		c := randomVec(rng, f, 1)
		const reg = 0.3
		w, err := ridgeSolve(s, reg, c)
		if err != nil {
			t.Fatal(err)
		}
		a := mat.NewDense(f, f, nil)
		a.Copy(s)
		for i := 0; i < f; i++ {
			a.Set(i, i, a.At(i, i)+reg)
		}
		var ref mat.VecDense
		if err := ref.SolveVec(a, mat.NewVecDense(f, c)); err != nil {
			t.Fatal(err)
		}
		if !floats.EqualApprox(w, ref.RawVector().Data, 1e-10) {
			t.Fatalf("f=%d: ridge solve %v differs from LU %v", f, w, ref.RawVector().Data)
		}
	}
}

// TestBallMinClosedForms checks the constrained minimiser against closed
// forms: H = h·I gives w = c/max(h, ‖c‖/η); an interior solution equals the
// unconstrained H⁻¹c.
func TestBallMinClosedForms(t *testing.T) {
	f := 5
	c := []float64{3, -4, 0, 12, 0} // ‖c‖ = 13
	h := mat.NewSymDense(f, nil)
	for i := 0; i < f; i++ {
		h.SetSym(i, i, 2)
	}
	for _, eta := range []float64{0.1, 1, 6.5, 6.6, 100, math.Inf(1)} {
		w, err := ballMin(h, c, eta)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, f)
		floats.ScaleTo(want, 1/math.Max(2, 13/eta), c)
		if !floats.EqualApprox(w, want, 1e-13) {
			t.Fatalf("η=%v: got %v, want %v", eta, w, want)
		}
	}
}

// TestBallMinKKT checks the KKT conditions on random problems with an active
// constraint: ‖w‖ = η and Hw − c = −μw with μ > 0; and that no random
// feasible point has a lower objective.
func TestBallMinKKT(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 50; trial++ {
		f := 1 + rng.IntN(15)
		s := randomGram(rng, f+rng.IntN(3*f), f)
		h := mat.NewSymDense(f, nil)
		h.CopySym(s)
		for i := 0; i < f; i++ {
			h.SetSym(i, i, h.At(i, i)+1e-3+rng.Float64())
		}
		c := randomVec(rng, f, 10)
		eta := 0.05 + rng.Float64()
		w, err := ballMin(h, c, eta)
		if err != nil {
			t.Fatal(err)
		}
		nw := floats.Norm(w, 2)
		if nw > eta*(1+1e-15) {
			t.Fatalf("infeasible: ‖w‖ = %v > η = %v", nw, eta)
		}
		q := func(v []float64) float64 {
			hv := mat.NewVecDense(f, nil)
			hv.MulVec(h, mat.NewVecDense(f, v))
			return 0.5*floats.Dot(v, hv.RawVector().Data) - floats.Dot(c, v)
		}
		// Stationarity: g = Hw − c must equal −μw with μ ≥ 0.
		g := mat.NewVecDense(f, nil)
		g.MulVec(h, mat.NewVecDense(f, w))
		floats.Sub(g.RawVector().Data, c)
		unc, _ := ridgeSolve(h, 0, c)
		if floats.Norm(unc, 2) <= eta {
			if floats.Norm(g.RawVector().Data, 2) > 1e-8*floats.Norm(c, 2) {
				t.Fatalf("interior solution not stationary")
			}
			continue
		}
		if math.Abs(nw-eta) > 1e-12*eta {
			t.Fatalf("active constraint but ‖w‖ = %v ≠ η = %v", nw, eta)
		}
		mu := -floats.Dot(g.RawVector().Data, w) / (eta * eta)
		if mu < 0 {
			t.Fatalf("negative multiplier %v", mu)
		}
		res := make([]float64, f)
		floats.AddScaledTo(res, g.RawVector().Data, mu, w)
		if floats.Norm(res, 2) > 1e-8*(floats.Norm(c, 2)+1) {
			t.Fatalf("KKT residual %v", floats.Norm(res, 2))
		}
		best := q(w)
		for k := 0; k < 200; k++ {
			v := randomVec(rng, f, 1)
			floats.Scale(eta*math.Pow(rng.Float64(), 1/float64(f))/floats.Norm(v, 2), v)
			if q(v) < best-1e-9*math.Abs(best) {
				t.Fatalf("feasible point beats the minimiser: %v < %v", q(v), best)
			}
		}
	}
}

// TestPSDSqrt checks R·R = S, also for a rank-deficient S.
func TestPSDSqrt(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{2, 8, 30} {
		s := randomGram(rng, n, 8)
		r, err := psdSqrt(s)
		if err != nil {
			t.Fatal(err)
		}
		var rr mat.Dense
		rr.Mul(r.T(), r)
		if !mat.EqualApprox(&rr, s, 1e-9*mat.Norm(s, 2)) {
			t.Fatalf("n=%d: RᵀR ≠ S", n)
		}
	}
}

// TestSufficientStatsParallel checks the parallel pass against one worker
// and against a direct sum of φφᵀ and y′φ.
func TestSufficientStatsParallel(t *testing.T) {
	const n, d = 70000, 4
	x, y := benchRows(n, d)
	tr := mustPlan(t, synthConfig(d, n, 1, 0))
	par := sufficientStats(x, y, tr.fm, tr.lm)
	one := accumulate(x, y, tr.fm, tr.lm)
	f := tr.fm.f
	direct := mat.NewSymDense(f, nil)
	c := make([]float64, f)
	phi := make([]float64, f)
	for i, row := range x {
		tr.fm.scaler.Transform(phi, row)
		direct.SymRankOne(direct, 1, mat.NewVecDense(f, phi))
		floats.AddScaled(c, tr.lm.unit(y[i]), phi)
	}
	if par.n != n || !mat.EqualApprox(par.s, direct, 1e-9) || !mat.EqualApprox(one.s, direct, 1e-9) ||
		!floats.EqualApprox(par.c, c, 1e-9) || !floats.EqualApprox(one.c, c, 1e-9) {
		t.Fatalf("sufficient statistics differ between parallel, single-worker and direct sums")
	}
}
