package linreg

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Config describes one private linear regression. Every field is public: it
// comes from the SQL call or the catalog, never from the rows.
type Config struct {
	Epsilon float64 // ε > 0
	// Delta is δ: 0 gives pure ε (Laplace releases), δ ∈ (0, 1) the
	// discrete Gaussian releases calibrated jointly.
	Delta float64
	N     int // public row count n ≥ 1
	// Features names the feature columns; Lo and Hi are their public
	// catalog bounds, in the same order. Label and [LabelLo, LabelHi]
	// describe the regression target.
	Features         []string
	Lo, Hi           []float64
	Label            string
	LabelLo, LabelHi float64
	// Bounds is BoundsPublic (scale by the declared boxes), BoundsPrivate
	// (private clipping radii, charged ScaleShare·ε), BoundsBox (a private
	// per-feature box first, §13) or BoundsAuto, the public rules
	// UsePrivateBounds(N, Epsilon) and then UseBox(N, d, Epsilon, Delta).
	Bounds string
	// CentreEpsilon is the ε of §14's label centre when Bounds is
	// BoundsCentre; 0 = the public rule min(CentreShare·ε, CentreNEps/n).
	// Plan records the value it used (Config), so that a re-plan for
	// another n (rows written meanwhile) keeps the reserved events.
	CentreEpsilon float64
	// AnyOrderSums plans for statistics summed by a backend in an order it
	// chooses (mysqlstore's fast DOUBLE statement, TrainSums): the
	// rounding allowance then covers any summation tree over n rows,
	// γ_{n+8} instead of the embedded path's blocked depth (anyOrderDepth).
	AnyOrderSums bool
}

// Trainer is a validated plan: every noise scale and the privacy cost,
// computed from public values only. Plan builds it, Train consumes it.
type Trainer struct {
	cfg     Config
	scaler  mechanism.Scaler
	prep    mechanism.Prepared
	f       int
	workers int // fixed at plan time: it enters the rounding bound
	gauss   *gaussPlan
	lap     *laplacePlan
	// noiseNorm is E, the (1 − ρ)-probability bound on ‖noise of XᵀX̂‖₂;
	// margin is the one-sided (1 − ρ) bound on the λ-statistic's noise.
	noiseNorm, margin float64
	floor             float64 // FloorFactor (tests vary it)
	ridgeFactor       float64 // RidgeFactor (tests vary it)
	events            []budget.Event
	params            map[string]float64
	priv              *privScale      // nil: public bounds
	centre            *mechanism.Mean // the label-mean release of §14; nil: none
	meanOnly          bool            // §14: the intercept-only model (no AdaSSP)
	centreRescale     bool            // §14 variant: y″ = (y′ − m̃)/(1 + |m̃|) instead of clip(y′ − m̃)
	centredSolve      bool            // §14: unpenalised intercept from the release (private bounds)
	pre               *precondPlan    // nil: no preconditioning (§12)
	ref               *refinePlan     // nil: no gradient refinement (§15)
}

// ErrRowCountChanged reports a scan whose row count differs from the plan.
var ErrRowCountChanged = errors.New("row count changed")

// Plan validates cfg and calibrates the release. Its errors depend only on
// cfg.
func Plan(cfg Config) (*Trainer, error) {
	return plan(cfg, boxOpts{BoxShare, BoxShareBasic, BoxTail, BoxRankC, BoxPenalty, BoxMargin, CentreShare, CentreNEps, MeanOnlyNEps, false, false})
}

// boxOpts are §13's constants and §14's share (tests vary them).
type boxOpts struct {
	share, shareBasic, tail, rankC, penalty, margin float64
	centre                                          float64 // §14's CentreShare
	centreNEps                                      float64 // §14's CentreNEps
	meanNEps                                        float64 // §14's MeanOnlyNEps
	centreRescale                                   bool    // §14: rescale by 1 + |m̃| instead of clipping
	noCentredSolve                                  bool    // §14: keep the penalised intercept with private bounds
}

