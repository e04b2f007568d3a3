package linreg

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/agg"
	"github.com/dpsql/dpsql/noise"
)

// Private data-adaptive clipping (docs/mechanisms/linreg.md §11).
//
// Owners declare boxes from extremes, so most rows sit deep inside them and
// the unit-ball scaling leaves the statistics far below the noise. With
// bounds=private a public share of ε buys two DP quantiles (report-noisy-
// max, agg.Quantile): the NormQuantile-level quantile C of the row norm
// ‖z‖ of the box-scaled features z ∈ [−1, 1]^d, and the LabelQuantile-level
// quantile C_y of |y′| for the scaled label y′ ∈ [−1, 1] (centred at the
// declared midpoint: a private median was tried and dropped — at small n·ε
// its noise moved the point every coefficient shrinks to, linreg.md §11).
// Each row is then mapped to x = (√d·clip_C(z)/C, 1)/√F (still ‖x‖ ≤ 1)
// and y″ = clip(y′/C_y, −1, 1), and AdaSSP runs unchanged on (x, y″) with
// the rest of the budget: its sensitivities only use ‖x‖ ≤ 1 and
// |y″| ≤ 1, which hold for every row whatever C, C_y are. The released
// C, C_y are part of the model; the weights are folded back to the public
// scaling so that DP_PREDICT needs nothing new.

// Bounds modes of Config.Bounds.
const (
	BoundsAuto    = ""        // the public default rule (UsePrivateBounds)
	BoundsPublic  = "public"  // scale by the declared boxes only
	BoundsPrivate = "private" // private clipping radii, charged
)

// Public constants of the private clipping.
const (
	// ScaleShare is the share of ε spent on the two quantiles (the rest,
	// with all of δ, goes to AdaSSP).
	ScaleShare = 0.1
	// NormShare and RadiusShare split ScaleShare·ε between the
	// feature-norm quantile and the label radius.
	NormShare, RadiusShare = 0.5, 0.5
	// NormQuantile and LabelQuantile are the quantile levels of C and C_y:
	// of {0.5, 0.75, 0.9} × {0.8, 0.9} (and ScaleShare ∈ {0.05, 0.1}),
	// 0.75 / 0.9 at 10 % was best or within 2 % of best in most cells and
	// never more than 1 % above the non-private RMSE at n = 10⁵, d = 10
	// (0.5 clips too much there: +1.8 %); TestTunePrivateBounds.
	NormQuantile  = 0.75
	LabelQuantile = 0.9
	// NormTail and LabelTail shrink the clipped fractions as n·ε grows
	// (NormLevel, LabelLevel): 1 − level = min(1 − NormQuantile,
	// NormTail/√(n·ε)), so the levels above hold up to n·ε = 10⁴, where
	// they were tuned, and clipping bias fades where the noise it saves is
	// small anyway (heavy-tailed columns at large n·ε lost up to 20 % of the
	// slope at 0.75).
	NormTail  = 25
	LabelTail = 10
	// MinPrivateNEps is the n·ε from which bounds=auto clips privately.
	MinPrivateNEps = 1000
	// Octaves is the span of the geometric radius grids: radii from
	// 2^−Octaves of the largest possible value up to it.
	Octaves = 12
	// StepsPerOctave sets the grid resolution (2^(1/32) ≈ 2.2 % steps).
	StepsPerOctave = 32
	// shrink keeps the computed rescaled rows inside the unit ball: the
	// rescale's rounding (relative (d + 10)·2⁻⁵³ ≤ 2⁻⁴³ for d ≤ MaxFeatures)
	// is far below it.
	shrink = 1 - 0x1p-40
)

// NormLevel is the public quantile level of the feature-norm radius for n
// rows at ε: NormQuantile up to n·ε = (NormTail/(1 − NormQuantile))², then
// 1 − NormTail/√(n·ε).
func NormLevel(n int, eps float64) float64 {
	return 1 - math.Min(1-NormQuantile, NormTail/math.Sqrt(float64(n)*eps))
}

// LabelLevel is LabelQuantile's counterpart of NormLevel.
func LabelLevel(n int, eps float64) float64 {
	return 1 - math.Min(1-LabelQuantile, LabelTail/math.Sqrt(float64(n)*eps))
}

