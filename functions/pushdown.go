package functions

import (
	"errors"
	"fmt"

	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/linreg"
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
	sum, n, pushed, err := pd.ShiftedSum(ref.db, ref.table, col, m.Lo, m.Hi)
	if !pushed {
		return 0, false, nil
	}
	if err != nil {
		return 0, true, fmt.Errorf("aggregate %s: %w", ref.key, err)
	}
	v, err := m.ReleaseShiftedSum(sum, n)
	return v, true, err
}

// pushLinReg computes linreg's sufficient statistics on the backend and
// releases them; the plan is redone with the snapshot's n if it changed,
// as on the embedded path.
func (e *Env) pushLinReg(s *trainSpec, cfg linreg.Config, tr *linreg.Trainer) (*mechanism.Model, bool, error) {
	pd, ok := e.Store.(Pushdown)
	if !ok {
		return nil, false, nil
	}
	for _, r := range s.reads {
		if r.Transform != "" {
			// The pushed-down SQL clips but does not transform: read rows.
			return nil, false, nil
		}
	}
	mul, add, inv, intercept, labelNull, mid, half := tr.Map()
	m := LinearMap{Features: s.features, Mul: mul, Add: add, Inv: inv, Intercept: intercept,
		Label: s.label, LabelLo: cfg.LabelLo, LabelHi: cfg.LabelHi, Mid: mid, Half: half, LabelNull: labelNull}
	a, c, n, pushed, err := pd.LinearStats(s.ref.db, s.ref.table, m)
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