func plan(cfg Config, bo boxOpts) (*Trainer, error) {
	if !(cfg.Epsilon > 0) || math.IsInf(cfg.Epsilon, 0) {
		return nil, fmt.Errorf("linreg: epsilon must be positive and finite, got %v", cfg.Epsilon)
	}
	if !(cfg.Delta >= 0 && cfg.Delta < 1) {
		return nil, fmt.Errorf("linreg: delta must be in [0, 1), got %v", cfg.Delta)
	}
	if cfg.N < 1 {
		return nil, fmt.Errorf("linreg: row count n must be at least 1, got %d", cfg.N)
	}
	d := len(cfg.Features)
	if d == 0 {
		return nil, fmt.Errorf("linreg: no feature columns")
	}
	if d > MaxFeatures {
		return nil, fmt.Errorf("linreg: %d features exceed the limit of %d", d, MaxFeatures)
	}
	if len(cfg.Lo) != d || len(cfg.Hi) != d {
		return nil, fmt.Errorf("linreg: %d features need %d lower and upper bounds, got %d and %d (every feature needs declared bounds)", d, d, len(cfg.Lo), len(cfg.Hi))
	}
	if math.IsNaN(cfg.LabelLo) || math.IsNaN(cfg.LabelHi) || math.IsInf(cfg.LabelLo, 0) || math.IsInf(cfg.LabelHi, 0) || !(cfg.LabelLo < cfg.LabelHi) {
		return nil, fmt.Errorf("linreg: label bounds must be finite with lower < upper, got [%v, %v]", cfg.LabelLo, cfg.LabelHi)
	}
	scaler, err := mechanism.NewScaler(cfg.Lo, cfg.Hi, true)
	if err != nil {
		return nil, fmt.Errorf("linreg: %w", err)
	}
	cfg.Features = append([]string(nil), cfg.Features...)
	cfg.Lo = append([]float64(nil), cfg.Lo...)
	cfg.Hi = append([]float64(nil), cfg.Hi...)
	switch cfg.Bounds {
	case BoundsAuto:
		cfg.Bounds = BoundsPublic
		switch {
		case useMeanOnly(cfg.N, cfg.Epsilon, cfg.Delta, bo.meanNEps):
			// §14: at small n·ε the intercept-only model (a DP mean of
			// the label with all of ε) beats AdaSSP's noisy slope.
			cfg.Bounds = BoundsMean
		case bo.centre > 0 && UseCentre(cfg.N, cfg.Epsilon):
			// §14: below the private clipping's n·ε the declared boxes
			// are kept and the label is centred at a DP mean.
			cfg.Bounds = BoundsCentre
		}
		if UsePrivateBounds(cfg.N, cfg.Epsilon) {
			cfg.Bounds = BoundsPrivate
			// §13: the per-feature box first where its quantiles are
			// informative (public: n, d, ε, δ).
			if UseBox(cfg.N, d, cfg.Epsilon, cfg.Delta) {
				cfg.Bounds = BoundsBox
			}
		}
	case BoundsPublic, BoundsPrivate, BoundsBox, BoundsCentre, BoundsMean:
	default:
		return nil, fmt.Errorf("linreg: bounds must be %q, %q, %q, %q or %q, got %q", BoundsPublic, BoundsPrivate, BoundsBox, BoundsCentre, BoundsMean, cfg.Bounds)
	}
	t := &Trainer{cfg: cfg, scaler: scaler, prep: scaler.Prepare(), f: scaler.Dim(), workers: max(runtime.GOMAXPROCS(0), 1), floor: FloorFactor, ridgeFactor: RidgeFactor}
	f := float64(t.f)
	tail := math.Sqrt(2 * math.Log(1/Failure))
	t.params = map[string]float64{"epsilon": cfg.Epsilon, "delta": cfg.Delta, "n": float64(cfg.N), "features": f}
	// epsSSP is the ε of the AdaSSP releases: all of it with public bounds,
	// the rest after the two quantiles with private bounds (basic
	// composition: the events' ε add up to cfg.Epsilon; §11 may replace
	// all of them by one zCDP event).
	epsSSP := cfg.Epsilon
	if cfg.Bounds == BoundsPrivate || cfg.Bounds == BoundsBox {
		normQ, labelQ := NormLevel(cfg.N, cfg.Epsilon), LabelLevel(cfg.N, cfg.Epsilon)
		if t.priv, err = planPrivScale(cfg.Epsilon, d, ScaleShare, normQ, labelQ); err != nil {
			return nil, fmt.Errorf("linreg: private bounds: %w", err)
		}
		epsSSP = cfg.Epsilon - t.priv.epsNorm - t.priv.epsRad
		if cfg.Bounds == BoundsBox {
			// §13: 2d box quantiles first; under basic composition they
			// take BoxShareBasic·ε (the joint branch below re-plans them).
			eb := bo.shareBasic * cfg.Epsilon / float64(2*d)
			if t.priv.box, err = planBox(eb, BoxLevel(cfg.N, eb, bo.tail, bo.rankC), bo.penalty, cfg.Lo, cfg.Hi); err != nil {
				return nil, fmt.Errorf("linreg: private box: %w", err)
			}
			t.priv.box.margin = bo.margin
			t.priv.boxShare = bo.share
			epsSSP -= bo.shareBasic * cfg.Epsilon
			t.params["private_box"] = 1
			t.params["epsilon_box_quantile"] = t.priv.box.eps
			t.params["box_tail"] = t.priv.box.tail
		}
		t.events = t.priv.events()
		t.params["private_bounds"] = 1
		if !bo.noCentredSolve && cfg.Delta > 0 {
			// §14: the intercept is solved unpenalised (post-processing;
			// its shrinkage of the noisy means assumes Gaussian noise —
			// with δ = 0's Laplace tails it was unstable).
			t.centredSolve = true
			t.params["unpenalised_intercept"] = 1
		}
		t.params["epsilon_norm_quantile"], t.params["epsilon_label_radius"] = t.priv.epsNorm, t.priv.epsRad
		t.params["norm_quantile_level"], t.params["label_quantile_level"] = normQ, labelQ
		t.params["epsilon_ssp"] = epsSSP
	} else {
		t.params["private_bounds"] = 0
	}
	if cfg.Bounds == BoundsMean {
		// §14: the intercept-only model, all of ε on the label mean.
		if t.centre, err = planCentre(cfg.Epsilon, cfg.N, 1); err != nil {
			return nil, err
		}
		t.meanOnly = true
		t.events = []budget.Event{t.centreEvent()}
		t.params["label_centre"], t.params["intercept_only"] = 1, 1
		t.params["epsilon_label_centre"] = t.centre.Epsilon
		return t, nil
	}
	if cfg.Bounds == BoundsCentre {
		// §14: ε_m = CentreShare·ε on the label mean, the rest to AdaSSP
		// (basic composition: one Laplace event, then AdaSSP's).
		em := cfg.CentreEpsilon
		if em == 0 {
			em = centreShare(cfg.N, cfg.Epsilon, bo.centre, bo.centreNEps) * cfg.Epsilon
		}
		if !(em > 0 && em < cfg.Epsilon) {
			return nil, fmt.Errorf("linreg: the label centre's epsilon must be in (0, %v), got %v", cfg.Epsilon, em)
		}
		if t.centre, err = planCentre(em, cfg.N, 1); err != nil {
			return nil, err
		}
		t.cfg.CentreEpsilon = em
		t.centreRescale = bo.centreRescale
		epsSSP = cfg.Epsilon - t.centre.Epsilon
		t.events = []budget.Event{t.centreEvent()}
		t.params["label_centre"] = 1
		t.params["epsilon_label_centre"] = t.centre.Epsilon
		t.params["epsilon_ssp"] = epsSSP
	}
	if cfg.Delta > 0 {
		g, err := planGaussian(epsSSP, cfg.Delta, cfg.N, t.f, t.depth(), Kappa)
		if err != nil {
			return nil, fmt.Errorf("linreg: %w", err)
		}
		if t.priv != nil {
			// §11: the quantiles are also ε_q²/2-zCDP; one zCDP event for
			// the whole release is tighter than basic composition at
			// moderate ε — use whichever gives AdaSSP the larger ratio.
			if jg, jev, epsBox, ok := t.priv.jointGaussian(cfg.Epsilon, cfg.Delta, cfg.N, t.f, t.depth()); ok && jg.ratio > g.ratio {
				g = jg
				if t.priv.box != nil {
					if t.priv.box, err = planBox(epsBox, BoxLevel(cfg.N, epsBox, bo.tail, bo.rankC), bo.penalty, cfg.Lo, cfg.Hi); err != nil {
						return nil, fmt.Errorf("linreg: private box: %w", err)
					}
					t.priv.box.margin = bo.margin
					t.params["epsilon_box_quantile"] = epsBox
					t.params["box_tail"] = t.priv.box.tail
				}
				t.events = []budget.Event{jev}
				t.params["joint_zcdp"] = 1
				t.params["gaussian_ratio_total"] = jev.Ratio
				delete(t.params, "epsilon_ssp") // one event: no ε of its own
				// §12: a share of AdaSSP's r² buys a preconditioner first.
				if usePrecond(d) {
					if err := t.planPrecond(&g); err != nil {
						return nil, fmt.Errorf("linreg: %w", err)
					}
				}
				// §15: a share of AdaSSP's r² buys gradient steps after it.
				if useRefine(d, cfg.N, t.f, cfg.Epsilon) {
					if err := t.planRefineShare(&g, RefineShare, RefineSteps, RefineClip, RefineStep); err != nil {
						return nil, fmt.Errorf("linreg: %w", err)
					}
				}
			}
		}
		t.gauss = &g
		// Off-diagonal noise σ_A/√2, diagonal σ_A: the Wigner edge
		// 2·(σ_A/√2)·√F plus the Lipschitz tail σ_A·√(2 ln 1/ρ).
		t.noiseNorm = g.sigmaA * (math.Sqrt(2*f) + tail)
		t.margin = g.sigmaL * normalQuantile(1-Failure)
		if t.params["joint_zcdp"] != 1 {
			t.events = append(t.events, g.event(epsSSP, cfg.Delta))
		}
		t.params["sigma_xx"], t.params["sigma_xy"], t.params["sigma_lambda"] = g.sigmaA, g.sigmaC, g.sigmaL
		t.params["gaussian_ratio"] = g.ratio
	} else {
		l, err := planLaplace(epsSSP, cfg.N, t.f, t.depth())
		if err != nil {
			return nil, fmt.Errorf("linreg: %w", err)
		}
		t.lap = &l
		// Every entry Laplace(b_A), standard deviation √2·b_A: the same
		// rule as the Gaussian case with σ_A replaced by b_A.
		t.noiseNorm = l.scaleA * (math.Sqrt(2*f) + tail)
		t.margin = l.scaleL * math.Log(1/(2*Failure))
		t.events = append(t.events, l.events()...)
		t.params["laplace_xx"], t.params["laplace_xy"], t.params["laplace_lambda"] = l.scaleA, l.scaleC, l.scaleL
		t.params["l1_sensitivity_xx"], t.params["l1_sensitivity_xy"] = l.sensA, l.sensC
	}
	t.params["noise_norm"] = t.noiseNorm
	return t, nil
}