// UsePrivateBounds is the public default rule of bounds=auto: private
// clipping when n·ε ≥ MinPrivateNEps (and every quantile's ε is within the
// Laplace sampler's range). The report-noisy-max rank error of a quantile
// scales as 1/ε_q, so the quantiles are informative when n·ε is large; on
// synthetic data (d ∈ {10, 50}, n ∈ {10³, 10⁴, 10⁵}, ε ∈ {0.1, 0.3, 1, 10})
// and the diabetes training split, private clipping lost to the declared
// boxes in every cell with n·ε ≤ 300 and won or tied in all but one cell
// with n·ε ≥ 1000 (TestTunePrivateBounds, linreg.md §11).
func UsePrivateBounds(n int, eps float64) bool {
	if float64(n)*eps < MinPrivateNEps {
		return false
	}
	return ScaleShare*min(NormShare, RadiusShare)*eps >= noise.LaplaceMinEpsilon(1)
}

// ClipRule describes the plan's scaling in words (dry_run).
func (t *Trainer) ClipRule() string {
	if t.meanOnly {
		return fmt.Sprintf("intercept-only model: the DP mean of the label on its declared bounds (eps %.4g, Laplace); no slope (n*eps < %g)", t.centre.Epsilon, MeanOnlyNEps)
	}
	if t.centre != nil {
		return fmt.Sprintf("features scaled by the declared boxes to the unit ball; label centred at its DP mean (eps %.4g, Laplace) on the declared bounds and clipped to the declared half-width around it; AdaSSP on the rest (eps %.4g)",
			t.centre.Epsilon, t.params["epsilon_ssp"])
	}
	if t.priv == nil {
		return "features scaled by the declared boxes to the unit ball, label by its declared bounds"
	}
	rule := ""
	if t.priv.box != nil {
		rule = fmt.Sprintf("per-feature private box: each feature clipped to [DP %.3g-quantile, DP %.3g-quantile] on a public grid in its declared bounds (eps %.4g each, %d quantiles) and mapped to [-1,1]; ",
			t.priv.box.tail, 1-t.priv.box.tail, t.priv.box.eps, 2*t.priv.d)
	}
	rule += fmt.Sprintf("private: feature rows (box-scaled to [-1,1]^d) norm-clipped to C = DP %.2f-quantile of the row norm (eps %.4g), "+
		"label (box-scaled to [-1,1] around the declared midpoint) clipped to radius C_y = DP %.2f-quantile of |y| (eps %.4g); ",
		t.priv.norm.Q, t.priv.epsNorm, t.priv.radius.Q, t.priv.epsRad)
	if t.pre != nil {
		rule += fmt.Sprintf("features preconditioned by a private first-stage covariance (ratio %.4g, flattens its spikes); ", t.pre.ratio)
	}
	if t.ref != nil {
		rule += fmt.Sprintf("then %d noisy gradient steps on the residuals clipped to %g (ratio %.4g in all) preconditioned by the released XᵀX; ", t.ref.steps, t.ref.tau, t.ref.totalRatio)
	}
	if t.params["joint_zcdp"] == 1 {
		return rule + fmt.Sprintf("quantiles and AdaSSP accounted as one zCDP event of ratio %.4g (AdaSSP ratio %.4g)", t.params["gaussian_ratio_total"], t.params["gaussian_ratio"])
	}
	return rule + fmt.Sprintf("AdaSSP on the rest (eps %.4g)", t.params["epsilon_ssp"])
}

// radiusGrid is the number of points of a geometric radius grid.
func radiusGrid() int { return Octaves*StepsPerOctave + 1 }

// privScale is the plan of the two quantile releases.
type privScale struct {
	d                        int
	box                      *boxPlan // nil: no per-feature box (§13)
	boxShare                 float64  // BoxShare (tests vary it)
	norm, radius             *agg.Quantile
	epsNorm, epsRad          float64
	maxNormLog, maxRadiusLog float64
}

func planPrivScale(eps float64, d int, share, qNorm, qLabel float64) (*privScale, error) {
	p := &privScale{d: d}
	s := share * eps
	p.epsNorm = NormShare * s
	p.epsRad = s - p.epsNorm
	k := radiusGrid()
	// ‖z‖ ≤ √d; |y′| ≤ 1. The grids are on log₂ of the value.
	p.maxNormLog = 0.5 * math.Log2(float64(d))
	p.maxRadiusLog = 0
	var err error
	if p.norm, err = agg.NewQuantile(p.maxNormLog-Octaves, p.maxNormLog, qNorm, p.epsNorm, k); err != nil {
		return nil, fmt.Errorf("feature-norm quantile: %w", err)
	}
	if p.radius, err = agg.NewQuantile(p.maxRadiusLog-Octaves, p.maxRadiusLog, qLabel, p.epsRad, k); err != nil {
		return nil, fmt.Errorf("label-radius quantile: %w", err)
	}
	return p, nil
}

