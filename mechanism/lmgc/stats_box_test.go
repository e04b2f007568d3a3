package lmgc

import (
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/mechanism/box"
)

// Issue 28 item 6: method=stats behind DP_TRAIN's private per-feature box
// (functions/lmgc.go, docs/mechanisms/lmgc.md §12). These audits run the
// same sequence as the SQL path — box.NewSplit, box.New, Release on the
// rows, the stats release planned at the split's KindEps on the released
// box — on a one-feature neighbour pair where the changed row moves the
// box's upper quantile, the class counts, sums and the moment.

const boxAuditN = 10000

// boxAuditPair: D and D′ differ in the last row (value 0.5 in class 0 vs
// 1 in class 1); declared bounds [0, 1].
var boxAuditPair = [2]struct {
	x [][]float64
	y []int
}{
	{x: [][]float64{{0}, {0.5}, {0.5}, {0.5}}, y: []int{0, 1, 0, 0}},
	{x: [][]float64{{0}, {0.5}, {0.5}, {1}}, y: []int{0, 1, 0, 1}},
}

// boxStatsSampler releases the box and the statistics of side D or D′ and
// returns stat(model). exactBox replaces the private box by the column's
// exact [min, max] — the must-fail variant (a data-dependent clip that
// pays nothing).
func boxStatsSampler(t *testing.T, eps, delta float64, exactBox bool, stat func(lo, hi float64, m interface {
	QuadraticForm(int, []float64) float64
}) float64) audit.Sampler {
	sp, err := box.NewSplit(eps, delta, 1)
	if err != nil {
		t.Fatal(err)
	}
	bp, err := box.New(4, []float64{0}, []float64{1}, sp.EpsQ, 0)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Plan(Config{Epsilon: sp.KindEps, Delta: delta, N: 4, Features: []string{"a"}, Lo: []float64{0}, Hi: []float64{1},
		Label: "y", Classes: []string{"c0", "c1"}, Method: MethodStats})
	if err != nil {
		t.Fatal(err)
	}
	return func(side int) float64 {
		d := boxAuditPair[side]
		lo, hi := []float64{0}, []float64{1}
		if exactBox {
			lo[0], hi[0] = d.x[0][0], d.x[0][0]
			for _, r := range d.x {
				lo[0], hi[0] = min(lo[0], r[0]), max(hi[0], r[0])
			}
		} else {
			b, err := bp.Release(d.x)
			if err != nil {
				t.Fatal(err)
			}
			lo, hi = b.Lo, b.Hi
		}
		// SQL re-plans on the released box; WithBounds is the same plan
		// without the calibration search (TestStatsWithBounds).
		p, err := plan.WithBounds(lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		m, err := p.Train(d.x, d.y)
		if err != nil {
			t.Fatal(err)
		}
		return stat(m.Scaler.Lo[0], m.Scaler.Hi[0], m)
	}
}

// boxStat is the released box of the model (lo + 10·hi: both in [0, 1]).
func boxStat(lo, hi float64, _ interface{ QuadraticForm(int, []float64) float64 }) float64 {
	return lo + 10*hi
}

// scoreStat is the label-inference statistic on the changed row.
func scoreStat(_, _ float64, m interface{ QuadraticForm(int, []float64) float64 }) float64 {
	return m.QuadraticForm(0, []float64{1}) - m.QuadraticForm(1, []float64{1})
}

// TestAuditStatsBoxPath: the box and the model released together must not
// show more than the call's (ε, δ) — the split's joint charge — on either
// the released box or the score of the changed row.
func TestAuditStatsBoxPath(t *testing.T) {
	const eps, delta = 2.0, 0.1
	// The box's report-noisy-max over its full grids dominates the time
	// (≈ 10 ms a release); the box alone is audited at 10⁴ per side in
	// package box, so its statistic gets fewer samples here.
	audit.RequirePass(t, boxStatsSampler(t, eps, delta, false, scoreStat), eps, audit.Config{N: boxAuditN, Delta: delta})
	audit.RequirePass(t, boxStatsSampler(t, eps, delta, false, boxStat), eps, audit.Config{N: boxAuditN / 4, Delta: delta})
}

// TestAuditStatsExactBoxCaught is an expected failure: clipping to the
// rows' exact range instead of the private box is caught on the released
// box.
func TestAuditStatsExactBoxCaught(t *testing.T) {
	const eps, delta = 2.0, 0.1
	audit.RequireCatch(t, boxStatsSampler(t, eps, delta, true, boxStat), eps, audit.Config{N: boxAuditN, Delta: delta})
}

// TestStatsWithBounds: a plan moved to other bounds has exactly the
// calibration of a fresh plan on them, the new scaler, and trains once;
// the margin method refuses.
func TestStatsWithBounds(t *testing.T) {
	cfg := Config{Epsilon: 1, Delta: 1e-6, N: 50, Features: []string{"a", "b"}, Lo: []float64{0, -5}, Hi: []float64{10, 5},
		Label: "y", Classes: []string{"c0", "c1", "c2"}, Method: MethodStats}
	p, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := []float64{1, -2}, []float64{3, 2.5}
	moved, err := p.WithBounds(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Lo, cfg.Hi = lo, hi
	fresh, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, b := moved.StatsScales(), fresh.StatsScales()
	for k, v := range b {
		if a[k] != v {
			t.Fatalf("%s: moved %v, fresh %v", k, a[k], v)
		}
	}
	if moved.ChargedEpsilon() != fresh.ChargedEpsilon() || moved.ChargedDelta() != fresh.ChargedDelta() {
		t.Fatal("charge differs")
	}
	X := make([][]float64, 50)
	y := make([]int, 50)
	for i := range X {
		X[i] = []float64{float64(i % 11), float64(i%7) - 3}
		y[i] = i % 3
	}
	m, err := moved.Train(X, y)
	if err != nil {
		t.Fatal(err)
	}
	if m.Scaler.Lo[0] != 1 || m.Scaler.Hi[1] != 2.5 {
		t.Fatalf("scaler %+v", m.Scaler)
	}
	if _, err := moved.Train(X, y); err == nil {
		t.Fatal("a moved plan trained twice")
	}
	if _, err := p.WithBounds([]float64{1}, []float64{2}); err == nil {
		t.Fatal("wrong bound count accepted")
	}
	cfg.Method, cfg.Lo, cfg.Hi = MethodMargin, []float64{0, -5}, []float64{10, 5}
	mp, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mp.WithBounds(lo, hi); err == nil {
		t.Fatal("margin plan took a box")
	}
}
