package selection

import (
	"fmt"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/gauss"
	"github.com/dpsql/dpsql/mechanism/linreg"
)

// Public grids of tune=1 (docs/mechanisms/selection.md §6). Every point is
// a post-processing of the one noisy release on A.
var (
	// GaussVariants: post-processing of the noisy statistics (gauss.Variant);
	// the zero variant is the default model.
	GaussVariants = []gauss.Variant{{}, {Ridge: 0.5}, {Ridge: 2}, {Edge: 0.5}, {Shrink: 0.5}}
	// LinRegVariants: AdaSSP ridge factor c and eigenvalue floor factor
	// around the default {linreg.RidgeFactor, linreg.FloorFactor}.
	LinRegVariants = []linreg.Variant{{Ridge: linreg.RidgeFactor, Floor: linreg.FloorFactor},
		{Ridge: 0, Floor: 1}, {Ridge: 0, Floor: 0.3}, {Ridge: 0, Floor: 0.1}, {Ridge: 0, Floor: 0.03}, {Ridge: 1, Floor: 1}, {Ridge: 4, Floor: 1}}
)

// Tuner is a planned held-out selection for one sufficient-statistics
// kind: the A-release planned for n_A rows at the call's full (ε, δ), the
// split sizes and ε_B. Everything in it is public; a Tuner trains once.
type Tuner struct {
	n, nA, nB int
	epsB      float64
	events    []budget.Event
	grid      []string
	g         *gauss.Trainer
	l         *linreg.Trainer
	classes   []string
	lo, hi    float64 // regression label bounds
}

// PlanGauss plans tune=1 for lda/qda/gnb; cfg.N is the table's n (the
// A-release is planned for n_A). Its errors depend only on cfg.
func PlanGauss(cfg gauss.Config) (*Tuner, error) {
	nA, nB, err := HoldoutSize(cfg.N)
	if err != nil {
		return nil, err
	}
	n := cfg.N
	cfg.N = nA
	tr, err := gauss.Plan(cfg)
	if err != nil {
		return nil, err
	}
	t := &Tuner{n: n, nA: nA, nB: nB, events: tr.Events(), g: tr, classes: tr.Config().Classes}
	for _, v := range GaussVariants {
		t.grid = append(t.grid, v.String())
	}
	return t, t.scoreEpsilon(cfg.Epsilon)
}

// PlanLinReg plans tune=1 for linreg; cfg.N is the table's n.
func PlanLinReg(cfg linreg.Config) (*Tuner, error) {
	nA, nB, err := HoldoutSize(cfg.N)
	if err != nil {
		return nil, err
	}
	n := cfg.N
	cfg.N = nA
	tr, err := linreg.Plan(cfg)
	if err != nil {
		return nil, err
	}
	t := &Tuner{n: n, nA: nA, nB: nB, events: tr.Events(), l: tr, lo: cfg.LabelLo, hi: cfg.LabelHi}
	for _, v := range LinRegVariants {
		t.grid = append(t.grid, fmt.Sprintf("ridge=%g,floor=%g", v.Ridge, v.Floor))
	}
	return t, t.scoreEpsilon(cfg.Epsilon)
}

func (t *Tuner) scoreEpsilon(eps float64) error {
	var err error
	if t.epsB, err = ScoreEpsilon(t.events, eps); err != nil {
		return err
	}
	return CheckHoldout(t.nB, t.epsB)
}

// Events is the whole cost: the A-release's events (parallel composition).
func (t *Tuner) Events() []budget.Event { return append([]budget.Event(nil), t.events...) }

// Sizes returns n, n_A (fit) and n_B (score); ScoreEpsilon returns ε_B.
func (t *Tuner) Sizes() (n, nFit, nScore int) { return t.n, t.nA, t.nB }
func (t *Tuner) ScoreEpsilon() float64        { return t.epsB }

// Grid names the candidates; Gauss and LinReg expose the A-release plan
// (its public calibration).
func (t *Tuner) Grid() []string          { return append([]string(nil), t.grid...) }
func (t *Tuner) Gauss() *gauss.Trainer   { return t.g }
func (t *Tuner) LinReg() *linreg.Trainer { return t.l }

// TrainClassification draws the secret split, releases on A, scores every
// candidate on B and returns the chosen model (fitted on A) and its index.
// X, y are the n rows (y: indices into the classes).
func (t *Tuner) TrainClassification(X [][]float64, y []int) (*mechanism.Model, int, error) {
	if t.g == nil || len(X) != t.n || len(y) != t.n {
		return nil, 0, fmt.Errorf("selection: %d rows for a classification plan of n = %d (a caller bug)", len(X), t.n)
	}
	split, err := NewSplit(t.n)
	if err != nil {
		return nil, 0, err
	}
	return t.finish(HoldOut(split, t.epsB, func(a []int) ([]*mechanism.Model, error) {
		return t.g.TrainVariants(pick(X, a), pick(y, a), GaussVariants)
	}, func(m *mechanism.Model, b []int) float64 {
		return ClassScore(m, t.classes, pick(X, b), pick(y, b))
	}))
}

// TrainRegression is TrainClassification for linreg (raw labels).
func (t *Tuner) TrainRegression(X [][]float64, y []float64) (*mechanism.Model, int, error) {
	if t.l == nil || len(X) != t.n || len(y) != t.n {
		return nil, 0, fmt.Errorf("selection: %d rows for a regression plan of n = %d (a caller bug)", len(X), t.n)
	}
	split, err := NewSplit(t.n)
	if err != nil {
		return nil, 0, err
	}
	return t.finish(HoldOut(split, t.epsB, func(a []int) ([]*mechanism.Model, error) {
		return t.l.TrainVariants(pick(X, a), pick(y, a), LinRegVariants)
	}, func(m *mechanism.Model, b []int) float64 {
		return RegressionScore(m, t.lo, t.hi, pick(X, b), pick(y, b))
	}))
}

func (t *Tuner) finish(c int, ms []*mechanism.Model, err error) (*mechanism.Model, int, error) {
	if err != nil {
		return nil, 0, err
	}
	m := ms[c]
	m.Params["tune_n_fit"], m.Params["tune_n_score"], m.Params["tune_score_epsilon"] = float64(t.nA), float64(t.nB), t.epsB
	return m, c, nil
}

func pick[T any](v []T, ix []int) []T {
	out := make([]T, len(ix))
	for i, j := range ix {
		out[i] = v[j]
	}
	return out
}

// CapScoreEpsilon lowers ε_B to at most e (a re-plan on a changed n must
// not score with more than the charged plan's ε_B) and re-checks the rule.
func (t *Tuner) CapScoreEpsilon(e float64) error {
	t.epsB = min(t.epsB, e)
	return CheckHoldout(t.nB, t.epsB)
}
