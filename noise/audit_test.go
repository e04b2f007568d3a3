package noise_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/noise"
)

// Statistical audits of the samplers: each correct sampler must PASS at its
// claimed ε with neighbours whose outputs differ by exactly the sensitivity,
// and each deliberately broken variant must be CAUGHT (expected failures).
// Pass and catch tests of a pair use the same N, so every pass test has the
// power to fail on the corresponding bug.

const (
	eps   = 1.0 // claimed ε of every release below
	delta = 1.0 // sensitivity Δ (ℓ₁ for Laplace, ℓ₂ for Gaussian and Gamma)
)

func must(v float64, err error) float64 {
	if err != nil {
		panic(err)
	}
	return v
}

// laplaceMechanism releases f(D) = neighbour·Δ with Laplace noise of the given
// scale; the correct scale is Δ/ε.
func laplaceMechanism(scale float64) audit.Sampler {
	return func(neighbour int) float64 {
		return must(noise.AddLaplace(float64(neighbour)*delta, scale))
	}
}

func TestAuditLaplacePasses(t *testing.T) {
	audit.RequirePass(t, laplaceMechanism(delta/eps), eps, audit.Config{N: 4000})
}

func TestAuditLaplaceHalvedScaleCaught(t *testing.T) {
	audit.RequireCatch(t, laplaceMechanism(0.5*delta/eps), eps, audit.Config{N: 4000})
}

func TestAuditLaplacePassesLargeN(t *testing.T) {
	audit.RequirePass(t, laplaceMechanism(delta/eps), eps, audit.Config{N: 40000})
}

func TestAuditLaplace25PercentUnderNoisingCaught(t *testing.T) {
	audit.RequireCatch(t, laplaceMechanism(0.75*delta/eps), eps, audit.Config{N: 40000})
}

// An F-coordinate sum of rows clipped to ‖x‖₂ ≤ C has ℓ₂ sensitivity 2C and
// ℓ₁ sensitivity 2C·√F. Neighbours differ by (2C/√F)·(1, …, 1), which meets
// both bounds. The audited statistic is the privacy-loss sum
// Σᵢ |oᵢ − x′ᵢ| − |oᵢ − xᵢ|.
func sqrtFMechanism(l1Sensitivity float64) audit.Sampler {
	const f, c = 4, 1.0
	shift := 2 * c / math.Sqrt(f)
	return func(neighbour int) float64 {
		x := make([]float64, f)
		for i := range x {
			x[i] = float64(neighbour) * shift
		}
		if err := noise.AddLaplaceVec(x, l1Sensitivity/eps); err != nil {
			panic(err)
		}
		var loss float64
		for _, o := range x {
			loss += math.Abs(o-shift) - math.Abs(o)
		}
		return loss
	}
}

func TestAuditLaplaceVecL1SensitivityPasses(t *testing.T) {
	audit.RequirePass(t, sqrtFMechanism(2*1.0*math.Sqrt(4)), eps, audit.Config{N: 20000})
}

func TestAuditLaplaceVecSqrtFDroppedCaught(t *testing.T) {
	audit.RequireCatch(t, sqrtFMechanism(2*1.0), eps, audit.Config{N: 20000})
}

// Two releases, f₁(D) = x and f₂(D) = y, each with Laplace(Δ/ε): the pair
// is 2ε-DP by composition. Neighbours move x by +Δ and y by −Δ, both at
// their sensitivity. The statistic o₁ − o₂ is a post-processing of the pair,
// so its ε is at most 2ε — unless the same noise draw is reused for both,
// when o₁ − o₂ = x − y carries no noise at all.
func twoReleases(reuse bool) audit.Sampler {
	return func(neighbour int) float64 {
		x, y := float64(neighbour)*delta, -float64(neighbour)*delta
		if reuse {
			z := must(noise.AddLaplace(0, delta/eps))
			return (x + z) - (y + z)
		}
		return must(noise.AddLaplace(x, delta/eps)) - must(noise.AddLaplace(y, delta/eps))
	}
}

func TestAuditTwoReleasesPass(t *testing.T) {
	audit.RequirePass(t, twoReleases(false), 2*eps, audit.Config{N: 2000})
}

func TestAuditReusedNoiseDrawCaught(t *testing.T) {
	audit.RequireCatch(t, twoReleases(true), 2*eps, audit.Config{N: 2000})
}

