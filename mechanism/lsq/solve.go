package lsq

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// ridgeSolve returns w = (S + reg·I)⁻¹c by a Cholesky factorisation: the
// exact minimiser, up to floating-point rounding, of
// ½wᵀ(S + reg·I)w − cᵀw. S must be symmetric positive semi-definite and
// reg > 0, so the system is positive definite.
func ridgeSolve(s *mat.SymDense, reg float64, c []float64) ([]float64, error) {
	f := s.SymmetricDim()
	if len(c) != f {
		return nil, fmt.Errorf("ridge solve: right-hand side has %d entries, want %d", len(c), f)
	}
	a := mat.NewSymDense(f, nil)
	a.CopySym(s)
	for i := 0; i < f; i++ {
		a.SetSym(i, i, a.At(i, i)+reg)
	}
	var ch mat.Cholesky
	if !ch.Factorize(a) {
		return nil, errors.New("ridge solve: matrix is not positive definite")
	}
	w := mat.NewVecDense(f, nil)
	// A Condition error only reports a large condition number; the solution
	// is still the Cholesky solution, whose error the callers bound.
	if err := ch.SolveVecTo(w, mat.NewVecDense(f, append([]float64(nil), c...))); err != nil {
		var cond mat.Condition
		if !errors.As(err, &cond) {
			return nil, fmt.Errorf("ridge solve: %w", err)
		}
	}
	return w.RawVector().Data, nil
}

// ballMin returns the minimiser of q(w) = ½wᵀHw − cᵀw over the ball
// ‖w‖₂ ≤ η, for symmetric positive definite H (η = +Inf: no constraint).
//
// With H = V·diag(h)·Vᵀ and c̃ = Vᵀc, the KKT conditions give
// w(μ) = V·diag(1/(hᵢ + μ))·c̃ with μ ≥ 0, μ·(‖w(μ)‖ − η) = 0. If the
// unconstrained minimiser (μ = 0) lies in the ball it is the answer;
// otherwise μ > 0 is the unique root of the secular equation
//
//	φ(μ) = Σᵢ c̃ᵢ²/(hᵢ + μ)² = η²,
//
// φ strictly decreasing on [0, ∞) with φ(‖c̃‖/η) ≤ η². The root is found by
// bisection on that bracket carried to the last representable float (the
// loop stops when the midpoint equals an endpoint), keeping the endpoint
// with φ ≤ η², so the result is feasible; there is no tolerance to choose.
// A final rescaling removes any rounding excess of ‖w‖ over η.
func ballMin(h *mat.SymDense, c []float64, eta float64) ([]float64, error) {
	f := h.SymmetricDim()
	if len(c) != f {
		return nil, fmt.Errorf("ball minimiser: right-hand side has %d entries, want %d", len(c), f)
	}
	if !(eta > 0) {
		return nil, fmt.Errorf("ball minimiser: radius must be positive, got %v", eta)
	}
	var eig mat.EigenSym
	if !eig.Factorize(h, true) {
		return nil, errors.New("ball minimiser: eigendecomposition failed")
	}
	vals := eig.Values(nil)
	if !(vals[0] > 0) {
		return nil, fmt.Errorf("ball minimiser: matrix is not positive definite (smallest eigenvalue %v)", vals[0])
	}
	var v mat.Dense
	eig.VectorsTo(&v)
	ct := make([]float64, f)
	mat.NewVecDense(f, ct).MulVec(v.T(), mat.NewVecDense(f, append([]float64(nil), c...)))

	phi := func(mu float64) float64 {
		var s float64
		for i, ci := range ct {
			t := ci / (vals[i] + mu)
			s += t * t
		}
		return s
	}
	mu := 0.0
	if !math.IsInf(eta, 1) && phi(0) > eta*eta {
		lo, hi := 0.0, floats.Norm(ct, 2)/eta
		for phi(hi) > eta*eta { // guards rounding in the bracket
			hi *= 2
		}
		for {
			mid := lo + (hi-lo)/2
			if mid <= lo || mid >= hi {
				break
			}
			if phi(mid) > eta*eta {
				lo = mid
			} else {
				hi = mid
			}
		}
		mu = hi
	}
	coef := make([]float64, f)
	for i, ci := range ct {
		coef[i] = ci / (vals[i] + mu)
	}
	w := make([]float64, f)
	mat.NewVecDense(f, w).MulVec(&v, mat.NewVecDense(f, coef))
	if n := floats.Norm(w, 2); n > eta {
		floats.Scale(eta/n, w)
	}
	return w, nil
}

// psdSqrt returns the symmetric positive semi-definite square root R of S
// (RᵀR = R·R = S), clamping eigenvalues that rounding made slightly
// negative to zero.
func psdSqrt(s *mat.SymDense) (*mat.Dense, error) {
	f := s.SymmetricDim()
	var eig mat.EigenSym
	if !eig.Factorize(s, true) {
		return nil, errors.New("square root: eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var v mat.Dense
	eig.VectorsTo(&v)
	// R = V·diag(√λ)·Vᵀ.
	vs := mat.NewDense(f, f, nil)
	vs.Copy(&v)
	for j, l := range vals {
		r := math.Sqrt(math.Max(l, 0))
		for i := 0; i < f; i++ {
			vs.Set(i, j, vs.At(i, j)*r)
		}
	}
	out := mat.NewDense(f, f, nil)
	out.Mul(vs, v.T())
	return out, nil
}
