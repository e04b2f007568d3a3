package auto_test

// Measurement behind docs/results/selection.md: DP_TRAIN's default model
// of a kind against tune=1 (held-out selection, mechanism/selection
// Tuner) at the SAME ε and δ. Only TRAINING data: the 80 % part of the
// public-seed split (seed 12345), split again 75/25 (seed 777) into the
// table the call sees and a validation part that measures accuracy/RMSE
// (the 20 % test part is never read). Synthetic sets from their own seeds,
// including declared bounds 20× wider than the data ("wide") where the
// default regularisation is badly off. A benchmark, not a test:
//
//	SEL_HARNESS=1 nice -n 10 go test -run TestSelectionHarness -v -timeout 2h ./mechanism/auto/
//
// SEL_EPS (default "1,4"), SEL_RUNS (default 10), SEL_DELTA (default 1e-6).

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dpsql/dpsql/internal/syntest"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/gauss"
	"github.com/dpsql/dpsql/mechanism/linreg"
	"github.com/dpsql/dpsql/mechanism/selection"
)

// widen returns the data set with declared bounds f× wider around their
// centre (the rows unchanged).
func widen(ds *dataset, f float64) *dataset {
	out := *ds
	out.lo, out.hi = make([]float64, len(ds.lo)), make([]float64, len(ds.hi))
	for j := range ds.lo {
		c, h := (ds.lo[j]+ds.hi[j])/2, (ds.hi[j]-ds.lo[j])/2
		out.lo[j], out.hi[j] = c-f*h, c+f*h
	}
	return &out
}

// regSet is a regression table: rows, labels, declared bounds.
type regSet struct {
	name             string
	features         []string
	x                [][]float64
	y                []float64
	lo, hi           []float64
	labelLo, labelHi float64
}

func (r *regSet) subset(idx []int) *regSet {
	out := *r
	out.x, out.y = nil, nil
	for _, i := range idx {
		out.x, out.y = append(out.x, r.x[i]), append(out.y, r.y[i])
	}
	return &out
}

func (r *regSet) config(eps, delta float64) linreg.Config {
	return linreg.Config{Epsilon: eps, Delta: delta, N: len(r.x), Features: r.features, Lo: r.lo, Hi: r.hi,
		Label: "y", LabelLo: r.labelLo, LabelHi: r.labelHi}
}

func (r *regSet) rmse(tb testing.TB, m *mechanism.Model) float64 {
	var s float64
	for i, x := range r.x {
		p, err := m.Predict(x)
		if err != nil {
			tb.Fatal(err)
		}
		s += (p.Value - r.y[i]) * (p.Value - r.y[i])
	}
	return math.Sqrt(s / float64(len(r.x)))
}

// diabetesSet reads testdata/diabetes.csv with the demo catalog's bounds.
func diabetesSet(tb testing.TB) *regSet {
	feats, x, labels := syntest.ReadCSV(tb, filepath.Join(repoRoot(), "testdata", "diabetes.csv"))
	r := &regSet{name: "diabetes", features: feats, x: x, labelLo: 25, labelHi: 346}
	b := map[string][2]float64{"age": {0, 100}, "sex": {1, 2}, "bmi": {10, 50}, "bp": {40, 140}, "s1": {50, 350}, "s2": {20, 300},
		"s3": {10, 110}, "s4": {1, 10}, "s5": {3, 7}, "s6": {40, 140}}
	for _, f := range feats {
		bd, ok := b[f]
		if !ok {
			tb.Fatalf("diabetes: no bounds for %q", f)
		}
		r.lo, r.hi = append(r.lo, bd[0]), append(r.hi, bd[1])
	}
	for _, l := range labels {
		v, err := strconv.ParseFloat(l, 64)
		if err != nil {
			tb.Fatal(err)
		}
		r.y = append(r.y, v)
	}
	return r
}

