package auto_test

// Measurement behind docs/results/selection.md: DP_TRAIN's default
// (kind=auto, default hyperparameters) against tune=1 (Liu–Talwar random
// stopping over the auto grid of functions/tune.go, trials pure ε) at the
// SAME total ε and δ. Only TRAINING data: the 80 % part of gauss's
// public-seed split, split again 75/25 (seed 777) into fit / validation;
// synthetic sets from their own seeds. A benchmark, not a test:
//
//	SEL_HARNESS=1 nice -n 10 go test -run TestSelectionHarness -v -timeout 2h ./mechanism/auto/
//
// SEL_EPS (default "1,4"), SEL_RUNS (default 5), SEL_SETS (default
// "iris,wine,breast_cancer,vehicle,digits,dna,syn").

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/auto"
	"github.com/dpsql/dpsql/mechanism/gauss"
	"github.com/dpsql/dpsql/mechanism/logreg"
	"github.com/dpsql/dpsql/mechanism/selection"
)

// selCand mirrors functions/tune.go's tuneCandidate (auto grid).
type selCand struct {
	kind string
	ms   float64
}

var selAutoGrid = []selCand{{"lda", 0.25}, {"lda", 0.5}, {"lda", 0.75}, {"gnb", 0}, {"logreg", 0}}

func selTrain(c selCand, ds *dataset, eps, delta float64) (*mechanism.Model, error) {
	if c.kind == "logreg" {
		tr, err := logreg.Plan(logreg.Config{Epsilon: eps, Delta: delta, N: len(ds.x), Features: ds.features,
			Lo: ds.lo, Hi: ds.hi, Label: "y", Classes: ds.classes})
		if err != nil {
			return nil, err
		}
		return tr.Train(ds.x, ds.y)
	}
	tr, err := gauss.Plan(gauss.Config{Kind: c.kind, Epsilon: eps, Delta: delta, MomentShare: c.ms, N: len(ds.x),
		Features: ds.features, Lo: ds.lo, Hi: ds.hi, Label: "y", Classes: ds.classes})
	if err != nil {
		return nil, err
	}
	return tr.Train(ds.x, ds.y)
}

func selMeanSD(v []float64) (float64, float64) {
	var s float64
	for _, x := range v {
		s += x
	}
	m := s / float64(len(v))
	var q float64
	for _, x := range v {
		q += (x - m) * (x - m)
	}
	if len(v) < 2 {
		return m, 0
	}
	return m, math.Sqrt(q / float64(len(v)-1))
}

func TestSelectionHarness(t *testing.T) {
	if os.Getenv("SEL_HARNESS") != "1" {
		t.Skip("benchmark: set SEL_HARNESS=1 (docs/results/selection.md)")
	}
	eps := envFloats(t, "SEL_EPS", "1,4")
	runs, _ := strconv.Atoi(envList("SEL_RUNS", "5")[0])
	const delta = 1e-6
	type split struct {
		name     string
		fit, val *dataset
	}
	var sets []split
	for _, name := range envList("SEL_SETS", "iris,wine,breast_cancer,vehicle,digits,dna,syn") {
		if name == "syn" {
			for _, n := range []int{1000, 10000} {
				for _, k := range []int{2, 5} {
					seed := uint64(1000*k + n)
					g := newSynth(synthSpec{d: 10, k: k, sep: calibrateSep(10, k, seed, 0.9), noise: 0.05, seed: seed})
					sets = append(sets, split{fmt.Sprintf("syn n=%d d=10 K=%d", n, k), g.draw(n, seed+1, true), g.draw(n/3, seed+2, true)})
				}
			}
			continue
		}
		ds := loadDataset(t, name)
		trIdx, _ := splitIdx(len(ds.x), 12345, 0.8) // the held-out 20 % is never read
		tr := ds.subset(trIdx)
		a, b := splitIdx(len(tr.x), 777, 0.75)
		sets = append(sets, split{name, tr.subset(a), tr.subset(b)})
	}
	fmt.Println("| data (fit n × d, K) | ε | default kind | default acc | default δ=0 (lda) acc | tune=1 acc | chosen (count) | non-private LDA | majority |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, s := range sets {
		n, d, k := len(s.fit.x), len(s.fit.features), len(s.fit.classes)
		np := fitLDA(s.fit).accuracy(s.val)
		for _, e := range eps {
			kind, _ := auto.Choose(auto.Inputs{Classification: true, N: n, D: d, K: k, Epsilon: e, Delta: delta})
			sp, err := selection.NewPlan(selection.Config{Candidates: len(selAutoGrid), Epsilon: e, Delta: delta})
			if err != nil {
				t.Fatal(err)
			}
			var def, pure, tun []float64
			chosen := map[string]int{}
			for range runs {
				m, err := selTrain(selCand{kind: kind}, s.fit, e, delta)
				if err != nil {
					t.Fatalf("%s default: %v", s.name, err)
				}
				def = append(def, accuracy(t, m, s.val))
				mp, err := selTrain(selCand{kind: "lda"}, s.fit, e, 0) // the default call on a pure-ε table
				if err != nil {
					t.Fatalf("%s default δ=0: %v", s.name, err)
				}
				pure = append(pure, accuracy(t, mp, s.val))
				res, err := selection.Run(sp, func(c int, et, es float64) (*mechanism.Model, float64, error) {
					m, err := selTrain(selAutoGrid[c], s.fit, et, 0)
					if err != nil {
						return nil, 0, err
					}
					ok := int(math.Round(accuracy(t, m, s.fit) * float64(n)))
					sc, err := selection.NoisyAccuracy(ok, n, es)
					return m, sc, err
				})
				if err != nil {
					t.Fatalf("%s tune: %v", s.name, err)
				}
				tun = append(tun, accuracy(t, res.Model, s.val))
				c := selAutoGrid[res.Candidate]
				chosen[fmt.Sprintf("%s/%g", c.kind, c.ms)]++
			}
			dm, dsd := selMeanSD(def)
			tm, tsd := selMeanSD(tun)
			pm, psd := selMeanSD(pure)
			var ch []string
			for key, v := range chosen {
				ch = append(ch, fmt.Sprintf("%s:%d", key, v))
			}
			fmt.Printf("| %s (%d × %d, %d) | %g | %s | %.3f ± %.3f | %.3f ± %.3f | %.3f ± %.3f | %s | %.3f | %.3f |\n",
				s.name, n, d, k, e, kind, dm, dsd, pm, psd, tm, tsd, strings.Join(ch, " "), np, majority(s.fit, s.val))
		}
	}
}