// planPrecond splits the Gaussian stage's ratio r into r₁ (first stage)
// and r₂ (AdaSSP) with r₁² = PrecondShare·r², r₁² + r₂² ≤ r²: adaptive zCDP
// composition keeps the one event. g is replaced by AdaSSP's plan at r₂.
func (t *Trainer) planPrecond(g *gaussPlan) error {
	r := g.ratio
	r1 := math.Sqrt(PrecondShare) * r
	r2 := math.Sqrt(1-PrecondShare) * r * (1 - 1e-12)
	pre, err := planPrecond(r1, t.cfg.N, t.f-1, t.depth())
	if err != nil {
		return err
	}
	g2, err := planGaussianRatio(r2, t.cfg.Epsilon, t.cfg.Delta, t.cfg.N, t.f, t.depth(), Kappa)
	if err != nil {
		return err
	}
	*g = g2
	t.pre = &pre
	t.params["precondition"] = 1
	t.params["sigma_precondition"] = pre.sigma
	t.params["gaussian_ratio_precondition"] = pre.ratio
	return nil
}

// Config returns (a copy of) the configuration.
func (t *Trainer) Config() Config {
	c := t.cfg
	c.Features = append([]string(nil), c.Features...)
	c.Lo = append([]float64(nil), c.Lo...)
	c.Hi = append([]float64(nil), c.Hi...)
	return c
}

