package functions

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/linreg"
	"github.com/dpsql/dpsql/mechanism/lsq"
)

// Scale-out (issue 14): releases whose statistics a backend computes next
// to the data (Pushdown). Each helper answers pushed = false when the
// table is not served by such a backend; the caller then reads rows.

// pushMean computes DP_MEAN's shifted sum on the backend.
func (e *Env) pushMean(ref tableRef, col string, m *mechanism.Mean) (float64, bool, error) {
	pd, ok := e.Store.(Pushdown)
	if !ok {
		return 0, false, nil
	}
	sum, n, pushed, err := pd.ShiftedSum(ref.db, ref.table, col, m.Lo, m.Hi, true)
	if !pushed {
		return 0, false, nil
	}
	if err != nil {
		return 0, true, fmt.Errorf("aggregate %s: %w", ref.key, err)
	}
	v, err := m.ReleaseShiftedSum(sum, n)
	return v, true, err
}

// linearPushable reports whether planLinReg's release will be pushed down
// (public: where the table lives, the columns' declared transforms), so
// that the plan covers any-order sums before the charge.
func (e *Env) linearPushable(s *trainSpec) bool {
	pd, ok := e.rows(s.ref).(Pushdown)
	if !ok || s.enc != nil || !pd.Pushes(s.ref.db, s.ref.table) {
		return false // encoded features (categorical, indicators) are computed here, not in SQL
	}
	for _, r := range s.reads {
		if r.Transform != "" {
			return false
		}
	}
	return true
}

// planLinRegPush plans linreg for a pushed-down release: with any-order
// DOUBLE sums when their rounding allowance raises the noise by at most
// linreg.MaxAnyOrderInflation (n up to ≈ 10⁷), else with the exact DECIMAL
// statement (exact = true) and the embedded plan. Public inputs only.
func planLinRegPush(cfg linreg.Config) (tr *linreg.Trainer, out linreg.Config, exact bool, err error) {
	emb, err := linreg.Plan(cfg)
	if err != nil {
		return nil, cfg, false, err
	}
	cfg.AnyOrderSums = true
	fast, err := linreg.Plan(cfg)
	if err == nil && fast.Params()["noise_norm"] <= (1+linreg.MaxAnyOrderInflation)*emb.Params()["noise_norm"] {
		return fast, cfg, false, nil
	}
	cfg.AnyOrderSums = false
	return emb, cfg, true, nil
}

// pushLinReg computes linreg's sufficient statistics on the backend and
// releases them; the plan is redone with the snapshot's n if it changed,
// as on the embedded path.
func (e *Env) pushLinReg(s *trainSpec, cfg linreg.Config, tr *linreg.Trainer, exact bool) (*mechanism.Model, bool, error) {
	pd, ok := e.rows(s.ref).(Pushdown)
	if !ok || !(cfg.AnyOrderSums || exact) {
		// Not planned for backend sums (or a declared transform, which
		// the pushed-down SQL does not apply): read rows.
		return nil, false, nil
	}
	mul, add, inv, intercept, labelNull, mid, half := tr.Map()
	m := LinearMap{Features: s.features, Mul: mul, Add: add, Inv: inv, Intercept: intercept,
		Label: s.label, LabelLo: cfg.LabelLo, LabelHi: cfg.LabelHi, Mid: mid, Half: half, LabelNull: labelNull}
	a, c, n, pushed, err := pd.LinearStats(s.ref.db, s.ref.table, m, !cfg.AnyOrderSums)
	if !pushed {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, fmt.Errorf("aggregate %s: %w", s.ref.key, err)
	}
	s.n = n
	model, err := tr.TrainSums(a, c, int(n))
	if errors.Is(err, linreg.ErrRowCountChanged) {
		cfg.N = int(n)
		if tr, err = linreg.Plan(cfg); err != nil {
			return nil, true, err
		}
		model, err = tr.TrainSums(a, c, int(n))
	}
	return model, true, err
}

// pushCountOutside counts, on the backend, the rows dp_bounds would refuse.
func (e *Env) pushCountOutside(ref tableRef, col string, lo, hi float64) (int64, bool, error) {
	pd, ok := e.Store.(Pushdown)
	if !ok {
		return 0, false, nil
	}
	return pd.CountOutside(ref.db, ref.table, col, lo, hi)
}

