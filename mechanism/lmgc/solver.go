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
// cone (negative eigenvalues clipped to 0), reconstructed as B·Bᵀ. Blocks
// are read from their upper triangle (GEMM rounding can leave the lower
// one a few ulps off) and written back exactly symmetric.
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
		if !nonneg {
			for i := 0; i < D; i++ {
				for j := 0; j < D; j++ {
					bm[i*D+j] = vecs.At(i, j) * math.Sqrt(math.Max(vals[j], 0))
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

// solve returns a point within distance target of Φ* = argmin_K f. smooth
// must bound the Lipschitz constant of ∇f, and maxIter is the a-priori
// V-FISTA count for target (aprioriIterations).
//
// Phase 1 is FISTA with backtracking on the step (the global bound smooth
// is very pessimistic in practice), momentum for strong convexity Δ and
// function-value restarts (O'Donoghue & Candès 2015); it stops as soon as
// the a-posteriori certificate holds. If it has not after maxIter
// iterations, phase 2 runs V-FISTA with step 1/smooth from 0, which the
// a-priori bound certifies after maxIter iterations. Either way the returned
// point is certified; no path depends on the data except the running time.
func (p *problem) solve(smooth, target float64, maxIter int) (solution, error) {
	sol, err := p.solveAdaptive(smooth, target, maxIter)
	if err != nil || sol.phi != nil {
		return sol, err
	}
	sol, err = p.solveFixed(smooth, target, maxIter)
	sol.iterations += maxIter
	return sol, err
}

// certifier evaluates the a-posteriori certificate: for Y⁺ = Π_K(Y − g/L),
// v = ∇f(Y⁺) − g + L(Y − Y⁺) lies in ∂(f + ι_K)(Y⁺), so by Δ-strong
// convexity ‖Y⁺ − Φ*‖ ≤ ‖v‖/Δ.
type certifier struct {
	p         *problem
	gx        []float64
	lastCheck int
}

// check returns the certified bound at xn (or +Inf when not computed): it
// runs when the gradient mapping gm is below Δ·target (at most every
// checkGap iterations) and at least every checkEvery iterations.
func (c *certifier) check(k int, gm, target, step float64, y, g, xn []float64) float64 {
	p := c.p
	if !((gm <= p.delta*target && k-c.lastCheck >= checkGap) || k-c.lastCheck >= checkEvery) {
		return math.Inf(1)
	}
	c.lastCheck = k
	p.eval(xn, c.gx)
	var vn float64
	for i, gxi := range c.gx {
		v := gxi - g[i] + step*(y[i]-xn[i])
		vn += v * v
	}
	return math.Sqrt(vn) / p.delta
}

// projectedStep writes xn = Π_K(y − g/step) and returns ‖xn − y‖.
func (p *problem) projectedStep(y, g, xn []float64, step float64) (float64, error) {
	for i := range xn {
		xn[i] = y[i] - g[i]/step
	}
	if err := projectPSD(xn, p.classes, p.dim); err != nil {
		return 0, err
	}
	var d float64
	for i := range xn {
		e := xn[i] - y[i]
		d += e * e
	}
	return math.Sqrt(d), nil
}

// solveAdaptive is phase 1; it returns a nil phi if it did not certify.
func (p *problem) solveAdaptive(smooth, target float64, maxIter int) (solution, error) {
	size := p.size()
	x := make([]float64, size)
	xn := make([]float64, size)
	y := make([]float64, size)
	g := make([]float64, size)
	cert := certifier{p: p, gx: make([]float64, size)}
	step := math.Max(smooth/64, p.delta) // current curvature estimate L_k
	fx := p.eval(x, nil)
	for k := 1; k <= maxIter; k++ {
		fy := p.eval(y, g)
		var dist, fxn float64
		for {
			var err error
			if dist, err = p.projectedStep(y, g, xn, step); err != nil {
				return solution{}, fmt.Errorf("lmgc: solver iteration %d: %w", k, err)
			}
			fxn = p.eval(xn, nil)
			var lin float64
			for i := range xn {
				lin += g[i] * (xn[i] - y[i])
			}
			// Sufficient decrease (with room for rounding), or the global
			// bound, for which it holds in exact arithmetic.
			if fxn <= fy+lin+step/2*dist*dist+1e-13*(1+math.Abs(fy)) || step >= smooth {
				break
			}
			step = math.Min(2*step, smooth)
		}
		if b := cert.check(k, step*dist, target, step, y, g, xn); b <= target {
			return solution{phi: append([]float64(nil), xn...), iterations: k, bound: b}, nil
		}
		if fxn > fx {
			copy(y, xn) // restart the momentum
		} else {
			kappa := math.Sqrt(step / p.delta)
			mom := (kappa - 1) / (kappa + 1)
			for i := range y {
				y[i] = xn[i] + mom*(xn[i]-x[i])
			}
		}
		x, xn = xn, x
		fx = fxn
		step = math.Max(step*0.9, p.delta)
	}
	return solution{iterations: maxIter}, nil
}

// solveFixed is phase 2: V-FISTA (Beck 2017, Thm 10.42) with step 1/smooth
// and momentum (√κ − 1)/(√κ + 1), κ = smooth/Δ, from Φ⁰ = 0.
func (p *problem) solveFixed(smooth, target float64, maxIter int) (solution, error) {
	size := p.size()
	kappa := math.Sqrt(smooth / p.delta)
	mom := (kappa - 1) / (kappa + 1)
	x := make([]float64, size)
	xn := make([]float64, size)
	y := make([]float64, size)
	g := make([]float64, size)
	cert := certifier{p: p, gx: make([]float64, size)}
	for k := 1; ; k++ {
		p.eval(y, g)
		dist, err := p.projectedStep(y, g, xn, smooth)
		if err != nil {
			return solution{}, fmt.Errorf("lmgc: solver iteration %d: %w", k, err)
		}
		if k >= maxIter {
			return solution{phi: append([]float64(nil), xn...), iterations: k, bound: target, capped: true}, nil
		}
		if b := cert.check(k, smooth*dist, target, smooth, y, g, xn); b <= target {
			return solution{phi: append([]float64(nil), xn...), iterations: k, bound: b}, nil
		}
		for i := range y {
			y[i] = xn[i] + mom*(xn[i]-x[i])
		}
		x, xn = xn, x
	}
}