// Events returns the privacy cost to reserve before Train: one Gaussian
// event of joint ratio R (δ > 0), or three Laplace events (δ = 0) whose ε
// add up to cfg.Epsilon.
func (t *Trainer) Events() []budget.Event { return append([]budget.Event(nil), t.events...) }

// Params returns the public planning values recorded in the model.
func (t *Trainer) Params() map[string]float64 { return maps.Clone(t.params) }

// checkRows verifies the public shape of the input.
func (t *Trainer) checkRows(X [][]float64, y []float64) error {
	if len(X) != t.cfg.N || len(y) != t.cfg.N {
		return fmt.Errorf("linreg: got %d rows and %d labels, the plan is for n = %d", len(X), len(y), t.cfg.N)
	}
	d := len(t.cfg.Features)
	for _, r := range X {
		if len(r) != d {
			return fmt.Errorf("linreg: a row has %d values, want %d features", len(r), d)
		}
	}
	return nil
}

// Train makes one pass over the rows (raw feature values in cfg.Features
// order, NaN for NULL; raw labels, NaN for NULL), adds the planned noise
// and returns the released model. Its only errors are shape errors of the
// caller (len(X) ≠ N, wrong row width), which reveal nothing about values.
func (t *Trainer) Train(X [][]float64, y []float64) (*mechanism.Model, error) {
	if err := t.checkRows(X, y); err != nil {
		return nil, err
	}
	if t.priv == nil && t.centre == nil {
		return t.release(t.stats(X, y), nil)
	}
	clip, err := t.releaseRowMap(X, y)
	if err != nil {
		return nil, err
	}
	if t.meanOnly {
		return t.model(make([]float64, t.f), t.Params(), clip), nil
	}
	if t.pre != nil {
		if clip.m, err = t.releasePrecond(sufficientStats(X, y, t.prep, t.cfg.LabelLo, t.cfg.LabelHi, t.workers, clip)); err != nil {
			return nil, fmt.Errorf("linreg: adding noise: %w", err)
		}
	}
	return t.releaseRows(sufficientStats(X, y, t.prep, t.cfg.LabelLo, t.cfg.LabelHi, t.workers, clip), clip, X, y)
}

