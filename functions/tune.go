package functions

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/auto"
	"github.com/dpsql/dpsql/mechanism/gauss"
	"github.com/dpsql/dpsql/mechanism/linreg"
	"github.com/dpsql/dpsql/mechanism/selection"
)

// [sel2] DP_TRAIN(t, ε, kind, 'tune=1; …'): private hyperparameter
// selection on a secret random held-out split (mechanism/selection,
// docs/mechanisms/selection.md). A = n − ⌊n/5⌋ random rows get ONE noisy
// sufficient-statistics release at the call's full (ε, δ), exactly as the
// default mechanism with n_A rows; every grid point is a post-processing of
// it; B = the other ⌊n/5⌋ rows score all of them and report-noisy-max
// (Laplace 2/ε_B) releases the best index. A and B are disjoint: the
// ledger records the A-release's events only (parallel composition, ε_B
// dominated by them). Liu–Talwar random stopping (h/sel) is not reachable
// from SQL: its number of trials shows in the running time.

// Public grids (selection.md §6).
var (
	// tuneShrinks: covariance (gnb: variance) shrinkage toward the mean
	// eigenvalue, γ = 0 being the default model.
	tuneShrinks = []float64{0, 0.1, 0.25, 0.5, 0.75, 0.9}
	// tuneRidges: AdaSSP ridge factor c and eigenvalue floor factor f
	// around the default {linreg.RidgeFactor, linreg.FloorFactor}.
	tuneRidges = []linreg.Variant{{Ridge: 0, Floor: 0.25}, {Ridge: 0, Floor: 1},
		{Ridge: linreg.RidgeFactor, Floor: linreg.FloorFactor}, {Ridge: 1, Floor: 1}, {Ridge: 4, Floor: 1}, {Ridge: 16, Floor: 1}}
)

// tuneKinds lists the kinds tune=1 supports.
const tuneKinds = "lda, qda, gnb, linreg and auto (when auto picks one of them)"

// tuneGridNames renders a kind's grid for dp_models and dry runs.
func tuneGridNames(kind string) []string {
	var out []string
	if kind == mechanism.KindLinReg {
		for _, v := range tuneRidges {
			out = append(out, fmt.Sprintf("ridge=%g,floor=%g", v.Ridge, v.Floor))
		}
		return out
	}
	for _, g := range tuneShrinks {
		out = append(out, fmt.Sprintf("shrink=%g", g))
	}
	return out
}

