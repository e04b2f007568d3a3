package linreg

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Private label centre (docs/mechanisms/linreg.md §14; issue 11: "never
// worse than the mean predictor").
//
// With the declared boxes (small n·ε) AdaSSP's noise floor shrinks every
// coefficient, the intercept included, towards 0: the model tends to the
// label MIDPOINT of the declared bounds, which is not the mean when the
// labels sit off-centre in their box (diabetes, Boston: 0.2 half-widths).
// The intercept read off the noisy Xᵀy is no help there (its Gaussian
// noise, √F·σ_c/n, is a whole half-width at n·ε ≈ 40). A scalar Laplace
// release is far cheaper than the Gaussian at small ε: bounds=centre spends
// CentreShare·ε on DP_MEAN of the scaled label y′ ∈ [−1, 1]
// (mechanism.Mean, sensitivity 2/n with SumSlack), centres every label at
// the released m̃ and rescales it by s = 1 + |m̃| (so no label is clipped:
// y′ − m̃ ∈ [−1 − m̃, 1 − m̃]), and runs AdaSSP unchanged on
// y″ = clip((y′ − m̃)/s, −1, 1) at ε − CentreShare·ε. Every |y″| ≤ 1 whatever
// m̃ is, so §3's sensitivities hold for every fixed m̃ and the releases
// compose sequentially (adaptively). The model then shrinks to m̃, a DP
// estimate of the mean predictor.

// BoundsCentre is the Config.Bounds mode of §14: declared feature boxes,
// label centred at a private mean. BoundsMean is the intercept-only model:
// the DP mean of the label with all of ε, no slope.
const (
	BoundsCentre = "centre"
	BoundsMean   = "mean"
)

// Public constants of the label centre (§14).
const (
	// CentreShare is the share of ε spent on the label mean.
	CentreShare = 0.25
	// CentreNEps caps the centre's n·ε_m: ε_m = min(CentreShare·ε,
	// CentreNEps/n), so the centre's noise is at most
	// 2√2/CentreNEps ≈ 0.04 half-widths and costs less of ε as n·ε grows.
	CentreNEps = 75.0
	// MeanOnlyNEps is the n·ε below which bounds=auto releases the
	// intercept-only model (δ > 0). With δ = 0 (Laplace AdaSSP, noisier)
	// it is MinPrivateNEps: the centred Laplace AdaSSP at n·ε ∈ [300, 1000)
	// was up to 1.2× the mean predictor and never more than 7 % better.
	MeanOnlyNEps = 300.0
)

// useMeanOnly is §14's public rule for the intercept-only model; minNEps
// is MeanOnlyNEps (tests vary it; 0 turns the rule off).
func useMeanOnly(n int, eps, delta, minNEps float64) bool {
	if delta == 0 && minNEps > 0 {
		minNEps = math.Max(minNEps, MinPrivateNEps)
	}
	return float64(n)*eps < minNEps && eps >= noise.LaplaceMinEpsilon(1)
}

// UseCentre is the public rule of bounds=auto below UsePrivateBounds'
// n·ε: the label centre whenever its share of ε is within the Laplace
// sampler's range (it is planned wherever the declared boxes are used by
// default).
func UseCentre(n int, eps float64) bool {
	return centreShare(n, eps, CentreShare, CentreNEps)*eps >= noise.LaplaceMinEpsilon(1)
}

// centreShare is the public share of ε spent on the centre (§14).
func centreShare(n int, eps, share, capNEps float64) float64 {
	return math.Min(share, capNEps/(float64(n)*eps))
}

// planCentre plans the label-mean release at ε_m = share·ε over n rows.
func planCentre(eps float64, n int, share float64) (*mechanism.Mean, error) {
	m, err := mechanism.NewMean(-1, 1, share*eps, int64(n))
	if err != nil {
		return nil, fmt.Errorf("linreg: label centre: %w", err)
	}
	return m, nil
}

// centreEvent is the accountant's record of the label-mean release.
func (t *Trainer) centreEvent() budget.Event { return t.centre.Event() }

// releaseCentre releases m̃ = DP_MEAN of y′ (NULL ↦ 0, the midpoint) and
// returns the row map of §14: features as the declared boxes map them, labels
// centred at m̃ and divided by 1 + |m̃|.
func (t *Trainer) releaseCentre(y []float64) (*privClip, error) {
	acc := t.centre.Accumulator()
	for _, v := range y {
		acc.Add(labelUnit(v, t.cfg.LabelLo, t.cfg.LabelHi))
	}
	m, err := acc.Release()
	if err != nil {
		return nil, fmt.Errorf("linreg: label centre: %w", err)
	}
	return newCentreClip(len(t.cfg.Features), m, t.centreRescale), nil
}

// newCentreClip is the row map of a released centre m ∈ [−1, 1]: labels
// y″ = clip(y′ − m, −1, 1), or (rescale) (y′ − m)/(1 + |m|).
func newCentreClip(d int, m float64, rescale bool) *privClip {
	cy := 1.0
	if rescale {
		cy = 1 + math.Abs(m)
	}
	return &privClip{d: d, c: 1, cy: cy, centre: m, identity: true, sqrtD: math.Sqrt(float64(d)), featScale: 1}
}

// estimateCentred is §14's post-processing for private-bounds plans: ridge
// regression with an UNPENALISED intercept. AdaSSP's eigenvalue floor
// shrinks every direction of XᵀX̂, the intercept's included, towards 0 — the
// label midpoint of the declared bounds — and with private radii the
// features are rescaled up while the intercept column stays 1/√F, so at
// n/F ≲ E the intercept is shrunk most and a label mean off the midpoint
// is lost (measured: 1.3–1.7× the mean predictor's RMSE at n·ε = 1000,
// d = 20). Here the noisy means x̄ = A_{·F}/(n·v), ȳ = c_F/(n·v) (v = x_F)
// are read off the released statistics, ȳ is shrunk towards 0 by the
// positive-part factor 1 − s²/ȳ² with s² its public noise variance, the
// feature block is centred (A_ff − n·x̄x̄ᵀ, c_f − n·x̄ȳ) and solved with
// λ and the floor as before, and θ_F = (ȳ − θ_fᵀx̄)/v. Every input is a
// released value or public: post-processing, no privacy cost.
func (t *Trainer) estimateCentred(r noisy) ([]float64, float64) {
	lambda := t.ridge(r.q)
	f, d := t.f, t.f-1
	n := float64(t.cfg.N)
	inv := 1 / math.Sqrt(float64(f))
	nv := n * inv
	var noiseC float64
	if t.gauss != nil {
		noiseC = t.gauss.sigmaC
	} else {
		noiseC = math.Sqrt2 * t.lap.scaleC
	}
	xbar := make([]float64, d)
	var xx float64
	for j := range xbar {
		xbar[j] = r.a.At(j, d) / nv
		xx += xbar[j] * xbar[j]
	}
	// x̄'s coordinates carry noise of variance s_x² = σ_A²/2/(n·v)² (Laplace:
	// 2b_A²/(n·v)²); a noisy x̄ would put n·x̄x̄ᵀ-sized noise into the centred
	// block, so it is shrunk James–Stein-wise, by 1 − max(d − 2, 1)·s_x²/‖x̄‖².
	var noiseA float64
	if t.gauss != nil {
		noiseA = t.gauss.sigmaA / math.Sqrt2
	} else {
		noiseA = math.Sqrt2 * t.lap.scaleA
	}
	if sx2 := (noiseA / nv) * (noiseA / nv); xx > 0 {
		g := math.Max(0, 1-math.Max(float64(d-2), 1)*sx2/xx)
		for j := range xbar {
			xbar[j] *= g
		}
	}
	ybar := r.c[d] / nv
	if s2 := (noiseC / nv) * (noiseC / nv); ybar*ybar > 0 {
		ybar *= math.Max(0, 1-s2/(ybar*ybar))
	}
	m := mat.NewSymDense(d, nil)
	cc := make([]float64, d)
	for j := 0; j < d; j++ {
		for k := j; k < d; k++ {
			m.SetSym(j, k, r.a.At(j, k)-n*xbar[j]*xbar[k])
		}
		m.SetSym(j, j, m.At(j, j)+lambda)
		cc[j] = r.c[j] - n*xbar[j]*ybar
	}
	thf := solveFloor(m, cc, t.floor*t.noiseNorm)
	theta := append(thf, 0)
	b := ybar
	for j, v := range thf {
		b -= v * xbar[j]
	}
	theta[d] = b / inv
	if math.IsNaN(theta[d]) || math.IsInf(theta[d], 0) {
		return make([]float64, f), lambda
	}
	return theta, lambda
}
