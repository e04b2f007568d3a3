package selection

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/noise"
)

// Public constants (docs/mechanisms/selection.md §4).
const (
	// Factor is Liu–Talwar's 3: the selection of ε₁-DP trials is 3ε₁-DP.
	Factor = 3
	// DefaultScoreShare is the share of a trial's ε₁ given to its score.
	DefaultScoreShare = 0.2
	// TrialsPerCandidate sets the default stop probability
	// γ = 1/(TrialsPerCandidate·m): about TrialsPerCandidate·m trials on
	// average, so each of the m candidates is tried about twice.
	TrialsPerCandidate = 2
	// MaxTrials bounds the public cap T (running time).
	MaxTrials = 10000
	// MaxCandidates bounds the grid.
	MaxCandidates = 1000
)

// Config is the public input of one selection.
type Config struct {
	Candidates int     // m ≥ 1: size of the public grid
	Epsilon    float64 // total ε of the selection (what the analyst asked for)
	// Delta is the δ budget of the truncation (> 0 unless Gamma = 1).
	Delta float64
	// Gamma is the stop probability γ ∈ (0, 1]; 0 selects
	// 1/(TrialsPerCandidate·m).
	Gamma float64
	// ScoreShare ∈ (0, 1) is ε_score/ε₁; 0 selects DefaultScoreShare.
	ScoreShare float64
}

// Plan is a validated selection: the public split of ε and the cap.
type Plan struct {
	cfg        Config
	epsTrial   float64 // ε₁ with Factor·ε₁ ≤ ε
	epsTrain   float64
	epsScore   float64 // ε_train + ε_score ≤ ε₁
	gamma      float64
	maxTrials  int
	deltaTrunc float64
}

// below returns the largest x' ≤ x with f(x') ≤ limit, stepping down by one
// ulp at a time (float rounding only).
func below(x, limit float64, f func(float64) float64) float64 {
	for f(x) > limit {
		x = math.Nextafter(x, 0)
	}
	return x
}

// NewPlan splits ε publicly and fixes the cap T: the smallest T with
// (1 + e^ε)(1 − γ)^T ≤ δ. Its errors depend only on cfg.
func NewPlan(cfg Config) (*Plan, error) {
	if cfg.Candidates < 1 || cfg.Candidates > MaxCandidates {
		return nil, fmt.Errorf("selection: the grid must have 1 to %d candidates, got %d", MaxCandidates, cfg.Candidates)
	}
	if !(cfg.Epsilon > 0) || math.IsInf(cfg.Epsilon, 0) {
		return nil, fmt.Errorf("selection: epsilon must be positive and finite, got %v", cfg.Epsilon)
	}
	if cfg.Gamma == 0 {
		cfg.Gamma = 1 / float64(TrialsPerCandidate*cfg.Candidates)
	}
	if !(cfg.Gamma > 0 && cfg.Gamma <= 1) {
		return nil, fmt.Errorf("selection: stop probability must be in (0, 1], got %v", cfg.Gamma)
	}
	if cfg.ScoreShare == 0 {
		cfg.ScoreShare = DefaultScoreShare
	}
	if !(cfg.ScoreShare > 0 && cfg.ScoreShare < 1) {
		return nil, fmt.Errorf("selection: score share must be in (0, 1), got %v", cfg.ScoreShare)
	}
	if !(cfg.Delta >= 0 && cfg.Delta < 1) {
		return nil, fmt.Errorf("selection: delta must be in [0, 1), got %v", cfg.Delta)
	}
	p := &Plan{cfg: cfg, gamma: cfg.Gamma}
	p.epsTrial = below(cfg.Epsilon/Factor, cfg.Epsilon, func(x float64) float64 { return Factor * x })
	p.epsScore = p.epsTrial * cfg.ScoreShare
	p.epsTrain = below(p.epsTrial-p.epsScore, p.epsTrial, func(x float64) float64 { return x + p.epsScore })
	if cfg.Gamma == 1 {
		// One trial, no truncation: plain composition, no δ.
		p.maxTrials = 1
		return p, nil
	}
	if !(cfg.Delta > 0) {
		return nil, errors.New("selection: random stopping with a cap needs δ > 0 for the truncation (give delta= or a table δ budget)")
	}
	lead := 1 + math.Exp(cfg.Epsilon)
	t := math.Ceil(math.Log(cfg.Delta/lead) / math.Log1p(-cfg.Gamma))
	if !(t >= 1) || t > MaxTrials {
		return nil, fmt.Errorf("selection: the cap for γ = %v and δ = %v is %v trials, above %d; raise the stop probability", cfg.Gamma, cfg.Delta, t, MaxTrials)
	}
	p.maxTrials = int(t)
	for p.truncation() > cfg.Delta && p.maxTrials < MaxTrials { // float rounding of the log
		p.maxTrials++
	}
	p.deltaTrunc = p.truncation()
	if p.deltaTrunc > cfg.Delta {
		return nil, fmt.Errorf("selection: truncation δ %v exceeds %v", p.deltaTrunc, cfg.Delta)
	}
	return p, nil
}