// pushLSQ computes DP_LSQ's sufficient statistics on the backend (linear
// kernel, planned by lsq.PlanPush) and releases them; with centring the
// label mean is released first from the pushed-down shifted sum, in the
// same snapshot as the statistics (CentredLinearStats). The plan is redone
// with the snapshot's n if it changed, as on the embedded path.
func (e *Env) pushLSQ(s *trainSpec, tr *lsq.Trainer, exact bool) (*mechanism.Model, bool, error) {
	pd, ok := e.rows(s.ref).(Pushdown)
	cfg := tr.Config()
	if !ok || !(cfg.AnyOrderSums || exact) {
		return nil, false, nil
	}
	mul, add, inv, intercept, labelNull, mid, half := tr.Map()
	m := LinearMap{Features: s.features, Mul: mul, Add: add, Inv: inv, Intercept: intercept,
		Label: s.label, LabelLo: cfg.LabelLo, LabelHi: cfg.LabelHi, Mid: mid, Half: half, LabelNull: labelNull}
	mu := 0.0
	var a, c []float64
	var n int64
	var pushed bool
	var err error
	if mean := tr.LabelMean(); mean != nil {
		// With the fast statistics, the label mean as DOUBLE too when its
		// any-order allowance costs at most MaxAnyOrderInflation of its
		// noise or of the model's (lsq.(*Trainer).MeanAnyOrder; public: the
		// planned n, ε, bounds); the DECIMAL sum costs ≈ 10 % of the plain
		// aggregate, the DOUBLE one ≈ 2.5 % (docs/scale-out.md).
		fastMean := !exact && tr.MeanAnyOrder()
		var meanErr error
		centre := func(sum float64, n int64) (LinearMap, error) {
			// Calibrated to this snapshot's n (public), at the planned ε.
			if fastMean {
				mu, meanErr = mean.ReleaseAnyOrderSum(sum, n)
			} else {
				mu, meanErr = mean.ReleaseShiftedSum(sum, n)
			}
			mc := m
			mc.LabelShift = tr.LabelShift(mu)
			mc.ShiftAlgebraic = tr.ShiftAlgebraic()
			return mc, meanErr
		}
		if separateReads.Load() {
			a, c, n, pushed, err = separateCentred(pd, s, m, mean.Lo, mean.Hi, !fastMean, exact, centre)
		} else {
			a, c, n, pushed, err = pd.CentredLinearStats(s.ref.db, s.ref.table, m, mean.Lo, mean.Hi, !fastMean, exact, centre)
		}
		if meanErr != nil {
			return nil, true, meanErr
		}
	} else {
		a, c, n, pushed, err = pd.LinearStats(s.ref.db, s.ref.table, m, exact)
	}
	if !pushed {
		// Only public facts (column kinds, bounds) refuse a statement; a
		// mean computed above was not released.
		return nil, false, nil
	}
	if err != nil {
		return nil, true, fmt.Errorf("aggregate %s: %w", s.ref.key, err)
	}
	s.n = n
	model, err := tr.TrainSums(a, c, int(n), mu)
	if errors.Is(err, lsq.ErrRowCountChanged) {
		// Owners wrote meanwhile: the same configuration (method, λ,
		// centring share, ε, δ) on the n now in the table.
		cfg.N = int(n)
		if tr, err = lsq.Plan(cfg); err != nil {
			return nil, true, err
		}
		model, err = tr.TrainSums(a, c, int(n), mu)
	}
	return model, true, err
}

// separateReads restores, for the must-fail variant of the engine's
// TestScaleOutStatementsPerRelease, the reads before helper shard6: a row
// count per use (memory estimate, kind=auto, plan) and the centring mean
// in a snapshot of its own.
var separateReads atomic.Bool

// SetSeparateReadsForTest switches separateReads (tests only).
func SetSeparateReadsForTest(on bool) { separateReads.Store(on) }

// separateCentred is CentredLinearStats as two snapshots (separateReads).
func separateCentred(pd Pushdown, s *trainSpec, m LinearMap, lo, hi float64, meanExact, exact bool,
	centre func(float64, int64) (LinearMap, error)) ([]float64, []float64, int64, bool, error) {
	sum, n, pushed, err := pd.ShiftedSum(s.ref.db, s.ref.table, s.label, lo, hi, meanExact)
	if !pushed || err != nil {
		return nil, nil, 0, pushed, err
	}
	mc, err := centre(sum, n)
	if err != nil {
		return nil, nil, 0, true, err
	}
	return pd.LinearStats(s.ref.db, s.ref.table, mc, exact)
}