// synthReg: z ~ U[−1, 1]^d, y = βᵀz + β₀ + N(0, 0.1²), ‖β‖₁ + |β₀| = 0.8,
// bounds [−1, 1] (label too).
func synthReg(n, d int, seed uint64) *regSet {
	rng := rand.New(rand.NewPCG(seed, 0x4e6))
	beta := make([]float64, d+1)
	var s float64
	for j := range beta {
		beta[j] = rng.NormFloat64()
		s += math.Abs(beta[j])
	}
	r := &regSet{name: fmt.Sprintf("syn reg d=%d", d), labelLo: -1, labelHi: 1}
	for j := 0; j < d; j++ {
		beta[j] *= 0.8 / s
		r.features = append(r.features, "x"+strconv.Itoa(j))
		r.lo, r.hi = append(r.lo, -1), append(r.hi, 1)
	}
	beta[d] *= 0.8 / s
	for range n {
		row := make([]float64, d)
		v := beta[d]
		for j := range row {
			row[j] = 2*rng.Float64() - 1
			v += beta[j] * row[j]
		}
		r.x, r.y = append(r.x, row), append(r.y, v+0.1*rng.NormFloat64())
	}
	return r
}

func TestSelectionHarness(t *testing.T) {
	if os.Getenv("SEL_HARNESS") != "1" {
		t.Skip("benchmark: set SEL_HARNESS=1 (docs/results/selection.md)")
	}
	eps := envFloats(t, "SEL_EPS", "1,4")
	runs, _ := strconv.Atoi(envList("SEL_RUNS", "10")[0])
	delta, _ := strconv.ParseFloat(envList("SEL_DELTA", "1e-6")[0], 64)
	type clsSet struct {
		name     string
		fit, val *dataset
	}
	var cls []clsSet
	for _, name := range []string{"breast_cancer", "vehicle", "vowel", "digits", "dna", "ticdata"} {
		if _, err := os.Stat(filepath.Join(sharedDataDir(), name+".csv")); err != nil && name != "breast_cancer" && name != "digits" {
			t.Logf("%s: shared/ not available, skipped", name)
			continue
		}
		ds := loadDataset(t, name)
		trIdx, _ := splitIdx(len(ds.x), 12345, 0.8) // the held-out 20 % is never read
		tr := ds.subset(trIdx)
		a, b := splitIdx(len(tr.x), 777, 0.75)
		cls = append(cls, clsSet{name, tr.subset(a), tr.subset(b)})
	}
	for _, k := range []int{2, 5} {
		seed := uint64(4242 + k)
		g := newSynth(synthSpec{d: 10, k: k, sep: calibrateSep(10, k, seed, 0.9), noise: 0.05, seed: seed})
		fit, val := g.draw(10000, seed+1, true), g.draw(3000, seed+2, true)
		cls = append(cls, clsSet{fmt.Sprintf("syn d=10 K=%d", k), fit, val},
			clsSet{fmt.Sprintf("syn d=10 K=%d wide×20", k), widen(fit, 20), widen(val, 20)})
	}
	fmt.Println("| data (table n × d, K) | kind | ε | default acc | tune=1 acc | tune − default | chosen (count) | n_fit / n_score, ε_B |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, s := range cls {
		n, d, k := len(s.fit.x), len(s.fit.features), len(s.fit.classes)
		for _, kind := range []string{gauss.KindLDA, gauss.KindGNB} {
			for _, e := range eps {
				cfg := gauss.Config{Kind: kind, Epsilon: e, Delta: delta, N: n, Features: s.fit.features, Lo: s.fit.lo, Hi: s.fit.hi,
					Label: "y", Classes: s.fit.classes}
				if _, err := selection.PlanGauss(cfg); err != nil {
					fmt.Printf("| %s (%d × %d, %d) | %s | %g | — | refused: %v | | | |\n", s.name, n, d, k, kind, e, err)
					continue
				}
				var def, tun, diff []float64
				chosen := make([]int, len(selection.GaussVariants))
				var info string
				for range runs {
					tr, err := gauss.Plan(cfg)
					if err != nil {
						t.Fatal(err)
					}
					m, err := tr.Train(s.fit.x, s.fit.y)
					if err != nil {
						t.Fatal(err)
					}
					tu, err := selection.PlanGauss(cfg)
					if err != nil {
						t.Fatal(err)
					}
					mt, c, err := tu.TrainClassification(s.fit.x, s.fit.y)
					if err != nil {
						t.Fatal(err)
					}
					chosen[c]++
					_, nA, nB := tu.Sizes()
					info = fmt.Sprintf("%d / %d, %.3f", nA, nB, tu.ScoreEpsilon())
					a0, a1 := accuracy(t, m, s.val), accuracy(t, mt, s.val)
					def, tun, diff = append(def, a0), append(tun, a1), append(diff, a1-a0)
				}
				dm, dsd := syntest.MeanSD(def)
				tm, tsd := syntest.MeanSD(tun)
				fm, fsd := syntest.MeanSD(diff)
				fmt.Printf("| %s (%d × %d, %d) | %s | %g | %.3f ± %.3f | %.3f ± %.3f | %+.3f ± %.3f | %s | %s |\n",
					s.name, n, d, k, kind, e, dm, dsd, tm, tsd, fm, fsd, chosenString(chosen, gaussGridNames()), info)
			}
		}
	}
	// Regression.
	var regs [][2]*regSet
	db := diabetesSet(t)
	trIdx, _ := splitIdx(len(db.x), 12345, 0.8)
	dtr := db.subset(trIdx)
	a, b := splitIdx(len(dtr.x), 777, 0.75)
	regs = append(regs, [2]*regSet{dtr.subset(a), dtr.subset(b)})
	for _, n := range []int{2000, 20000} {
		sr := synthReg(n+n/3, 10, uint64(99+n))
		idx := make([]int, len(sr.x))
		for i := range idx {
			idx[i] = i
		}
		fit, val := sr.subset(idx[:n]), sr.subset(idx[n:])
		regs = append(regs, [2]*regSet{fit, val})
		wf, wv := *fit, *val
		for _, p := range []*regSet{&wf, &wv} {
			p.name += " wide×20"
			p.lo, p.hi = make([]float64, len(fit.lo)), make([]float64, len(fit.hi))
			for j := range p.lo {
				p.lo[j], p.hi[j] = -20, 20
			}
		}
		regs = append(regs, [2]*regSet{&wf, &wv})
	}
	fmt.Println()
	fmt.Println("| data (table n × d) | ε | default RMSE | tune=1 RMSE | tune − default | chosen (count) | n_fit / n_score, ε_B | mean predictor |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, p := range regs {
		fit, val := p[0], p[1]
		var mean float64
		for _, y := range fit.y {
			mean += y / float64(len(fit.y))
		}
		var mp float64
		for _, y := range val.y {
			mp += (y - mean) * (y - mean) / float64(len(val.y))
		}
		for _, e := range eps {
			cfg := fit.config(e, delta)
			if _, err := selection.PlanLinReg(cfg); err != nil {
				fmt.Printf("| %s (%d × %d) | %g | — | refused: %v | | | | |\n", fit.name, len(fit.x), len(fit.features), e, err)
				continue
			}
			var def, tun, diff []float64
			chosen := make([]int, len(selection.LinRegVariants))
			var info string
			for range runs {
				tr, err := linreg.Plan(cfg)
				if err != nil {
					t.Fatal(err)
				}
				m, err := tr.Train(fit.x, fit.y)
				if err != nil {
					t.Fatal(err)
				}
				tu, err := selection.PlanLinReg(cfg)
				if err != nil {
					t.Fatal(err)
				}
				mt, c, err := tu.TrainRegression(fit.x, fit.y)
				if err != nil {
					t.Fatal(err)
				}
				chosen[c]++
				_, nA, nB := tu.Sizes()
				info = fmt.Sprintf("%d / %d, %.3f", nA, nB, tu.ScoreEpsilon())
				r0, r1 := val.rmse(t, m), val.rmse(t, mt)
				def, tun, diff = append(def, r0), append(tun, r1), append(diff, r1-r0)
			}
			dm, dsd := syntest.MeanSD(def)
			tm, tsd := syntest.MeanSD(tun)
			fm, fsd := syntest.MeanSD(diff)
			var names []string
			for _, v := range selection.LinRegVariants {
				names = append(names, fmt.Sprintf("c=%g,f=%g", v.Ridge, v.Floor))
			}
			fmt.Printf("| %s (%d × %d) | %g | %.4g ± %.2g | %.4g ± %.2g | %+.3g ± %.2g | %s | %s | %.4g |\n",
				fit.name, len(fit.x), len(fit.features), e, dm, dsd, tm, tsd, fm, fsd, chosenString(chosen, names), info, math.Sqrt(mp))
		}
	}
}

func gaussGridNames() []string {
	var out []string
	for _, g := range selection.GaussVariants {
		out = append(out, g.String())
	}
	return out
}

func chosenString(c []int, names []string) string {
	s := ""
	for i, v := range c {
		if v > 0 {
			if s != "" {
				s += " "
			}
			s += fmt.Sprintf("%s:%d", names[i], v)
		}
	}
	return s
}
