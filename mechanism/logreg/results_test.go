//go:build results

package logreg

// Utility evidence and the derivation of the defaults
// (docs/results/logreg.md). Run from the repository root:
//
//	go test -tags results -run TuneLogReg -v ./mechanism/logreg/ -timeout 120m
//	go test -tags results -run ResultsLogReg -v ./mechanism/logreg/ -timeout 120m
//
// Not part of CI: it measures, it does not assert.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/internal/syntest"
	"github.com/dpsql/dpsql/mechanism"
)

func accuracy(t testing.TB, m *mechanism.Model, ds dataset) float64 {
	ok := 0
	for i, x := range ds.x {
		p, err := m.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		if p.Class == ds.classes[ds.y[i]] {
			ok++
		}
	}
	return float64(ok) / float64(len(ds.x))
}

func majority(train, test dataset) float64 {
	cnt := make([]int, len(train.classes))
	for _, c := range train.y {
		cnt[c]++
	}
	best := 0
	for k := range cnt {
		if cnt[k] > cnt[best] {
			best = k
		}
	}
	ok := 0
	for _, c := range test.y {
		if c == best {
			ok++
		}
	}
	return float64(ok) / float64(len(test.y))
}

// sharedDataset loads ../shared/data/<name>.csv with bounds taken as the
// observed [min, max] of each column: an OWNER ASSUMPTION (the file
// documents no maxima; an owner declaring the observed range), used for
// vehicle and ticdata only. The label domain is the sorted set of labels.
func sharedDataset(t testing.TB, name string, classes []string) dataset {
	names, x, labels := loadClassCSV(t, repoPath("..", "shared", "data", name+".csv"))
	ds := dataset{names: names, x: x, classes: classes, label: "class"}
	ds.lo = append([]float64(nil), x[0]...)
	ds.hi = append([]float64(nil), x[0]...)
	for _, r := range x {
		for j, v := range r {
			ds.lo[j], ds.hi[j] = min(ds.lo[j], v), max(ds.hi[j], v)
		}
	}
	for j := range ds.lo {
		if !(ds.hi[j] > ds.lo[j]) {
			ds.hi[j] = ds.lo[j] + 1
		}
	}
	ds.y = indices(t, labels, classes)
	return ds
}

type namedSet struct {
	name string
	ds   dataset
}

func realSets(t testing.TB) []namedSet {
	return []namedSet{
		{"breast_cancer", catalogDataset(t, "breast_cancer")},
		{"iris", catalogDataset(t, "iris")},
		{"wine", catalogDataset(t, "wine")},
		{"digits", catalogDataset(t, "digits")},
		{"vehicle", sharedDataset(t, "vehicle", []string{"bus", "opel", "saab", "van"})},
		{"ticdata", sharedDataset(t, "ticdata", []string{"insurance", "noinsurance"})},
	}
}

// TestTuneLogReg evaluates the default rule's constants on inner splits of
// the TRAINING part of each real table (a fixed 80% — the other 20% is
// never read here) and on synthetic mixtures.
func TestTuneLogReg(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	type setup struct {
		name        string
		train, test dataset
	}
	var setups []setup
	for _, s := range realSets(t) {
		trainPart, _ := s.ds.split(rand.New(rand.NewPCG(2026, 1)), 0.8)
		setups = append(setups, setup{name: s.name, train: trainPart})
	}
	for _, k := range []int{2, 5, 20} {
		for _, n := range []int{1000, 10000} {
			ds := synthMixture(rng, uint64(k), n, k, 10, 1)
			setups = append(setups, setup{name: fmt.Sprintf("synth K=%d n=%d", k, n), train: ds, test: synthMixture(rng, uint64(k), 5000, k, 10, 1)})
		}
	}
	type variant struct {
		c, clip float64 // horizon scale; clip as a fraction of L
		steps   int
		delta   float64
	}
	var variants []variant
	for _, clip := range []float64{1, 0.5, 0.25, 0.125} {
		for _, c := range []float64{8, 15, 30} {
			variants = append(variants, variant{c, clip, 100, 1e-5})
		}
	}
	for _, clip := range []float64{1, 0.25} {
		variants = append(variants, variant{15, clip, 1, 0})
	}
	reps := 4
	for _, s := range setups {
		for _, eps := range []float64{0.1, 1, 10} {
			var line []string
			for _, v := range variants {
				var accs []float64
				for rep := 0; rep < reps; rep++ {
					train, val := s.train, s.test
					if val.x == nil {
						train, val = s.train.split(rng, 0.75)
					}
					cfg := train.config(len(train.x), eps, v.delta)
					cfg.Steps = v.steps
					cfg.Clip = v.clip * math.Sqrt2
					if len(train.classes) == 2 {
						cfg.Clip = v.clip
					}
					// The default rule with HorizonScale replaced by c.
					probe, err := Plan(cfg)
					if err != nil {
						t.Fatal(err)
					}
					cfg.Horizon = probe.p.horizon * v.c / HorizonScale
					p, err := Plan(cfg)
					if err != nil {
						t.Fatal(err)
					}
					m, err := p.Train(train.x, train.y)
					if err != nil {
						t.Fatal(err)
					}
					accs = append(accs, accuracy(t, m, val))
				}
				m, _ := syntest.MeanSD(accs)
				line = append(line, fmt.Sprintf("%s c%g C%gL T%d:%.3f", map[bool]string{true: "G", false: "L"}[v.delta > 0], v.c, v.clip, v.steps, m))
			}
			t.Logf("%-18s ε=%-4g %s", s.name, eps, strings.Join(line, " "))
		}
	}
}

// sklearnAccuracy fits sklearn's LogisticRegression (default C = 1, lbfgs,
// multinomial) on the same scaled rows with /usr/bin/python3 and returns
// its test accuracy; NaN if python or sklearn is missing.
func sklearnAccuracy(t testing.TB, p *Trainer, train, test dataset) float64 {
	dir := t.TempDir()
	write := func(name string, ds dataset) string {
		path := dir + "/" + name
		var b strings.Builder
		for i, row := range ds.x {
			z := p.scaler.Transform(nil, row)
			for _, v := range z[:len(z)-1] { // sklearn fits its own intercept
				fmt.Fprintf(&b, "%.17g,", v)
			}
			fmt.Fprintf(&b, "%d\n", ds.y[i])
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tr, te := write("train.csv", train), write("test.csv", test)
	script := `
import sys, numpy as np
from sklearn.linear_model import LogisticRegression
a = np.loadtxt(sys.argv[1], delimiter=",", ndmin=2); b = np.loadtxt(sys.argv[2], delimiter=",", ndmin=2)
m = LogisticRegression(max_iter=10000).fit(a[:, :-1], a[:, -1].astype(int))
print(m.score(b[:, :-1], b[:, -1].astype(int)))
`
	out, err := exec.Command("/usr/bin/python3", "-c", script, tr, te).Output()
	if err != nil {
		t.Logf("sklearn unavailable: %v", err)
		return -1
	}
	var acc float64
	fmt.Sscan(string(out), &acc)
	return acc
}

// TestResultsLogReg writes docs/results/logreg.csv: test accuracy of the
// default private model at ε ∈ {0.1, 1, 10} (δ = 10⁻⁵ and δ = 0) against
// sklearn's LogisticRegression on the same scaled rows and the majority
// class, on random 80/20 splits (real tables) or fresh draws (synthetic).
func TestResultsLogReg(t *testing.T) {
	const reps = 10
	f, err := os.Create(repoPath("docs", "results", "logreg.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintln(f, "data,n_train,d,classes,epsilon,delta,method,accuracy_mean,accuracy_sd,runs")
	emit := func(data string, n, d, k int, eps, delta float64, method string, v []float64) {
		m, s := syntest.MeanSD(v)
		fmt.Fprintf(f, "%s,%d,%d,%d,%g,%g,%s,%.4f,%.4f,%d\n", data, n, d, k, eps, delta, method, m, s, len(v))
		t.Logf("%-16s n=%-6d d=%-3d K=%-2d ε=%-4g δ=%-6g %-9s %.3f ± %.3f", data, n, d, k, eps, delta, method, m, s)
	}
	rng := rand.New(rand.NewPCG(2026, 22))
	type job struct {
		name   string
		trains []dataset
		tests  []dataset
	}
	var jobs []job
	for _, s := range realSets(t) {
		j := job{name: s.name}
		for r := 0; r < reps; r++ {
			a, b := s.ds.split(rng, 0.8)
			j.trains, j.tests = append(j.trains, a), append(j.tests, b)
		}
		jobs = append(jobs, j)
	}
	for _, k := range []int{2, 5, 20} {
		for _, n := range []int{1000, 5000, 10000, 100000} {
			j := job{name: fmt.Sprintf("synthetic_K%d", k)}
			test := synthMixture(rng, uint64(100+k), 10000, k, 10, 1)
			for r := 0; r < reps; r++ {
				j.trains = append(j.trains, synthMixture(rng, uint64(100+k), n, k, 10, 1))
				j.tests = append(j.tests, test)
			}
			jobs = append(jobs, j)
		}
	}
	for _, j := range jobs {
		tr0 := j.trains[0]
		n, d, k := len(tr0.x), len(tr0.names), len(tr0.classes)
		var sk, maj []float64
		for r := range j.trains {
			p, err := Plan(j.trains[r].config(len(j.trains[r].x), 1, 1e-5))
			if err != nil {
				t.Fatal(err)
			}
			if r < 3 || n <= 20000 { // sklearn on the largest sets: 3 splits
				if a := sklearnAccuracy(t, p, j.trains[r], j.tests[r]); a >= 0 {
					sk = append(sk, a)
				}
			}
			maj = append(maj, majority(j.trains[r], j.tests[r]))
		}
		emit(j.name, n, d, k, 0, 0, "sklearn", sk)
		emit(j.name, n, d, k, 0, 0, "majority", maj)
		for _, delta := range []float64{1e-5, 0} {
			for _, eps := range []float64{0.1, 1, 10} {
				var acc []float64
				for r := range j.trains {
					p, err := Plan(j.trains[r].config(len(j.trains[r].x), eps, delta))
					if err != nil {
						t.Fatal(err)
					}
					m, err := p.Train(j.trains[r].x, j.trains[r].y)
					if err != nil {
						t.Fatal(err)
					}
					acc = append(acc, accuracy(t, m, j.tests[r]))
				}
				emit(j.name, n, d, k, eps, delta, "logreg", acc)
			}
		}
	}
}
