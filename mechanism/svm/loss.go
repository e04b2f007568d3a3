package svm

import (
	"fmt"
	"math"
)

// Loss names accepted in Config.Loss.
const (
	LossHinge    = "hinge"
	LossLogistic = "logistic"
	LossHuber    = "huber"
)

// loss is a margin loss ℓ(m), m = y·⟨w, φ(x)⟩, convex and L-Lipschitz, seen
// through its Fenchel conjugate ψ(a) = ℓ*(−a) on a ∈ [0, 1]. With c = C/n
// and the dual variables stored as aᵢ = αᵢ/c ∈ [0, 1] (so that a bound value
// is represented exactly) the dual of P(w) = ½‖w‖² + c·Σℓ(mᵢ) is
//
//	max_a D(a) = −½‖w(a)‖² − c·Σ ψ(aᵢ),  w(a) = c·Σ aᵢyᵢφᵢ.
//
// For any a and any released ŵ the duality gap splits into non-negative
// Fenchel–Young terms (derivation in docs/mechanisms/svm.md):
//
//	P(ŵ) − D(a) = c·Σ [ℓ(m̂ᵢ) + ψ(aᵢ) + aᵢm̂ᵢ] + ½‖ŵ − w(a)‖²,  m̂ᵢ = yᵢ⟨ŵ, φᵢ⟩,
//
// which is how the solver certifies its optimisation error.
type loss interface {
	// lipschitz returns L, the Lipschitz constant of ℓ.
	lipschitz() float64
	// value returns ℓ(m) (used for reporting the primal objective).
	value(m float64) float64
	// step returns the a ∈ [0, 1] that maximises the dual along one
	// coordinate, given the current a, the margin m = yᵢ⟨w, φᵢ⟩,
	// q = ‖φᵢ‖² and c = C/n. (∂D/∂aᵢ = −c·(m + ψ′(a)), ∂²D/∂aᵢ² = −c·(cq + ψ″(a)).)
	step(a, m, q, c float64) float64
	// gapTerm returns ℓ(m) + ψ(a) + a·m ≥ 0 computed without cancellation,
	// and a bound on its error when m is known to within ±dm, including
	// the rounding of the evaluation itself.
	gapTerm(m, a, dm float64) (g, err float64)
}

// boxLoss is a loss whose dual variables reach the bounds 0 and 1, so that
// LIBLINEAR's shrinking applies. grad returns m + ψ′(a), the derivative of
// the negative dual along aᵢ divided by c.
type boxLoss interface {
	loss
	grad(m, a float64) float64
}

func newLoss(name string, huberH float64) (loss, error) {
	switch name {
	case LossHinge:
		return hinge{}, nil
	case LossLogistic:
		return logistic{}, nil
	case LossHuber:
		return huber{h: huberH}, nil
	}
	return nil, fmt.Errorf("unknown loss %q (want %s, %s or %s)", name, LossHinge, LossLogistic, LossHuber)
}

// u is the unit roundoff of float64.
const u = 0x1p-53

// hinge is ℓ(m) = max(0, 1 − m), L = 1, ψ(a) = −a.
type hinge struct{}

func (hinge) lipschitz() float64 { return 1 }

func (hinge) value(m float64) float64 { return math.Max(0, 1-m) }

func (hinge) step(a, m, q, c float64) float64 {
	if q <= 0 {
		// φᵢ = 0: the dual is linear in aᵢ with slope c·(1 − m) = c.
		return 1
	}
	return clamp01(a + (1-m)/(c*q))
}

func (hinge) grad(m, _ float64) float64 { return m - 1 }

func (hinge) gapTerm(m, a, dm float64) (float64, float64) {
	var g float64
	if m < 1 {
		g = (1 - a) * (1 - m)
	} else {
		g = a * (m - 1)
	}
	// g is piecewise linear in m with slope −(1 − a) below 1 and a above.
	var slope float64
	switch {
	case m-dm >= 1:
		slope = a
	case m+dm <= 1:
		slope = 1 - a
	default:
		slope = math.Max(a, 1-a)
	}
	return g, slope*dm + 4*u*g
}

