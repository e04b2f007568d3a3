//go:build results

// Experiments for docs/results/gauss.md and the defaults rule of
// docs/mechanisms/gauss.md §6. Run with
//
//	nice -n 10 go test -tags results -run 'Results' -v -timeout 6h ./mechanism/gauss/
//
// TestResultsTuning uses only TRAINING splits (a 75/25 train/validation
// split inside the 80 % training part) and synthetic sets drawn with their
// own seeds; TestResultsAccuracy and TestResultsSynthetic use the fixed
// 80/20 split (seed 12345) with the defaults. They share one pass of exact
// statistics per split and kind across noise draws, through the package's
// unexported statistics/release/model steps (the path Train takes).
package gauss

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	resultsDelta = 1e-5
	outerSeed    = 12345 // the public seed of the 80/20 split
)

var (
	realSets    = []string{"iris", "wine", "breast_cancer", "vehicle", "vowel", "digits", "dna", "ticdata"}
	resultEps   = []float64{0.1, 1, 10}
	resultKinds = []string{KindLDA, KindQDA, KindGNB}
)

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func sd(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m := mean(v)
	var s float64
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(v)-1))
}

func writeCSV(t *testing.T, name string, rows [][]string) {
	t.Helper()
	path := filepath.Join(repoRoot(), "docs", "results", name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

// exact computes the noise-free statistics of train for a kind (they do not
// depend on ε, δ or the shares).
func exact(t *testing.T, kind string, train *dataset) []float64 {
	t.Helper()
	p, err := Plan(train.config(kind, 1, resultsDelta))
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.statistics(train.x, train.y)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// releaseAcc runs one private release from precomputed exact statistics and
// returns the test accuracy.
func releaseAcc(t *testing.T, cfg Config, st []float64, test *dataset) float64 {
	t.Helper()
	p, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v := append([]float64(nil), st...)
	if err := p.release(v); err != nil {
		t.Fatal(err)
	}
	return accuracy(t, p.model(v), test)
}

// capRows keeps at most max rows of d (the first ones; d is already in
// random order).
func capRows(d *dataset, max int) *dataset {
	if len(d.x) <= max {
		return d
	}
	out := *d
	out.x, out.y = d.x[:max], d.y[:max]
	return &out
}

// tuningSets returns the tuning splits: (train, validation) pairs from the
// TRAINING part of each shared set, and synthetic sets with tuning seeds.
func tuningSets(t *testing.T) []struct {
	name        string
	train, test *dataset
} {
	var out []struct {
		name        string
		train, test *dataset
	}
	for _, name := range []string{"breast_cancer", "vehicle", "vowel", "digits", "dna", "ticdata"} {
		ds := loadDataset(t, name)
		a, _ := splitIdx(len(ds.x), outerSeed, 0.8) // the test part is never used here
		tr := ds.subset(a)
		for s := uint64(0); s < 3; s++ {
			ia, ib := splitIdx(len(tr.x), 700+s, 0.75)
			out = append(out, struct {
				name        string
				train, test *dataset
			}{name, tr.subset(ia), tr.subset(ib)})
		}
	}
	for _, c := range [][3]int{{1000, 10, 5}, {5000, 10, 2}, {5000, 36, 6}, {10000, 50, 5}, {20000, 16, 20}, {20000, 40, 2}} {
		for s := uint64(0); s < 3; s++ {
			ds := synthetic(c[0]*5/4, c[1], c[2], 5000+s+uint64(c[0]+c[1]+c[2]), 0.3)
			a, b := splitIdx(len(ds.x), 0, 0.8)
			out = append(out, struct {
				name        string
				train, test *dataset
			}{fmt.Sprintf("syn_%d_%d_%d", c[0], c[1], c[2]), ds.subset(a), capRows(ds.subset(b), 4000)})
		}
	}
	return out
}

// TestResultsTuning sweeps the moment share and the edge factor on the
// tuning splits and writes docs/results/gauss_tuning.csv (mean validation
// accuracy over 3 splits × 4 noise draws per cell).
func TestResultsTuning(t *testing.T) {
	shares := []float64{0.1, 0.2, 0.35, 0.5, 0.65}
	edges := []float64{0.75, 1, 1.5}
	rows := [][]string{{"set", "kind", "epsilon", "moment_share", "edge_factor", "accuracy"}}
	sets := tuningSets(t)
	type key struct {
		set, kind   string
		eps, pm, ef float64
	}
	acc := map[key][]float64{}
	var order []key
	for _, s := range sets {
		start := time.Now()
		for _, kind := range resultKinds {
			st := exact(t, kind, s.train)
			for _, eps := range []float64{1, 10} {
				for _, pm := range shares {
					efs := edges
					if kind == KindGNB {
						efs = []float64{1}
					}
					for _, ef := range efs {
						cfg := s.train.config(kind, eps, resultsDelta)
						cfg.MomentShare, cfg.EdgeFactor = pm, ef
						k := key{s.name, kind, eps, pm, ef}
						if _, ok := acc[k]; !ok {
							order = append(order, k)
						}
						for r := 0; r < 4; r++ {
							acc[k] = append(acc[k], releaseAcc(t, cfg, st, s.test))
						}
					}
				}
			}
		}
		t.Logf("%s done (%v)", s.name, time.Since(start).Round(time.Millisecond))
	}
	for _, k := range order {
		rows = append(rows, []string{k.set, k.kind, fmt.Sprint(k.eps), fmt.Sprint(k.pm), fmt.Sprint(k.ef), fmt.Sprintf("%.5f", mean(acc[k]))})
	}
	writeCSV(t, "gauss_tuning.csv", rows)
}

// exportSplit writes a split for the scikit-learn baselines (raw values and
// the public bounds; not committed).
func exportSplit(t *testing.T, dir, name string, train, test *dataset) {
	t.Helper()
	write := func(file string, d *dataset) {
		f, err := os.Create(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		w := csv.NewWriter(f)
		for i, row := range d.x {
			rec := make([]string, len(row)+1)
			for j, v := range row {
				rec[j] = strconv.FormatFloat(v, 'g', -1, 64)
			}
			rec[len(row)] = strconv.Itoa(d.y[i])
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
		}
		w.Flush()
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write(name+"_train.csv", train)
	write(name+"_test.csv", test)
	meta, _ := json.Marshal(map[string]any{"lo": train.lo, "hi": train.hi, "classes": len(train.classes)})
	if err := os.WriteFile(filepath.Join(dir, name+"_meta.json"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
}

func exportDir(t *testing.T) string {
	dir := os.Getenv("GAUSS_EXPORT")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "gauss_export")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runAccuracy measures the defaults on one split: runs releases per
// (kind, ε), appending CSV rows and returning a log line.
func runAccuracy(t *testing.T, name string, train, test *dataset, runs int, rows *[][]string) string {
	line := fmt.Sprintf("%-22s n=%-6d d=%-3d K=%-2d", name, len(train.x), len(train.features), len(train.classes))
	for _, kind := range resultKinds {
		st := exact(t, kind, train)
		for _, eps := range resultEps {
			var a []float64
			for r := 0; r < runs; r++ {
				acc := releaseAcc(t, train.config(kind, eps, resultsDelta), st, test)
				a = append(a, acc)
				*rows = append(*rows, []string{name, kind, fmt.Sprint(eps), strconv.Itoa(r), fmt.Sprintf("%.5f", acc)})
			}
			if eps == 1 {
				line += fmt.Sprintf(" %s %.3f±%.3f", kind, mean(a), sd(a))
			}
		}
	}
	return line
}

// TestResultsAccuracy: the shared data sets, fixed 80/20 split, defaults,
// 20 releases per (kind, ε). Writes docs/results/gauss_accuracy.csv and
// exports the splits for docs/results/gauss_sklearn.py.
func TestResultsAccuracy(t *testing.T) {
	dir := exportDir(t)
	rows := [][]string{{"set", "kind", "epsilon", "run", "accuracy"}}
	for _, name := range realSets {
		ds := loadDataset(t, name)
		a, b := splitIdx(len(ds.x), outerSeed, 0.8)
		train, test := ds.subset(a), ds.subset(b)
		exportSplit(t, dir, name, train, test)
		start := time.Now()
		line := runAccuracy(t, name, train, test, 20, &rows)
		t.Logf("%s (%v)", line, time.Since(start).Round(time.Millisecond))
	}
	writeCSV(t, "gauss_accuracy.csv", rows)
}

// TestResultsSynthetic: the factor-model synthetic sets, n ∈ {10³, 10⁴,
// 10⁵} training rows (+ 25 % test rows, capped at 10 000), d ∈ {10, 50},
// K ∈ {2, 5, 20}, separation 0.3, defaults, 10 releases per (kind, ε).
// Writes docs/results/gauss_synthetic.csv.
func TestResultsSynthetic(t *testing.T) {
	dir := exportDir(t)
	rows := [][]string{{"set", "kind", "epsilon", "run", "accuracy"}}
	for _, n := range []int{1000, 10000, 100000} {
		for _, d := range []int{10, 50} {
			for _, k := range []int{2, 5, 20} {
				name := fmt.Sprintf("syn_n%d_d%d_K%d", n, d, k)
				ds := synthetic(n*5/4, d, k, uint64(1+100*d+10000*k), 0.3) // one problem per (d, K); larger n adds rows
				a, b := splitIdx(len(ds.x), outerSeed, 0.8)
				train, test := ds.subset(a), capRows(ds.subset(b), 10000)
				exportSplit(t, dir, name, train, test)
				start := time.Now()
				line := runAccuracy(t, name, train, test, 10, &rows)
				t.Logf("%s (%v)", line, time.Since(start).Round(time.Millisecond))
			}
		}
	}
	writeCSV(t, "gauss_synthetic.csv", rows)
}

// TestResultsSklearn runs the non-private baselines on the exported splits
// (run after the two tests above).
func TestResultsSklearn(t *testing.T) {
	if exec.Command("/usr/bin/python3", "-c", "import sklearn").Run() != nil {
		t.Fatal("/usr/bin/python3 with scikit-learn is needed for the baselines")
	}
	script := filepath.Join(repoRoot(), "docs", "results", "gauss_sklearn.py")
	out, err := exec.Command("/usr/bin/python3", script, exportDir(t), filepath.Join(repoRoot(), "docs", "results", "gauss_sklearn.csv")).CombinedOutput()
	t.Logf("%s", strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
}
