package lmgc

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// blockEigen returns the eigenvalues of block c of phi.
func blockEigen(t testing.TB, phi []float64, c, dim int) []float64 {
	t.Helper()
	sym := mat.NewSymDense(dim, nil)
	blk := phi[c*dim*dim : (c+1)*dim*dim]
	for i := 0; i < dim; i++ {
		for j := i; j < dim; j++ {
			if blk[i*dim+j] != blk[j*dim+i] {
				t.Fatalf("block %d is not symmetric at (%d, %d): %v vs %v", c, i, j, blk[i*dim+j], blk[j*dim+i])
			}
			sym.SetSym(i, j, blk[i*dim+j])
		}
	}
	var es mat.EigenSym
	if !es.Factorize(sym, false) {
		t.Fatal("eigendecomposition failed")
	}
	return es.Values(nil)
}

// TestProjectPSD checks the projection onto the PSD cone: the result is
// PSD, A − Π(A) is negative semidefinite and orthogonal to Π(A) (the
// characterisation of the projection onto a closed convex cone), and PSD
// input is left unchanged.
func TestProjectPSD(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, dim := range []int{1, 2, 5, 12} {
		for trial := 0; trial < 20; trial++ {
			a := randomPhi(r, 2, dim, 1, false)
			pa := append([]float64(nil), a...)
			projectPSD(pa, 2, dim)
			for c := 0; c < 2; c++ {
				norm := diffNorm(pa[c*dim*dim:(c+1)*dim*dim], make([]float64, dim*dim))
				for _, v := range blockEigen(t, pa, c, dim) {
					if v < -1e-12*(1+norm) {
						t.Fatalf("dim %d: projected block has eigenvalue %v", dim, v)
					}
				}
			}
			rest := make([]float64, len(a))
			var inner float64
			for i := range a {
				rest[i] = a[i] - pa[i]
				inner += rest[i] * pa[i]
			}
			if math.Abs(inner) > 1e-10 {
				t.Errorf("⟨A − Π(A), Π(A)⟩ = %v, want 0", inner)
			}
			// A − Π(A) must be negative semidefinite (symmetrise rounding).
			for c := 0; c < 2; c++ {
				blk := rest[c*dim*dim : (c+1)*dim*dim]
				for i := 0; i < dim; i++ {
					for j := 0; j < i; j++ {
						blk[i*dim+j] = blk[j*dim+i]
					}
				}
				for _, v := range blockEigen(t, rest, c, dim) {
					if v > 1e-10 {
						t.Errorf("A − Π(A) has eigenvalue %v > 0", v)
					}
				}
			}
			psd := randomPhi(r, 2, dim, 1, true)
			same := append([]float64(nil), psd...)
			projectPSD(same, 2, dim)
			if e := diffNorm(same, psd); e != 0 {
				t.Errorf("projection moved a PSD input by %v", e)
			}
		}
	}
}

// smallProblem returns a problem on the iris training rows (scaled with the
// public bounds), with an optional perturbation.
func smallProblem(t testing.TB, eps float64, perturb bool) (*Trainer, *problem) {
	ds := loadDataset(t, "iris")
	xtr, ytr, _, _ := ds.split()
	p, err := Plan(ds.config(eps, len(xtr)))
	if err != nil {
		t.Fatal(err)
	}
	D := p.dim
	xs := make([]float64, len(xtr)*D)
	for i, row := range xtr {
		p.scaler.Transform(xs[i*D:(i+1)*D], row)
	}
	var b []float64
	if perturb {
		b = p.objectiveNoise()
	}
	return p, newProblem(p.classes, D, xs, ytr, p.cfg.H, p.cfg.Lambda, p.cal.StrongConvexity, b)
}

// longRunTarget is the a-priori accuracy of longRun.
const longRunTarget = 1e-10

// longRun runs V-FISTA for the a-priori count of the target longRunTarget.
func longRun(t testing.TB, prob *problem, smooth, g float64) []float64 {
	return prob.solve(smooth, aprioriIterations(g, prob.delta, smooth, longRunTarget)).phi
}

