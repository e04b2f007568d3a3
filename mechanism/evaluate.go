package mechanism

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/noise"
)

// Evaluation is DP_EVALUATE: the DP quality of a released model on a
// protected test table.
//
// Classifiers: accuracy = (correct + Lap(1/ε))/n. Replacing one row changes
// the count of correct predictions by at most 1.
//
// Regressors: RMSE = √(max(0, SSE + Lap((hi−lo)²/ε))/n), where predictions
// and labels are clipped to the public label bounds [lo, hi], so each squared
// error lies in [0, (hi−lo)²] and replacing one row moves SSE by at most
// (hi−lo)².
type Evaluation struct {
	Epsilon    float64
	Regression bool
	Lo, Hi     float64 // regression label bounds
}

// NewEvaluation validates public parameters.
func NewEvaluation(eps float64, regression bool, lo, hi float64) (*Evaluation, error) {
	if !(eps > 0) || math.IsInf(eps, 0) {
		return nil, fmt.Errorf("evaluate: epsilon must be positive and finite, got %v", eps)
	}
	if regression && !(lo < hi) {
		return nil, fmt.Errorf("evaluate: label bounds must have lower < upper, got [%v, %v]", lo, hi)
	}
	if w := hi - lo; regression && math.IsInf(w*w, 0) {
		return nil, fmt.Errorf("evaluate: label bounds [%v, %v] are too far apart for float64", lo, hi)
	}
	return &Evaluation{Epsilon: eps, Regression: regression, Lo: lo, Hi: hi}, nil
}

// Sensitivity of the released sum (count or SSE) under replace-one, for n
// rows. The count of correct predictions is an exact integer; the SSE is a
// compensated float sum of terms in [0, (hi−lo)²], inflated by SumSlack(n).
func (e *Evaluation) Sensitivity(n int64) float64 {
	if e.Regression {
		w := e.Hi - e.Lo
		return w * w * SumSlack(n)
	}
	return 1
}

// Scale is the Laplace scale of the released sum for n rows.
func (e *Evaluation) Scale(n int64) float64 { return e.Sensitivity(n) / e.Epsilon }

// Event is the accountant's record of this release.
func (e *Evaluation) Event() budget.Event {
	return budget.Event{Kind: budget.Laplace, Epsilon: e.Epsilon}
}

// Score accumulates per-row outcomes.
type Score struct {
	e       *Evaluation
	correct int64
	sse     CompensatedSum
	n       int64
}

// Score starts a pass over the test rows.
func (e *Evaluation) Score() *Score { return &Score{e: e} }

// AddCorrect records one classification outcome.
func (s *Score) AddCorrect(correct bool) {
	if correct {
		s.correct++
	}
	s.n++
}

// AddResidual records one regression prediction and its label (both clipped).
func (s *Score) AddResidual(pred, label float64) {
	// |fl(a − b)| ≤ fl(hi − lo) for a, b ∈ [lo, hi], so every term lies in
	// [0, fl(w)²] up to one rounding, covered by SumSlack.
	d := Clip(pred, s.e.Lo, s.e.Hi) - Clip(label, s.e.Lo, s.e.Hi)
	s.sse.Add(d * d)
	s.n++
}

// Exact returns the metric without noise, for a test table that is not
// protected (post-processing of a released model on public rows).
func (s *Score) Exact() (float64, error) {
	if s.n < 1 {
		return 0, errors.New("evaluate: the test table is empty")
	}
	n := float64(s.n)
	if s.e.Regression {
		return math.Sqrt(s.sse.Sum() / n), nil
	}
	return float64(s.correct) / n, nil
}

// Release returns DP accuracy (classifiers) or DP RMSE (regressors).
func (s *Score) Release() (float64, error) {
	if s.n < 1 {
		return 0, errors.New("evaluate: the test table is empty")
	}
	if s.n > MaxSumRows {
		return 0, fmt.Errorf("evaluate: %d rows exceed the supported %d", s.n, int64(MaxSumRows))
	}
	sum := float64(s.correct)
	if s.e.Regression {
		sum = s.sse.Sum()
	}
	v, err := noise.AddLaplace(sum, s.e.Scale(s.n))
	if err != nil {
		return 0, fmt.Errorf("evaluate: %w", err)
	}
	n := float64(s.n)
	if s.e.Regression {
		return math.Sqrt(math.Max(0, v) / n), nil
	}
	return Clip(v/n, 0, 1), nil
}
