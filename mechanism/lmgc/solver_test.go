package lmgc

import (
	"math"
	"math/rand/v2"
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
			if err := projectPSD(pa, 2, dim); err != nil {
				t.Fatal(err)
			}
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
			if err := projectPSD(same, 2, dim); err != nil {
				t.Fatal(err)
			}
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
		if b, err = p.symmetricNoise(p.cal.PerturbationScale); err != nil {
			t.Fatal(err)
		}
	}
	return p, newProblem(p.classes, D, xs, ytr, p.cfg.H, p.cfg.Lambda, p.cal.StrongConvexity, b)
}

// longRunTarget is the certified accuracy of longRun.
const longRunTarget = 1e-10

// longRun solves to a distance longRunTarget with the fixed-step phase (the a-priori
// count for that target, stopping early on the certificate).
func longRun(t testing.TB, prob *problem, smooth float64) []float64 {
	const target = longRunTarget
	v0 := math.Sqrt(float64(prob.classes*(prob.classes-1))) + prob.lambda*math.Sqrt(float64(prob.classes*(prob.dim-1)))
	if prob.b != nil {
		v0 += norm2(prob.b) / float64(prob.n)
	}
	sol, err := prob.solveFixed(smooth, target, aprioriIterations(v0, prob.delta, smooth, target))
	if err != nil {
		t.Fatal(err)
	}
	return sol.phi
}

// TestSolverReachesOptimum: the certified solver output is within the
// stated distance of a long-run solution, with and without perturbation
// and for small Δ (ε = 20, ill-conditioned).
func TestSolverReachesOptimum(t *testing.T) {
	for _, tc := range []struct {
		eps     float64
		perturb bool
	}{{1, false}, {1, true}, {20, false}, {20, true}, {50, true}} {
		p, prob := smallProblem(t, tc.eps, tc.perturb)
		smooth := p.cal.Smoothness
		target := p.cal.Radius / 2
		sol, err := prob.solve(smooth, target, aprioriIterations(100, prob.delta, smooth, target))
		if err != nil {
			t.Fatal(err)
		}
		if sol.capped || !(sol.bound <= target) {
			t.Errorf("ε=%v: solver not certified (bound %v, target %v, capped %v)", tc.eps, sol.bound, target, sol.capped)
		}
		ref := longRun(t, prob, smooth)
		dist := diffNorm(sol.phi, ref)
		if dist > sol.bound+longRunTarget {
			t.Errorf("ε=%v perturb=%v: ‖Φ̂ − Φ_long‖ = %v exceeds the certificate %v (target %v)", tc.eps, tc.perturb, dist, sol.bound, target)
		}
		t.Logf("ε=%v perturb=%v: %d iterations, distance to long run %.3g (certificate %.3g, target %.3g)", tc.eps, tc.perturb, sol.iterations, dist, sol.bound, target)
	}
}

// TestAprioriCount: V-FISTA run for exactly the a-priori count, without the
// a-posteriori stop, lands within the target of the long-run solution.
func TestAprioriCount(t *testing.T) {
	p, prob := smallProblem(t, 5, true)
	smooth := p.cal.Smoothness
	const target = 1e-3
	v0 := math.Sqrt(6) + prob.lambda*math.Sqrt(float64(3*(p.dim-1))) + norm2(prob.b)/float64(prob.n)
	count := aprioriIterations(v0, prob.delta, smooth, target)
	sol, err := prob.solveFixed(smooth, 0, count) // target 0: never stops early
	if err != nil {
		t.Fatal(err)
	}
	if !sol.capped || sol.iterations != count {
		t.Fatalf("ran %d iterations (capped %v), want exactly %d", sol.iterations, sol.capped, count)
	}
	if dist := diffNorm(sol.phi, longRun(t, prob, smooth)); dist > target {
		t.Errorf("after the a-priori count %d, distance %v > %v", count, dist, target)
	}
}

// TestFixedStepCertified: phase 2 (V-FISTA) stops on the certificate and
// the certificate holds.
func TestFixedStepCertified(t *testing.T) {
	p, prob := smallProblem(t, 2, true)
	target := p.cal.Radius / 2
	sol, err := prob.solveFixed(p.cal.Smoothness, target, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if sol.capped || sol.bound > target {
		t.Fatalf("phase 2 not certified: %+v", sol.bound)
	}
	if dist := diffNorm(sol.phi, longRun(t, prob, p.cal.Smoothness)); dist > sol.bound+longRunTarget {
		t.Errorf("phase 2 distance %v > certificate %v", dist, sol.bound)
	}
}
