package functions

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/auto"
	"github.com/dpsql/dpsql/mechanism/gauss"
	"github.com/dpsql/dpsql/mechanism/linreg"
	"github.com/dpsql/dpsql/mechanism/selection"
)

// [sel2] DP_TRAIN(t, ε, kind, 'tune=1; …'): private hyperparameter
// selection on a secret random held-out split (mechanism/selection,
// docs/mechanisms/selection.md). A = n − ⌊n/10⌋ random rows get ONE noisy
// sufficient-statistics release at the call's full (ε, δ), exactly as the
// default mechanism with n_A rows; every grid point is a post-processing of
// it; B = the other ⌊n/10⌋ rows score all of them and report-noisy-max
// (Laplace 2/ε_B) releases the best index. A and B are disjoint: the
// ledger records the A-release's events only (parallel composition, ε_B
// dominated by them). Liu–Talwar random stopping (h/sel) is not reachable
// from SQL: its number of trials shows in the running time.

// tuneKinds lists the kinds tune=1 supports.
const tuneKinds = "lda, qda, gnb, linreg and auto (when auto picks one of them)"

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
	// plan plans the selection for n rows (public); its errors are public.
	plan := func(n int) (*selection.Tuner, error) {
		if regression {
			return selection.PlanLinReg(linreg.Config{Epsilon: a.eps, Delta: delta, N: n, Features: s.features, Lo: s.lo, Hi: s.hi,
				Label: s.label, LabelLo: s.labelLo, LabelHi: s.labelHi})
		}
		return selection.PlanGauss(gauss.Config{Kind: kind, Epsilon: a.eps, Delta: delta, MomentShare: momentShare, N: n,
			Features: s.features, Lo: s.lo, Hi: s.hi, Label: s.label, Classes: s.classes})
	}
	tu, err := plan(int(s.n))
	if err != nil {
		return nil, fmt.Errorf("tune=1: %w", err)
	}
	names := tu.Grid()
	var scales map[string]float64
	if regression {
		scales = tu.LinReg().Params()
	} else {
		g := tu.Gauss()
		cs, ss, ms := g.Shares()
		scales = map[string]float64{"sensitivity": g.Sensitivity(), "scale": g.Scale(), "count_share": cs, "sum_share": ss, "moment_share": ms}
	}
	epsB := tu.ScoreEpsilon()
	scales["score_epsilon"], scales["score_laplace_scale"] = epsB, 2/epsB
	params := func(tu *selection.Tuner) string {
		n, nA, nB := tu.Sizes()
		return paramString("tune", 1, "kind", kind, "grid", strings.Join(names, "|"), "delta", delta, "n", n,
			"n_fit", nA, "n_score", nB, "score_epsilon", tu.ScoreEpsilon(), "label", s.label, "features", s.features)
	}
	n, nA, nB := tu.Sizes()
	p := &trainPlan{fn: "DP_TRAIN", kind: kind, spec: s, reqEps: a.eps, reqDelta: delta, events: tu.Events(),
		params: params(tu), scales: scales, choice: choice,
		hyper: map[string]any{"tune": 1, "grid": names, "split": map[string]any{
			"n": n, "n_fit": nA, "n_score": nB,
			"rule": "n_score = ⌊n/" + strconv.Itoa(selection.HoldoutDivisor) + "⌋ rows drawn uniformly at random (secret); the fit rows get the full (ε, δ), the score rows report-noisy-max at score_epsilon; disjoint, so one charge"},
			"score_epsilon": epsB},
		mechanism: "held-out selection: one " + kind + " release on n_fit random rows, " + strconv.Itoa(len(names)) +
			" post-processed candidates scored on the other n_score rows, report-noisy-max (Laplace 2/ε_B)"}
	p.train = func() (*mechanism.Model, error) {
		cur := tu
		replan := func(n int) error {
			if n == int(s.n) {
				return nil
			}
			// Owners wrote since planning: re-plan on the public n read;
			// the charge stays the planned one, so ε_B may only shrink.
			next, err := plan(n)
			if err != nil {
				return fmt.Errorf("tune=1: %w", err)
			}
			if err := next.CapScoreEpsilon(epsB); err != nil {
				return fmt.Errorf("tune=1: %w", err)
			}
			cur = next
			return nil
		}
		var m *mechanism.Model
		var chosen int
		if regression {
			X, y, err := e.loadRegression(p.spec)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", p.spec.ref.key, err)
			}
			p.spec.n = int64(len(X))
			if err := replan(len(X)); err != nil {
				return nil, err
			}
			if m, chosen, err = cur.TrainRegression(X, y); err != nil {
				return nil, err
			}
		} else {
			X, y, err := e.classificationData(&p.spec)
			if err != nil {
				return nil, err
			}
			if err := replan(len(X)); err != nil {
				return nil, err
			}
			if m, chosen, err = cur.TrainClassification(X, y); err != nil {
				return nil, err
			}
		}
		// Released: the chosen candidate (fitted on A) and the public
		// split sizes; the scores and the split itself stay secret.
		p.params = params(cur) + "; " + paramString("chosen", names[chosen])
		return m, nil
	}
	return p, nil
}
