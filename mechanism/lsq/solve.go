package lsq

import (
	"fmt"
	"math"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/gonum/mat"
)

// ridgeSolve returns w = (S + reg·I)⁻¹c by a Cholesky factorisation: the
// exact minimiser, up to floating-point rounding, of
// ½wᵀ(S + reg·I)w − cᵀw. S must be symmetric positive semi-definite and
// reg > 0 above choleskyFloor for the trace bound of S, so that the
// factorisation cannot fail (Demmel's condition, Higham Thm 10.7); the plans
// check that before charging. Its error is only for a mismatched length.
func ridgeSolve(s *mat.SymDense, reg float64, c []float64) ([]float64, error) {
	f := s.SymmetricDim()
	if len(c) != f {
		return nil, fmt.Errorf("ridge solve: right-hand side has %d entries, want %d", len(c), f)
	}
	ch := newChol(f)
	ch.load(s, reg)
	w := make([]float64, f)
	ch.factorSolve(c, w)
	return w, nil
}

// chol is a dense Cholesky factorisation A = LLᵀ (L lower triangular,
// R = Lᵀ) in the inner-product form analysed by Higham (Algorithm 10.2;
// Theorems 10.3, 10.4 and 10.7: every entry of L is one inner product, any
// summation order), followed by the two triangular solves. It is written out
// rather than taken from LAPACK so that the operations the a-priori bounds
// count are exactly the ones performed (and without a condition-number
// estimate, which the bounds do not need).
type chol struct {
	f int
	a []float64 // row-major F×F: the matrix (lower triangle read), then L
	y []float64
}

func newChol(f int) *chol { return &chol{f: f, a: make([]float64, f*f), y: make([]float64, f)} }

// load copies the lower triangle of g + shift·I into the work matrix.
func (c *chol) load(g *mat.SymDense, shift float64) {
	f := c.f
	for i := 0; i < f; i++ {
		for j := 0; j <= i; j++ {
			c.a[i*f+j] = g.At(i, j)
		}
		c.a[i*f+i] += shift
	}
}

// factor overwrites the lower triangle with L (row by row, each entry one
// dot product of contiguous row prefixes); false if a pivot is not
// positive (impossible above choleskyFloor).
func (c *chol) factor() bool {
	f, a := c.f, c.a
	for i := 0; i < f; i++ {
		ri := a[i*f : i*f+i+1]
		for j := 0; j <= i; j++ {
			rj := a[j*f : j*f+j]
			t := ri[j]
			for k, v := range rj {
				t -= ri[k] * v
			}
			if j < i {
				ri[j] = t / a[j*f+j]
				continue
			}
			if !(t > 0) {
				return false
			}
			ri[i] = math.Sqrt(t)
		}
	}
	return true
}

// upper returns R = Lᵀ at (i, j), i ≤ j.
func (c *chol) upper(i, j int) float64 { return c.a[j*c.f+i] }

// solve writes (LLᵀ)⁻¹b into dst: L·y = b, then Lᵀx = y.
func (c *chol) solve(b, dst []float64) {
	f, a, y := c.f, c.a, c.y
	for i := 0; i < f; i++ {
		row := a[i*f : i*f+i]
		t := b[i]
		for k, v := range row {
			t -= v * y[k]
		}
		y[i] = t / a[i*f+i]
	}
	copy(dst, y)
	for i := f - 1; i >= 0; i-- {
		dst[i] /= a[i*f+i]
		xi := dst[i]
		row := a[i*f : i*f+i]
		for k, v := range row {
			dst[k] -= v * xi
		}
	}
}

// factorSolve factorises the loaded matrix and writes its inverse applied
// to b into dst. A factorisation failure is impossible under the callers'
// a-priori floor; if it happened anyway it is logged for the owner and dst
// is set to 0, with no error (an error would be an output that depends on
// the rows).
func (c *chol) factorSolve(b, dst []float64) {
	if !c.factor() {
		logrus.Error("lsq: Cholesky factorisation failed despite the a-priori floor (please report); using 0")
		clear(dst)
		return
	}
	c.solve(b, dst)
}

// ballSteps is the fixed number of bisection steps of ballSolve: enough to
// reduce any bracket [0, μ_max] of non-negative floats (fewer than 2⁶³ bit
// patterns) to two adjacent floats.
const ballSteps = 64