// logistic is ℓ(m) = log(1 + e^(−m)), L = 1, ψ(a) = a·log a + (1−a)·log(1−a).
// Its gap term is the Bernoulli divergence KL(a ‖ σ(−m)).
type logistic struct{}

func (logistic) lipschitz() float64 { return 1 }

func (logistic) value(m float64) float64 { return softplus(-m) }

// step solves c·q·(a′ − a) + m + log(a′/(1 − a′)) = 0 for a′ ∈ (0, 1) by
// Newton's method safeguarded with bisection (the left side increases in a′).
func (logistic) step(a, m, q, c float64) float64 {
	cq := c * q
	lo, hi := 0.0, 1.0
	x := a
	if !(x > 0 && x < 1) {
		x = 0.5
	}
	for it := 0; it < 100; it++ {
		h := cq*(x-a) + m + math.Log(x) - math.Log1p(-x)
		if h > 0 {
			hi = x
		} else {
			lo = x
		}
		nx := x - h/(cq+1/(x*(1-x)))
		if !(nx > lo && nx < hi) {
			nx = lo + (hi-lo)/2
		}
		done := math.Abs(nx-x) <= 0x1p-50*math.Min(nx, 1-nx)
		x = nx
		if done {
			break
		}
	}
	// Stay strictly inside the domain of ψ′.
	return math.Min(math.Max(x, 0x1p-1000), 1-0x1p-53)
}

func (logistic) gapTerm(m, a, dm float64) (float64, float64) {
	p := sigmoid(-m) // −ℓ′(m)
	q := sigmoid(m)  // 1 − p
	var g float64
	if a > 0 {
		g += a * math.Log1p((a-p)/p)
	}
	if a < 1 {
		g += (1 - a) * math.Log1p((p-a)/q)
	}
	g = math.Max(g, 0) // rounding at the optimum; covered by the bound
	// dg/dm = a − p with |dp/dm| ≤ 1/4; the evaluation of p, q, log1p and
	// the products is allowed 16 ulps of the unit scale of the term.
	return g, (math.Abs(a-p)+dm/4)*dm + 16*u*(1+g)
}

// huber is the huberised hinge of Chapelle (2007) with half-width h:
//
//	ℓ(m) = 0                   m ≥ 1 + h
//	       (1 + h − m)²/(4h)   |1 − m| < h
//	       1 − m               m ≤ 1 − h
//
// L = 1, ψ(a) = −a − h·a·(1 − a).
type huber struct{ h float64 }

func (huber) lipschitz() float64 { return 1 }

func (l huber) value(m float64) float64 {
	switch {
	case m >= 1+l.h:
		return 0
	case m <= 1-l.h:
		return 1 - m
	}
	t := 1 + l.h - m
	return t * t / (4 * l.h)
}

func (l huber) step(a, m, q, c float64) float64 {
	// ψ′(a) = −1 − h + 2ha and ψ″ = 2h: the coordinate problem is quadratic.
	return clamp01(a - (m-1-l.h+2*l.h*a)/(c*q+2*l.h))
}

func (l huber) grad(m, a float64) float64 { return m - 1 - l.h + 2*l.h*a }

func (l huber) gapTerm(m, a, dm float64) (float64, float64) {
	var g float64
	switch {
	case m >= 1+l.h:
		g = a * ((m - 1 - l.h) + l.h*a)
	case m <= 1-l.h:
		g = (1 - a) * ((1 - l.h - m) + l.h*(1-a))
	default:
		s := (1 + l.h - m) / (2 * l.h)
		g = l.h * (a - s) * (a - s)
	}
	// dg/dm = ℓ′(m) + a, and ℓ′ is 1/(2h)-Lipschitz.
	sl := a - math.Min(1, math.Max(0, (1+l.h-m)/(2*l.h)))
	return g, (math.Abs(sl)+dm/(2*l.h))*dm + 8*u*(g+1+l.h)
}

func clamp01(a float64) float64 {
	if a < 0 || math.IsNaN(a) {
		return 0
	}
	if a > 1 {
		return 1
	}
	return a
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}