// jointGaussian plans AdaSSP for a release accounted as ONE zCDP event:
// each quantile is ε_q-DP, hence ε_q²/2-zCDP (Bun & Steinke 2016,
// Prop. 1.4), and zCDP composes additively, so quantiles plus the Gaussian
// stage of ratio r are ½(r² + ε_C² + ε_y²)-zCDP — a Gaussian event of ratio
// R = √(r² + ε_C² + ε_y²), converted to (ε, δ) by the accountant's CKS
// conversion, which holds for any zCDP mechanism. r is set so that R is
// the unit ratio of (ε, δ); ok is false when the quantiles alone use it up.
//
// With the per-feature box (§13) its 2d quantiles, each ε_b-DP, add
// 2d·ε_b²/2 = BoxShare·R²/2; epsBox is that ε_b (0 without the box).
func (p *privScale) jointGaussian(eps, delta float64, n, f int, dep float64) (g gaussPlan, ev budget.Event, epsBox float64, ok bool) {
	unit, err := mechanism.GaussianSigma(1, eps, delta)
	if err != nil {
		return gaussPlan{}, budget.Event{}, 0, false
	}
	total := 1 / unit
	rest := total*total - p.epsNorm*p.epsNorm - p.epsRad*p.epsRad
	if p.box != nil {
		epsBox = total * math.Sqrt(p.boxShare/float64(2*p.d))
		rest -= float64(2*p.d) * epsBox * epsBox
	}
	if !(rest > 0) {
		return gaussPlan{}, budget.Event{}, 0, false
	}
	// Rounded down so that r² + ε_C² + ε_y² (+ 2d·ε_b²) ≤ R² holds in
	// floating point.
	r := math.Sqrt(rest) * (1 - 1e-12)
	g, err = planGaussianRatio(r, eps, delta, n, f, dep, Kappa)
	if err != nil {
		return gaussPlan{}, budget.Event{}, 0, false
	}
	return g, mechanism.GaussianEvent(total, 1, eps, delta), epsBox, true
}

func (p *privScale) events() []budget.Event {
	ev := []budget.Event{p.norm.Event(), p.radius.Event()}
	if p.box != nil {
		ev = append(ev, p.box.events()...)
	}
	return ev
}

// privClip is the released clipping: the feature-norm radius C and the
// label radius C_y (on the box-scaled [−1, 1] coordinates).
type privClip struct {
	d         int
	c, cy     float64
	sqrtD     float64
	featScale float64 // √d·shrink
	// m is the preconditioner (d×d, row-major; nil: none, §12), chosen
	// from the first-stage release.
	m []float64
	// box is the released per-feature box (§13) as the Scaler that maps
	// raw rows, and prep its precomputed form; nil: the declared boxes.
	box  *mechanism.Scaler
	prep *mechanism.Prepared
	// identity leaves the features as the declared boxes map them and
	// centre is the released label centre m̃ (§14): y″ = clip((y′ − m̃)/C_y,
	// −1, 1). Without §14 centre is 0 (the declared midpoint).
	identity bool
	centre   float64
}

// withBox records the released box: every later pass maps rows with it.
func (p *privClip) withBox(s mechanism.Scaler) {
	pr := s.Prepare()
	p.box, p.prep = &s, &pr
}

func newPrivClip(d int, c, cy float64) *privClip {
	return &privClip{d: d, c: c, cy: cy, sqrtD: math.Sqrt(float64(d)), featScale: math.Sqrt(float64(d)) * shrink}
}

// apply maps one scaled row in place: row holds z·inv (Prepared.Transform)
// with the intercept inv last; y is the scaled label y′. The features are
// multiplied by √d·min(1/C, 1/‖z‖)·shrink, so their norm is at most
// √d·inv and ‖row‖ ≤ 1 as before; the label becomes clip(y′/C_y, −1, 1).
func (p *privClip) apply(row []float64, y float64) float64 {
	if p.identity {
		return mechanism.Clip((y-p.centre)/p.cy, -1, 1)
	}
	inv := row[len(row)-1]
	var s float64
	for _, v := range row[:p.d] {
		s += v * v
	}
	g := 1 / p.c
	if nz := math.Sqrt(s) / inv; nz > p.c {
		g = 1 / nz
	}
	g *= p.featScale
	for j := range row[:p.d] {
		row[j] *= g
	}
	if p.m != nil {
		p.precondition(row[:p.d], inv)
	}
	return mechanism.Clip(y/p.cy, -1, 1)
}

