package budget

import (
	"math"
)

// defaultOrders are the Rényi orders α of a new RDP account. 1 < α ≤ 256
// covers the optimum α−1 ≈ √(2·log(1/δ))/(Δ₂/σ)-style trade-offs of budgets
// ε ∈ [0.1, 50] at δ ≥ 10⁻¹². Fewer orders make the union bound over them
// cheaper (log k/(α−1)); see docs/privacy/accounting.md.
var defaultOrders = []float64{1.5, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 64, 128, 256}

// DefaultOrders returns the Rényi orders given to newly protected RDP tables.
// The orders of an existing table are stored with it and never change.
func DefaultOrders() []float64 { return append([]float64(nil), defaultOrders...) }

// conversionShare is the part of δ_total an RDP table reserves for the
// RDP → (ε, δ) conversion; events may use the rest.
const conversionShare = 2 // δ_conv = ⌊δ_total/2⌋

// Floating-point margins. Each curve below is computed in float64 with an
// absolute error of a few ulp of ε (resp. a few ulp of the result); the
// margins exceed that by more than three orders of magnitude, so the stored
// value is an upper bound on the exact one (tested against 50-digit values).
const (
	curveRelMargin = 1e-12
	convRelMargin  = 1e-12
)

// LaplaceRDP returns the exact Rényi divergence of order α > 1 between
// Laplace(0, b) and Laplace(Δ, b) with Δ/b = ε (Mironov 2017, Prop. 6):
//
//	ε(α) = 1/(α−1) · log( α/(2α−1)·e^{(α−1)ε} + (α−1)/(2α−1)·e^{−αε} )
//
// evaluated as ε + log1p((α−1)/(2α−1)·expm1(−(2α−1)ε))/(α−1), which neither
// overflows nor loses the small-ε value to cancellation in e^x. For an ℓ₁
// sensitivity spread over coordinates the value at the total ε is an upper
// bound: the curve is convex in ε with value 0 at 0, hence superadditive.
func LaplaceRDP(alpha, eps float64) float64 {
	if eps <= 0 {
		return 0
	}
	z := (2*alpha - 1) * eps
	w := (alpha - 1) / (2*alpha - 1)
	v := eps + math.Log1p(w*math.Expm1(-z))/(alpha-1)
	return clamp(v, 0, eps)
}

// RandomizedResponseRDP returns the Rényi divergence of order α of ε-randomised
// response, the largest of any ε-DP mechanism (a pure ε-DP pair is a
// post-processing of randomised response, Kairouz, Oh & Viswanath 2015):
//
//	ε(α) = 1/(α−1) · log( (e^{αε} + e^{−(α−1)ε}) / (1 + e^ε) )
//	     = ( logcosh((α−½)ε) − logcosh(ε/2) ) / (α−1),
//
// the second form being free of overflow and of catastrophic cancellation.
func RandomizedResponseRDP(alpha, eps float64) float64 {
	if eps <= 0 {
		return 0
	}
	v := (logCosh((alpha-0.5)*eps) - logCosh(eps/2)) / (alpha - 1)
	return clamp(v, 0, eps)
}

// GaussianRDP returns α·r²/2, the Rényi divergence of order α between
// N(0, σ²) and N(Δ₂, σ²) with r = Δ₂/σ (Mironov 2017, Prop. 7); the discrete
// Gaussian of package noise meets the same bound (Canonne, Kamath & Steinke).
func GaussianRDP(alpha, ratio float64) float64 {
	return alpha * ratio * ratio / 2
}

// logCosh returns log(cosh x) accurately for all x.
func logCosh(x float64) float64 {
	x = math.Abs(x)
	if x < 1 {
		s := math.Sinh(x / 2)
		return math.Log1p(2 * s * s) // cosh x = 1 + 2·sinh²(x/2)
	}
	return x + math.Log1p(math.Exp(-2*x)) - math.Ln2
}

