package selection

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Held-out selection (docs/mechanisms/selection.md §2–§5): a secret
// uniformly random split of the row positions into A (fit) and B (score).
// Every candidate is a post-processing of ONE noisy release computed on A;
// B scores all of them and report-noisy-max releases only the index of the
// best. A and B are disjoint, so the two parts compose in parallel: the
// whole is as private as the release on A, provided the score's ε is
// dominated by it (ScoreEpsilon).

// Public constants of the held-out rule.
const (
	// HoldoutDivisor fixes n_B = ⌊n / HoldoutDivisor⌋ rows for scoring
	// (a tenth: measured better than a fifth, docs/results/selection.md,
	// because the fit release loses fewer rows).
	HoldoutDivisor = 10
	// MinHoldout is the smallest n_B that tune=1 accepts.
	MinHoldout = 50
	// MinScoreSignal: tune=1 also needs n_B·ε_B ≥ 20, i.e. the score
	// noise scale 2/ε_B at most n_B/10; below that the noisy scores
	// (Laplace on counts) cannot tell candidates apart.
	MinScoreSignal = 20
	// ScoreQuantum is the grid of every score: per-row contributions are
	// multiples of it, so sums are too, and the Laplace sampler's grid
	// (a power of two ≤ ScoreQuantum for ε_B ≥ MinScoreEpsilon) adds its
	// noise without rounding the scores.
	ScoreQuantum = 1.0 / 1024
	// MinScoreEpsilon is the smallest ε_B accepted (keeps the Laplace
	// grid at or below ScoreQuantum: b′ = 2/ε_B·(1+2⁻¹⁹) ≤ 2³⁰).
	MinScoreEpsilon = 1e-6
	// maxScore bounds |score| so that scores are exact in float64 on the
	// quantum grid (n ≤ 2⁴⁰ rows).
	maxScore = 0x1p40
)

// HoldoutSize returns the public split sizes n_A = n − ⌊n/10⌋ and n_B, or an
// error when n_B < MinHoldout. It depends only on n.
func HoldoutSize(n int) (nA, nB int, err error) {
	nB = n / HoldoutDivisor
	if nB < MinHoldout || n-nB < 1 {
		return 0, 0, fmt.Errorf("selection: tune=1 scores on ⌊n/%d⌋ held-out rows and needs at least %d of them (n ≥ %d), the table has n = %d",
			HoldoutDivisor, MinHoldout, MinHoldout*HoldoutDivisor, n)
	}
	return n - nB, nB, nil
}

// Split is a secret partition of the positions 0..n−1 into A and B.
type Split struct {
	b noise.Subset
}

// NewSplit draws B uniformly among the ⌊n/10⌋-subsets of {0..n−1} with
// crypto randomness, independently of the rows. A uniform subset of
// positions is a uniform sub-multiset of the rows whatever the scan order
// (selection.md §2).
func NewSplit(n int) (Split, error) {
	_, nB, err := HoldoutSize(n)
	if err != nil {
		return Split{}, err
	}
	s, err := noise.SampleSubset(n, nB)
	if err != nil {
		return Split{}, fmt.Errorf("selection: %w", err)
	}
	return Split{b: s}, nil
}

// SplitFromSubset wraps a given set B (tests and audits only need it; the
// SQL path always uses NewSplit).
func SplitFromSubset(b noise.Subset) Split { return Split{b: b} }

// N returns n; InB reports whether position i is a scoring row.
func (s Split) N() int         { return s.b.Len() }
func (s Split) InB(i int) bool { return s.b.Has(i) }
func (s Split) Parts() (a, b []int) {
	for i := 0; i < s.b.Len(); i++ {
		if s.b.Has(i) {
			b = append(b, i)
		} else {
			a = append(a, i)
		}
	}
	return a, b
}

