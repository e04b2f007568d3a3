package functions

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
)

// Issue 28, "never worse than a constant" (docs/mechanisms/prior.md): every
// DP_TRAIN classification kind releases its model or the DP class-prior
// model, by a public rule on n, F, K, ε and, where the rule leaves it open,
// by a private selection it pays for.

// Regimes of the public rule.
const (
	regimePrior  = "prior"  // the DP class prior alone
	regimeSelect = "select" // model, prior counts and a private selection
	regimeModel  = "model"  // prior=off: the kind alone, as before issue 28
)

// planClassifier plans a DP_TRAIN classification kind with the prior rule:
// options prior=auto|off and objective=accuracy|balanced (taken here).
// plan is the kind's planner; it is called once, at the kind's share of ε.
func (e *Env) planClassifier(a trainArgs, kind string, plan func(a trainArgs) (*trainPlan, error)) (*trainPlan, error) {
	mode, err := takeChoice(a.opts, "prior", "auto", "off")
	if err != nil {
		return nil, err
	}
	obj, err := takeChoice(a.opts, "objective", "accuracy", "balanced")
	if err != nil {
		return nil, err
	}
	balanced := obj == "balanced"
	if balanced && !slices.Contains(mechanism.BalancedKinds, kind) {
		return nil, fmt.Errorf("objective=balanced supports kinds %s, not %q", strings.Join(mechanism.BalancedKinds, ", "), kind)
	}
	_, n, d, k, err := e.shape(a)
	if err != nil {
		return nil, err
	}
	ratio, resolution := mechanism.PriorRatio(n, d, k, a.eps), mechanism.PriorResolution(n, a.eps)
	regime := regimeSelect
	switch {
	case mode == "off":
		regime = regimeModel
	case mechanism.PriorAlone(n, d, k, a.eps) && !balanced:
		regime = regimePrior
	}
	if regime == regimeModel && !balanced {
		return plan(a)
	}
	// Shares of ε: the kind, the prior counts, the selection (none with
	// objective=balanced: a constant is the worst balanced scorer).
	epsPrior := a.eps * mechanism.PriorShare
	epsSel := a.eps * mechanism.PriorShare
	if balanced || regime == regimeModel {
		epsSel = 0
	}
	inner := a
	inner.eps = a.eps - epsPrior - epsSel
	if regime == regimePrior {
		inner.eps = a.eps // planned only to check its options and reserve the name
	}
	p, err := plan(inner)
	if err != nil {
		return nil, err
	}
	p.reqEps = a.eps
	if p.hyper == nil {
		p.hyper = map[string]any{}
	}
	p.hyper["prior"], p.hyper["prior_regime"], p.hyper["prior_ratio"] = mode, regime, ratio
	p.hyper["prior_resolution"] = resolution
	p.hyper["objective"] = obj
	if regime == regimePrior {
		// The DP class prior alone, with the whole ε.
		p.kind, p.events = mechanism.KindPrior, []budget.Event{mechanism.PriorEvent(a.eps)}
		why := fmt.Sprintf("n·ε/(F·K') = %.3g < %v: a %s model would be noise", ratio, mechanism.PriorMinRatio, kind)
		if ratio >= mechanism.PriorMinRatio {
			why = fmt.Sprintf("n·ε_sel/2 = %.3g < %v: a private selection between a %s model and the prior would be a coin flip", resolution, mechanism.PriorMinResolution, kind)
		}
		p.mechanism = fmt.Sprintf("DP class prior: a large class by permute-and-flip on the class counts, predicted for every row (%s)", why)
		p.scales = map[string]float64{"permute_and_flip_epsilon": a.eps, "prior_ratio": ratio, "prior_resolution": resolution}
		p.params = paramString("kind", mechanism.KindPrior, "instead_of", kind, "label", p.spec.label, "features", p.spec.features)
		p.train = func() (*mechanism.Model, error) {
			_, y, err := e.classificationData(&p.spec)
			if err != nil {
				return nil, err
			}
			class, err := mechanism.PriorClass(y, len(p.spec.classes), a.eps)
			if err != nil {
				return nil, err
			}
			sc, err := mechanism.NewScaler(p.spec.lo, p.spec.hi, true)
			if err != nil {
				return nil, err
			}
			return mechanism.NewPriorModel(&mechanism.Model{Label: p.spec.label, Features: p.spec.features, Classes: p.spec.classes, Scaler: sc}, class), nil
		}
		return p, nil
	}
	p.events = append(p.events, mechanism.PriorEvent(epsPrior))
	if epsSel > 0 {
		p.events = append(p.events, budget.Event{Kind: budget.Laplace, Epsilon: epsSel})
	}
	if p.scales == nil {
		p.scales = map[string]float64{}
	}
	p.scales["prior_epsilon"], p.scales["selection_epsilon"], p.scales["kind_epsilon"] = epsPrior, epsSel, inner.eps
	what := "then the model or the DP class prior (a class by permute-and-flip on the counts at ε_prior), whichever a private selection on the training rows finds more accurate (Laplace(2/ε_sel) on the difference of correct counts)"
	floor := mechanism.PriorFloor(len(p.spec.classes), epsPrior)
	if balanced {
		p.scales["prior_floor"] = floor
		what = fmt.Sprintf("balanced: the class scores adjusted by the DP log-priors (class counts + Laplace(2/ε_prior), floored at %.4g, the count a noisy count cannot tell from 0; logit adjustment)", floor)
	}
	p.mechanism += fmt.Sprintf("; %s", what)
	train := p.train
	p.train = func() (*mechanism.Model, error) {
		m, err := train()
		if err != nil {
			return nil, err
		}
		X, y := p.spec.X, p.spec.y
		if m.Params == nil {
			m.Params = map[string]float64{}
		}
		m.Params["prior_epsilon"] = epsPrior
		if balanced {
			counts, err := mechanism.PriorCounts(y, len(p.spec.classes), epsPrior)
			if err != nil {
				return nil, err
			}
			if err := mechanism.LogitAdjust(m, counts, floor); err != nil {
				return nil, err
			}
			m.Params["balanced"], m.Params["prior_floor"] = 1, floor
			return m, nil
		}
		m.Label, m.Features = p.spec.label, p.spec.features
		class, err := mechanism.PriorClass(y, len(p.spec.classes), epsPrior)
		if err != nil {
			return nil, err
		}
		prior := mechanism.NewPriorModel(m, class)
		cm, ok := int64(0), false
		if p.correct != nil {
			cm, ok = p.correct(m)
		}
		if !ok {
			if cm, err = mechanism.Correct(m, X, y); err != nil {
				return nil, err
			}
		}
		cp := mechanism.CountLabel(y, class) // = mechanism.Correct(prior, X, y)
		useModel, err := mechanism.SelectModel(cm, cp, epsSel)
		if err != nil {
			return nil, err
		}
		if !useModel {
			prior.Params = map[string]float64{"prior_epsilon": epsPrior, "selection_epsilon": epsSel, "kind_epsilon": inner.eps}
			return prior, nil
		}
		m.Params["selection_epsilon"] = epsSel
		return m, nil
	}
	return p, nil
}

// takeChoice takes option k, one of choices (lower case; absent: the
// first).
func takeChoice(o options, k string, choices ...string) (string, error) {
	v, _ := o.take(k)
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" {
		return choices[0], nil
	}
	if !slices.Contains(choices, v) {
		return "", fmt.Errorf("%s must be %s, got %q", k, strings.Join(choices, " or "), v)
	}
	return v, nil
}
