package gauss

import (
	"fmt"
	"math"

	"github.com/dpsql/dpsql/mechanism"
)

// Default shares (docs/mechanisms/gauss.md §6). A share is the part of the
// budget — zCDP ρ for δ > 0, ε for δ = 0 — that the second-moment block
// gets at the worst-case neighbour; the class sums get the rest. The counts
// get whatever the sums and moments leave free (the "free count share",
// §4), and at least MinCountShare.
const (
	// RefMomentShare is the share at which the noise index E of lda and
	// qda is evaluated (DefaultMomentShare).
	RefMomentShare = 0.35
	// MinMomentShare and MaxMomentShare clamp the lda/qda default.
	MinMomentShare = 0.30
	MaxMomentShare = 0.65
	// DefaultMomentShareGNB is the share of gnb's per-class sums of squares.
	DefaultMomentShareGNB = 0.25
	// MinCountShare is the smallest share given to the class counts when
	// the sums and moments leave less than that free.
	MinCountShare = 0.05
	// DefaultEdgeFactor multiplies the bulk edge 2s√d of the noise
	// spectrum below which an eigenvalue of a noisy covariance is treated
	// as noise (§5).
	DefaultEdgeFactor = 1.0
)

// blockWeights are the per-block weights of the released vector: counts
// ×wc, sums ×ws, moment diagonals ×wm and off-diagonal moments ×wo
// (wo = √2·wm for δ > 0, wm for δ = 0); gnb's squares use wm.
type blockWeights struct {
	wc, ws, wm, wo float64
}

// calibration is everything Plan derives from (kind, d, shares, ε, δ).
type calibration struct {
	w blockWeights
	// Nominal shares: each block's part of the sum of the per-block
	// class-change suprema (they sum to 1).
	countShare, sumShare, momentShare float64
	// change and same are the suprema of the weighted distance (ℓ₂² for
	// Gaussian, ℓ₁ for Laplace) over class-changing and class-keeping
	// neighbours; sens is the joint sensitivity: ℓ₂ (Gaussian) or ℓ₁
	// (Laplace) of the weighted vector.
	change, same, sens float64
	// scale is σ (Gaussian) or b (Laplace) on the weighted vector.
	scale float64
	// Noise standard deviations in statistic units (counts, one sum
	// coordinate, one diagonal and one off-diagonal moment entry).
	sdCount, sdSum, sdDiag, sdOff float64
}

// gaussianSame returns sup over class-keeping neighbours of the weighted
// squared ℓ₂ distance for lda/qda with Frobenius weights (wo = √2·wm):
//
//	ws²(‖u‖² + ‖u′‖² − 2t) + wm²(‖u‖⁴ + ‖u′‖⁴ − 2t²),  t = ⟨u, u′⟩,
//
// bounded by ‖u‖², ‖u′‖² ≤ d and t ∈ [−d, d] free (§3.2).
func gaussianSame(d, ws2, wm2 float64) float64 {
	t := -ws2 / (2 * wm2)
	if t < -d {
		t = -d
	}
	return 2*d*ws2 + 2*d*d*wm2 - 2*ws2*t - 2*wm2*t*t
}

// gnbGaussianSame returns d·max_{c∈[0,2]} c²(ws² + wq²(2−c)²), the exact
// supremum for gnb over class-keeping neighbours: per coordinate the sum
// moves by a − b and the square by a² − b², c = |a − b|, |a + b| ≤ 2 − c.
func gnbGaussianSame(d, ws2, wq2 float64) float64 {
	h := func(c float64) float64 { return c * c * (ws2 + wq2*(2-c)*(2-c)) }
	best := h(2)
	if rho := ws2 / wq2; rho < 0.5 {
		// Interior local maximum: the smaller root of 2c² − 6c + 4 + ρ = 0.
		c1 := (3 - math.Sqrt(1-2*rho)) / 2
		best = math.Max(best, h(c1))
	}
	return d * best
}

// laplaceLDAChange is the relaxed supremum (§3.3) of
// vs(‖u‖₁ + ‖u′‖₁) + vm·Σ_{i≤j}|uᵢuⱼ − u′ᵢu′ⱼ| over the box (counts aside).
func laplaceLDAChange(d, vs, vm float64) float64 {
	e := math.Min(1, vs/vm)
	return vs*d + vm*(d*d+d)/2 + d*(vs*e-vm*e*e/2)
}

// laplaceSame is the relaxed supremum (§3.3) of
// vs‖u − u′‖₁ + vm·Σ_{i≤j}|uᵢuⱼ − u′ᵢu′ⱼ| (lda and qda, class kept).
func laplaceSame(d, vs, vm float64) float64 {
	kappa := vm / 2 * (1 + 1/d)
	a := d + vs/(2*kappa)
	if a > 2*d {
		a = 2 * d
	}
	return vs*a + kappa*a*(2*d-a)
}

// gnbLaplaceSame is the exact d·max_{c∈[0,2]} c(vs + vq(2−c)).
func gnbLaplaceSame(d, vs, vq float64) float64 {
	c := math.Min(2, math.Max(0, 1+vs/(2*vq)))
	return d * c * (vs + vq*(2-c))
}