// TestSolverReachesOptimum: after the plan's a-priori count T the solver
// output is within r_s/2 of a long-run solution (the other half of r_s is
// the margin for floating point), with and without perturbation and for
// small Δ (ε = 20, ill-conditioned).
func TestSolverReachesOptimum(t *testing.T) {
	for _, tc := range []struct {
		eps     float64
		perturb bool
	}{{1, false}, {1, true}, {20, false}, {20, true}, {50, true}} {
		p, prob := smallProblem(t, tc.eps, tc.perturb)
		c := p.cal
		sol := prob.solve(c.Smoothness, c.Iterations)
		if sol.iterations != c.Iterations {
			t.Fatalf("ran %d iterations, want %d", sol.iterations, c.Iterations)
		}
		ref := longRun(t, prob, c.Smoothness, c.GradientBound)
		dist := diffNorm(sol.phi, ref)
		if dist > c.Radius/2+longRunTarget {
			t.Errorf("ε=%v perturb=%v: ‖Φ̂ − Φ_long‖ = %v exceeds r_s/2 = %v", tc.eps, tc.perturb, dist, c.Radius/2)
		}
		t.Logf("ε=%v perturb=%v: T = %d iterations, distance to long run %.3g (r_s/2 = %.3g)", tc.eps, tc.perturb, c.Iterations, dist, c.Radius/2)
	}
}

// TestAprioriCount: V-FISTA run for exactly the a-priori count of a target
// lands within the target of the long-run solution, for targets far below
// the plan's.
func TestAprioriCount(t *testing.T) {
	p, prob := smallProblem(t, 5, true)
	smooth := p.cal.Smoothness
	for _, target := range []float64{1e-3, 1e-6} {
		count := aprioriIterations(p.cal.GradientBound, prob.delta, smooth, target)
		sol := prob.solve(smooth, count)
		if dist := diffNorm(sol.phi, longRun(t, prob, smooth, p.cal.GradientBound)); dist > target {
			t.Errorf("after the a-priori count %d, distance %v > %v", count, dist, target)
		}
	}
}

// TestJacobiFallback checks the eigensolver fallback of projectPSD on
// random symmetric blocks: V·diag(λ)·Vᵀ reproduces the block and V is
// orthogonal.
func TestJacobiFallback(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, dim := range []int{1, 3, 8, 20} {
		a := randomPhi(r, 1, dim, 1, false)
		vals, vecs := jacobiEigen(a, dim)
		for i := 0; i < dim; i++ {
			for j := 0; j < dim; j++ {
				var rec, orth float64
				for k := 0; k < dim; k++ {
					rec += vecs[i*dim+k] * vals[k] * vecs[j*dim+k]
					orth += vecs[k*dim+i] * vecs[k*dim+j]
				}
				want := a[min(i, j)*dim+max(i, j)]
				if math.Abs(rec-want) > 1e-12 {
					t.Fatalf("dim %d: reconstruction (%d,%d) = %v, want %v", dim, i, j, rec, want)
				}
				if id := map[bool]float64{true: 1, false: 0}[i == j]; math.Abs(orth-id) > 1e-12 {
					t.Fatalf("dim %d: VᵀV(%d,%d) = %v", dim, i, j, orth)
				}
			}
		}
	}
}

// TestStartBound checks the two facts behind the tighter a-priori count
// (lmgc.md §6) on adversarial tables: ‖Φ⁰‖ ≤ R₀ for the release's own
// perturbation draws, and the data part g(Φ⁰) (average loss + λ-trace) is
// at most startDataBound(R₀) for rows at the corners of their bounds (the
// largest margins), with every label, and for Φ⁰ scaled up to R₀.
func TestStartBound(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, tc := range []struct {
		eps           float64
		n, d, classes int
	}{{0.1, 20, 2, 2}, {1, 30, 3, 3}, {100, 10, 2, 5}} {
		p, err := Plan(testConfig(tc.eps, tc.n, tc.d, tc.classes))
		if err != nil {
			t.Fatal(err)
		}
		c := p.cal
		C, D := p.classes, p.dim
		for trial := 0; trial < 20; trial++ {
			xs := make([]float64, tc.n*D)
			y := make([]int, tc.n)
			lab := r.IntN(C)
			for i := 0; i < tc.n; i++ {
				row := make([]float64, tc.d)
				for j := range row {
					row[j] = float64(2*r.IntN(2) - 1) // a corner: ‖x̃‖ = 1
				}
				p.scaler.Transform(xs[i*D:(i+1)*D], row)
				if trial%2 == 0 {
					y[i] = lab // one class only
				} else {
					y[i] = r.IntN(C)
				}
			}
			b := p.objectiveNoise()
			prob := newProblem(C, D, xs, y, p.cfg.H, p.cfg.Lambda, c.StrongConvexity, b)
			phi0 := prob.start()
			if nrm := norm2(phi0); nrm > c.StartRadius {
				t.Fatalf("ε=%v: ‖Φ⁰‖ = %v > R₀ = %v", tc.eps, nrm, c.StartRadius)
			}
			// Scale Φ⁰ to norm R₀ (still in K): the bound must hold there too.
			scaled := append([]float64(nil), phi0...)
			if nrm := norm2(phi0); nrm > 0 {
				for i := range scaled {
					scaled[i] *= c.StartRadius / nrm
				}
			}
			bound := startDataBound(C, D, p.cfg.H, p.cfg.Lambda, c.StartRadius)
			for _, phi := range [][]float64{phi0, scaled} {
				data := newProblem(C, D, xs, y, p.cfg.H, p.cfg.Lambda, 0, nil)
				if g := data.eval(phi, nil); g > bound {
					t.Fatalf("ε=%v: g(Φ⁰) = %v > bound %v", tc.eps, g, bound)
				}
			}
		}
	}
}

