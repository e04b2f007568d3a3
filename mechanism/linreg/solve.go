package linreg

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// packA writes the release vector of XᵀX: row by row the upper triangle
// j ≤ k without the intercept entry (F−1, F−1), whose value n/F is public.
// With scaled set (Gaussian release) off-diagonal entries are multiplied
// by √2, so that the vector's ℓ₂ norm is the Frobenius norm of the matrix
// (minus the intercept entry).
func packA(a []float64, f int, scaled bool) []float64 {
	v := make([]float64, 0, f*(f+1)/2-1)
	for j := 0; j < f; j++ {
		for k := j; k < f; k++ {
			switch {
			case j == f-1 && k == f-1:
			case j == k || !scaled:
				v = append(v, a[j*f+k])
			default:
				v = append(v, math.Sqrt2*a[j*f+k])
			}
		}
	}
	return v
}

// unpackA is the inverse of packA on a released vector; aFF is the public
// intercept entry.
func unpackA(v []float64, f int, scaled bool, aFF float64) *mat.SymDense {
	m := mat.NewSymDense(f, nil)
	i := 0
	for j := 0; j < f; j++ {
		for k := j; k < f; k++ {
			switch {
			case j == f-1 && k == f-1:
				m.SetSym(j, k, aFF)
				continue
			case j == k || !scaled:
				m.SetSym(j, k, v[i])
			default:
				m.SetSym(j, k, v[i]/math.Sqrt2)
			}
			i++
		}
	}
	return m
}

// directions returns unit vectors along which the λ-statistic is measured:
// the eigenvectors of the released (noisy) XᵀX, a post-processing of a DP
// output. If the eigensolver does not converge (never seen for finite
// input) the coordinate axes are used; either way the set does not depend
// on the rows beyond the released values.
func directions(released *mat.SymDense) [][]float64 {
	f := released.SymmetricDim()
	var es mat.EigenSym
	dirs := make([][]float64, f)
	if es.Factorize(released, true) {
		var vecs mat.Dense
		es.VectorsTo(&vecs)
		for k := 0; k < f; k++ {
			dirs[k] = mat.Col(nil, k, &vecs)
		}
	} else {
		for k := range dirs {
			dirs[k] = make([]float64, f)
			dirs[k][k] = 1
		}
	}
	for _, v := range dirs {
		var s float64
		for _, x := range v {
			s += x * x
		}
		if s > 0 {
			inv := 1 / math.Sqrt(s)
			for j := range v {
				v[j] *= inv
			}
		}
	}
	return dirs
}

// rayleighMin returns min_k v_kᵀ A v_k over the given unit directions: an
// upper bound on λ_min(A), equal to it when the directions are A's
// eigenvectors. For every fixed set of unit vectors its sensitivity is at
// most ‖xxᵀ − x′x′ᵀ‖₂ ≤ 1 (each form moves by (v·x′)² − (v·x)² ∈ [−1, 1],
// and a minimum of 1-sensitive functions is 1-sensitive).
func rayleighMin(a []float64, f int, dirs [][]float64) float64 {
	best := math.Inf(1)
	for _, v := range dirs {
		var q float64
		for j := 0; j < f; j++ {
			var r float64
			row := a[j*f : (j+1)*f]
			for k, x := range row {
				r += x * v[k]
			}
			q += v[j] * r
		}
		best = math.Min(best, q)
	}
	return best
}

// solveFloor returns θ = (M)⁺ c with every eigenvalue of the symmetric M
// raised to at least floor (> 0). It is a post-processing of released
// values: M and c are noisy releases, floor is public. If the eigensolver
// fails it returns θ = 0 (the label midpoint), never an error.
func solveFloor(m *mat.SymDense, c []float64, floor float64) []float64 {
	f := m.SymmetricDim()
	theta := make([]float64, f)
	var es mat.EigenSym
	if !es.Factorize(m, true) {
		return theta
	}
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	vals := es.Values(nil)
	for k := 0; k < f; k++ {
		w := math.Max(vals[k], floor)
		var p float64
		for j := 0; j < f; j++ {
			p += vecs.At(j, k) * c[j]
		}
		p /= w
		for j := 0; j < f; j++ {
			theta[j] += p * vecs.At(j, k)
		}
	}
	for _, v := range theta {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return make([]float64, f)
		}
	}
	return theta
}