// ballSolve returns the minimiser of q(θ) = ½θᵀHθ − cᵀθ over the ball
// ‖θ‖₂ ≤ η, for H symmetric positive definite (λ_min(H) above the floor of
// ballSolveBound), in a number of operations fixed by F alone: 66 Cholesky
// solves. It also returns the number of bisection steps (always ballSteps).
//
// With θ(μ) = (H + μI)⁻¹c, the KKT conditions give θ* = θ(0) if
// ‖θ(0)‖ ≤ η, and otherwise θ* = θ(μ*) with ‖θ(μ*)‖ = η, μ* ∈ (0, μ_max]
// for any μ_max ≥ ‖c‖/η (‖θ(μ)‖ ≤ ‖c‖/μ). μ* is bracketed by bisection
// on the bit patterns of the floats in [0, μ_max] (monotone for
// non-negative floats), keeping ‖θ̂(lo)‖² > η² ≥ ‖θ̂(hi)‖² for the computed
// norms; after 64 halvings lo and hi are adjacent floats and θ̂(hi) is
// returned. Steps that find lo and hi already adjacent evaluate hi again,
// so the count never depends on the data. The caller must pass
// μ_max ≥ 2‖c‖/η (the invariant at hi then holds without evaluating it).
// docs/mechanisms/lsq.md §2 bounds the error a priori (ballSolveBound).
func ballSolve(h *mat.SymDense, c []float64, eta, muMax float64) (theta []float64, steps int) {
	f := h.SymmetricDim()
	ch := newChol(f)
	// solve writes θ̂(μ) into dst and returns the computed ‖θ̂(μ)‖².
	solve := func(mu float64, dst []float64) float64 {
		ch.load(h, mu)
		ch.factorSolve(c, dst)
		var s float64
		for _, v := range dst {
			s += v * v
		}
		return s
	}
	eta2 := eta * eta
	theta0 := make([]float64, f)
	interior := solve(0, theta0) <= eta2
	lo, hi := uint64(0), math.Float64bits(muMax)
	scratch := make([]float64, f)
	for steps = 0; steps < ballSteps; steps++ {
		mid := lo + (hi-lo)/2
		if mid == lo {
			mid = hi // adjacent already: a dummy evaluation keeps the count fixed
		}
		if solve(math.Float64frombits(mid), scratch) > eta2 {
			if mid != hi {
				lo = mid
			}
		} else {
			hi = mid
		}
	}
	out := make([]float64, f)
	solve(math.Float64frombits(hi), out)
	if interior {
		return theta0, steps
	}
	return out, steps
}

// choleskyFloor returns the smallest λ_min that the a-priori analysis of a
// Cholesky factorisation of an F×F symmetric matrix with trace at most trH
// (hence λ_max ≤ trH) accepts: Demmel's sufficient condition for success,
// λ_min(D⁻¹AD⁻¹) > F·γ_{F+1}/(1 − γ_{F+1}) (Higham Thm 10.7), with
// λ_min(D⁻¹AD⁻¹) ≥ λ_min(A)/max aᵢᵢ, and the diagonal rounding of adding a
// shift, doubled for margin.
func choleskyFloor(f int, trH float64) float64 {
	g := gammaN(f + 1)
	return 2 * trH * (1 + unitRoundoff) * (float64(f)*g/(1-g) + unitRoundoff)
}

// ballSolveBound returns r with ‖θ̂ − θ°‖₂ ≤ r for the output θ̂ of ballSolve
// on a stored problem (H, c) whose exact ball minimiser is θ°, given public
// bounds tr(H) ≤ trH and λ_min(H) ≥ m (docs/mechanisms/lsq.md §2):
//
//	each solve at μ is exact for H + μI + E_μ, ‖E_μ‖ ≤ e₁(trH + Fμ),
//	e₁ = u + γ_{3F+1}(1 + u)/(1 − γ_{F+1})   (Higham Thm 10.4, ‖R̂‖²_F ≤ tr/(1−γ)),
//	so ‖θ̂(μ) − θ(μ)‖ ≤ q‖θ̂(μ)‖, q = e₁·max(trH/m, F);
//	the computed norms err by γ_F, so at the returned point the exact path
//	norm ψ = ‖θ(μ)‖ is within ηω of η, and for μ < ν on the path
//	‖θ(μ) − θ(ν)‖ ≤ √κ·(ψ(μ)² − ψ(ν)²)/(2ψ(ν)), κ = trH/m.
//
// It returns an error when m is below the Cholesky floor or q > 1/8 (a
// public condition: the plans call it before charging).
func ballSolveBound(f int, trH, m, eta float64) (float64, error) {
	if !(m > 0) || !(m >= choleskyFloor(f, trH)) {
		return 0, fmt.Errorf("the smallest eigenvalue bound %v is below the floor %v for a certified float64 solve (trace %v, %d features)", m, choleskyFloor(f, trH), trH, f)
	}
	u := unitRoundoff
	e1 := u + gammaN(3*f+1)*(1+u)/(1-gammaN(f+1))
	q := e1 * math.Max(trH/m, float64(f))
	if !(q <= 0.125) {
		return 0, fmt.Errorf("the matrix is too ill-conditioned for a certified float64 solve (trace %v, λ_min ≥ %v)", trH, m)
	}
	gf := gammaN(f)
	omegaUp := (1+q)/math.Sqrt(1-gf) - 1
	omegaDown := 1 - (1-q)/math.Sqrt(1+gf) + 0x1p-52
	w := math.Max(omegaUp, omegaDown)
	kappa := math.Max(trH/m, 1)
	path := math.Sqrt(kappa) * eta * (2*w + w*w) / (2 * (1 - w))
	direct := q * eta / math.Sqrt(1-gf)
	return (direct + path) * (1 + 1e-10), nil
}

// strongMonotoneBound bounds ‖θ*(H₁, c₁) − θ*(H₂, c₂)‖ for the exact ball
// minimisers of two problems on the same ball ‖θ‖ ≤ η, with
// λ_min(H₁) ≥ m₁, ‖H₁ − H₂‖₂ ≤ dH and ‖c₁ − c₂‖ ≤ dc: adding the two
// variational inequalities gives m₁‖Δ‖² ≤ (dH·η + dc)‖Δ‖.
func strongMonotoneBound(m1, dH, dc, eta float64) float64 {
	return (dH*eta + dc) / m1 * (1 + 1e-12)
}
