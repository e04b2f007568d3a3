package functions

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/auto"
	"github.com/dpsql/dpsql/mechanism/gauss"
	"github.com/dpsql/dpsql/mechanism/logreg"
	"github.com/dpsql/dpsql/mechanism/selection"
)

// DP_TRAIN(t, ε, kind, 'tune=1; …'): private hyperparameter selection over
// a PUBLIC grid by Liu–Talwar random stopping (mechanism/selection,
// docs/mechanisms/selection.md). ε is the TOTAL: each trial gets ε/3 (train
// ε_train + score ε_score on the same rows), and δ pays only the truncation
// at the public cap. Trials are pure ε (δ = 0 for the candidates).

// tuneCandidate is one public grid point.
type tuneCandidate struct {
	kind        string
	momentShare float64 // gauss kinds (0: default)
	clip        float64 // logreg (0: default)
}

func (c tuneCandidate) String() string {
	switch {
	case c.momentShare > 0:
		return fmt.Sprintf("%s(moment_share=%g)", c.kind, c.momentShare)
	case c.clip > 0:
		return fmt.Sprintf("%s(clip=%g)", c.kind, c.clip)
	}
	return c.kind
}

// Public grids (docs/mechanisms/selection.md §4).
var (
	tuneMomentShares = []float64{0.2, 0.4, 0.6, 0.8}
	tuneClipFactors  = []float64{0.1, 0.25, 0.5, 1} // × the loss's gradient bound L
	tuneAutoShares   = []float64{0.25, 0.5, 0.75}
)

// tuneGrid is the public grid of a kind; K is the public class count.
func tuneGrid(kind string, k int) ([]tuneCandidate, error) {
	var g []tuneCandidate
	lip := math.Sqrt2 // multinomial gradient bound L (binary: 1), logreg.Config.Clip
	if k == 2 {
		lip = 1
	}
	switch kind {
	case mechanism.KindLDA, mechanism.KindQDA, mechanism.KindGNB:
		for _, m := range tuneMomentShares {
			g = append(g, tuneCandidate{kind: kind, momentShare: m})
		}
	case mechanism.KindLogReg:
		for _, f := range tuneClipFactors {
			g = append(g, tuneCandidate{kind: kind, clip: f * lip})
		}
	case auto.KindAuto:
		for _, m := range tuneAutoShares {
			g = append(g, tuneCandidate{kind: mechanism.KindLDA, momentShare: m})
		}
		g = append(g, tuneCandidate{kind: mechanism.KindGNB}, tuneCandidate{kind: mechanism.KindLogReg})
	default:
		return nil, fmt.Errorf("tune=1 supports kinds lda, qda, gnb, logreg and auto, not %q", kind)
	}
	return g, nil
}

// tuneTrainer plans one candidate (pure ε) for n rows; errors are public.
func tuneTrainer(c tuneCandidate, s trainSpec, n int, eps float64, stop mechanism.Stop) (func([][]float64, []int) (*mechanism.Model, error), error) {
	if c.kind == mechanism.KindLogReg {
		tr, err := logreg.Plan(logreg.Config{Epsilon: eps, Clip: c.clip, Stop: stop, N: n, Features: s.features,
			Lo: s.lo, Hi: s.hi, Label: s.label, Classes: s.classes})
		if err != nil {
			return nil, err
		}
		return tr.Train, nil
	}
	tr, err := gauss.Plan(gauss.Config{Kind: c.kind, Epsilon: eps, MomentShare: c.momentShare, N: n, Features: s.features,
		Lo: s.lo, Hi: s.hi, Label: s.label, Classes: s.classes})
	if err != nil {
		return nil, err
	}
	return tr.Train, nil
}

// planTune plans DP_TRAIN with tune=1. Every candidate is planned before
// anything is charged, so a candidate that cannot run fails here, for
// public reasons only.
func (e *Env) planTune(a trainArgs, kind string, delta float64) (*trainPlan, error) {
	s, err := e.spec(a.ref, a.opts, true)
	if err != nil {
		return nil, err
	}
	grid, err := tuneGrid(kind, len(s.classes))
	if err != nil {
		return nil, err
	}
	cfg := selection.Config{Candidates: len(grid), Epsilon: a.eps, Delta: delta}
	if cfg.Gamma, err = a.opts.positive("stop"); err != nil {
		return nil, err
	}
	if cfg.ScoreShare, err = a.opts.positive("score_share"); err != nil {
		return nil, err
	}
	sp, err := selection.NewPlan(cfg)
	if err != nil {
		return nil, err
	}
	stop := stopOf(a.ref.ctx)
	for _, c := range grid {
		if _, err := tuneTrainer(c, s, int(s.n), sp.EpsTrain(), stop); err != nil {
			return nil, fmt.Errorf("tune=1: candidate %v: %w", c, err)
		}
	}
	if s.model, err = e.modelName(a.opts, "tuned", a.ref); err != nil {
		return nil, err
	}
	names := make([]string, len(grid))
	for i, c := range grid {
		names[i] = c.String()
	}
	pp := sp.Params()
	base := paramString("tune", 1, "kind", kind, "grid", strings.Join(names, "|"), "delta", sp.Delta(),
		"epsilon_train", sp.EpsTrain(), "epsilon_score", sp.EpsScore(), "stop_probability", sp.Gamma(),
		"max_trials", sp.MaxTrials(), "label", s.label, "features", s.features)
	p := &trainPlan{fn: "DP_TRAIN", kind: kind, spec: s, reqEps: a.eps, reqDelta: delta,
		events: []budget.Event{sp.Event()}, params: base, scales: pp,
		hyper: map[string]any{"tune": 1, "grid": names, "split": map[string]any{
			"epsilon_total": sp.Epsilon(), "epsilon_trial": sp.EpsTrial(), "epsilon_train": sp.EpsTrain(),
			"epsilon_score": sp.EpsScore(), "delta_truncation": sp.Delta(), "stop_probability": sp.Gamma(),
			"max_trials": sp.MaxTrials()}},
		mechanism: "Liu–Talwar random-stopping selection (3ε₁, truncated) over " + strconv.Itoa(len(grid)) + " public candidates"}
	p.train = func() (*mechanism.Model, error) {
		X, y, err := e.classificationData(&p.spec)
		if err != nil {
			return nil, err
		}
		n := len(X)
		res, err := selection.Run(sp, func(c int, epsTrain, epsScore float64) (*mechanism.Model, float64, error) {
			train, err := tuneTrainer(grid[c], p.spec, n, epsTrain, stop)
			if err != nil {
				return nil, 0, err
			}
			m, err := train(X, y)
			if err != nil {
				return nil, 0, err
			}
			correct := 0
			for i, x := range X {
				pr, err := m.Predict(x)
				if err != nil {
					return nil, 0, err
				}
				if pr.Class == p.spec.classes[y[i]] {
					correct++
				}
			}
			score, err := selection.NoisyAccuracy(correct, n, epsScore)
			return m, score, err
		})
		if err != nil {
			return nil, err
		}
		// Released: the chosen candidate and its noisy score (covered by
		// the 3ε₁ bound). The number of trials is not recorded.
		p.params = base + "; " + paramString("chosen", grid[res.Candidate].String(), "score", res.Score)
		return res.Model, nil
	}
	return p, nil
}