// GaussianDelta returns a δ for which a Gaussian release with ratio
// r = Δ₂/σ is (ε, δ)-DP, valid for the DISCRETE Gaussian that package noise
// samples. The discrete Gaussian is proved ρ-zCDP with ρ = r²/2 (Canonne,
// Kamath & Steinke 2020, Thm. 4), i.e. (α, αρ)-RDP for every α > 1; the
// analytic (ε, δ) curve of Balle & Wang (2018) is proved only for the
// continuous Gaussian, so it is not used. The RDP→DP conversion of CKS
// (Prop. 12) gives, for every α > 1,
//
//	δ(ε) = exp((α−1)(αρ − ε)) · (1 − 1/α)^α / (α − 1).
//
// Any α gives a valid δ, so minimising over a fixed grid of orders can only
// over-state δ.
func GaussianDelta(eps, ratio float64) float64 {
	if !(ratio > 0) || math.IsNaN(eps) || math.IsInf(ratio, 0) {
		return math.NaN()
	}
	rho := ratio * ratio / 2
	best := 1.0
	for _, a := range zcdpOrders {
		lg := (a-1)*(a*rho-eps) + a*math.Log1p(-1/a) - math.Log(a-1)
		if d := math.Exp(lg); d < best {
			best = d
		}
	}
	return best
}

// zcdpOrders is a fixed geometric grid of Rényi orders in (1, 10⁶].
var zcdpOrders = func() []float64 {
	var out []float64
	for x := 1e-4; x <= 1e6; x *= 1.01 {
		out = append(out, 1+x)
	}
	return out
}()

func stdNormalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// RDPToDP converts an RDP curve (rdp[i] at orders[i]) into the ε of an
// (ε, δ)-DP guarantee for one fixed, non-adaptively chosen order, using the
// conversion of Canonne, Kamath & Steinke (2020, Prop. 12; also Balle et al.
// 2020, Thm. 21):
//
//	ε = min_α  rdp(α) + ( log(1/δ) + (α−1)·log(1−1/α) − log α ) / (α−1).
//
// It returns the minimising order too. This is the figure for a fixed
// workload; the accountant's filter, which chooses the order after the fact,
// pays a union bound over its orders on top (see conversionEps).
func RDPToDP(orders, rdp []float64, delta float64) (eps, order float64) {
	return convert(orders, rdp, delta, 1)
}

// convert is RDPToDP with δ split evenly over k orders (k = 1: none).
func convert(orders, rdp []float64, delta float64, k int) (eps, order float64) {
	eps, order = math.Inf(1), math.NaN()
	if !(delta > 0 && delta < 1) {
		return eps, order
	}
	logInv := math.Log(float64(k)) - math.Log(delta)
	for i, a := range orders {
		if !(a > 1) || i >= len(rdp) || math.IsInf(rdp[i], 1) || math.IsNaN(rdp[i]) {
			continue
		}
		e := rdp[i] + (logInv+(a-1)*math.Log1p(-1/a)-math.Log(a))/(a-1)
		if e < eps {
			eps, order = e, a
		}
	}
	if eps < 0 {
		eps = 0
	}
	return eps, order
}

// eventRDP returns an upper bound, in float64, on the RDP of one event at
// order α (Laplace: exact curve; Gaussian: α·r²/2; Generic: ε-randomised
// response, its δ being charged separately).
func eventRDP(e Event, alpha float64) float64 {
	var v float64
	switch e.Kind {
	case Laplace:
		v = LaplaceRDP(alpha, e.Epsilon)
		return math.Min(e.Epsilon, v+curveRelMargin*e.Epsilon)
	case Gaussian:
		v = GaussianRDP(alpha, e.Ratio)
		return v * (1 + curveRelMargin)
	default:
		v = RandomizedResponseRDP(alpha, e.Epsilon)
		return math.Min(e.Epsilon, v+curveRelMargin*(e.Epsilon+math.Abs(v)))
	}
}

func clamp(v, lo, hi float64) float64 {
	return math.Max(lo, math.Min(hi, v))
}