// precondition maps the feature block u ↦ M u in place and clips its norm
// to √d·inv (times shrink), the bound the block had before: ‖row‖ ≤ 1
// still holds whatever M is (the norm's rounding, ≤ (d + 5)·2⁻⁵³ relative,
// is far below shrink's 2⁻⁴⁰ for d ≤ MaxFeatures).
func (p *privClip) precondition(u []float64, inv float64) {
	d := p.d
	v := make([]float64, d)
	var s float64
	uv := blas64.Vector{N: d, Inc: 1, Data: u}
	for j := range v {
		// Any summation order: the norm clip below uses the computed v.
		r := blas64.Dot(blas64.Vector{N: d, Inc: 1, Data: p.m[j*d : (j+1)*d]}, uv)
		v[j] = r
		s += r * r
	}
	if math.IsInf(s, 0) || math.IsNaN(s) {
		// Unreachable for a finite M from preconditioner (entries are
		// bounded); kept so that a row can never leave the ball.
		clear(u)
		return
	}
	g := shrink
	if bound := p.sqrtD * inv; math.Sqrt(s) > bound {
		g *= bound / math.Sqrt(s)
	}
	for j := range u {
		u[j] = v[j] * g
	}
}

// fold maps weights θ trained on (x, y″) back to the public scaling
// x_pub = (z, 1)/√F, y′: for rows inside the radius (no clipping) the
// prediction y′ = C_y·θᵀx equals θ_pubᵀx_pub with θ_pub_j = C_y·θ_j·√d/C
// and θ_pub_F = C_y·θ_F. A function of released values only.
func (p *privClip) fold(theta []float64) []float64 {
	f := len(theta)
	if p.m != nil {
		// θ̃ᵀ(M x) = (Mᵀθ̃)ᵀx; M is symmetric.
		pre := make([]float64, f)
		for j := 0; j < p.d; j++ {
			for k := 0; k < p.d; k++ {
				pre[j] += p.m[k*p.d+j] * theta[k]
			}
		}
		pre[f-1] = theta[f-1]
		theta = pre
	}
	out := make([]float64, f)
	if p.identity {
		// §14: y′ = m̃ + C_y·θᵀx, and x_F = 1/√F.
		for j := 0; j < p.d; j++ {
			out[j] = p.cy * theta[j]
		}
		out[f-1] = p.cy*theta[f-1] + p.centre*math.Sqrt(float64(f))
		return out
	}
	for j := 0; j < p.d; j++ {
		out[j] = p.cy * theta[j] * p.sqrtD / p.c
	}
	out[f-1] = p.cy * theta[f-1]
	return out
}

// releaseClip runs the box release (§13, if planned) and then the two
// quantile releases on the rows mapped by the released box (one pass
// each). Degenerate answers cannot occur as
// errors: the grids' smallest radius 2^−Octaves·max is positive, and the
// quantile errs only on n = 0, excluded by Plan (n ≥ 1).
func (t *Trainer) releaseClip(X [][]float64, y []float64) (*privClip, error) {
	p := t.priv
	d := len(t.cfg.Features)
	prep := &t.prep
	var box *mechanism.Scaler
	if p.box != nil {
		s, err := p.box.release(X)
		if err != nil {
			return nil, fmt.Errorf("linreg: %w", err)
		}
		box = &s
		pr := s.Prepare()
		prep = &pr
	}
	row := make([]float64, t.f)
	na := p.norm.Accumulator()
	ra := p.radius.Accumulator()
	for i, x := range X {
		prep.Transform(row, x)
		inv := row[t.f-1]
		var s float64
		for _, v := range row[:d] {
			s += v * v
		}
		na.Add(math.Log2(math.Sqrt(s) / inv)) // log₂ 0 = −Inf: clipped to the grid's low end
		ra.Add(math.Log2(math.Abs(labelUnit(y[i], t.cfg.LabelLo, t.cfg.LabelHi))))
	}
	cLog, err := na.Release()
	if err != nil {
		return nil, fmt.Errorf("linreg: feature-norm quantile: %w", err)
	}
	cyLog, err := ra.Release()
	if err != nil {
		return nil, fmt.Errorf("linreg: label-radius quantile: %w", err)
	}
	clip := newPrivClip(d, math.Exp2(cLog), math.Exp2(cyLog))
	if box != nil {
		clip.withBox(*box)
	}
	return clip, nil
}
