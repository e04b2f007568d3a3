package lmgc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/noise"
)

// The lattice audit for LMGC (issue 9, item 1). A release that is the exact
// minimiser of the perturbed objective with the perturbation on a public
// lattice g·ℤ^m would give itself away: whoever knows the table computes
// b̂ = −n·∇J₀(Φ) (J₀ the objective without b) and finds svec(b̂)/g ∈ ℤ^m.
// The statistic is the distance of svec(b̂)/g to ℤ^m.

// latticeNeighbours is a small extremal pair: C = 2, one feature (D = 2,
// m = 6), n = 20 rows at the corner with label 0, the last one with label 1
// in the neighbour.
func latticeNeighbours(t testing.TB, eps float64) (*Trainer, [][]float64, [2][]int) {
	t.Helper()
	const n = 20
	p, err := Plan(testConfig(eps, n, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	x := make([][]float64, n)
	y0, y1 := make([]int, n), make([]int, n)
	for i := range x {
		x[i] = []float64{1}
	}
	y1[n-1] = 1
	return p, x, [2][]int{y0, y1}
}

// svecBlocks maps blocks to svec coordinates (diagonal, then √2·upper).
func svecBlocks(phi []float64, classes, dim int) []float64 {
	var v []float64
	for c := 0; c < classes; c++ {
		blk := phi[c*dim*dim : (c+1)*dim*dim]
		for i := 0; i < dim; i++ {
			v = append(v, blk[i*dim+i])
			for j := i + 1; j < dim; j++ {
				v = append(v, math.Sqrt2*blk[i*dim+j])
			}
		}
	}
	return v
}

// lmgcLatticeStat returns the distance of svec(b̂)/g to ℤ^m with
// b̂ = −n∇J₀(Φ) on the candidate table (x, y).
func lmgcLatticeStat(p *Trainer, xs []float64, y []int, phi []float64, g float64) float64 {
	prob := newProblem(p.classes, p.dim, xs, y, p.cfg.H, p.cfg.Lambda, p.cal.StrongConvexity, nil)
	grad := make([]float64, prob.size())
	prob.eval(phi, grad)
	var d2 float64
	for _, v := range svecBlocks(grad, p.classes, p.dim) {
		w := -float64(p.cfg.N) * v / g
		d := w - math.Round(w)
		d2 += d * d
	}
	return math.Sqrt(d2)
}

// griddedRelease is the deliberately broken variant: the perturbation drawn
// on the lattice (noise.AddGaussianVec in svec coordinates, σ = β), the
// unconstrained minimiser solved to near machine precision, no output step.
func griddedRelease(t testing.TB, p *Trainer, xs []float64, y []int) []float64 {
	t.Helper()
	C, D, m := p.classes, p.dim, p.cal.Dim
	v := make([]float64, m)
	if err := noise.AddGaussianVec(v, p.cal.PerturbationScale); err != nil {
		t.Fatal(err)
	}
	b := make([]float64, C*D*D)
	k := 0
	for c := 0; c < C; c++ {
		blk := b[c*D*D : (c+1)*D*D]
		for i := 0; i < D; i++ {
			blk[i*D+i] = v[k]
			k++
			for j := i + 1; j < D; j++ {
				blk[i*D+j] = v[k] / math.Sqrt2
				blk[j*D+i] = blk[i*D+j]
				k++
			}
		}
	}
	prob := newProblem(C, D, xs, y, p.cfg.H, p.cfg.Lambda, p.cal.StrongConvexity, b)
	prob.unconstrained = true
	smooth := p.cal.Smoothness
	return prob.solve(smooth, aprioriIterations(p.cal.GradientBound, prob.delta, smooth, 1e-15)).phi
}

// gridOf is the grid of noise.AddGaussianVec for σ on F coordinates.
func gridOf(sigma float64, f int) float64 {
	bound := sigma / math.Ldexp(math.Sqrt(float64(f)), 30) * (1 - 0x1p-40)
	_, exp := math.Frexp(bound)
	return math.Ldexp(1, exp-1)
}

// TestLatticeLMGC: the lattice statistic passes against the LMGC release
// path at ε ∈ {1, 2} and catches the gridded variant.
func TestLatticeLMGC(t *testing.T) {
	for _, eps := range []float64{1, 2} {
		p, x, ys := latticeNeighbours(t, eps)
		D := p.dim
		xs := make([]float64, len(x)*D)
		for i, row := range x {
			p.scaler.Transform(xs[i*D:(i+1)*D], row)
		}
		g := gridOf(p.cal.PerturbationScale, p.cal.Dim)
		cfgA := audit.Config{N: 2500}
		t.Logf("ε = %v, release path (g = %.3g):", eps, g)
		audit.RequirePass(t, func(side int) float64 {
			m, _, err := p.train(x, ys[side], trainOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var phi []float64
			for _, blk := range m.Phi {
				phi = append(phi, blk...)
			}
			return lmgcLatticeStat(p, xs, ys[0], phi, g)
		}, p.ChargedEpsilon(), cfgA)
		t.Logf("ε = %v, gridded variant:", eps)
		audit.RequireCatch(t, func(side int) float64 {
			return lmgcLatticeStat(p, xs, ys[0], griddedRelease(t, p, xs, ys[side]), g)
		}, p.ChargedEpsilon(), cfgA)
	}
}

// TestLMGCNoDataDependentFailure is the convergence/failure-bit search: for
// analyst-chosen λ, h, ε, dimensions and classes from tiny to huge, a plan
// is either refused by Plan (public inputs only) or every release on
// adversarial neighbouring tables succeeds, is PSD and finite, and runs
// exactly the plan's public iteration count.
func TestLMGCNoDataDependentFailure(t *testing.T) {
	rng := rand.New(rand.NewPCG(111, 112))
	planned, refused := 0, 0
	for _, lambda := range []float64{1e-12, 0.01, 1e6} {
		for _, h := range []float64{1e-6, 0.5, 1e6} {
			for _, eps := range []float64{0.01, 1, 100} {
				d, classes, n := 1+rng.IntN(4), 2+rng.IntN(4), 30+rng.IntN(200)
				cfg := testConfig(eps, n, d, classes)
				cfg.Lambda, cfg.H = lambda, h
				p, err := Plan(cfg)
				if err != nil {
					refused++
					continue
				}
				planned++
				name := fmt.Sprintf("λ=%g h=%g ε=%g d=%d C=%d n=%d", lambda, h, eps, d, classes, n)
				for k, pair := range lmgcPairs(rng, n, d, classes) {
					for side := 0; side < 2; side++ {
						m, sol, err := p.train(pair.x[side], pair.y[side], trainOptions{})
						if err != nil {
							t.Fatalf("%s pair %d side %d: release failed after reading the rows: %v", name, k, side, err)
						}
						if sol.iterations != p.cal.Iterations {
							t.Fatalf("%s pair %d side %d: %d iterations, plan %d", name, k, side, sol.iterations, p.cal.Iterations)
						}
						for _, blk := range m.Phi {
							for _, v := range blk {
								if math.IsNaN(v) || math.IsInf(v, 0) {
									t.Fatalf("%s pair %d side %d: non-finite Φ", name, k, side)
								}
							}
						}
					}
				}
			}
		}
	}
	t.Logf("planned %d, refused by Plan %d", planned, refused)
	if planned < 5 {
		t.Fatalf("only %d configurations planned: the search is vacuous", planned)
	}
}

type lmgcPair struct {
	x [2][][]float64
	y [2][]int
}

// lmgcPairs returns neighbouring tables (the last row differs): identical
// corner rows with the label changed, NULL/±Inf rows, and a random table
// with its last row moved to a corner.
func lmgcPairs(rng *rand.Rand, n, d, classes int) []lmgcPair {
	mk := func(v float64) [][]float64 {
		x := make([][]float64, n)
		for i := range x {
			x[i] = make([]float64, d)
			for j := range x[i] {
				x[i][j] = v
			}
		}
		return x
	}
	var out []lmgcPair
	x := mk(1)
	y0, y1 := make([]int, n), make([]int, n)
	y1[n-1] = classes - 1
	out = append(out, lmgcPair{x: [2][][]float64{x, x}, y: [2][]int{y0, y1}})
	xn := mk(math.NaN())
	xi := mk(math.NaN())
	xi[n-1] = mk(math.Inf(1))[0]
	out = append(out, lmgcPair{x: [2][][]float64{xn, xi}, y: [2][]int{y0, y0}})
	xr := make([][]float64, n)
	yr := make([]int, n)
	for i := range xr {
		xr[i] = make([]float64, d)
		for j := range xr[i] {
			xr[i][j] = 2*rng.Float64() - 1
		}
		yr[i] = rng.IntN(classes)
	}
	xr2 := append([][]float64(nil), xr...)
	xr2[n-1] = mk(-1)[0]
	yr2 := append([]int(nil), yr...)
	yr2[n-1] = (yr[n-1] + 1) % classes
	out = append(out, lmgcPair{x: [2][][]float64{xr, xr2}, y: [2][]int{yr, yr2}})
	return out
}
