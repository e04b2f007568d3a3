package mechanism

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/noise"
)

// KindPrior is the DP class-prior model: it predicts the class with the
// largest noisy count whatever the row (docs/mechanisms/prior.md).
const KindPrior = "prior"

// The public rule of DP_TRAIN's classification kinds (docs/mechanisms/
// prior.md §2): which regime a call runs is a function of n, d, K and ε
// only.
const (
	// PriorShare is the share of ε of the prior counts, and that of the
	// private selection between the model and the prior (select regime).
	PriorShare = 0.05
	// PriorMinRatio: below n·ε/(F·K′) = 0.5 the kind's released
	// coordinates carry less than half a unit of n·ε each.
	PriorMinRatio = 0.5
	// PriorMinResolution: the select regime needs s = n·ε_sel/2 ≥ 1. Below,
	// even the most extreme difference the rows can hold (a model right on
	// every row the prior gets wrong, one class holding every row) is
	// resolved with odds under e:1 by the selection and by the fallback
	// counts at ε_prior = ε_sel (prior.md §2).
	PriorMinResolution = 1
	// priorFloorLevel is β of the log-prior floor (prior.md §3): a noisy
	// count under the floor is within the 1 − β upper bound of the largest
	// of K Laplace noises on a count of 0.
	priorFloorLevel = 0.05
)

// PriorRatio is n·ε/(F·K′): F = d + 1 coordinates (intercept), K′ = 1 for
// a binary label (one score), K otherwise.
func PriorRatio(n int64, d, k int, eps float64) float64 {
	kk := k
	if k <= 2 {
		kk = 1
	}
	return float64(n) * eps / (float64(d+1) * float64(kk))
}

// PriorResolution is s = n·ε_sel/2 with ε_sel = PriorShare·ε: the select
// regime's resolution (a candidate better on a fraction g of the rows is
// released with probability 1 − ½e^(−g·s)).
func PriorResolution(n int64, eps float64) float64 {
	return float64(n) * eps * PriorShare / 2
}

// PriorAlone reports whether the public rule releases the DP class prior
// alone, with the whole ε: the model's coordinates are below half a unit
// of n·ε each, or the selection and its fallback counts could not resolve
// even the most extreme difference.
func PriorAlone(n int64, d, k int, eps float64) bool {
	return PriorRatio(n, d, k, eps) < PriorMinRatio || PriorResolution(n, eps) < PriorMinResolution
}

// PriorFloor is the floor of the balanced objective's noisy class counts
// at ε (Laplace scale b = 2/ε): m = b·ln(K/(2β)), the count under which a
// noisy count cannot be told from 0 — P(max_k Lap_k(b) > m) ≤ (K/2)·e^(−m/b)
// = β — and at least 1. A public function of K and ε.
func PriorFloor(k int, eps float64) float64 {
	return math.Max(1, 2/eps*math.Log(float64(k)/(2*priorFloorLevel)))
}

// PriorCounts releases the class counts of y (classes 0..k−1) with Laplace
// noise of scale 2/ε each: replacing one row moves one unit from one count
// to another, ‖Δ‖₁ ≤ 2, so the vector is ε-DP (row unit). Only functions
// of the noisy counts leave the package's callers (an argmax, log-priors).
func PriorCounts(y []int, k int, eps float64) ([]float64, error) {
	if k < 2 || !(eps > 0) || math.IsInf(eps, 0) {
		return nil, fmt.Errorf("prior: need k ≥ 2 classes and a positive finite ε, got k = %d, ε = %v", k, eps)
	}
	return noisyCounts(y, k, 2/eps)
}

// noisyCounts adds Laplace noise of the given scale to the class counts.
func noisyCounts(y []int, k int, scale float64) ([]float64, error) {
	c := classCounts(y, k)
	if err := noise.AddLaplaceVec(c, scale); err != nil {
		return nil, fmt.Errorf("prior: %w", err)
	}
	return c, nil
}

// PriorEvent is the accountant's record of PriorCounts or PriorClass at ε.
func PriorEvent(eps float64) budget.Event { return budget.Event{Kind: budget.Laplace, Epsilon: eps} }

// argmax of noisy counts (first on ties: a fixed rule).
func argmax(c []float64) int {
	best := 0
	for i, v := range c {
		if v > c[best] {
			best = i
		}
	}
	return best
}

// PriorClass releases the index of a large class count of y by
// permute-and-flip (McKenna & Sheldon, NeurIPS 2020) with utility the
// count: replacing one row changes every count by at most 1 (Δu = 1), so
// visiting the classes in a uniformly random order and accepting class r
// with probability exp(ε(c_r − c*)/2) (c* the largest count) is ε-DP, and
// it never picks a worse class more often than the exponential mechanism
// does. Every class gets its coin (time independent of the counts).
func PriorClass(y []int, k int, eps float64) (int, error) {
	if k < 2 || !(eps > 0) || math.IsInf(eps, 0) {
		return 0, fmt.Errorf("prior: need k ≥ 2 classes and a positive finite ε, got k = %d, ε = %v", k, eps)
	}
	return permuteAndFlip(classCounts(y, k), eps/2), nil
}

func classCounts(y []int, k int) []float64 {
	c := make([]float64, k)
	for _, v := range y {
		if v >= 0 && v < k {
			c[v]++
		}
	}
	return c
}

