package lsq

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/mechanism"
)

// Scale-out (issue 14): DP_LSQ's release from sufficient statistics
// computed by a backend (mysqlstore) with the embedded per-row map.
// Every method of the linear kernel (output, objective, input) releases a
// function of S = Σφφᵀ and c = Σy′φ only, so all of them push down; the
// RFF kernels need the rows (the map is not a polynomial) and stream.

// MaxAnyOrderInflation is the largest relative increase of the noise that
// PlanPush accepts for the any-order rounding allowance of a backend's
// DOUBLE sums; beyond it the exact DECIMAL statement is used. A
// cost/accuracy trade-off (the value of linreg's), not a privacy constant.
const MaxAnyOrderInflation = 0.02

// anyOrderDepth is the summation depth covering S and c summed by a backend
// in any order: a summation tree over n terms has at most n − 1 additions on
// any path (Higham, Lemma 3.1 holds for any order), plus the rounding of
// the product u_j·u_k, of fl(inv·inv) and of the final scaling, and a margin
// — n + 8 in all, against the reference Σ z_j z_k of the embedded path's
// per-row values z_j = fl(u_j·inv) (docs/scale-out.md, "DP_LSQ").
func anyOrderDepth(n int) int { return n + 8 + auditExtraDepth }

// auditExtraDepth is 0 in every release. The audit of the absorbed
// allowance (rounded_test.go) raises it so that the allowance is large
// enough at audit-sized n for a mis-calibration to be visible.
var auditExtraDepth int

// sumDepth is the depth the plan's rounding allowance covers.
func sumDepth(n int, anyOrder bool) int {
	d := statsDepth(n)
	if anyOrder {
		d = max(d, anyOrderDepth(n))
	}
	return d
}

// noiseScale is the plan's per-coordinate noise in the released weights:
// for objective and input the methods' public utility proxy (the noise
// term along a typical data direction, β/(n/F + ridge), combined with the
// output step's σ, which is where the rounding allowance enters); for
// output its Laplace b or Gaussian σ. The value the allowance inflates.
func noiseScale(p map[string]float64) float64 {
	curv := p["n"] / p["features"]
	if v, ok := p["output_sigma"]; ok {
		if b, ok := p["sigma_b"]; ok { // input
			return math.Hypot(b/(curv+p["input_delta"]), v)
		}
		return math.Hypot(p["gaussian_sigma"]/(curv+p["kifer_delta"]+p["ridge_delta"]), v)
	}
	if v, ok := p["laplace_scale"]; ok {
		return v
	}
	return p["gaussian_sigma"]
}

// Pushable reports whether cfg's release can be computed from pushed-down
// statistics (the linear kernel; public).
func Pushable(cfg Config) bool { return cfg.Kernel == "" || cfg.Kernel == KernelLinear }

// PlanPush plans DP_LSQ for a pushed-down release: with any-order DOUBLE
// sums (Config.AnyOrderSums) when their rounding allowance raises the noise
// by at most MaxAnyOrderInflation, else the embedded plan with exact = true
// (the caller then asks the backend for the exact DECIMAL statement).
// Public inputs only; its errors are Plan's.
func PlanPush(cfg Config) (t *Trainer, exact bool, err error) {
	cfg.AnyOrderSums = false
	emb, err := Plan(cfg)
	if err != nil {
		return nil, false, err
	}
	if !Pushable(cfg) {
		return emb, false, nil
	}
	cfg.AnyOrderSums = true
	fast, err := Plan(cfg)
	if err == nil && noiseScale(fast.params) <= (1+MaxAnyOrderInflation)*noiseScale(emb.params) {
		return fast, false, nil
	}
	return emb, true, nil
}

// Map returns the public per-row map of the statistics (linear kernel):
// feature j becomes clamp(v·mul[j] + add[j], −1, 1)·inv (NULL → 0), the
// intercept coordinate inv follows, and the label becomes
// clamp((clip(y) − mid)/half, −1, 1) with clip's NULL value labelNull —
// labelMap.unit and Prepared.Transform.
func (t *Trainer) Map() (mul, add []float64, inv float64, intercept bool, labelNull, mid, half float64) {
	mul, add, inv = t.fm.prep.Affine()
	lo, hi := t.cfg.LabelLo, t.cfg.LabelHi
	return mul, add, inv, t.fm.scaler.Intercept, lo + (hi-lo)/2, (lo + hi) / 2, (hi - lo) / 2
}

// LabelMean returns the centring step's mean release (nil without
// centring): the caller releases μ̃ from the pushed-down shifted sum of the
// labels (mechanism.Mean.ReleaseShiftedSum) and asks for the statistics of
// the labels y − LabelShift(μ̃).
func (t *Trainer) LabelMean() *mechanism.Mean {
	if t.center == nil {
		return nil
	}
	return t.center.mean
}

// LabelShift is the shift subtracted from every raw label before the label
// map when centring with the released mean mu (as Train computes it).
func (t *Trainer) LabelShift(mu float64) float64 {
	return mu - (t.cfg.LabelLo+t.cfg.LabelHi)/2
}