// PrivateBounds reports whether the plan uses private clipping radii or a
// private label centre (public: it follows from the configuration). Such a
// plan trains only from rows in memory (Train): its statistics need the
// radii (or the centre) released first.
func (t *Trainer) PrivateBounds() bool { return t.priv != nil || t.centre != nil }

// releaseRowMap releases what a private plan maps its rows with: §11's radii
// (and §13's box) or §14's label centre.
func (t *Trainer) releaseRowMap(X [][]float64, y []float64) (*privClip, error) {
	if t.priv != nil {
		return t.releaseClip(X, y)
	}
	return t.releaseCentre(y)
}

// errNeedsRows is the public error of the one-pass paths on a private-bounds
// plan (the caller checks PrivateBounds before reading anything).
var errNeedsRows = errors.New("linreg: bounds=private trains from rows in memory (Train)")

// TrainStream is Train for rows read straight from storage: scan calls emit
// once per row with the d feature values followed by the raw label. If the
// scan yields another number of rows than planned (owners wrote meanwhile)
// it returns ErrRowCountChanged and the caller re-plans with the n it reads
// (public).
func (t *Trainer) TrainStream(scan func(emit func(row []float64) error) error) (*mechanism.Model, error) {
	if t.PrivateBounds() {
		return nil, errNeedsRows
	}
	st, err := streamStats(len(t.cfg.Features), t.prep, t.cfg.LabelLo, t.cfg.LabelHi, t.workers, scan)
	if err != nil {
		return nil, fmt.Errorf("linreg: %w", err)
	}
	if st.n != t.cfg.N {
		return nil, fmt.Errorf("linreg: %w: read %d rows, planned for n = %d", ErrRowCountChanged, st.n, t.cfg.N)
	}
	return t.release(st, nil)
}

