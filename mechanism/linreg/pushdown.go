package linreg

import (
	"fmt"

	"github.com/dpsql/dpsql/mechanism"
)

// Scale-out (issue 14): the sufficient statistics computed by a backend
// (mysqlstore) with the same per-row map as Train.

// Map returns the public per-row map of the statistics: feature j becomes
// clamp(v·mul[j] + add[j], −1, 1)·inv (NULL → 0), an intercept coordinate
// inv follows when intercept, and the label becomes labelUnit(y) =
// clamp((clip(y) − mid)/half, −1, 1) with clip's NULL value labelNull.
func (t *Trainer) Map() (mul, add []float64, inv float64, intercept bool, labelNull, mid, half float64) {
	mul, add, inv = t.prep.Affine()
	lo, hi := t.cfg.LabelLo, t.cfg.LabelHi
	return mul, add, inv, t.scaler.Intercept, lo + (hi-lo)/2, (lo + hi) / 2, (hi - lo) / 2
}

// TrainSums is Train for statistics computed elsewhere: a = Σx′x′ᵀ (F×F,
// row-major, both triangles) and c = Σy′x′ over the n rows of one
// snapshot, each per-row term computed as Train does and summed exactly,
// rounded once; that rounding (≤ 2⁻⁵² relative per entry) is far inside the
// allowance t_A, t_c of the plan (roundingBounds, depth ≥ statsBatch).
// If n differs from the plan it returns ErrRowCountChanged (re-plan).
func (t *Trainer) TrainSums(a, c []float64, n int) (*mechanism.Model, error) {
	if len(a) != t.f*t.f || len(c) != t.f {
		return nil, fmt.Errorf("linreg: statistics of dimension %d and %d, want %d×%d and %d", len(a), len(c), t.f, t.f, t.f)
	}
	if n != t.cfg.N {
		return nil, fmt.Errorf("linreg: %w: read %d rows, planned for n = %d", ErrRowCountChanged, n, t.cfg.N)
	}
	if t.PrivateBounds() {
		return nil, errNeedsRows
	}
	return t.release(stats{a: append([]float64(nil), a...), c: append([]float64(nil), c...), n: n, f: t.f}, nil)
}

// ExactStats returns the noise-free statistics Train computes on X, y: the
// reference of the tests that check a backend's pushed-down statistics.
// Nothing calls it on a release path.
func (t *Trainer) ExactStats(X [][]float64, y []float64) (a, c []float64, err error) {
	if err := t.checkRows(X, y); err != nil {
		return nil, nil, err
	}
	st := t.stats(X, y)
	return st.a, st.c, nil
}