// TrainSums is Train for statistics computed elsewhere: a = Σφφᵀ (F×F,
// row-major, both triangles) and c = Σy′φ over the n rows of one snapshot
// (with the labels shifted by LabelShift(mu) when centring; mu is ignored
// otherwise), within the plan's rounding allowance (AnyOrderSums for DOUBLE
// sums in any order; the embedded plan for exact sums rounded once). If n
// differs from the plan it returns ErrRowCountChanged (re-plan).
func (t *Trainer) TrainSums(a, c []float64, n int, mu float64) (*mechanism.Model, error) {
	f := t.fm.f
	if t.fm.rff != nil {
		return nil, fmt.Errorf("lsq: kernel %q needs the rows, not the linear statistics", t.cfg.Kernel)
	}
	if len(a) != f*f || len(c) != f {
		return nil, fmt.Errorf("lsq: statistics of dimension %d and %d, want %d×%d and %d", len(a), len(c), f, f, f)
	}
	if n != t.cfg.N {
		return nil, fmt.Errorf("lsq: %w: read %d rows, planned for n = %d", ErrRowCountChanged, n, t.cfg.N)
	}
	// NewSymDense reads the upper triangle, as the embedded accumulator fills it.
	st := stats{s: mat.NewSymDense(f, append([]float64(nil), a...)), c: append([]float64(nil), c...), n: n}
	if t.center == nil {
		return t.release(st)
	}
	return t.releaseCentered(st, mu)
}

// ExactStats returns the noise-free statistics Train computes on X, y (the
// labels shifted by shift first, as centring does): the reference of the
// tests comparing a backend's statistics. Nothing calls it on a release
// path.
func (t *Trainer) ExactStats(X [][]float64, y []float64, shift float64) (a, c []float64, err error) {
	if err := checkRows(X, y, len(X), len(t.cfg.Features)); err != nil {
		return nil, nil, err
	}
	ys := make([]float64, len(y))
	for i, v := range y {
		ys[i] = v - shift
	}
	st := sufficientStats(X, ys, t.fm, t.lm)
	f := t.fm.f
	a = make([]float64, f*f)
	for j := 0; j < f; j++ {
		for k := j; k < f; k++ {
			a[j*f+k], a[k*f+j] = st.s.At(j, k), st.s.At(j, k)
		}
	}
	return a, st.c, nil
}

// AnyOrderSumBound bounds |computed − exact| of one entry of S or c summed
// in any order over n rows whose exact terms have absolute sum absSum (the
// per-entry allowance of a plan with AnyOrderSums, plus the absolute error
// of products that underflow; for tests comparing a backend's sums with
// the embedded ones).
func AnyOrderSumBound(n int, absSum float64) float64 {
	return gammaN(anyOrderDepth(n)+1)*absSum + float64(n+8)*0x1p-1074
}

// algebraicShiftFactor is M/half ≥ 1, M = max(|lo|, |hi|) + 2·half + |mid|
// (public label bounds; 1 without centring): with the centring shift s
// applied through the sums, Σu·y′ = (Σu·y − (s + mid)·Σu)/half, the
// any-order error of ĉ is γ·Σ|u|·(|y| + |s| + |mid|)/half with, on the rows
// the backend treats so (fl(y − s) within the bounds), |y| ≤ max(|lo|, |hi|)
// + |s| and |s| = |μ̃ − mid| ≤ half; the per-row roundings it no longer
// performs are within the depth's margin (docs/scale-out.md, "DP_LSQ").
func algebraicShiftFactor(cfg Config) float64 {
	if !(cfg.Center > 0) {
		return 1
	}
	lo, hi := cfg.LabelLo, cfg.LabelHi
	half, mid := (hi-lo)/2, (lo+hi)/2
	return math.Max(1, (math.Max(math.Abs(lo), math.Abs(hi))+2*half+math.Abs(mid))/half*(1+1e-9))
}

// ShiftAlgebraic reports whether a backend may apply the centring shift to
// the rows inside its box through the sums (functions.LinearMap): the plan
// is objective perturbation on any-order sums with centring, whose
// allowance covers it (algebraicShiftFactor).
func (t *Trainer) ShiftAlgebraic() bool {
	return t.center != nil && t.obj != nil && t.cfg.AnyOrderSums
}

// MeanAnyOrder reports whether the centring mean may be released from a
// DOUBLE sum a backend added in any order (mechanism.Mean.ReleaseAnyOrderSum)
// rather than the exact DECIMAL sum: when the any-order allowance raises
// the mean's own Laplace scale by at most MaxAnyOrderInflation, or when the
// standard deviation it adds to the shift, in label units, is at most
// MaxAnyOrderInflation of the model's own noise (noiseScale of this plan).
// The mean is ε₀-DP either way (its scale covers the allowance); only its
// accuracy is at stake, and a constant error e in the shift moves the
// centred labels by e/half, hence each prediction of the ridge solve by at
// most that (docs/mechanisms/lsq.md §6 "Backend sums", the centring mean).
// Public inputs only (the plan's n, ε, bounds).
func (t *Trainer) MeanAnyOrder() bool {
	m := t.LabelMean()
	if m == nil || m.N < 1 || m.N > mechanism.MaxSumRows {
		return false
	}
	slack, any := mechanism.SumSlack(m.N), mechanism.AnyOrderSumSlack(m.N)
	if any <= (1+MaxAnyOrderInflation)*slack {
		return true
	}
	// Laplace std √2·b; b in label units: (hi − lo)/half = 2.
	extra := math.Sqrt2 * 2 * (any - slack) / (float64(m.N) * m.Epsilon)
	return extra <= MaxAnyOrderInflation*noiseScale(t.params)
}
