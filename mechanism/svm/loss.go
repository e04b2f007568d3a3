package svm

import (
	"fmt"
	"math"
)

// Loss names accepted in Config.Loss.
const (
	// LossHinge is refused: the hinge loss is not smooth, so gradient
	// descent on it is not a contraction and the fixed-iteration privacy
	// argument of docs/mechanisms/svm.md §4 does not apply.
	LossHinge    = "hinge"
	LossLogistic = "logistic"
	LossHuber    = "huber"
)

// loss is a margin loss ℓ(m), m = y·⟨w, φ(x)⟩: convex, L-Lipschitz and
// β_ℓ-smooth (ℓ′ is β_ℓ-Lipschitz and non-decreasing), with ℓ′ ∈ [−L, 0].
// These three constants are all the privacy proof uses.
type loss interface {
	// lipschitz returns L.
	lipschitz() float64
	// smoothness returns β_ℓ.
	smoothness() float64
	// value returns ℓ(m) (reporting and tests only).
	value(m float64) float64
	// deriv returns ℓ′(m) as computed in float64.
	deriv(m float64) float64
	// derivErr bounds |deriv(m) − ℓ′(m)| for every float64 m: the rounding
	// of the evaluation itself, used in the floating-point slack of Δ₂.
	derivErr() float64
}

func newLoss(name string, huberH float64) (loss, error) {
	switch name {
	case LossLogistic:
		return logistic{}, nil
	case LossHuber:
		return huber{h: huberH}, nil
	case LossHinge:
		return nil, fmt.Errorf("loss %q is not supported: it is not smooth, and the private solver needs a smooth loss to run a fixed, public number of iterations (use %q, the Huber-smoothed hinge, or %q; see docs/mechanisms/svm.md §3)",
			LossHinge, LossHuber, LossLogistic)
	}
	return nil, fmt.Errorf("unknown loss %q (want %s or %s)", name, LossHuber, LossLogistic)
}

// u is the unit roundoff of float64.
const u = 0x1p-53

// logistic is ℓ(m) = log(1 + e^(−m)): L = 1, β_ℓ = 1/4.
type logistic struct{}

func (logistic) lipschitz() float64  { return 1 }
func (logistic) smoothness() float64 { return 0.25 }

func (logistic) value(m float64) float64 { return softplus(-m) }

// deriv is −σ(−m) = −1/(1 + e^m), evaluated without overflow: exp (< 1 ulp
// in Go's math), one addition and one division, each relative u, on a
// value in [0, 1].
func (logistic) deriv(m float64) float64 { return -sigmoid(-m) }

func (logistic) derivErr() float64 { return 8 * u }

// huber is the Huber-smoothed hinge of Chaudhuri, Monteleoni & Sarwate
// (2011, §3.4.2) with half-width h:
//
//	ℓ(m) = 0                   m > 1 + h
//	       (1 + h − m)²/(4h)   |1 − m| ≤ h
//	       1 − m               m < 1 − h
//
// L = 1, β_ℓ = 1/(2h).
type huber struct{ h float64 }

func (huber) lipschitz() float64    { return 1 }
func (l huber) smoothness() float64 { return 1 / (2 * l.h) }

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

// deriv is −clamp((1 + h − m)/(2h), 0, 1). The same formula on every
// branch, so ℓ′ is continuous in m as computed: fl(1+h) is within u(1+h),
// the subtraction adds u·|1+h−m|, the division by 2h (exact) one more u;
// the clamp is 1-Lipschitz. Where the clamp is inactive |1+h−m| ≤ 2h(1+2u),
// so the error is below u(1+h)/(2h) + 3u.
func (l huber) deriv(m float64) float64 {
	t := (1 + l.h - m) / (2 * l.h)
	if t < 0 {
		return 0
	}
	if t > 1 {
		return -1
	}
	return -t
}

func (l huber) derivErr() float64 { return 4 * u * (1 + (1+l.h)/(2*l.h)) }

// valueAtZero returns ℓ(0): P(0) = C·ℓ(0) bounds P(w*) ≥ ½‖w*‖².
func valueAtZero(l loss) float64 { return l.value(0) }

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