// A "sampler" seeded with a fixed seed for every release draws the same noise
// each time: the output is a deterministic function of the data.
func TestAuditFixedSeedCaught(t *testing.T) {
	fixedSeed := func(neighbour int) float64 {
		r := rand.New(rand.NewPCG(42, 42))
		u := r.Float64() - 0.5
		z := -delta / eps * math.Copysign(math.Log(1-2*math.Abs(u)), u)
		return float64(neighbour)*delta + z
	}
	audit.RequireCatch(t, fixedSeed, eps, audit.Config{N: 1000})
}

// analyticGaussianSigma returns the smallest σ for which the Gaussian
// mechanism with ℓ₂ sensitivity Δ is (ε, δ)-DP (Balle & Wang 2018):
// Φ(Δ/2σ − εσ/Δ) − e^ε·Φ(−Δ/2σ − εσ/Δ) ≤ δ, by bisection.
func analyticGaussianSigma(sens, epsilon, d float64) float64 {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	deltaOf := func(s float64) float64 {
		return phi(sens/(2*s)-epsilon*s/sens) - math.Exp(epsilon)*phi(-sens/(2*s)-epsilon*s/sens)
	}
	lo, hi := 1e-3*sens, 1e3*sens
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if deltaOf(mid) > d {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

func TestAnalyticGaussianSigma(t *testing.T) {
	// Reference values of the analytic Gaussian mechanism (Δ = 1).
	for _, c := range []struct{ eps, delta, want float64 }{
		{1, 1e-5, 3.7306}, {1, 1e-3, 2.5747}, {0.5, 1e-5, 7.0318},
	} {
		if got := analyticGaussianSigma(1, c.eps, c.delta); math.Abs(got-c.want) > 1e-3 {
			t.Fatalf("σ(ε=%v, δ=%v) = %.5f, want %.4f", c.eps, c.delta, got, c.want)
		}
	}
}

// The Gaussian audits claim (ε, δ) = (1, 10⁻³) with σ from the tight
// (analytic) calibration, so halving σ is a clear violation; a looser
// calibration such as √(2 ln(1.25/δ))·Δ/ε leaves the halved σ too close to
// the claim to be caught at a cheap N.
const gaussDelta = 1e-3

func gaussianMechanism(sigma float64) audit.Sampler {
	return func(neighbour int) float64 {
		return must(noise.AddGaussian(float64(neighbour)*delta, sigma))
	}
}

func TestAuditGaussianPasses(t *testing.T) {
	sigma := analyticGaussianSigma(delta, eps, gaussDelta)
	audit.RequirePass(t, gaussianMechanism(sigma), eps, audit.Config{N: 100000, Delta: gaussDelta})
}

func TestAuditGaussianHalvedSigmaCaught(t *testing.T) {
	sigma := analyticGaussianSigma(delta, eps, gaussDelta)
	audit.RequireCatch(t, gaussianMechanism(sigma/2), eps, audit.Config{N: 100000, Delta: gaussDelta})
}

// Output perturbation with b of density ∝ exp(−(ε/2)‖b‖₂) is ε-DP for an ℓ₂
// sensitivity of 2. Neighbours x = 0 and x′ = (2, 0) in ℝ²; the statistic is
// the privacy loss ‖o − x′‖ − ‖o − x‖. Swapping scale and rate (θ = ε/2
// instead of 2/ε) shrinks the noise four-fold at ε = 1.
func gammaMechanism(beta float64) audit.Sampler {
	return func(neighbour int) float64 {
		b, err := noise.GammaDirectionScaled(2, beta)
		if err != nil {
			panic(err)
		}
		b[0] += 2 * float64(neighbour)
		return math.Hypot(b[0]-2, b[1]) - math.Hypot(b[0], b[1])
	}
}

func TestAuditGammaDirectionPasses(t *testing.T) {
	audit.RequirePass(t, gammaMechanism(2/eps), eps, audit.Config{N: 5000})
	// GammaDirection itself (β = 2/ε), same neighbours.
	direct := func(neighbour int) float64 {
		b, err := noise.GammaDirection(2, eps)
		if err != nil {
			panic(err)
		}
		b[0] += 2 * float64(neighbour)
		return math.Hypot(b[0]-2, b[1]) - math.Hypot(b[0], b[1])
	}
	audit.RequirePass(t, direct, eps, audit.Config{N: 5000})
}

func TestAuditGammaRateScaleSwappedCaught(t *testing.T) {
	audit.RequireCatch(t, gammaMechanism(eps/2), eps, audit.Config{N: 5000})
}
