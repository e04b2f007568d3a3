package lsq

import (
	"math"
	"math/big"
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

// TestBallSolveClosedForms checks the constrained minimiser against closed
// forms: H = h·I gives w = c/max(h, ‖c‖/η); an interior solution equals the
// unconstrained H⁻¹c. The bisection always takes ballSteps steps.
func TestBallSolveClosedForms(t *testing.T) {
	f := 5
	c := []float64{3, -4, 0, 12, 0} // ‖c‖ = 13
	h := mat.NewSymDense(f, nil)
	for i := 0; i < f; i++ {
		h.SetSym(i, i, 2)
	}
	for _, eta := range []float64{0.1, 1, 6.5, 6.6, 100} {
		w, steps := ballSolve(h, c, eta, 2*13/eta)
		if steps != ballSteps {
			t.Fatalf("η=%v: %d steps, want %d", eta, steps, ballSteps)
		}
		want := make([]float64, f)
		floats.ScaleTo(want, 1/math.Max(2, 13/eta), c)
		if !floats.EqualApprox(w, want, 1e-13) {
			t.Fatalf("η=%v: got %v, want %v", eta, w, want)
		}
	}
}

// TestBallSolveKKT checks the KKT conditions on random problems with an
// active constraint: ‖w‖ = η and Hw − c = −μw with μ > 0; and that no random
// feasible point has a lower objective.
func TestBallSolveKKT(t *testing.T) {
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
		w, _ := ballSolve(h, c, eta, 2*floats.Norm(c, 2)/eta)
		nw := floats.Norm(w, 2)
		if nw > eta*(1+1e-12) {
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

// bigBallMin returns the ball minimiser of the float problem (h, c, η)
// computed in 256-bit arithmetic: Gaussian elimination for (h + μI)θ = c
// and 300 bisection steps on μ. Its error is far below any float64 bound.
func bigBallMin(h *mat.SymDense, c []float64, eta float64) []float64 {
	const prec = 256
	f := len(c)
	nf := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
	solve := func(mu *big.Float) ([]*big.Float, *big.Float) {
		a := make([][]*big.Float, f)
		for i := range a {
			a[i] = make([]*big.Float, f+1)
			for j := 0; j < f; j++ {
				a[i][j] = nf(h.At(i, j))
			}
			a[i][i].Add(a[i][i], mu)
			a[i][f] = nf(c[i])
		}
		for k := 0; k < f; k++ {
			for i := k + 1; i < f; i++ {
				m := new(big.Float).SetPrec(prec).Quo(a[i][k], a[k][k])
				for j := k; j <= f; j++ {
					a[i][j].Sub(a[i][j], new(big.Float).SetPrec(prec).Mul(m, a[k][j]))
				}
			}
		}
		x := make([]*big.Float, f)
		for i := f - 1; i >= 0; i-- {
			s := new(big.Float).SetPrec(prec).Set(a[i][f])
			for j := i + 1; j < f; j++ {
				s.Sub(s, new(big.Float).SetPrec(prec).Mul(a[i][j], x[j]))
			}
			x[i] = s.Quo(s, a[i][i])
		}
		n2 := nf(0)
		for _, v := range x {
			n2.Add(n2, new(big.Float).SetPrec(prec).Mul(v, v))
		}
		return x, n2
	}
	eta2 := nf(eta * eta)
	x, n2 := solve(nf(0))
	if n2.Cmp(eta2) > 0 {
		lo, hi := nf(0), nf(2*floats.Norm(c, 2)/eta)
		for k := 0; k < 300; k++ {
			mid := new(big.Float).SetPrec(prec).Add(lo, hi)
			mid.Quo(mid, nf(2))
			if _, m2 := solve(mid); m2.Cmp(eta2) > 0 {
				lo = mid
			} else {
				hi = mid
			}
		}
		x, _ = solve(hi)
	}
	out := make([]float64, f)
	for i, v := range x {
		out[i], _ = v.Float64()
	}
	return out
}

// TestBallSolveWithinBound checks the a-priori bound ballSolveBound against
// a 256-bit reference on random ill-conditioned problems (eigenvalues from
// m to the trace bound, constraint active and inactive): the float64
// solution is always within the bound, and the bound is not vacuous.
func TestBallSolveWithinBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	worst := 0.0
	for trial := 0; trial < 40; trial++ {
		f := 2 + rng.IntN(6)
		m := math.Pow(10, -1+3*rng.Float64())
		top := m * math.Pow(10, 1+5*rng.Float64())
		// H = V·diag(λ)·Vᵀ with λ spread over [m, top].
		var qr mat.QR
		qr.Factorize(mat.NewDense(f, f, randomVec(rng, f*f, 1)))
		var v mat.Dense
		qr.QTo(&v)
		d := mat.NewDiagDense(f, nil)
		for i := 0; i < f; i++ {
			d.SetDiag(i, m*math.Pow(top/m, float64(i)/float64(f-1)))
		}
		var tmp, hd mat.Dense
		tmp.Mul(&v, d)
		hd.Mul(&tmp, v.T())
		h := mat.NewSymDense(f, nil)
		for i := 0; i < f; i++ {
			for j := i; j < f; j++ {
				h.SetSym(i, j, hd.At(i, j))
			}
		}
		eta := 0.5 + 2*rng.Float64()
		c := randomVec(rng, f, top*eta*(0.2+rng.Float64()))
		trH := 0.0
		for i := 0; i < f; i++ {
			trH += h.At(i, i)
		}
		bound, err := ballSolveBound(f, trH*(1+1e-12), m*(1-1e-6), eta)
		if err != nil {
			t.Fatal(err)
		}
		w, _ := ballSolve(h, c, eta, 2*floats.Norm(c, 2)/eta)
		ref := bigBallMin(h, c, eta)
		floats.Sub(ref, w)
		e := floats.Norm(ref, 2)
		if e > bound {
			t.Fatalf("trial %d (F=%d, κ=%.3g): error %v above the a-priori bound %v", trial, f, top/m, e, bound)
		}
		worst = math.Max(worst, e/bound)
	}
	t.Logf("worst error / bound = %.3g", worst)
}

// TestBallSolveBoundRefuses checks the public refusals: λ_min below the
// Cholesky floor, or too ill-conditioned.
func TestBallSolveBoundRefuses(t *testing.T) {
	if _, err := ballSolveBound(3, 1e6, 1e-12, 1); err == nil {
		t.Fatal("no error below the floor")
	}
	if _, err := ballSolveBound(3, 1e6, 1, 1); err != nil {
		t.Fatal(err)
	}
}

// TestStrongMonotoneBound checks the perturbation bound of exact ball
// minimisers on random pairs of problems.
func TestStrongMonotoneBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := 0; trial < 30; trial++ {
		f := 2 + rng.IntN(4)
		s := randomGram(rng, 3*f, f)
		h1 := shifted(s, 0.5)
		e := randomGram(rng, f, f)
		h2 := mat.NewSymDense(f, nil)
		h2.AddSym(h1, scaledSym(e, 1e-3))
		c1 := randomVec(rng, f, 5)
		c2 := append([]float64(nil), c1...)
		floats.Add(c2, randomVec(rng, f, 1e-3))
		eta := 1.0
		w1, w2 := bigBallMin(h1, c1, eta), bigBallMin(h2, c2, eta)
		dH := mat.NewSymDense(f, nil)
		dH.AddSym(h2, scaledSym(h1, -1))
		var eig mat.EigenSym
		eig.Factorize(dH, false)
		vals := eig.Values(nil)
		nH := math.Max(math.Abs(vals[0]), math.Abs(vals[f-1]))
		d := append([]float64(nil), c1...)
		floats.Sub(d, c2)
		var eh mat.EigenSym
		eh.Factorize(h1, false)
		bound := strongMonotoneBound(eh.Values(nil)[0], nH, floats.Norm(d, 2), eta)
		floats.Sub(w1, w2)
		if floats.Norm(w1, 2) > bound {
			t.Fatalf("distance %v above bound %v", floats.Norm(w1, 2), bound)
		}
	}
}

func scaledSym(a *mat.SymDense, k float64) *mat.SymDense {
	out := mat.NewSymDense(a.SymmetricDim(), nil)
	out.ScaleSym(k, a)
	return out
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