// truncation is δ_trunc = (1 + e^{Factor·ε₁})(1 − γ)^T.
func (p *Plan) truncation() float64 {
	return (1 + math.Exp(Factor*p.epsTrial)) * math.Exp(float64(p.maxTrials)*math.Log1p(-p.gamma))
}

// EpsTrain and EpsScore are the ε of one trial's training and score.
func (p *Plan) EpsTrain() float64 { return p.epsTrain }
func (p *Plan) EpsScore() float64 { return p.epsScore }

// EpsTrial is ε₁ = ε_train + ε_score (up to rounding down).
func (p *Plan) EpsTrial() float64 { return p.epsTrial }

// Gamma is the stop probability; MaxTrials the public cap T.
func (p *Plan) Gamma() float64 { return p.gamma }
func (p *Plan) MaxTrials() int { return p.maxTrials }

// Epsilon and Delta are the total cost of the selection.
func (p *Plan) Epsilon() float64 { return Factor * p.epsTrial }
func (p *Plan) Delta() float64   { return p.deltaTrunc }

// Event is the accountant's record of the whole selection: one generic
// (ε, δ) release (Liu–Talwar's bound is not a Laplace or Gaussian curve).
func (p *Plan) Event() budget.Event {
	return budget.Event{Kind: budget.Generic, Epsilon: p.Epsilon(), Delta: p.Delta()}
}

// Params are the public planning values (dry run, dp_models).
func (p *Plan) Params() map[string]float64 {
	return map[string]float64{
		"epsilon": p.Epsilon(), "delta": p.Delta(), "epsilon_trial": p.epsTrial,
		"epsilon_train": p.epsTrain, "epsilon_score": p.epsScore, "stop_probability": p.gamma,
		"max_trials": float64(p.maxTrials), "candidates": float64(p.cfg.Candidates),
		"expected_trials": (1 - math.Pow(1-p.gamma, float64(p.maxTrials))) / p.gamma,
	}
}

// Trial trains candidate c with epsTrain and scores it with epsScore (each
// pure ε-DP on the rows); higher scores are better. An error must depend on
// public inputs only (it aborts the whole selection).
type Trial[M any] func(c int, epsTrain, epsScore float64) (model M, score float64, err error)

// Result is the released output: the best candidate, its model and its
// noisy score. The number of trials is deliberately not part of it.
type Result[M any] struct {
	Candidate int
	Model     M
	Score     float64
}

// Run is the random-stopping loop: pick a candidate uniformly, run its
// trial, keep the best (first one on ties), stop with probability γ after
// each trial or after MaxTrials trials. The coins come from noise/.
func Run[M any](p *Plan, trial Trial[M]) (Result[M], error) {
	r, _, err := run(p, trial)
	return r, err
}

// run also returns the trial count (tests only: it is not released).
func run[M any](p *Plan, trial Trial[M]) (Result[M], int, error) {
	var best Result[M]
	have := false
	for t := 1; ; t++ {
		c := int(noise.IntN(uint64(p.cfg.Candidates)))
		m, s, err := trial(c, p.epsTrain, p.epsScore)
		if err != nil {
			return Result[M]{}, t, fmt.Errorf("selection: trial %d: %w", t, err)
		}
		if !have || s > best.Score {
			best, have = Result[M]{Candidate: c, Model: m, Score: s}, true
		}
		if t >= p.maxTrials || noise.Uniform() < p.gamma {
			return best, t, nil
		}
	}
}

// NoisyAccuracy is the DP score (correct + Lap(1/ε))/n: the number of
// correct predictions of a fixed model changes by at most 1 when one row is
// replaced, so it is ε-DP; n is public.
func NoisyAccuracy(correct, n int, eps float64) (float64, error) {
	if n < 1 {
		return 0, errors.New("selection: no rows to score")
	}
	v, err := noise.AddLaplace(float64(correct), 1/eps)
	if err != nil {
		return 0, fmt.Errorf("selection: score: %w", err)
	}
	return v / float64(n), nil
}
