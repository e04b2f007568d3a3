package audit

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// DefaultAlpha is the significance level used when Config.Alpha is 0.
const DefaultAlpha = 1e-6

// Sampler draws one scalar output of the mechanism under test on neighbour 0
// (D) or 1 (D′). Vector mechanisms reduce their output to a scalar test
// statistic inside the sampler (e.g. the privacy-loss statistic, or the
// projection on w(D) − w(D′)). Every call must use fresh randomness.
type Sampler func(neighbour int) float64

// Config sets the size and the claim of an audit.
type Config struct {
	N     int     // samples per side (half used to choose the event, half to test it)
	Alpha float64 // significance level of the Clopper–Pearson bounds; 0 means 1e-6
	Delta float64 // δ of the claim (0 for pure DP)
}

// Result is the outcome of an audit.
type Result struct {
	EpsLower  float64 // lower confidence bound on ε (max over both directions)
	Threshold float64 // chosen event {output > Threshold} or {output < Threshold}
	Direction string
	N         int
}

// Passes reports whether the audit is consistent with the claimed ε.
func (r Result) Passes(epsClaimed float64) bool {
	return r.EpsLower <= epsClaimed
}

func (r Result) String() string {
	return fmt.Sprintf("ε_lower = %.4g with event %s, T = %.6g, N = %d per side",
		r.EpsLower, r.Direction, r.Threshold, r.N)
}

// event is {output > T} (greater) or {output < T}; the bound is
// log((P_num(E) − δ)/P_den(E)) with num the neighbour in the numerator.
type event struct {
	greater bool
	t       float64
	num     int
}

func (e event) String() string {
	op := "<"
	if e.greater {
		op = ">"
	}
	return fmt.Sprintf("P[M(D%d) %s T] / P[M(D%d) %s T]", e.num, op, 1-e.num, op)
}

// Run draws cfg.N outputs on each neighbour (interleaved), chooses for each
// direction the event with the best bound on the first half, evaluates it on
// the second half and returns the larger of the two bounds. Each of the four
// Clopper–Pearson bounds on the test half is taken at level α/4, so
// EpsLower exceeds the true ε with probability at most α. Outputs that are
// NaN are treated as +Inf.
func Run(s Sampler, cfg Config) Result {
	res := Result{N: cfg.N}
	if cfg.N < 2 {
		return res
	}
	alpha := cfg.Alpha
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	a := alpha / 4

	var out [2][]float64
	out[0] = make([]float64, cfg.N)
	out[1] = make([]float64, cfg.N)
	for i := 0; i < cfg.N; i++ {
		for side := 0; side < 2; side++ {
			v := s(side)
			if math.IsNaN(v) {
				v = math.Inf(1)
			}
			out[side][i] = v
		}
	}
	half := cfg.N / 2
	var cal, test [2][]float64
	for side := 0; side < 2; side++ {
		cal[side] = slices.Clone(out[side][:half])
		slices.Sort(cal[side])
		test[side] = out[side][half:]
		slices.Sort(test[side])
	}

	res.EpsLower = math.Inf(-1)
	for num := 0; num < 2; num++ {
		ev, ok := chooseEvent(cal, num, a, cfg.Delta)
		if !ok {
			continue
		}
		eps := eventBound(test, ev, a, cfg.Delta)
		if eps > res.EpsLower {
			res.EpsLower, res.Threshold, res.Direction = eps, ev.t, ev.String()
		}
	}
	if !(res.EpsLower > 0) {
		res.EpsLower = 0
	}
	return res
}

// countGreater and countLess count sorted values strictly above / below t.
func countGreater(sorted []float64, t float64) int {
	return len(sorted) - sort.Search(len(sorted), func(i int) bool { return sorted[i] > t })
}

func countLess(sorted []float64, t float64) int {
	return sort.Search(len(sorted), func(i int) bool { return sorted[i] >= t })
}

// eventBound is log((CPlower(P_num(E)) − δ) / CPupper(P_den(E))) on the given
// sorted samples, or −Inf when the numerator is not positive.
func eventBound(samples [2][]float64, e event, a, delta float64) float64 {
	count := countLess
	if e.greater {
		count = countGreater
	}
	kNum := count(samples[e.num], e.t)
	kDen := count(samples[1-e.num], e.t)
	lo := cpLower(kNum, len(samples[e.num]), a) - delta
	if lo <= 0 {
		return math.Inf(-1)
	}
	return math.Log(lo / cpUpper(kDen, len(samples[1-e.num]), a))
}

// chooseEvent scans candidate thresholds at a fixed set of ranks of the
// pooled calibration sample (a uniform grid plus ranks spaced geometrically
// towards both tails, where the likelihood ratio of DP noise is largest) and
// returns the event with the best calibration bound.
func chooseEvent(cal [2][]float64, num int, a, delta float64) (event, bool) {
	pooled := make([]float64, 0, len(cal[0])+len(cal[1]))
	pooled = append(append(pooled, cal[0]...), cal[1]...)
	slices.Sort(pooled)
	m := len(pooled)
	if m < 2 {
		return event{}, false
	}
	var best event
	bestEps := math.Inf(-1)
	found := false
	try := func(e event) {
		if eps := eventBound(cal, e, a, delta); !found || eps > bestEps {
			best, bestEps, found = e, eps, true
		}
	}
	for _, r := range candidateRanks(m) {
		lo, hi := pooled[r-1], pooled[r]
		if lo != hi {
			t := midpoint(lo, hi)
			try(event{greater: true, t: t, num: num})
			try(event{greater: false, t: t, num: num})
			continue
		}
		// A tie (an atom of the output distribution, e.g. a clipped or
		// maximal privacy loss): offer the events that include the atom.
		try(event{greater: true, t: math.Nextafter(lo, math.Inf(-1)), num: num})
		try(event{greater: false, t: math.Nextafter(lo, math.Inf(1)), num: num})
		try(event{greater: true, t: lo, num: num})
		try(event{greater: false, t: lo, num: num})
	}
	return best, found
}

// candidateRanks returns distinct ranks r ∈ [1, m−1] (threshold between the
// r-th and (r+1)-th pooled value).
func candidateRanks(m int) []int {
	seen := make(map[int]bool)
	var ranks []int
	add := func(r int) {
		if r >= 1 && r <= m-1 && !seen[r] {
			seen[r] = true
			ranks = append(ranks, r)
		}
	}
	const grid = 256
	for i := 1; i < grid; i++ {
		add(i * m / grid)
	}
	for g := 1.0; g < float64(m)/2; g *= 1.2 {
		r := int(math.Ceil(g))
		add(r)
		add(m - r)
	}
	slices.Sort(ranks)
	return ranks
}

// midpoint returns a threshold between sorted values lo ≤ hi that is finite
// whenever possible.
func midpoint(lo, hi float64) float64 {
	switch {
	case lo == hi:
		return lo
	case !math.IsInf(lo, 0) && !math.IsInf(hi, 0):
		return lo/2 + hi/2
	case !math.IsInf(lo, 0):
		return lo
	case !math.IsInf(hi, 0):
		return hi
	default:
		return 0
	}
}
