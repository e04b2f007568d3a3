package lmgc

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Solver tuning. None of these affects privacy: the stopping rule is the
// certificate, and the cap is the a-priori iteration count.
const (
	// checkEvery forces an exact certificate check at least this often.
	checkEvery = 50
	// checkGap is the minimum number of iterations between two checks
	// triggered by a small gradient mapping.
	checkGap = 5
	// maxCap bounds the a-priori iteration count when it overflows.
	maxCap = 1 << 40
)

// projectPSD replaces every D×D block of phi by its projection onto the PSD
// cone (negative eigenvalues clipped to 0), reconstructed as B·Bᵀ so that
// the result is symmetric.
func projectPSD(phi []float64, classes, dim int) error {
	D := dim
	dd := D * D
	sym := mat.NewSymDense(D, nil)
	var es mat.EigenSym
	var vecs mat.Dense
	bm := make([]float64, dd)
	for k := 0; k < classes; k++ {
		blk := phi[k*dd : (k+1)*dd]
		for i := 0; i < D; i++ {
			for j := i; j < D; j++ {
				sym.SetSym(i, j, blk[i*D+j])
			}
		}
		if ok := es.Factorize(sym, true); !ok {
			return fmt.Errorf("lmgc: eigendecomposition of class %d did not converge (non-finite entries?)", k)
		}
		vals := es.Values(nil)
		es.VectorsTo(&vecs)
		nonneg := true
		for _, v := range vals {
			if v < 0 {
				nonneg = false
				break
			}
		}
		if nonneg {
			continue // already PSD: keep the block unchanged
		}
		for i := 0; i < D; i++ {
			for j := 0; j < D; j++ {
				bm[i*D+j] = vecs.At(i, j) * math.Sqrt(math.Max(vals[j], 0))
			}
		}
		b := blas64.General{Rows: D, Cols: D, Stride: D, Data: bm}
		out := blas64.Symmetric{Uplo: blas.Upper, N: D, Stride: D, Data: blk}
		blas64.Syrk(blas.NoTrans, 1, b, 0, out)
		for i := 0; i < D; i++ {
			for j := 0; j < i; j++ {
				blk[i*D+j] = blk[j*D+i]
			}
		}
	}
	return nil
}

// aprioriIterations returns T such that V-FISTA (Beck 2017, Thm 10.42) from
// Φ⁰ = 0 is within distance target of the minimiser after T iterations:
// ‖Φᵀ − Φ*‖² ≤ 2(1 − 1/√κ)ᵀ v0²/Δ² with v0 ≥ ‖∇f(0)‖ and κ = L/Δ.
func aprioriIterations(v0, delta, smooth, target float64) int {
	rate := -math.Log1p(-1 / math.Sqrt(smooth/delta))
	num := math.Log(2 * v0 * v0 / (delta * delta * target * target))
	if !(num > 0) {
		return 1
	}
	t := math.Ceil(num / rate)
	if !(t < maxCap) {
		return maxCap
	}
	return int(t)
}

// solution is the solver's output. iterations and bound depend on the data
// and must never be released.
type solution struct {
	phi        []float64
	iterations int
	bound      float64 // certified upper bound on ‖phi − Φ*‖
	capped     bool    // stopped by the a-priori count, not the certificate
}

// solve runs projected V-FISTA with step 1/smooth until the a-posteriori
// certificate ‖v‖/Δ ≤ target holds or maxIter iterations (the a-priori
// count) are done. smooth must bound the Lipschitz constant of ∇f.
func (p *problem) solve(smooth, target float64, maxIter int) (solution, error) {
	C, D := p.classes, p.dim
	size := p.size()
	kappa := smooth / p.delta
	mom := (math.Sqrt(kappa) - 1) / (math.Sqrt(kappa) + 1)
	x := make([]float64, size)  // Φᵏ
	xn := make([]float64, size) // Φᵏ⁺¹
	y := make([]float64, size)  // extrapolated point
	g := make([]float64, size)
	gx := make([]float64, size)
	lastCheck := 0
	for k := 1; ; k++ {
		p.gradient(y, g)
		var gm float64
		for i := range xn {
			xn[i] = y[i] - g[i]/smooth
		}
		if err := projectPSD(xn, C, D); err != nil {
			return solution{}, fmt.Errorf("lmgc: solver iteration %d: %w", k, err)
		}
		for i := range xn {
			d := y[i] - xn[i]
			gm += d * d
		}
		gm = smooth * math.Sqrt(gm) // gradient-mapping norm
		if k >= maxIter {
			return solution{phi: xn, iterations: k, bound: target, capped: true}, nil
		}
		if (gm <= p.delta*target && k-lastCheck >= checkGap) || k-lastCheck >= checkEvery {
			lastCheck = k
			// v = ∇f(Φ⁺) − ∇f(Y) + L(Y − Φ⁺) ∈ ∂(f + ι_K)(Φ⁺).
			p.gradient(xn, gx)
			var vn float64
			for i := range gx {
				v := gx[i] - g[i] + smooth*(y[i]-xn[i])
				vn += v * v
			}
			if b := math.Sqrt(vn) / p.delta; b <= target {
				return solution{phi: xn, iterations: k, bound: b}, nil
			}
		}
		for i := range y {
			y[i] = xn[i] + mom*(xn[i]-x[i])
		}
		x, xn = xn, x
	}
}