func (t *Trainer) stats(X [][]float64, y []float64) stats {
	return sufficientStats(X, y, t.prep, t.cfg.LabelLo, t.cfg.LabelHi, t.workers, nil)
}

// interceptEntry is the public value of A_FF = Σᵢ x_iF² = n·fl(1/√F)².
func (t *Trainer) interceptEntry() float64 {
	inv := 1 / math.Sqrt(float64(t.f))
	return float64(t.cfg.N) * inv * inv
}

// noisy holds the three released statistics.
type noisy struct {
	va   []float64     // the released vector of XᵀX (packA layout)
	a    *mat.SymDense // XᵀX̂ unpacked (intercept entry public)
	c    []float64     // Xᵀŷ
	dirs [][]float64   // the directions of the λ-statistic (from a)
	q    float64       // λ-statistic (min Rayleigh quotient) + noise
}

// addNoise performs the three releases on the computed statistics. The
// λ-statistic is measured along directions computed from the released
// XᵀX̂ (adaptive composition).
func (t *Trainer) addNoise(st stats) (noisy, error) {
	scaled := t.gauss != nil
	va := packA(st.a, t.f, scaled)
	c := append([]float64(nil), st.c...)
	var err error
	if t.gauss != nil {
		if err = noise.AddGaussianVec(va, t.gauss.sigmaA); err == nil {
			err = noise.AddGaussianVec(c, t.gauss.sigmaC)
		}
	} else {
		if err = noise.AddLaplaceVec(va, t.lap.scaleA); err == nil {
			err = noise.AddLaplaceVec(c, t.lap.scaleC)
		}
	}
	if err != nil {
		return noisy{}, fmt.Errorf("linreg: adding noise: %w", err)
	}
	a := unpackA(va, t.f, scaled, t.interceptEntry())
	dirs := directions(a)
	q := rayleighMin(st.a, t.f, dirs)
	if t.gauss != nil {
		q, err = noise.AddGaussian(q, t.gauss.sigmaL)
	} else {
		q, err = noise.AddLaplace(q, t.lap.scaleL)
	}
	if err != nil {
		return noisy{}, fmt.Errorf("linreg: adding noise: %w", err)
	}
	return noisy{va: va, a: a, c: c, dirs: dirs, q: q}, nil
}

// ridge is AdaSSP's λ = max(0, c·E − λ̃_min) with λ̃_min = max(0, q̃ − margin)
// and c = RidgeFactor (Wang: c = 1).
func (t *Trainer) ridge(q float64) float64 {
	lmin := math.Max(0, q-t.margin)
	return math.Max(0, t.ridgeFactor*t.noiseNorm-lmin)
}

// estimate is the post-processing of the released statistics: θ solves
// (XᵀX̂ + λI)θ = Xᵀŷ with every eigenvalue raised to FloorFactor·E.
func (t *Trainer) estimate(r noisy) ([]float64, float64) {
	if t.centredSolve {
		return t.estimateCentred(r)
	}
	lambda := t.ridge(r.q)
	m := mat.NewSymDense(t.f, nil)
	m.CopySym(r.a)
	for j := 0; j < t.f; j++ {
		m.SetSym(j, j, m.At(j, j)+lambda)
	}
	return solveFloor(m, r.c, t.floor*t.noiseNorm), lambda
}