// planTune plans DP_TRAIN with tune=1. Every check needs public inputs
// only (kind, n, grid, ε, δ) and runs before anything is charged.
func (e *Env) planTune(a trainArgs, kind string, delta float64) (*trainPlan, error) {
	choice := ""
	if kind == auto.KindAuto {
		var err error
		if kind, choice, err = e.autoKind(a, delta); err != nil {
			return nil, err
		}
		if kind == mechanism.KindLogReg {
			return nil, fmt.Errorf("tune=1 supports kinds %s; kind=auto chose logreg for this table (%s), which has no post-processing grid — call DP_TRAIN without tune=1 or with kind lda/gnb", tuneKinds, choice)
		}
		delete(a.opts, "method") // set by autoKind for logreg only
	}
	switch kind {
	case mechanism.KindLDA, mechanism.KindQDA, mechanism.KindGNB, mechanism.KindLinReg:
	default:
		return nil, fmt.Errorf("tune=1 supports kinds %s, not %q", tuneKinds, kind)
	}
	regression := kind == mechanism.KindLinReg
	s, err := e.spec(a.ref, a.opts, !regression)
	if err != nil {
		return nil, err
	}
	var momentShare float64
	if !regression {
		if momentShare, err = a.opts.positive("moment_share"); err != nil {
			return nil, err
		}
	}
	if s.model, err = e.modelName(a.opts, kind+"_tuned", a.ref); err != nil {
		return nil, err
	}
	// fitPlan plans the A-release for n rows (public); its errors are public.
	type fitPlan struct {
		g      *gauss.Trainer
		l      *linreg.Trainer
		events []budget.Event
		scales map[string]float64
	}
	plan := func(n int) (fitPlan, int, int, float64, error) {
		nA, nB, err := selection.HoldoutSize(n)
		if err != nil {
			return fitPlan{}, 0, 0, 0, err
		}
		var fp fitPlan
		if regression {
			tr, err := linreg.Plan(linreg.Config{Epsilon: a.eps, Delta: delta, N: nA, Features: s.features, Lo: s.lo, Hi: s.hi,
				Label: s.label, LabelLo: s.labelLo, LabelHi: s.labelHi})
			if err != nil {
				return fitPlan{}, 0, 0, 0, err
			}
			fp = fitPlan{l: tr, events: tr.Events(), scales: tr.Params()}
		} else {
			tr, err := gauss.Plan(gauss.Config{Kind: kind, Epsilon: a.eps, Delta: delta, MomentShare: momentShare, N: nA,
				Features: s.features, Lo: s.lo, Hi: s.hi, Label: s.label, Classes: s.classes})
			if err != nil {
				return fitPlan{}, 0, 0, 0, err
			}
			cs, ss, ms := tr.Shares()
			fp = fitPlan{g: tr, events: tr.Events(), scales: map[string]float64{"sensitivity": tr.Sensitivity(), "scale": tr.Scale(),
				"count_share": cs, "sum_share": ss, "moment_share": ms}}
		}
		epsB, err := selection.ScoreEpsilon(fp.events, a.eps)
		if err != nil {
			return fitPlan{}, 0, 0, 0, err
		}
		if err := selection.CheckHoldout(nB, epsB); err != nil {
			return fitPlan{}, 0, 0, 0, err
		}
		return fp, nA, nB, epsB, nil
	}
	fp, nA, nB, epsB, err := plan(int(s.n))
	if err != nil {
		return nil, fmt.Errorf("tune=1: %w", err)
	}
	names := tuneGridNames(kind)
	scales := fp.scales
	scales["score_epsilon"], scales["score_laplace_scale"] = epsB, 2/epsB
	base := paramString("tune", 1, "kind", kind, "grid", strings.Join(names, "|"), "delta", delta,
		"n_fit", nA, "n_score", nB, "score_epsilon", epsB, "label", s.label, "features", s.features)
	p := &trainPlan{fn: "DP_TRAIN", kind: kind, spec: s, reqEps: a.eps, reqDelta: delta, events: fp.events,
		params: base, scales: scales, choice: choice,
		hyper: map[string]any{"tune": 1, "grid": names, "split": map[string]any{
			"n": s.n, "n_fit": nA, "n_score": nB,
			"rule": "n_score = ⌊n/" + strconv.Itoa(selection.HoldoutDivisor) + "⌋ rows drawn uniformly at random (secret); the fit rows get the full (ε, δ), the score rows report-noisy-max at score_epsilon; disjoint, so one charge"},
			"score_epsilon": epsB},
		mechanism: "held-out selection: one " + kind + " release on n_fit random rows, " + strconv.Itoa(len(names)) +
			" post-processed candidates scored on the other n_score rows, report-noisy-max (Laplace 2/ε_B)"}
	p.train = func() (*mechanism.Model, error) {
		var (
			Xf    [][]float64
			yc    []int
			yr    []float64
			n     int
			rdErr error
		)
		if regression {
			Xf, yr, rdErr = e.loadRegression(p.spec)
			if rdErr != nil {
				return nil, fmt.Errorf("read %s: %w", p.spec.ref.key, rdErr)
			}
			p.spec.n = int64(len(Xf))
		} else if Xf, yc, rdErr = e.classificationData(&p.spec); rdErr != nil {
			return nil, rdErr
		}
		n = len(Xf)
		cur, curA, curB, curEps := fp, nA, nB, epsB
		if n != int(s.n) { // owners wrote since planning: re-plan on the public n read
			if cur, curA, curB, curEps, rdErr = plan(n); rdErr != nil {
				return nil, fmt.Errorf("tune=1: %w", rdErr)
			}
			curEps = min(curEps, epsB)
		}
		split, err := selection.NewSplit(n)
		if err != nil {
			return nil, err
		}
		var chosen int
		var models []*mechanism.Model
		if regression {
			chosen, models, err = selection.HoldOut(split, curEps, func(ix []int) ([]*mechanism.Model, error) {
				X, y := pickRows(Xf, ix), pickFloats(yr, ix)
				return cur.l.TrainVariants(X, y, tuneRidges)
			}, func(m *mechanism.Model, ix []int) float64 {
				return selection.RegressionScore(m, p.spec.labelLo, p.spec.labelHi, pickRows(Xf, ix), pickFloats(yr, ix))
			})
		} else {
			chosen, models, err = selection.HoldOut(split, curEps, func(ix []int) ([]*mechanism.Model, error) {
				return cur.g.TrainVariants(pickRows(Xf, ix), pickInts(yc, ix), tuneShrinks)
			}, func(m *mechanism.Model, ix []int) float64 {
				return selection.ClassScore(m, p.spec.classes, pickRows(Xf, ix), pickInts(yc, ix))
			})
		}
		if err != nil {
			return nil, err
		}
		// Released: the chosen candidate (fitted on A) and the public
		// split sizes; the scores and the split itself stay secret.
		p.params = paramString("tune", 1, "kind", kind, "grid", strings.Join(names, "|"), "delta", delta,
			"n_fit", curA, "n_score", curB, "score_epsilon", curEps, "label", s.label, "features", s.features) +
			"; " + paramString("chosen", names[chosen])
		m := models[chosen]
		m.Params["tune_n_fit"], m.Params["tune_n_score"], m.Params["tune_score_epsilon"] = float64(curA), float64(curB), curEps
		return m, nil
	}
	return p, nil
}

func pickRows(X [][]float64, ix []int) [][]float64 {
	out := make([][]float64, len(ix))
	for i, j := range ix {
		out[i] = X[j]
	}
	return out
}

func pickInts(y []int, ix []int) []int {
	out := make([]int, len(ix))
	for i, j := range ix {
		out[i] = y[j]
	}
	return out
}

func pickFloats(y []float64, ix []int) []float64 {
	out := make([]float64, len(ix))
	for i, j := range ix {
		out[i] = y[j]
	}
	return out
}
