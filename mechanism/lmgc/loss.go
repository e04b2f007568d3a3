package lmgc

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// chunkRows bounds the rows processed per BLAS call, so that the scratch
// memory is O(chunkRows·D) whatever n is.
const chunkRows = 2048

// huber is the Huber-smoothed hinge ℓ_h(z) on the hinge argument z
// (Chapelle 2007): 0 for z < −h, (z+h)²/(4h) for |z| ≤ h, z for z > h.
// It returns ℓ_h(z) and its slope ℓ_h′(z) ∈ [0, 1].
func huber(z, h float64) (value, slope float64) {
	switch {
	case z < -h:
		return 0, 0
	case z > h:
		return z, 1
	}
	u := z + h
	return u * u / (4 * h), u / (2 * h)
}

// huberCurvature returns ℓ_h″(z) (1/(2h) inside [−h, h], else 0); the
// right-hand value at the two kinks.
func huberCurvature(z, h float64) float64 {
	if z < -h || z >= h {
		return 0
	}
	return 1 / (2 * h)
}

// problem is one instance of the (perturbed) objective
//
//	f(Φ) = (1/n)Σᵢ ℓ(Φ; x̃ᵢ, yᵢ) + λ Σ_c tr(I_Φ Φ_c I_Φ) + (Δ/2)‖Φ‖² + (1/n)⟨b, Φ⟩
//
// restricted to the PSD cone. Φ is stored as C row-major D×D blocks.
type problem struct {
	classes, dim, n int
	x               []float64 // n×D scaled rows x̃ᵢ, row-major
	y               []int     // labels in [0, classes)
	h, lambda       float64
	delta           float64   // Δ, the strong convexity
	b               []float64 // C·D·D symmetric perturbation blocks, or nil

	// scratch, reused across gradient calls
	q, w, tmp []float64
}

func newProblem(classes, dim int, x []float64, y []int, h, lambda, delta float64, b []float64) *problem {
	n := len(y)
	rows := min(n, chunkRows)
	return &problem{
		classes: classes, dim: dim, n: n, x: x, y: y,
		h: h, lambda: lambda, delta: delta, b: b,
		q:   make([]float64, rows*classes),
		w:   make([]float64, rows*classes),
		tmp: make([]float64, rows*dim),
	}
}

// size returns C·D·D, the length of a parameter vector.
func (p *problem) size() int { return p.classes * p.dim * p.dim }