// release adds the noise and solves. The noise package fails only on
// invalid scales (excluded by Plan) or non-finite inputs (the statistics
// of clamped rows are finite).
func (t *Trainer) release(st stats, clip *privClip) (*mechanism.Model, error) {
	return t.releaseRows(st, clip, nil, nil)
}

// releaseRows is release followed by §15's gradient steps on the rows X, y
// when the plan has them (private plans only: they train from rows in
// memory, so X is never nil there).
func (t *Trainer) releaseRows(st stats, clip *privClip, X [][]float64, y []float64) (*mechanism.Model, error) {
	r, err := t.addNoise(st)
	if err != nil {
		return nil, err
	}
	theta, lambda := t.estimate(r)
	if t.ref != nil {
		if X == nil {
			return nil, errNeedsRows
		}
		if theta, err = t.refine(r, lambda, theta, X, y, clip); err != nil {
			return nil, err
		}
	}
	params := t.Params()
	params["lambda"] = lambda // a post-processing of the released λ-statistic
	return t.model(theta, params, clip), nil
}

// model wraps an estimate θ and its params into the released model. With
// private bounds the released radii are part of the model: θ is folded back
// to the unclipped scale and the radii are recorded.
func (t *Trainer) model(theta []float64, params map[string]float64, clip *privClip) *mechanism.Model {
	scaler := t.scaler
	if clip != nil {
		if clip.box != nil {
			// §13: the released box is the model's map of raw rows.
			scaler = *clip.box
		}
		theta = clip.fold(theta)
		if clip.identity {
			// §14: the released centre (on y′ ∈ [−1, 1] and in label
			// units) and the label scale 1 + |m̃|.
			params["label_centre_unit"], params["label_scale"] = clip.centre, clip.cy
			lo, hi := t.cfg.LabelLo, t.cfg.LabelHi
			params["label_centre_value"] = (lo+hi)/2 + clip.centre*(hi-lo)/2
		} else {
			params["clip_feature_norm"], params["clip_label_radius"] = clip.c, clip.cy
		}
		if clip.m != nil {
			// tr(M)/d of the released preconditioner (§12): how much it
			// rescaled the features on average (post-processing).
			var tr float64
			for j := 0; j < clip.d; j++ {
				tr += clip.m[j*clip.d+j]
			}
			params["precondition_mean_scale"] = tr / float64(clip.d)
		}
	}
	return &mechanism.Model{
		Kind:     mechanism.KindLinReg,
		Kernel:   "linear",
		Label:    t.cfg.Label,
		Features: append([]string(nil), t.cfg.Features...),
		LabelLo:  t.cfg.LabelLo,
		LabelHi:  t.cfg.LabelHi,
		Scaler:   scaler,
		Weights:  [][]float64{theta},
		Params:   params,
	}
}

// fitExact returns the noise-free ridge solution (XᵀX + ridge·I)⁻¹Xᵀy on
// the same scaled rows (ridge = 0: least squares), the non-private
// reference of tests and results. It is unexported so that no SQL path can
// reach it.
func (t *Trainer) fitExact(X [][]float64, y []float64, ridge float64) ([]float64, error) {
	if err := t.checkRows(X, y); err != nil {
		return nil, err
	}
	st := t.stats(X, y)
	m := mat.NewSymDense(t.f, nil)
	for j := 0; j < t.f; j++ {
		for k := j; k < t.f; k++ {
			m.SetSym(j, k, st.a[j*t.f+k])
		}
		m.SetSym(j, j, m.At(j, j)+ridge)
	}
	return solveFloor(m, st.c, 1e-12*float64(t.cfg.N)/float64(t.f)), nil
}

// normalQuantile returns Φ⁻¹(p) for p ∈ (0, 1).
func normalQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }
