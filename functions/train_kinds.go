package functions

import (
	"fmt"
	"strings"

	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/gauss"
	"github.com/dpsql/dpsql/mechanism/linreg"
	"github.com/dpsql/dpsql/mechanism/logreg"
)

// The kinds DP_TRAIN plans itself (docs/sql.md, "DP_TRAIN").
func init() {
	for _, k := range []string{mechanism.KindLDA, mechanism.KindQDA, mechanism.KindGNB} {
		trainKinds[k] = planGauss(k)
	}
	trainKinds[mechanism.KindLinReg] = planLinReg
	trainKinds[mechanism.KindLogReg] = planLogReg
}

// classificationData reads the rows of a classification plan, re-planning
// on the n actually read when owners wrote since planning (n is public; the
// charge is the same ε, δ).
func (e *Env) classificationData(s *trainSpec) ([][]float64, []int, error) {
	X, y, free, err := e.loadClassification(*s)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", s.ref.key, err)
	}
	s.n = int64(len(X))
	s.X, s.y = X, y
	prev := s.free
	s.free = func() {
		s.X, s.y = nil, nil
		if prev != nil {
			prev()
		}
		free()
	}
	return X, y, nil
}

func planGauss(kind string) planner {
	return func(e *Env, a trainArgs, delta float64) (*trainPlan, error) {
		s, err := e.spec(a.ref, a.opts, true)
		if err != nil {
			return nil, err
		}
		// [pbox] box=private|public (default: box.UsePrivate).
		bmode, bst, err := boxMode(a.opts, &s, a.eps, delta)
		if err != nil {
			return nil, err
		}
		cfg := gauss.Config{Kind: kind, Epsilon: bst.kindEps(a.eps), Delta: delta}
		if cfg.MomentShare, err = a.opts.positive("moment_share"); err != nil {
			return nil, err
		}
		if s.model, err = e.modelName(a.opts, kind, a.ref); err != nil {
			return nil, err
		}
		cfg.N, cfg.Features, cfg.Lo, cfg.Hi, cfg.Label, cfg.Classes = int(s.n), s.features, s.lo, s.hi, s.label, s.classes
		tr, err := gauss.Plan(cfg)
		if err != nil {
			return nil, err
		}
		events, err := bst.planCharge(tr.Events(), cfg.N, cfg.Lo, cfg.Hi)
		if err != nil {
			return nil, err
		}
		c := tr.Config()
		cs, ss, ms := tr.Shares()
		p := &trainPlan{fn: "DP_TRAIN", kind: kind, spec: s, reqEps: a.eps, reqDelta: delta, events: events,
			params: paramString("kind", kind, "delta", delta, "moment_share", c.MomentShare, "box", bmode, "label", s.label, "features", s.features),
			scales: map[string]float64{"sensitivity": tr.Sensitivity(), "scale": tr.Scale(), "count_share": cs, "sum_share": ss, "moment_share": ms},
			hyper:  map[string]any{"box": bmode, "box_rule": bst.describe(bmode)}}
		p.train = func() (*mechanism.Model, error) {
			X, y, err := e.classificationData(&p.spec)
			if err != nil {
				return nil, err
			}
			cfg.N = len(X)
			// The released box is public: the kind is re-planned on it
			// (its calibration does not depend on the bounds).
			if cfg.Lo, cfg.Hi, err = bst.release(X, s.lo, s.hi); err != nil {
				return nil, err
			}
			if tr, err = gauss.Plan(cfg); err != nil {
				return nil, err
			}
			m, err := tr.Train(X, y)
			bst.params(m)
			return m, err
		}
		return p, nil
	}
}

func planLinReg(e *Env, a trainArgs, delta float64) (*trainPlan, error) {
	s, err := e.spec(a.ref, a.opts, false)
	if err != nil {
		return nil, err
	}
	if s.model, err = e.modelName(a.opts, mechanism.KindLinReg, a.ref); err != nil {
		return nil, err
	}
	cfg := linreg.Config{Epsilon: a.eps, Delta: delta, N: int(s.n), Features: s.features, Lo: s.lo, Hi: s.hi,
		Label: s.label, LabelLo: s.labelLo, LabelHi: s.labelHi}
	// [reg] bounds=public|private|box (default: linreg's public rule on n, ε, δ, d).
	bounds, given := a.opts.take("bounds")
	cfg.Bounds = strings.ToLower(strings.TrimSpace(bounds))
	if cfg.Bounds == "auto" {
		cfg.Bounds = linreg.BoundsAuto
	}
	// A table attached from a scale-out backend keeps the pushed-down public
	// scaling unless bounds= is given: private radii need the rows here.
	if at, ok := e.rows(a.ref).(interface{ Attached(db, table string) bool }); ok && !given && at.Attached(a.ref.db, a.ref.table) {
		cfg.Bounds = linreg.BoundsPublic
	}
	// Scale-out (issue 14): statistics summed by the backend in its own
	// order need the any-order rounding allowance, planned before the charge.
	var tr *linreg.Trainer
	pushExact := false
	if cfg.Bounds == linreg.BoundsPublic && e.linearPushable(&s) {
		tr, cfg, pushExact, err = planLinRegPush(cfg)
	} else {
		tr, err = linreg.Plan(cfg)
	}
	if err != nil {
		return nil, err
	}
	cfg.Bounds = tr.Config().Bounds               // the rule's choice, fixed for a re-plan
	cfg.CentreEpsilon = tr.Config().CentreEpsilon // [regmean] linreg §14: the centre's ε, fixed for a re-plan
	p := &trainPlan{fn: "DP_TRAIN", kind: mechanism.KindLinReg, spec: s, reqEps: a.eps, reqDelta: delta, events: tr.Events(),
		params: paramString("kind", mechanism.KindLinReg, "delta", delta, "bounds", cfg.Bounds, "label", s.label, "features", s.features),
		scales: tr.Params(), hyper: map[string]any{"bounds": cfg.Bounds, "clip": tr.ClipRule()}}
	// [/reg]
	p.train = func() (*mechanism.Model, error) {
		if !tr.PrivateBounds() { // [reg] private radii need the rows: no pushdown
			if m, pushed, err := e.pushLinReg(&p.spec, cfg, tr, pushExact); pushed { // scale-out (issue 14)
				return m, err
			}
		}
		X, y, err := e.loadRegression(p.spec)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p.spec.ref.key, err)
		}
		p.spec.n = int64(len(X))
		if len(X) != cfg.N {
			cfg.N = len(X)
			if tr, err = linreg.Plan(cfg); err != nil {
				return nil, err
			}
		}
		return tr.Train(X, y)
	}
	return p, nil
}

func planLogReg(e *Env, a trainArgs, delta float64) (*trainPlan, error) {
	s, err := e.spec(a.ref, a.opts, true)
	if err != nil {
		return nil, err
	}
	cfg := logreg.Config{Epsilon: a.eps, Delta: delta, Stop: stopOf(a.ref.ctx)}
	if cfg.Steps, err = a.opts.positiveInt("steps"); err != nil {
		return nil, err
	}
	if cfg.Horizon, err = a.opts.positive("horizon"); err != nil {
		return nil, err
	}
	if cfg.Clip, err = a.opts.positive("clip"); err != nil {
		return nil, err
	}
	// [pure] method=gd|objective and lambda= (objective's ridge λ = Λ/n).
	cfg.Method, _ = a.opts.take("method")
	cfg.Method = strings.ToLower(cfg.Method)
	if cfg.Lambda, err = a.opts.positive("lambda"); err != nil {
		return nil, err
	}
	// [/pure]
	if s.model, err = e.modelName(a.opts, mechanism.KindLogReg, a.ref); err != nil {
		return nil, err
	}
	cfg.N, cfg.Features, cfg.Lo, cfg.Hi, cfg.Label, cfg.Classes = int(s.n), s.features, s.lo, s.hi, s.label, s.classes
	// [pbox] box=private|public (default: box.UsePrivate).
	bmode, bst, err := boxMode(a.opts, &s, a.eps, delta)
	if err != nil {
		return nil, err
	}
	cfg.Epsilon = bst.kindEps(a.eps)
	tr, err := logreg.Plan(cfg)
	if err != nil {
		return nil, err
	}
	events, err := bst.planCharge(tr.Events(), cfg.N, cfg.Lo, cfg.Hi)
	if err != nil {
		return nil, err
	}
	c := tr.Config()
	p := &trainPlan{fn: "DP_TRAIN", kind: mechanism.KindLogReg, spec: s, reqEps: a.eps, reqDelta: delta, events: events,
		params: paramString("kind", mechanism.KindLogReg, "delta", delta, "steps", c.Steps, "horizon", c.Horizon, "clip", c.Clip, "box", bmode, "label", s.label, "features", s.features),
		scales: tr.Params(), hyper: map[string]any{"box": bmode, "box_rule": bst.describe(bmode)}}
	if c.Method == logreg.MethodObjective { // [pure]
		p.params = paramString("kind", mechanism.KindLogReg, "method", c.Method, "delta", delta, "lambda", c.Lambda, "box", bmode, "label", s.label, "features", s.features)
	}
	p.train = func() (*mechanism.Model, error) {
		X, y, err := e.classificationData(&p.spec)
		if err != nil {
			return nil, err
		}
		// The released box is public: the kind runs on it (its calibration
		// does not depend on the bounds, so only the scaler changes unless
		// owners wrote since planning and n moved).
		if cfg.Lo, cfg.Hi, err = bst.release(X, s.lo, s.hi); err != nil {
			return nil, err
		}
		if len(X) == cfg.N {
			tr, err = tr.WithBounds(cfg.Lo, cfg.Hi)
		} else {
			cfg.N = len(X)
			tr, err = logreg.Plan(cfg)
		}
		if err != nil {
			return nil, err
		}
		m, c, counted, err := tr.TrainCounted(X, y)
		if err == nil && counted {
			// The prior selection's score of this m, counted on the scaled
			// copy before it was freed (prior.md §5).
			p.correct = func(got *mechanism.Model) (int64, bool) { return c, got == m }
		}
		bst.params(m)
		return m, err
	}
	return p, nil
}