// TestNoiseShrinksWithEpsilon: for a fixed table shape the perturbation's
// expected displacement relative to 1/Δ (the scale of the minimiser in the
// strongly convex regime), m·β, falls as ε grows, Δ never increases with
// ε, and the displacement m·β/(nΔ) is at most c_ν·D·√C wherever the floor
// does not bind — the issue-11 defect (a displacement independent of ε
// while Δ ∝ 1/ε) is gone.
func TestNoiseShrinksWithEpsilon(t *testing.T) {
	prevDelta, prevMB := math.Inf(1), math.Inf(1)
	for _, eps := range []float64{0.1, 1, 10, 100, 1e3, 1e4} {
		p, err := Plan(testConfig(eps, 1000, 10, 4))
		if err != nil {
			t.Fatal(err)
		}
		c := p.cal
		mb := float64(c.Dim) * c.PerturbationScale
		if c.StrongConvexity > prevDelta || !(mb < prevMB) {
			t.Errorf("ε=%v: Δ = %v (before %v), m·β = %v (before %v)", eps, c.StrongConvexity, prevDelta, mb, prevMB)
		}
		disp := mb / (1000 * c.StrongConvexity)
		if c.StrongConvexity > MinStrongConvexity && disp > NoiseMargin*11*2*(1+1e-12) {
			t.Errorf("ε=%v: displacement %v above c_ν·D·√C = %v", eps, disp, NoiseMargin*11*2)
		}
		prevDelta, prevMB = c.StrongConvexity, mb
	}
}

// TestParallelBlocksMatchSerial: the class blocks of the projection are
// computed on goroutines when D ≥ minParallelDim and the row parts of the
// gradient (n > partRows: several parts) on goroutines too; the result must
// equal the serial computation bit for bit (same arithmetic per block, the
// parts reduced in order), whatever GOMAXPROCS is. Also exercises the
// parallel paths under -race.
func TestParallelBlocksMatchSerial(t *testing.T) {
	const C, D, n = 4, minParallelDim + 3, 3*partRows + 17
	r := rand.New(rand.NewPCG(31, 32))
	src := randomPhi(r, C, D, 1, false)
	xs := make([]float64, n*D)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		var sq float64
		for j := 0; j < D; j++ {
			xs[i*D+j] = 2*r.Float64() - 1
			sq += xs[i*D+j] * xs[i*D+j]
		}
		for j := 0; j < D; j++ {
			xs[i*D+j] /= math.Sqrt(sq)
		}
		y[i] = r.IntN(C)
	}
	run := func(procs int) (proj, grad []float64) {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		proj = append([]float64(nil), src...)
		projectPSD(proj, C, D)
		prob := newProblem(C, D, xs, y, 1, 1e-4, 1e-3, nil)
		grad = make([]float64, prob.size())
		prob.eval(src, grad)
		return proj, grad
	}
	p1, g1 := run(1)
	p4, g4 := run(4)
	for i := range p1 {
		if p1[i] != p4[i] || g1[i] != g4[i] {
			t.Fatalf("entry %d: serial (%v, %v) vs parallel (%v, %v)", i, p1[i], g1[i], p4[i], g4[i])
		}
	}
}