// permuteAndFlip accepts candidate r with probability exp(rate·(u_r − u*)).
func permuteAndFlip(u []float64, rate float64) int {
	best := u[argmax(u)]
	order := make([]int, len(u))
	for i := range order {
		order[i] = i
	}
	for i := len(order) - 1; i > 0; i-- { // Fisher–Yates
		j := int(noise.IntN(uint64(i + 1)))
		order[i], order[j] = order[j], order[i]
	}
	chosen := -1
	for _, r := range order {
		// The best candidate accepts with probability 1 (Uniform < 1).
		if noise.Uniform() < math.Exp(rate*(u[r]-best)) && chosen < 0 {
			chosen = r
		}
	}
	return chosen
}

// NewPriorModel is the constant model predicting class. It keeps the
// trained model's label, features, inputs and scaler so that DP_PREDICT
// takes the same arguments.
func NewPriorModel(like *Model, class int) *Model {
	w := make([]float64, len(like.Classes))
	w[class] = 1
	return &Model{Kind: KindPrior, Label: like.Label, Features: like.Features, Inputs: like.Inputs,
		Classes: like.Classes, Scaler: like.Scaler, Weights: [][]float64{w}}
}

// logPriors are log π̃_k from noisy counts, each floored at floor (a public
// function of K and ε, PriorFloor: a noisy count under it may be a class
// without rows).
func logPriors(counts []float64, floor float64) []float64 {
	var tot float64
	c := make([]float64, len(counts))
	for i, v := range counts {
		c[i] = math.Max(v, max(floor, 1))
		tot += c[i]
	}
	for i := range c {
		c[i] = math.Log(c[i] / tot)
	}
	return c
}

// BalancedKinds are the kinds whose class scores are log-likelihood
// (log-odds) units, so that subtracting the log prior gives the scorer of
// the balanced (class-weighted) objective: logit adjustment (Menon et al.,
// "Long-tail learning via logit adjustment", ICLR 2021).
var BalancedKinds = []string{KindLogReg, KindLDA, KindQDA, KindGNB}

// LogitAdjust turns m into the balanced scorer: each class score loses
// log π̃_k (linear scorers: the intercept weight; quadratic scorers, whose
// score is −2 log-likelihood: +2 log π̃_k on the constant), π̃_k from the
// noisy counts floored at floor (PriorFloor at the counts' ε).
// Post-processing of m and of the noisy counts.
func LogitAdjust(m *Model, counts []float64, floor float64) error {
	if len(counts) != len(m.Classes) {
		return fmt.Errorf("balanced: %d counts for %d classes", len(counts), len(m.Classes))
	}
	if !m.Scaler.Intercept || m.RFF != nil {
		return fmt.Errorf("balanced: the %s model has no intercept coordinate", m.Kind)
	}
	lp := logPriors(counts, floor)
	f := m.Scaler.Dim()
	root := math.Sqrt(float64(f)) // the intercept coordinate is 1/√F
	switch m.Kind {
	case KindLogReg, KindLDA:
		if len(m.Weights) == 1 && len(m.Classes) == 2 {
			m.Weights[0][f-1] -= (lp[1] - lp[0]) * root
			return nil
		}
		if len(m.Weights) != len(m.Classes) {
			return fmt.Errorf("balanced: %d weight vectors for %d classes", len(m.Weights), len(m.Classes))
		}
		for k := range m.Weights {
			m.Weights[k][f-1] -= lp[k] * root
		}
		return nil
	case KindQDA, KindGNB:
		if len(m.Phi) != len(m.Classes) {
			return fmt.Errorf("balanced: %d matrices for %d classes", len(m.Phi), len(m.Classes))
		}
		for k := range m.Phi {
			m.Phi[k][f*f-1] += 2 * lp[k] * float64(f)
		}
		return nil
	}
	return fmt.Errorf("balanced: kind %s does not support objective=balanced (kinds: %v)", m.Kind, BalancedKinds)
}

// Correct counts the rows of X the model predicts as y (training rows: the
// selection's score). Its time depends on n and the model only. The rows
// are cut into one contiguous part per core and the integer counts added
// (the same count whatever the schedule).
func Correct(m *Model, X [][]float64, y []int) (int64, error) {
	parts := max(1, min(runtime.GOMAXPROCS(0), len(X)/4096))
	counts := make([]int64, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for w := 0; w < parts; w++ {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			var scr predictScratch // one row's φ, reused (no allocation per row)
			for i := lo; i < hi; i++ {
				_, c, err := m.predict(X[i], &scr)
				if err != nil {
					errs[w] = err
					return
				}
				if c == y[i] { // classes are distinct: the index is the label
					counts[w]++
				}
			}
		}(w*len(X)/parts, (w+1)*len(X)/parts)
	}
	wg.Wait()
	var n int64
	for w := range counts {
		if errs[w] != nil {
			return 0, errs[w]
		}
		n += counts[w]
	}
	return n, nil
}

// CountLabel is #{i: y_i = class}, which is Correct of
// NewPriorModel(m, class) on rows of m's width (the prior predicts class
// for every row) without a prediction per row. The same work for every
// label.
func CountLabel(y []int, class int) int64 {
	var n int64
	for _, v := range y {
		eq := int64(0)
		if v == class {
			eq = 1
		}
		n += eq
	}
	return n
}

// SelectModel is the private choice between the trained model and the
// prior: true (the model) iff (correct_model − correct_prior) + Lap(2/ε) >
// 0. One row changes each count by at most 1, so the difference by at most
// 2: the one released bit is ε-DP.
func SelectModel(correctModel, correctPrior int64, eps float64) (bool, error) {
	return selectScale(correctModel, correctPrior, 2/eps)
}

func selectScale(correctModel, correctPrior int64, scale float64) (bool, error) {
	v, err := noise.AddLaplace(float64(correctModel-correctPrior), scale)
	if err != nil {
		return false, fmt.Errorf("prior selection: %w", err)
	}
	return v > 0, nil
}