// ScoreEpsilon returns the ε_B of the report-noisy-max on B: the largest
// value ≤ eps whose worst-case pure-DP Rényi curve (randomised response,
// budget.RandomizedResponseRDP) stays below the raw curve of the A-release's
// events at every order the accountant uses. The ledger records only A's
// events: a row in B is covered because the mixture over the split of
// (A-part, B-part) has, at every order, Rényi divergence at most the larger
// of the two parts' (joint quasi-convexity), and the basic (ε, δ) view
// because ε_B ≤ Σε_i = eps.
func ScoreEpsilon(events []budget.Event, eps float64) (float64, error) {
	if !(eps > 0) || math.IsInf(eps, 0) {
		return 0, fmt.Errorf("selection: epsilon must be positive and finite, got %v", eps)
	}
	var basic float64
	for _, e := range events {
		basic += e.Epsilon
	}
	orders := scoreOrders()
	curve := make([]float64, len(orders))
	for i, a := range orders {
		for _, e := range events {
			switch e.Kind {
			case budget.Laplace:
				curve[i] += budget.LaplaceRDP(a, e.Epsilon)
			case budget.Gaussian:
				curve[i] += budget.GaussianRDP(a, e.Ratio)
			default:
				curve[i] += budget.RandomizedResponseRDP(a, e.Epsilon)
			}
		}
	}
	ok := func(x float64) bool {
		if x > basic || x > eps {
			return false
		}
		for i, a := range orders {
			if budget.RandomizedResponseRDP(a, x) > curve[i] {
				return false
			}
		}
		return true
	}
	lo, hi := 0.0, math.Min(eps, basic)
	if ok(hi) {
		lo = hi
	} else {
		for range 100 {
			mid := (lo + hi) / 2
			if ok(mid) {
				lo = mid
			} else {
				hi = mid
			}
		}
	}
	if lo < MinScoreEpsilon {
		return 0, fmt.Errorf("selection: the score's epsilon %v is below the minimum %v; use a larger epsilon", lo, MinScoreEpsilon)
	}
	return lo, nil
}

// scoreOrders are the Rényi orders at which ScoreEpsilon checks domination:
// the accountant's default orders and a dense geometric grid
// α = 1 + 2^(k/4), k = −40 … 80 (α ∈ (1.001, 10⁶]), so that the check holds
// for accounts protected with any order set in that range.
func scoreOrders() []float64 {
	o := budget.DefaultOrders()
	for k := -40; k <= 80; k++ {
		o = append(o, 1+math.Exp2(float64(k)/4))
	}
	return o
}

// CheckHoldout is the public rule that refuses tune=1 when B cannot score:
// n_B ≥ MinHoldout and the report-noisy-max noise scale 2/ε_B at most a
// tenth of n_B (n_B·ε_B ≥ MinScoreSignal).
func CheckHoldout(nB int, epsB float64) error {
	if nB < MinHoldout || float64(nB)*epsB < MinScoreSignal {
		return fmt.Errorf("selection: tune=1 scores on ⌊n/%d⌋ = %d held-out rows with ε_B = %.4g; it needs n_B ≥ %d and n_B·ε_B ≥ %d (a larger table or ε)",
			HoldoutDivisor, nB, epsB, MinHoldout, MinScoreSignal)
	}
	return nil
}

// ReportNoisyMax releases the index of the largest of scores + Laplace
// noise of scale 2/ε, ties to the lowest index. Each score must have
// sensitivity 1 under replacing one row of B (the candidates being fixed)
// and lie on the ScoreQuantum grid. Every score gets its draw, always.
// It is ε-DP (selection.md §4; 2/ε because the scores are not monotone).
func ReportNoisyMax(scores []float64, eps float64) (int, error) {
	if !(eps >= MinScoreEpsilon) || math.IsInf(eps, 0) {
		return 0, fmt.Errorf("selection: score epsilon %v must be finite and at least %v", eps, MinScoreEpsilon)
	}
	return reportNoisyMax(scores, 2/eps)
}

