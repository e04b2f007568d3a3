package budget

import (
	"errors"
	"fmt"
	"math"
)

// Kind is the type of one privacy event of a release.
type Kind int

const (
	Laplace  Kind = iota + 1 // pure ε release with Laplace noise: Epsilon = Δ₁/b
	Gaussian                 // Gaussian release: Ratio = Δ₂/σ; Epsilon, Delta = its (ε,δ) calibration for basic composition
	Generic                  // any (ε, δ)-DP release
)

func (k Kind) String() string {
	switch k {
	case Laplace:
		return "laplace"
	case Gaussian:
		return "gaussian"
	case Generic:
		return "generic"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Event is one privacy-relevant step of a release.
type Event struct {
	Kind    Kind
	Epsilon float64
	Delta   float64
	Ratio   float64 // Gaussian only: Δ₂/σ
}

// Errors returned by the accountant; match them with errors.Is.
var (
	ErrBudgetExceeded = errors.New("privacy budget exceeded")
	ErrNotProtected   = errors.New("table is not protected")
	ErrInvalid        = errors.New("invalid privacy parameter")
	ErrUnknownRelease = errors.New("unknown release")
	// ErrQuotaExceeded is an overspend of an account's quota; it wraps
	// ErrBudgetExceeded, so errors.Is(err, ErrBudgetExceeded) holds too.
	ErrQuotaExceeded = fmt.Errorf("%w: per-account quota", ErrBudgetExceeded)
)

// MaxEpsilon is the largest ε total a table may have: ε is stored in units of
// 10⁻¹² in 64 bits, and a larger budget would mean no privacy anyway.
const MaxEpsilon = 1e6

// gaussianDeltaTolerance is the relative slack allowed when checking a
// Gaussian event's (ε, δ) against its ratio; it only absorbs floating-point
// error in the check (the exact δ(ε) is computed with cancellation).
const gaussianDeltaTolerance = 1e-6

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// validEpsilon checks ε > 0 and finite.
func validEpsilon(what string, eps float64) error {
	if !finite(eps) || eps <= 0 {
		return invalidf("%s ε must be finite and > 0, got %v", what, eps)
	}
	return nil
}

// validDelta checks 0 ≤ δ < 1.
func validDelta(what string, delta float64) error {
	if !finite(delta) || delta < 0 || delta >= 1 {
		return invalidf("%s δ must be in [0, 1), got %v", what, delta)
	}
	return nil
}

// Validate checks one event: ε > 0 and finite; 0 ≤ δ < 1; for Laplace δ = 0;
// for Gaussian a finite ratio r > 0, δ > 0 and an (ε, δ) that the Gaussian
// with ratio r really satisfies (GaussianDelta: the zCDP→(ε, δ) conversion of
// Canonne, Kamath & Steinke, proved for the discrete Gaussian); Ratio only on
// Gaussian events. NaN and ±Inf are refused everywhere.
func (e Event) Validate() error {
	what := e.Kind.String() + " event"
	if err := validEpsilon(what, e.Epsilon); err != nil {
		return err
	}
	if err := validDelta(what, e.Delta); err != nil {
		return err
	}
	switch e.Kind {
	case Laplace, Generic:
		if e.Ratio != 0 {
			return invalidf("%s must not carry a Gaussian ratio (got %v)", what, e.Ratio)
		}
		if e.Kind == Laplace && e.Delta != 0 {
			return invalidf("laplace event is pure ε-DP; δ must be 0, got %v", e.Delta)
		}
	case Gaussian:
		if !finite(e.Ratio) || e.Ratio <= 0 {
			return invalidf("gaussian event ratio Δ₂/σ must be finite and > 0, got %v", e.Ratio)
		}
		if e.Delta == 0 {
			return invalidf("gaussian event needs δ > 0 for its (ε, δ) calibration")
		}
		if need := GaussianDelta(e.Epsilon, e.Ratio); e.Delta < need*(1-gaussianDeltaTolerance) {
			return invalidf("gaussian event with Δ₂/σ = %v is not (%v, %v)-DP: it needs δ ≥ %.6g", e.Ratio, e.Epsilon, e.Delta, need)
		}
	default:
		return invalidf("unknown event kind %d", int(e.Kind))
	}
	return nil
}
