package functions

import (
	"fmt"
	"strings"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/box"
)

// [pbox] The private per-feature box of DP_TRAIN's classification kinds
// (docs/mechanisms/box.md): box=private|public, default box.UsePrivate on
// public n, d, ε, δ.

// boxStage is a planned box release: the budget split and the plan of the
// quantiles. nil means the declared (public) box.
type boxStage struct {
	split box.Split
	plan  *box.Plan
	// cols are the coordinates with a private box when some are 0/1
	// coordinates of an encoder (levels, indicators), which keep their
	// declared box [0, 1]; nil: every coordinate.
	cols []int
}

// boxMode resolves the box= option (public inputs only) for the features of
// s: the mode and the stage (nil for public). Only numeric coordinates get
// a private box: a 0/1 coordinate's declared box is already its range.
func boxMode(o options, s *trainSpec, eps, delta float64) (string, *boxStage, error) {
	n, d := int(s.n), len(s.features)
	var cols []int
	if s.enc != nil {
		for j, num := range s.enc.Numeric() {
			if num {
				cols = append(cols, j)
			}
		}
		d = len(cols)
	}
	v, _ := o.take("box")
	mode := strings.ToLower(strings.TrimSpace(v))
	switch mode {
	case "", "auto":
		mode = box.ModePublic
		if box.UsePrivate(n, d, eps, delta) {
			mode = box.ModePrivate
		}
	case box.ModePublic, box.ModePrivate:
	default:
		return "", nil, fmt.Errorf("box must be %q or %q, got %q", box.ModePrivate, box.ModePublic, v)
	}
	if d == 0 {
		if mode == box.ModePrivate && v != "" && !strings.EqualFold(strings.TrimSpace(v), "auto") {
			return "", nil, fmt.Errorf("box=private needs a numeric feature; every feature of %s is categorical", s.ref.key)
		}
		return box.ModePublic, nil, nil // nothing to box: every coordinate is 0/1
	}
	if mode == box.ModePublic {
		return mode, nil, nil
	}
	st, err := newBoxStage(n, d, eps, delta)
	if err != nil {
		return "", nil, err
	}
	st.cols = cols
	return mode, st, nil
}

// project returns the coordinates cols of v (v itself when cols is nil).
func (b *boxStage) project(v []float64) []float64 {
	if b.cols == nil {
		return v
	}
	out := make([]float64, len(b.cols))
	for i, j := range b.cols {
		out[i] = v[j]
	}
	return out
}

func newBoxStage(n, d int, eps, delta float64) (*boxStage, error) {
	sp, err := box.NewSplit(eps, delta, d)
	if err != nil {
		return nil, err
	}
	return &boxStage{split: sp}, nil
}

// kindEps is the ε the kind is planned at.
func (b *boxStage) kindEps(eps float64) float64 {
	if b == nil {
		return eps
	}
	return b.split.KindEps
}

// events combines the kind's events with the box's (one joint event when
// δ > 0).
func (b *boxStage) events(kind []budget.Event) ([]budget.Event, error) {
	if b == nil {
		return kind, nil
	}
	return b.split.Events(kind)
}

// planCharge returns the events to charge for the box plus the kind (whose own
// events are kind) and plans the quantiles for n rows on the declared box:
// everything public, before the charge.
func (b *boxStage) planCharge(kind []budget.Event, n int, lo, hi []float64) ([]budget.Event, error) {
	events, err := b.events(kind)
	if err != nil {
		return nil, err
	}
	if err := b.planFor(n, lo, hi); err != nil {
		return nil, err
	}
	return events, nil
}

// planFor (re)plans the quantiles for n rows on the declared box.
func (b *boxStage) planFor(n int, lo, hi []float64) error {
	if b == nil {
		return nil
	}
	p, err := box.New(n, b.project(lo), b.project(hi), b.split.EpsQ, 0)
	if err != nil {
		return err
	}
	b.plan = p
	return nil
}

// release computes the private box from the rows read (transformed and
// clipped to the declared bounds); nil stage: the declared box.
func (b *boxStage) release(X [][]float64, lo, hi []float64) ([]float64, []float64, error) {
	if b == nil {
		return lo, hi, nil
	}
	if b.plan == nil || len(X) != b.plan.N() {
		if err := b.planFor(len(X), lo, hi); err != nil {
			return nil, nil, err
		}
	}
	if b.cols == nil {
		r, err := b.plan.Release(X)
		if err != nil {
			return nil, nil, err
		}
		return r.Lo, r.Hi, nil
	}
	sub := make([][]float64, len(X))
	back := make([]float64, len(X)*len(b.cols))
	for i, x := range X {
		r := back[i*len(b.cols) : (i+1)*len(b.cols)]
		for k, j := range b.cols {
			r[k] = x[j]
		}
		sub[i] = r
	}
	r, err := b.plan.Release(sub)
	if err != nil {
		return nil, nil, err
	}
	outLo, outHi := append([]float64(nil), lo...), append([]float64(nil), hi...)
	for k, j := range b.cols {
		outLo[j], outHi[j] = r.Lo[k], r.Hi[k]
	}
	return outLo, outHi, nil
}

// describe is the dry_run / dp_models description of the stage.
func (b *boxStage) describe(mode string) string {
	if b == nil {
		return "public: features scaled by the declared bounds"
	}
	how := "basic composition with the kind (delta = 0)"
	if b.split.Joint {
		how = fmt.Sprintf("one zCDP event with the kind (total Gaussian ratio %.4g, kind ratio %.4g)", b.split.R, b.split.R2)
	}
	return fmt.Sprintf("private: per feature the DP median and the t/(1-t) quantiles (t = %.4g) on a public grid of the declared box, each eps %.4g, "+
		"median-anchored penalty; rows clipped to the released box; %s; kind planned at eps %.4g",
		b.plan.TailFraction(), b.split.EpsQ, how, b.split.KindEps)
}

// params adds the stage's public values to a model's params.
func (b *boxStage) params(m *mechanism.Model) {
	if b == nil || m == nil {
		return
	}
	if m.Params == nil {
		m.Params = map[string]float64{}
	}
	m.Params["box_private"] = 1
	m.Params["box_epsilon_quantile"] = b.split.EpsQ
	m.Params["box_tail"] = b.plan.TailFraction()
	m.Params["box_share"] = box.Share
	if b.split.Joint {
		m.Params["box_gaussian_ratio_total"] = b.split.R
	}
}

// [/pbox]
