package lmgc

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// maxCap bounds the a-priori iteration count when it overflows.
const maxCap = 1 << 40

// jacobiSweeps caps the fallback eigensolver (cyclic Jacobi converges
// quadratically; a handful of sweeps reach machine precision).
const jacobiSweeps = 100

// projectPSD replaces every D×D block of phi by its projection onto the PSD
// cone (negative eigenvalues clipped to 0), reconstructed as B·Bᵀ. Blocks
// are read from their upper triangle (GEMM rounding can leave the lower
// one a few ulps off) and written back exactly symmetric. It has no
// failure path: if LAPACK's symmetric eigensolver reports non-convergence
// (not known to happen on finite input), the block is decomposed by cyclic
// Jacobi instead and the event is logged for the owner.
func projectPSD(phi []float64, classes, dim int) {
	// Blocks are independent: project them on up to GOMAXPROCS goroutines
	// (the same arithmetic per block, so the result does not depend on the
	// schedule; the work per block depends on D only).
	workers := min(classes, runtime.GOMAXPROCS(0))
	if workers <= 1 || dim < minParallelDim {
		ps := newPSDScratch(dim)
		for k := 0; k < classes; k++ {
			ps.project(phi[k*dim*dim:(k+1)*dim*dim], k)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ps := newPSDScratch(dim)
			for {
				k := int(next.Add(1)) - 1
				if k >= classes {
					return
				}
				ps.project(phi[k*dim*dim:(k+1)*dim*dim], k)
			}
		}()
	}
	wg.Wait()
}

// minParallelDim is the block size from which projectPSD uses goroutines
// (below it an eigendecomposition is cheaper than the scheduling).
const minParallelDim = 16

// psdScratch is the per-goroutine workspace of projectPSD.
type psdScratch struct {
	D    int
	sym  *mat.SymDense
	es   mat.EigenSym
	vecs mat.Dense
	bm   []float64
	vals []float64
}

func newPSDScratch(D int) *psdScratch {
	return &psdScratch{D: D, sym: mat.NewSymDense(D, nil), bm: make([]float64, D*D), vals: make([]float64, D)}
}

// project replaces the D×D block blk (class k, for the log) by its
// projection onto the PSD cone.
func (ps *psdScratch) project(blk []float64, k int) {
	D, sym, vals, bm := ps.D, ps.sym, ps.vals, ps.bm
	for i := 0; i < D; i++ {
		for j := i; j < D; j++ {
			sym.SetSym(i, j, blk[i*D+j])
		}
	}
	var vec func(i, j int) float64
	if ps.es.Factorize(sym, true) {
		ps.es.Values(vals)
		ps.es.VectorsTo(&ps.vecs)
		vec = ps.vecs.At
	} else {
		logrus.WithField("class", k).Error("lmgc: symmetric eigensolver did not converge; using Jacobi (please report)")
		jv, jvec := jacobiEigen(blk, D)
		copy(vals, jv)
		vec = func(i, j int) float64 { return jvec[i*D+j] }
	}
	nonneg := true
	for _, v := range vals {
		if v < 0 {
			nonneg = false
			break
		}
	}
	if !nonneg {
		for i := 0; i < D; i++ {
			for j := 0; j < D; j++ {
				bm[i*D+j] = vec(i, j) * math.Sqrt(math.Max(vals[j], 0))
			}
		}
		b := blas64.General{Rows: D, Cols: D, Stride: D, Data: bm}
		out := blas64.Symmetric{Uplo: blas.Upper, N: D, Stride: D, Data: blk}
		blas64.Syrk(blas.NoTrans, 1, b, 0, out)
	}
	// Mirror the upper triangle: blocks leave exactly symmetric (an
	// already PSD block keeps its upper triangle).
	for i := 0; i < D; i++ {
		for j := 0; j < i; j++ {
			blk[i*D+j] = blk[j*D+i]
		}
	}
}