// reportNoisyMax is ReportNoisyMax at an explicit Laplace scale (the
// audits' under-noised variants call it directly).
func reportNoisyMax(scores []float64, scale float64) (int, error) {
	if len(scores) == 0 {
		return 0, errors.New("selection: no candidates to select from")
	}
	for _, s := range scores {
		if math.IsNaN(s) || math.Abs(s) > maxScore || s != math.Round(s/ScoreQuantum)*ScoreQuantum {
			return 0, fmt.Errorf("selection: score %v is not on the %v grid (a caller bug)", s, ScoreQuantum)
		}
	}
	best, bestV := 0, math.Inf(-1)
	for i, s := range scores {
		v, err := noise.AddLaplace(s, scale)
		if err != nil {
			return 0, fmt.Errorf("selection: %w", err)
		}
		if v > bestV {
			best, bestV = i, v
		}
	}
	return best, nil
}

// ClassScore is a classification candidate's score on B: its number of
// correct predictions (an integer; sensitivity 1 per replaced row).
// yB are indices into classes (out of range counts as class 0, the
// trainers' rule); a prediction error counts as wrong.
func ClassScore(m *mechanism.Model, classes []string, xB [][]float64, yB []int) float64 {
	correct := 0
	for i, x := range xB {
		k := yB[i]
		if k < 0 || k >= len(classes) {
			k = 0
		}
		p, err := m.Predict(x)
		if err == nil && p.Class == classes[k] {
			correct++
		}
	}
	return float64(correct)
}

// LossClipFraction sets the public clip of a regression row's error:
// errors are measured in units of LossClipFraction·(hi − lo) and their
// squares capped at 1 (a Huber-like robust score). A quarter of the label
// range keeps typical errors unclipped while making the per-row losses,
// and so the differences between candidates, 16× larger against the
// report-noisy-max noise than the full-range cap.
const LossClipFraction = 0.25

// RegressionScore is a regression candidate's score on B: −Σ ℓᵢ with
// ℓᵢ = min(((ŷ − y)/(c·(hi − lo)))², 1) rounded to ScoreQuantum,
// c = LossClipFraction, where ŷ and y are clipped to the public label
// range [lo, hi] (NULL or NaN: the midpoint). Each ℓᵢ ∈ [0, 1], so the
// score has sensitivity 1.
func RegressionScore(m *mechanism.Model, lo, hi float64, xB [][]float64, yB []float64) float64 {
	var s float64
	for i, x := range xB {
		p, err := m.Predict(x)
		v := p.Value
		if err != nil {
			v = math.NaN()
		}
		s -= RegressionLoss(v, yB[i], lo, hi)
	}
	return s
}

// RegressionLoss is one row's quantised clipped squared loss in [0, 1].
func RegressionLoss(pred, y, lo, hi float64) float64 {
	clip := func(v float64) float64 {
		if math.IsNaN(v) {
			return (lo + hi) / 2
		}
		return mechanism.Clip(v, lo, hi)
	}
	e := (clip(pred) - clip(y)) / (LossClipFraction * (hi - lo))
	l := math.Min(e*e, 1)
	return math.Round(l/ScoreQuantum) * ScoreQuantum
}

// HoldOut runs the held-out selection on a drawn split: fit receives the
// positions of A and returns every candidate (one noisy release on A,
// post-processed per candidate); score returns a candidate's score on the
// positions of B (sensitivity 1, on the ScoreQuantum grid). Every
// candidate is scored, always; ReportNoisyMax at epsScore picks one. It
// returns the index and all candidates (only the chosen one may be
// released).
func HoldOut[M any](split Split, epsScore float64, fit func(a []int) ([]M, error), score func(m M, b []int) float64) (int, []M, error) {
	a, b := split.Parts()
	models, err := fit(a)
	if err != nil {
		return 0, nil, err
	}
	scores := make([]float64, len(models))
	for i, m := range models {
		scores[i] = score(m, b)
	}
	c, err := ReportNoisyMax(scores, epsScore)
	if err != nil {
		return 0, nil, err
	}
	return c, models, nil
}