// gradient writes ∇f(Φ) into grad and returns f(Φ).
func (p *problem) gradient(phi, grad []float64) float64 {
	C, D := p.classes, p.dim
	dd := D * D
	clear(grad)
	var loss float64
	for start := 0; start < p.n; start += chunkRows {
		rows := min(chunkRows, p.n-start)
		xc := blas64.General{Rows: rows, Cols: D, Stride: D, Data: p.x[start*D : (start+rows)*D]}
		tmp := blas64.General{Rows: rows, Cols: D, Stride: D, Data: p.tmp[:rows*D]}
		// q[r][k] = x̃ᵣᵀ Φ_k x̃ᵣ.
		for k := 0; k < C; k++ {
			phik := blas64.General{Rows: D, Cols: D, Stride: D, Data: phi[k*dd : (k+1)*dd]}
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, xc, phik, 0, tmp)
			for r := 0; r < rows; r++ {
				var s float64
				xr := xc.Data[r*D : (r+1)*D]
				tr := tmp.Data[r*D : (r+1)*D]
				for j, v := range xr {
					s += v * tr[j]
				}
				p.q[r*C+k] = s
			}
		}
		// Weights: ∇ℓ = Σ_k w_k x̃x̃ᵀ in block k.
		w := p.w[:rows*C]
		clear(w)
		for r := 0; r < rows; r++ {
			yr := p.y[start+r]
			qr := p.q[r*C : (r+1)*C]
			wr := w[r*C : (r+1)*C]
			for c := 0; c < C; c++ {
				if c == yr {
					continue
				}
				v, s := huber(1+qr[yr]-qr[c], p.h)
				loss += v
				wr[yr] += s
				wr[c] -= s
			}
		}
		// grad_k += (1/n) Xᵀ diag(w_k) X.
		inv := 1 / float64(p.n)
		for k := 0; k < C; k++ {
			nonzero := false
			for r := 0; r < rows; r++ {
				wk := w[r*C+k]
				if wk != 0 {
					nonzero = true
				}
				xr := xc.Data[r*D : (r+1)*D]
				tr := tmp.Data[r*D : (r+1)*D]
				for j, v := range xr {
					tr[j] = wk * v
				}
			}
			if !nonzero {
				continue
			}
			gk := blas64.General{Rows: D, Cols: D, Stride: D, Data: grad[k*dd : (k+1)*dd]}
			blas64.Gemm(blas.Trans, blas.NoTrans, inv, xc, tmp, 1, gk)
		}
	}
	value := loss / float64(p.n)
	// Data-independent terms: λ I_Φ, ΔΦ and b/n.
	var sq, lin, tr float64
	for k := 0; k < C; k++ {
		off := k * dd
		for i := 0; i < D-1; i++ {
			grad[off+i*D+i] += p.lambda
			tr += phi[off+i*D+i]
		}
	}
	for i, v := range phi {
		grad[i] += p.delta * v
		sq += v * v
	}
	if p.b != nil {
		inv := 1 / float64(p.n)
		for i, v := range p.b {
			grad[i] += inv * v
			lin += v * phi[i]
		}
		lin /= float64(p.n)
	}
	return value + p.lambda*tr + p.delta/2*sq + lin
}

// rowGradient writes the gradient of one row's loss ℓ(Φ; x̃, y) (all
// classes) into g (length C·D·D). Used by the sensitivity tests.
func rowGradient(phi []float64, classes, dim int, x []float64, y int, h float64, g []float64) {
	D := dim
	dd := D * D
	q := make([]float64, classes)
	for k := range q {
		q[k] = quad(phi[k*dd:(k+1)*dd], x)
	}
	clear(g)
	for c := 0; c < classes; c++ {
		if c == y {
			continue
		}
		_, s := huber(1+q[y]-q[c], h)
		addOuter(g[y*dd:(y+1)*dd], s, x)
		addOuter(g[c*dd:(c+1)*dd], -s, x)
	}
}

// rowHessianWeights returns, for one row, the curvatures ℓ_h″(z_c) of its
// C−1 margins (index y is 0). Its Hessian is Σ_c a_c v_c v_cᵀ with
// v_c = (e_y − e_c) ⊗ x̃x̃ᵀ.
func rowHessianWeights(phi []float64, classes, dim int, x []float64, y int, h float64) []float64 {
	dd := dim * dim
	q := make([]float64, classes)
	for k := range q {
		q[k] = quad(phi[k*dd:(k+1)*dd], x)
	}
	a := make([]float64, classes)
	for c := range a {
		if c != y {
			a[c] = huberCurvature(1+q[y]-q[c], h)
		}
	}
	return a
}

// quad returns xᵀAx for a row-major D×D matrix A.
func quad(a, x []float64) float64 {
	D := len(x)
	var s float64
	for i, xi := range x {
		var r float64
		row := a[i*D : (i+1)*D]
		for j, xj := range x {
			r += row[j] * xj
		}
		s += xi * r
	}
	return s
}

// addOuter adds s·xxᵀ to the row-major D×D matrix a.
func addOuter(a []float64, s float64, x []float64) {
	D := len(x)
	for i, xi := range x {
		row := a[i*D : (i+1)*D]
		for j, xj := range x {
			row[j] += s * xi * xj
		}
	}
}

// norm2 returns the Euclidean (Frobenius) norm of v.
func norm2(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}