// jacobiEigen returns the eigenvalues and eigenvectors (columns of the
// row-major D×D matrix) of the symmetric matrix whose upper triangle is in
// blk, by cyclic Jacobi rotations (at most jacobiSweeps sweeps; each sweep
// stops once the off-diagonal part is negligible). It is the fallback of
// projectPSD and has no failure path.
func jacobiEigen(blk []float64, D int) (vals, vecs []float64) {
	a := make([]float64, D*D)
	for i := 0; i < D; i++ {
		for j := i; j < D; j++ {
			v := blk[i*D+j]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				v = 0
			}
			a[i*D+j], a[j*D+i] = v, v
		}
	}
	vecs = make([]float64, D*D)
	for i := 0; i < D; i++ {
		vecs[i*D+i] = 1
	}
	for sweep := 0; sweep < jacobiSweeps; sweep++ {
		var off, total float64
		for i := 0; i < D; i++ {
			for j := 0; j < D; j++ {
				total += a[i*D+j] * a[i*D+j]
				if i != j {
					off += a[i*D+j] * a[i*D+j]
				}
			}
		}
		if off <= 1e-32*total {
			break
		}
		for p := 0; p < D-1; p++ {
			for q := p + 1; q < D; q++ {
				apq := a[p*D+q]
				if apq == 0 {
					continue
				}
				theta := (a[q*D+q] - a[p*D+p]) / (2 * apq)
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := 0; k < D; k++ { // columns p, q
					akp, akq := a[k*D+p], a[k*D+q]
					a[k*D+p], a[k*D+q] = c*akp-s*akq, s*akp+c*akq
				}
				for k := 0; k < D; k++ { // rows p, q
					apk, aqk := a[p*D+k], a[q*D+k]
					a[p*D+k], a[q*D+k] = c*apk-s*aqk, s*apk+c*aqk
				}
				for k := 0; k < D; k++ {
					vkp, vkq := vecs[k*D+p], vecs[k*D+q]
					vecs[k*D+p], vecs[k*D+q] = c*vkp-s*vkq, s*vkp+c*vkq
				}
			}
		}
	}
	vals = make([]float64, D)
	for i := range vals {
		vals[i] = a[i*D+i]
	}
	return vals, vecs
}

// aprioriIterations returns T such that V-FISTA (Beck 2017, Thm 10.42),
// started at the minimiser Φ⁰ of the data-independent part of the
// objective, is within distance target of the minimiser after T
// iterations, from the unconditional start bound G²/Δ (G bounds the
// gradient of the data-dependent part; docs/mechanisms/lmgc.md §6).
func aprioriIterations(g, delta, smooth, target float64) int {
	return iterationsForGap(g*g/delta, delta, smooth, target)
}

// iterationsForGap returns T with ‖Φᵀ − Φ*‖² ≤ (2/Δ)(1 − 1/√κ)ᵀ·gap ≤
// target², κ = smooth/Δ, where gap bounds f(Φ⁰) − f* + (Δ/2)‖Φ⁰ − Φ*‖² (V-FISTA's
// potential at the start; Beck 2017, Thm 10.42). Every argument is public,
// so T is the same on every table.
func iterationsForGap(gap, delta, smooth, target float64) int {
	rate := -math.Log1p(-1 / math.Sqrt(smooth/delta))
	num := math.Log(2 * gap / (delta * target * target))
	if !(num > 0) {
		return 1
	}
	t := math.Ceil(num / rate)
	if !(t < maxCap) {
		return maxCap
	}
	return int(t)
}

// solution is the solver's output. iterations is always the a-priori
// count it was given.
type solution struct {
	phi        []float64
	iterations int
}

// projectedStep writes xn = Π_K(y − g/step) and returns ‖xn − y‖.
func (p *problem) projectedStep(y, g, xn []float64, step float64) float64 {
	for i := range xn {
		xn[i] = y[i] - g[i]/step
	}
	if !p.unconstrained {
		projectPSD(xn, p.classes, p.dim)
	}
	var d float64
	for i := range xn {
		e := xn[i] - y[i]
		d += e * e
	}
	return math.Sqrt(d)
}

// start returns Φ⁰ = Π_K(−b/(nΔ)), the minimiser over K of the
// data-independent part (Δ/2)‖Φ‖² + (1/n)⟨b, Φ⟩ (0 without perturbation).
func (p *problem) start() []float64 {
	x := make([]float64, p.size())
	if p.b == nil {
		return x
	}
	k := -1 / (float64(p.n) * p.delta)
	for i, v := range p.b {
		x[i] = k * v
	}
	if !p.unconstrained {
		projectPSD(x, p.classes, p.dim)
	}
	return x
}

// solve runs V-FISTA (Beck 2017, Thm 10.42) with step 1/smooth and momentum
// (√κ − 1)/(√κ + 1), κ = smooth/Δ, from Φ⁰ = start(), for exactly iters
// iterations (the a-priori count, aprioriIterations): no stopping rule, so
// neither the running time in iterations nor any failure depends on the
// rows. smooth must bound the Lipschitz constant of ∇f.
func (p *problem) solve(smooth float64, iters int) solution {
	size := p.size()
	kappa := math.Sqrt(smooth / p.delta)
	mom := (kappa - 1) / (kappa + 1)
	x := p.start()
	xn := make([]float64, size)
	y := append([]float64(nil), x...)
	g := make([]float64, size)
	for k := 1; k <= iters; k++ {
		if p.stop.Stopped() {
			break // killed: the caller discards the result
		}
		p.eval(y, g)
		p.projectedStep(y, g, xn, smooth)
		for i := range y {
			y[i] = xn[i] + mom*(xn[i]-x[i])
		}
		x, xn = xn, x
	}
	return solution{phi: x, iterations: iters}
}
