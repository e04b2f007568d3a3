package lmgc

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/mechanism/gauss"
)

func statsConfig(eps, delta float64, n, d, classes int) Config {
	cfg := testConfig(eps, n, d, classes)
	cfg.Delta, cfg.Method = delta, MethodStats
	return cfg
}

// TestStatsPlan: method=stats charges exactly the statistics release of
// package gauss (kind lda) at the requested (ε, δ), refuses the margin
// objective's λ and h, and an unknown method, before anything is charged;
// an empty method is the paper's margin release.
func TestStatsPlan(t *testing.T) {
	for _, delta := range []float64{0, 1e-6} {
		cfg := statsConfig(1, delta, 500, 4, 6)
		p, err := Plan(cfg)
		if err != nil {
			t.Fatal(err)
		}
		g, err := gauss.Plan(gauss.Config{Kind: gauss.KindLDA, Epsilon: 1, Delta: delta, N: 500,
			Features: cfg.Features, Lo: cfg.Lo, Hi: cfg.Hi, Label: cfg.Label, Classes: cfg.Classes})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p.Events(), g.Events()) {
			t.Fatalf("δ=%v: events %+v, want gauss lda's %+v", delta, p.Events(), g.Events())
		}
		if p.ChargedEpsilon() != 1 || p.ChargedDelta() != delta || p.Method() != MethodStats {
			t.Fatalf("charged (%v, %v) method %q", p.ChargedEpsilon(), p.ChargedDelta(), p.Method())
		}
		if s := p.StatsScales(); s["sensitivity"] != g.Sensitivity() || s["noise_scale"] != g.Scale() || p.OutputNoiseScale() != g.Scale() {
			t.Fatalf("scales %v, want gauss's sensitivity %v and scale %v", s, g.Sensitivity(), g.Scale())
		}
	}
	for _, bad := range []func(*Config){
		func(c *Config) { c.Lambda = 0.01 },
		func(c *Config) { c.H = 0.5 },
		func(c *Config) { c.Method = "bogus" },
		func(c *Config) { c.Classes = c.Classes[:1] },
		func(c *Config) { c.N = 0 },
	} {
		cfg := statsConfig(1, 1e-6, 500, 4, 6)
		bad(&cfg)
		if _, err := Plan(cfg); err == nil {
			t.Fatalf("config %+v accepted", cfg)
		}
	}
	cfg := testConfig(1, 500, 4, 6)
	p, err := Plan(cfg)
	if err != nil || p.Method() != MethodMargin || p.StatsScales() != nil {
		t.Fatalf("empty method: %v, %q", err, p.Method())
	}
	if m := DefaultMethod(5000, 10, 6, 1, 1e-6); m != MethodStats {
		t.Fatalf("DefaultMethod = %q", m)
	}
}

// TestStatsAdversarialNeighbours: on adversarial neighbour pairs (corner
// rows with the label changed, NULL/±Inf rows, labels out of the domain, a
// row moved to the opposite corner) both sides train without error and
// release finite PSD matrices of kind lmgc — nothing after the rows are read
// depends on them except the values.
func TestStatsAdversarialNeighbours(t *testing.T) {
	const n, d, k = 40, 3, 6
	corner := []float64{1, 1, 1}
	base := make([][]float64, n)
	y := make([]int, n)
	for i := range base {
		base[i] = append([]float64(nil), corner...)
		y[i] = i % k
	}
	pairs := []struct {
		name string
		row  [2][]float64
		lab  [2]int
	}{
		{"label change", [2][]float64{corner, corner}, [2]int{0, 5}},
		{"opposite corner", [2][]float64{corner, {-1, -1, -1}}, [2]int{0, 3}},
		{"NULL and Inf", [2][]float64{{math.NaN(), math.Inf(1), math.Inf(-1)}, {1e300, -1e300, 0}}, [2]int{2, 4}},
		{"label out of domain", [2][]float64{corner, corner}, [2]int{-1, 99}},
	}
	for _, pc := range pairs {
		for _, delta := range []float64{0, 1e-6} {
			for side := 0; side < 2; side++ {
				X := append([][]float64(nil), base...)
				Y := append([]int(nil), y...)
				X[n-1], Y[n-1] = pc.row[side], pc.lab[side]
				p, err := Plan(statsConfig(0.5, delta, n, d, k))
				if err != nil {
					t.Fatal(err)
				}
				m, err := p.Train(X, Y)
				if err != nil {
					t.Fatalf("%s δ=%v side %d: %v", pc.name, delta, side, err)
				}
				if m.Kind != "lmgc" || len(m.Phi) != k || m.Params["method_stats"] != 1 {
					t.Fatalf("%s: model kind %q, %d matrices, params %v", pc.name, m.Kind, len(m.Phi), m.Params)
				}
				for c, phi := range m.Phi {
					for _, v := range phi {
						if math.IsNaN(v) || math.IsInf(v, 0) {
							t.Fatalf("%s: Φ_%d has a non-finite entry", pc.name, c)
						}
					}
					// PSD: the projection is unnecessary but check it anyway.
					blk := append([]float64(nil), phi...)
					projectPSD(blk, 1, d+1)
					if diffNorm(blk, phi) > 1e-9*(1+diffNorm(phi, make([]float64, len(phi)))) {
						t.Fatalf("%s: Φ_%d is not PSD", pc.name, c)
					}
				}
				if _, err := m.Predict(corner); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestAuditStatsReleasePath audits DP_LMGC_TRAIN method=stats through the
// public Plan/Train path on gauss's extremal pair (one row, d = 2 in
// [0, 10]: the corner (10, 10) in class 0 vs (10, 0) in class 1) with the
// label-inference statistic x̃ᵀ(Φ₀ − Φ₁)x̃′. It must pass at the charged
// (ε, δ); the same statistic catching σ/10 on this path is
// gauss.TestAuditTrainPathQuadratic (the noise scale is not reachable from
// here).
func TestAuditStatsReleasePath(t *testing.T) {
	const eps, delta = 2.0, 0.1
	cfg := Config{Epsilon: eps, Delta: delta, N: 1, Features: []string{"a", "b"}, Lo: []float64{0, 0}, Hi: []float64{10, 10},
		Label: "y", Classes: []string{"c0", "c1"}, Method: MethodStats}
	xs := [2][][]float64{{{10, 10}}, {{10, 0}}}
	ys := [2][]int{{0}, {1}}
	plan, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sampler := func(side int) float64 {
		// A fresh plan per release (a plan trains once) with the same
		// public calibration; Train is the public path.
		p := &Trainer{cfg: plan.cfg, scaler: plan.scaler, classes: plan.classes, dim: plan.dim, stats: plan.stats.Clone()}
		m, err := p.Train(xs[side], ys[side])
		if err != nil {
			t.Fatal(err)
		}
		return m.QuadraticForm(0, xs[1][0]) - m.QuadraticForm(1, xs[1][0])
	}
	audit.RequirePass(t, sampler, eps, audit.Config{N: 20000, Delta: delta})
}

// TestStatsLearns: at ε = 1 on a 6-class mixture with n = 6000 the stats
// release is far above the majority rate (a sanity check of the wiring, not
// a figure: the figures are docs/results/lmgc.md).
func TestStatsLearns(t *testing.T) {
	ds := synthetic(7500, 8, 6, 3)
	xtr, ytr, xte, yte := ds.split()
	cfg := ds.config(1, len(xtr))
	cfg.Delta, cfg.Method = 1e-6, MethodStats
	p, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := p.Train(xtr, ytr)
	if err != nil {
		t.Fatal(err)
	}
	acc := accuracy(t, func(x []float64) (string, error) { pr, err := m.Predict(x); return pr.Class, err }, ds.classes, xte, yte)
	counts := make([]int, len(ds.classes))
	for _, c := range yte {
		counts[c]++
	}
	maj := 0
	for _, c := range counts {
		maj = max(maj, c)
	}
	if base := float64(maj) / float64(len(yte)); acc < base+0.3 {
		t.Fatalf("stats accuracy %v at ε = 1, majority %v", acc, base)
	}
	if !strings.Contains(m.Kind, "lmgc") {
		t.Fatalf("kind %q", m.Kind)
	}
}