// calibrate derives the weights, the joint sensitivity and the noise scale
// for a release of the given kind on d features at (ε, δ), with moment
// share pm ∈ (0, 1). Every input is public.
func calibrate(kind string, d int, pm, eps, delta float64) (calibration, error) {
	var c calibration
	df := float64(d)
	ps := 1 - pm
	if delta > 0 {
		// Squared-ℓ₂ budget: shares of r² (zCDP ρ ∝ r²). Per-block
		// class-change suprema: counts 2, sums 2d, moments 2d² (Frobenius)
		// or 2d (gnb squares, Σuᵢ⁴ ≤ d twice).
		var ws2, wm2, same float64
		ws2 = ps / (2 * df)
		if kind == KindGNB {
			wm2 = pm / (2 * df)
			same = gnbGaussianSame(df, ws2, wm2)
		} else {
			wm2 = pm / (2 * df * df)
			same = gaussianSame(df, ws2, wm2)
		}
		change := 1.0 // ps + pm: both blocks at their class-change suprema
		pc := math.Max(same-change, MinCountShare)
		c.w = blockWeights{wc: math.Sqrt(pc / 2), ws: math.Sqrt(ws2), wm: math.Sqrt(wm2)}
		c.w.wo = math.Sqrt2 * c.w.wm
		if kind == KindGNB {
			c.w.wo = 0
		}
		c.change, c.same = change+pc, same
		c.sens = math.Sqrt(math.Max(c.change, c.same))
		sigma, err := mechanism.GaussianSigma(c.sens, eps, delta)
		if err != nil {
			return c, err
		}
		c.scale = sigma
		c.sdCount, c.sdSum, c.sdDiag = sigma/c.w.wc, sigma/c.w.ws, sigma/c.w.wm
		if kind != KindGNB {
			c.sdOff = sigma / c.w.wo
		}
		c.countShare, c.sumShare, c.momentShare = pc/(1+pc), ps/(1+pc), pm/(1+pc)
		return c, nil
	}
	// ℓ₁ budget: shares of ε. Per-block class-change suprema: counts 2,
	// sums 2d, moments d(d+1)/2 (lda, one matrix), d(d+1) (qda, two
	// matrices) or 2d (gnb).
	vs := ps / (2 * df)
	var vm, change, same float64
	switch kind {
	case KindLDA:
		vm = pm / (df * (df + 1) / 2)
		change = laplaceLDAChange(df, vs, vm)
		same = laplaceSame(df, vs, vm)
	case KindQDA:
		vm = pm / (df * (df + 1))
		change = 1
		same = laplaceSame(df, vs, vm)
	case KindGNB:
		vm = pm / (2 * df)
		change = 1
		same = gnbLaplaceSame(df, vs, vm)
	default:
		return c, fmt.Errorf("unknown kind %q", kind)
	}
	pc := math.Max(same-change, MinCountShare)
	c.w = blockWeights{wc: pc / 2, ws: vs, wm: vm, wo: vm}
	if kind == KindGNB {
		c.w.wo = 0
	}
	c.change, c.same = change+pc, same
	c.sens = math.Max(c.change, c.same)
	c.scale = c.sens / eps
	// A Laplace(b) coordinate has sd √2·b.
	sd := math.Sqrt2 * c.scale
	c.sdCount, c.sdSum, c.sdDiag = sd/c.w.wc, sd/c.w.ws, sd/c.w.wm
	if kind != KindGNB {
		c.sdOff = sd / c.w.wo
	}
	c.countShare, c.sumShare, c.momentShare = pc/(1+pc), ps/(1+pc), pm/(1+pc)
	return c, nil
}

// NoiseIndex returns E = 2√d·s, the edge of the noise spectrum of a pooled
// covariance estimate on the [−1, 1] scale (s = off-diagonal noise sd of
// M̃ divided by max(n − K, 1)) when the moments get RefMomentShare. E ≫ 1
// means the noise swamps any covariance the box allows (variances ≤ 1);
// E ≪ 1 means the covariance is well estimated.
func NoiseIndex(kind string, n, d, k int, eps, delta float64) (float64, error) {
	c, err := calibrate(kind, d, RefMomentShare, eps, delta)
	if err != nil {
		return 0, err
	}
	sd := c.sdOff
	if kind == KindGNB {
		sd = c.sdDiag
	}
	return 2 * math.Sqrt(float64(d)) * sd / math.Max(float64(n-k), 1), nil
}

// DefaultMomentShare returns the public default share of the second
// moments for (kind, n, d, K, ε, δ): gnb DefaultMomentShareGNB; lda and qda
// 0.4 − 0.15·log₁₀E clamped to [MinMomentShare, MaxMomentShare], E the
// noise index (docs/mechanisms/gauss.md §6: fitted on training splits and
// synthetic data).
func DefaultMomentShare(kind string, n, d, k int, eps, delta float64) (float64, error) {
	if kind == KindGNB {
		return DefaultMomentShareGNB, nil
	}
	e, err := NoiseIndex(kind, n, d, k, eps, delta)
	if err != nil {
		return 0, err
	}
	return math.Min(MaxMomentShare, math.Max(MinMomentShare, 0.4-0.15*math.Log10(e))), nil
}
