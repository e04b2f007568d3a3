package functions

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/box"
	"github.com/dpsql/dpsql/mechanism/lmgc"
)

// dpLMGCTrain implements DP_LMGC_TRAIN('<table>', ε [, '<options>']);
// dry_run=1 answers the plan instead.
func (e *Env) dpLMGCTrain(ctx *sql.Context, args []any) (any, error) {
	a, err := e.parseTrainArgs(ctx, args, false)
	if err != nil {
		return nil, err
	}
	dry, err := dryRunOption(a.opts)
	if err != nil {
		return nil, err
	}
	p, err := e.planLMGCTrain(ctx, a)
	if err != nil {
		return nil, err
	}
	return e.runPlan(ctx, p, dry)
}

// planLMGCTrain plans DP_LMGC_TRAIN (also DP_TRAIN kind lmgc) from public
// inputs only.
func (e *Env) planLMGCTrain(ctx *sql.Context, a trainArgs) (*trainPlan, error) {
	ref, eps, o := a.ref, a.eps, a.opts
	cfg := lmgc.Config{Epsilon: eps, Stop: stopOf(ctx)}
	var err error
	if cfg.Lambda, err = o.positive("lambda"); err != nil {
		return nil, err
	}
	if cfg.H, err = o.positive("h"); err != nil {
		return nil, err
	}
	// δ defaults like DP_TRAIN's (a public share of the table's δ budget,
	// 0 without one): δ > 0 selects the Gaussian objective perturbation,
	// whose noise norm grows as √m instead of m (lmgc.md §10); δ = 0 keeps
	// the pure-ε release.
	if cfg.Delta, err = e.trainDelta(a); err != nil {
		return nil, err
	}
	s, err := e.spec(ref, o, true)
	if err != nil {
		return nil, err
	}
	// method=: stats (the default, lmgc.DefaultMethod from public
	// quantities) or margin (the paper's objective perturbation); lmgc.md §11.
	if v, ok := o.take("method"); ok {
		cfg.Method = v
	} else {
		cfg.Method = lmgc.DefaultMethod(int(s.n), len(s.features), len(s.classes), eps, cfg.Delta)
	}
	if s.model, err = e.modelName(o, "lmgc", ref); err != nil {
		return nil, err
	}
	// box=private|public|auto (issue 28 item 6): method=stats is gauss's lda
	// release, whose calibration only uses that scaled rows lie in
	// [−1, 1]^d, so it takes DP_TRAIN's private per-feature box exactly as
	// kind lda does (box.UsePrivate by default; lmgc.md §12). The margin
	// release composes as a generic (ε, δ) event, which the box's joint
	// zCDP split cannot absorb: it keeps the declared box.
	bmode, bst := box.ModePublic, (*boxStage)(nil)
	if cfg.Method == lmgc.MethodStats {
		if bmode, bst, err = boxMode(o, &s, eps, cfg.Delta); err != nil {
			return nil, err
		}
	} else if v, ok := o.take("box"); ok && !strings.EqualFold(strings.TrimSpace(v), box.ModePublic) && !strings.EqualFold(strings.TrimSpace(v), "auto") {
		return nil, fmt.Errorf("box=%s applies to method=stats only (method=%s keeps the declared bounds)", v, cfg.Method)
	}
	if err := o.unknown(); err != nil {
		return nil, err
	}
	cfg.N, cfg.Features, cfg.Lo, cfg.Hi, cfg.Label, cfg.Classes = int(s.n), s.features, s.lo, s.hi, s.label, s.classes
	cfg.Epsilon = bst.kindEps(eps)
	tr, err := lmgc.Plan(cfg)
	if err != nil {
		return nil, err
	}
	events, err := bst.planCharge(tr.Events(), cfg.N, cfg.Lo, cfg.Hi)
	if err != nil {
		return nil, err
	}
	lambda, h := cfg.Lambda, cfg.H
	if lambda == 0 {
		lambda = lmgc.DefaultLambda
	}
	if h == 0 {
		h = lmgc.DefaultH
	}
	c := tr.Calibration()
	mech := "Pathak & Raj large-margin Gaussian classifier: objective perturbation released through the output step"
	if cfg.Delta > 0 {
		mech = "Pathak & Raj large-margin Gaussian classifier: Gaussian objective perturbation (δ > 0) released through a Gaussian output step"
	}
	p := &trainPlan{fn: "DP_LMGC_TRAIN", kind: mechanism.KindLMGC, spec: s, reqEps: eps, reqDelta: cfg.Delta, events: events,
		params: paramString("method", cfg.Method, "lambda", cfg.Lambda, "h", cfg.H, "delta", cfg.Delta, "label", s.label, "features", s.features),
		scales: map[string]float64{"sensitivity": c.Sensitivity, "strong_convexity": c.StrongConvexity,
			"perturbation_epsilon": c.PerturbationEpsilon, "perturbation_scale": c.PerturbationScale,
			"output_epsilon": c.OutputEpsilon, "release_radius": c.ReleaseRadius, "output_laplace_scale": c.OutputLaplaceScale,
			"iterations": float64(c.Iterations), "parameters": float64(c.Dim),
			"perturbation_delta": c.PerturbationDelta, "output_delta": c.OutputDelta, "output_noise_scale": tr.OutputNoiseScale()},
		hyper:     map[string]any{"method": cfg.Method, "lambda": lambda, "h": h, "delta": cfg.Delta},
		mechanism: mech}
	if tr.Method() == lmgc.MethodStats {
		p.params = paramString("method", cfg.Method, "delta", cfg.Delta, "box", bmode, "label", s.label, "features", s.features)
		p.scales = tr.StatsScales()
		p.hyper = map[string]any{"method": cfg.Method, "delta": cfg.Delta, "box": bmode, "box_rule": bst.describe(bmode)}
		p.mechanism = "Pathak & Raj Gaussian classifier (one PSD matrix per class) fitted from noisy shared-covariance sufficient statistics (Laplace for δ = 0, discrete Gaussian for δ > 0), post-processed into Φ_c"
	}
	p.train = func() (*mechanism.Model, error) {
		X, y, err := e.classificationData(&p.spec)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", ref.key, err)
		}
		if len(X) != cfg.N {
			cfg.N = len(X)
			if tr, err = lmgc.Plan(cfg); err != nil {
				return nil, err
			}
			p.spec.n = int64(len(X))
		}
		if bst != nil {
			// The released box is public: the statistics release moves to
			// it with the same calibration (which does not use the bounds).
			lo, hi, err := bst.release(X, cfg.Lo, cfg.Hi)
			if err != nil {
				return nil, err
			}
			if tr, err = tr.WithBounds(lo, hi); err != nil {
				return nil, err
			}
		}
		m, err := tr.Train(X, y)
		if bst != nil && m != nil {
			// The call charges the box and the release together: record
			// that, not the release's own share.
			var ce, cd float64
			for _, ev := range events {
				ce, cd = ce+ev.Epsilon, cd+ev.Delta
			}
			m.Params["epsilon_charged"], m.Params["delta_charged"] = ce, cd
		}
		bst.params(m)
		return m, err
	}
	return p, nil
}
