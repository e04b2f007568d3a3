//go:build results

// Experiments for docs/results/svm.md. Run with
//
//	go test -tags results -run Results -v -timeout 60m ./mechanism/svm/
//
// They use the package's non-private fit path, which the SQL layer cannot
// reach, to draw the reference line and to reuse one solve for all ε.
package svm

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func havePython() bool {
	return exec.Command("/usr/bin/python3", "-c", "import sklearn, matplotlib").Run() == nil
}

// randomSplit shuffles d with rng and returns an 80/20 train/test split.
func randomSplit(d dataset, rng *rand.Rand) (train, test dataset) {
	idx := rng.Perm(len(d.x))
	cut := len(idx) * 4 / 5
	for k, i := range idx {
		if k < cut {
			train.x, train.y = append(train.x, d.x[i]), append(train.y, d.y[i])
		} else {
			test.x, test.y = append(test.x, d.x[i]), append(test.y, d.y[i])
		}
	}
	train.names, test.names = d.names, d.names
	return train, test
}

var resultEpsilons = []float64{0.1, 0.5, 1, 2, 5, 10}

// TestResultsAccuracy: test accuracy vs ε (mean ± sd over 20 random 80/20
// splits, fresh random features and noise each run) for linear and rbf on
// breast cancer and digits, with the noise-free accuracy of the same model
// as reference. Writes docs/results/svm_accuracy.csv and, with python,
// docs/results/svm_accuracy.png.
func TestResultsAccuracy(t *testing.T) {
	const runs = 20
	sets := []struct {
		name string
		d    dataset
		cfg  func(dataset, int) Config
	}{
		{"breast_cancer", loadCSV(t, "breast_cancer.csv"), breastCancerConfig},
		{"digits", loadCSV(t, "digits.csv"), digitsConfig},
	}
	var rows [][]string
	rows = append(rows, []string{"dataset", "kernel", "C", "epsilon", "run", "accuracy", "nonprivate"})
	for _, s := range sets {
		for _, kernel := range []string{KernelLinear, KernelRBF} {
			for _, c := range []float64{10, 100, 1000} {
				acc := make(map[float64][]float64)
				var clean []float64
				start := time.Now()
				for run := 0; run < runs; run++ {
					rng := rand.New(rand.NewPCG(uint64(run), 42))
					train, test := randomSplit(s.d, rng)
					cfg := s.cfg(train, len(train.x))
					cfg.Kernel, cfg.C = kernel, c
					tr := mustPlan(t, cfg)
					ws, _, err := tr.fit(train.x, train.y)
					if err != nil {
						t.Fatal(err)
					}
					np := testAccuracy(t, tr, ws, test)
					clean = append(clean, np)
					for _, eps := range resultEpsilons {
						cfg.Epsilon = eps
						te := mustPlan(t, cfg)
						te.rff, te.scaler = tr.rff, tr.scaler // same model class, same features
						noisy := make([][]float64, len(ws))
						for k := range ws {
							noisy[k] = append([]float64(nil), ws[k]...)
							if err := te.release(noisy[k]); err != nil {
								t.Fatal(err)
							}
						}
						a := testAccuracy(t, te, noisy, test)
						acc[eps] = append(acc[eps], a)
						rows = append(rows, []string{s.name, kernel, fmt.Sprint(c), fmt.Sprint(eps), strconv.Itoa(run), fmt.Sprintf("%.6f", a), fmt.Sprintf("%.6f", np)})
					}
				}
				line := fmt.Sprintf("%-13s %-6s C=%-5v non-private %.3f±%.3f |", s.name, kernel, c, mean(clean), sd(clean))
				for _, eps := range resultEpsilons {
					line += fmt.Sprintf(" ε=%v: %.3f±%.3f", eps, mean(acc[eps]), sd(acc[eps]))
				}
				t.Logf("%s (%v)", line, time.Since(start).Round(time.Millisecond))
			}
		}
	}
	writeResults(t, rows, "svm_accuracy")
}

// syntheticLinear returns n rows uniform in [−1, 1]^d labelled by a noisy
// hyperplane through the first three features.
func syntheticLinear(n, d int, seed uint64) ([][]float64, []int, Config) {
	rng := rand.New(rand.NewPCG(seed, 0x11ea7))
	X, y, cfg := synthetic(n, d, seed) // same bounds and names; rows redrawn
	for i := range X {
		for j := range X[i] {
			X[i][j] = 2*rng.Float64() - 1
		}
		y[i] = 0
		if X[i][0]+X[i][1]-X[i][2]+0.3*rng.NormFloat64() > 0 {
			y[i] = 1
		}
	}
	return X, y, cfg
}

// syntheticXOR returns n rows uniform in [−1, 1]^d labelled by the sign of
// x₀·x₁ (plus a little noise): balanced and not linearly separable.
func syntheticXOR(n, d int, seed uint64) ([][]float64, []int, Config) {
	rng := rand.New(rand.NewPCG(seed, 0x0c0c))
	X, y, cfg := synthetic(n, d, seed) // same bounds and names; rows redrawn
	for i := range X {
		for j := range X[i] {
			X[i][j] = 2*rng.Float64() - 1
		}
		y[i] = 0
		if X[i][0]*X[i][1]+0.05*rng.NormFloat64() > 0 {
			y[i] = 1
		}
	}
	return X, y, cfg
}

// TestResultsScaling: accuracy vs ε as n grows (the noise scale falls as
// 1/n), on synthetic tables: a noisy hyperplane (linear kernel, d = 10) and
// a noisy XOR (rbf, d̂ = 64, d = 5), default C and γ, 10 runs each, test
// sets of 10 000 rows. Writes docs/results/svm_scaling.csv (and .png).
func TestResultsScaling(t *testing.T) {
	rows := [][]string{{"dataset", "kernel", "C", "epsilon", "run", "accuracy", "nonprivate"}}
	for _, kernel := range []string{KernelLinear, KernelRBF} {
		for _, n := range []int{1_000, 10_000, 100_000, 1_000_000} {
			acc := make(map[float64][]float64)
			var clean []float64
			start := time.Now()
			for run := 0; run < 10; run++ {
				gen, d := syntheticLinear, 10
				if kernel == KernelRBF {
					gen, d = syntheticXOR, 5
				}
				X, y, cfg := gen(n, d, uint64(100+run))
				Xt, yt, _ := gen(10_000, d, uint64(900+run))
				test := dataset{x: Xt, y: yt}
				cfg.Kernel = kernel
				if kernel == KernelRBF {
					cfg.Dim = 64
				}
				tr := mustPlan(t, cfg)
				ws, _, err := tr.fit(X, y)
				if err != nil {
					t.Fatal(err)
				}
				np := testAccuracy(t, tr, ws, test)
				clean = append(clean, np)
				for _, eps := range resultEpsilons {
					cfg.Epsilon = eps
					te := mustPlan(t, cfg)
					te.rff = tr.rff
					noisy := make([][]float64, len(ws))
					for k := range ws {
						noisy[k] = append([]float64(nil), ws[k]...)
						if err := te.release(noisy[k]); err != nil {
							t.Fatal(err)
						}
					}
					a := testAccuracy(t, te, noisy, test)
					acc[eps] = append(acc[eps], a)
					rows = append(rows, []string{fmt.Sprintf("synthetic n=%d", n), kernel, fmt.Sprint(tr.Config().C), fmt.Sprint(eps), strconv.Itoa(run), fmt.Sprintf("%.6f", a), fmt.Sprintf("%.6f", np)})
				}
			}
			line := fmt.Sprintf("%-6s n=%-7d non-private %.3f±%.3f |", kernel, n, mean(clean), sd(clean))
			for _, eps := range resultEpsilons {
				line += fmt.Sprintf(" ε=%v: %.3f±%.3f", eps, mean(acc[eps]), sd(acc[eps]))
			}
			t.Logf("%s (%v)", line, time.Since(start).Round(time.Millisecond))
		}
	}
	writeResults(t, rows, "svm_scaling")
}

// writeResults writes docs/results/<name>.csv and, with python, plots it
// to docs/results/<name>.png.
func writeResults(t *testing.T, rows [][]string, name string) {
	out := filepath.Join(repoRoot(), "docs", "results", name+".csv")
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if !havePython() {
		t.Logf("python with matplotlib unavailable: %s.png not drawn", name)
		return
	}
	cmd := exec.Command("/usr/bin/python3", filepath.Join(repoRoot(), "docs", "results", "svm_plot.py"), out, filepath.Join(repoRoot(), "docs", "results", name+".png"))
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("plot: %v\n%s", err, msg)
	}
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func sd(v []float64) float64 {
	m := mean(v)
	var s float64
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(v)-1))
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// writeSynthetic writes rows as CSV (features, label) for the python side.
func writeSynthetic(t *testing.T, path string, X [][]float64, y []int) {
	var b strings.Builder
	for i, r := range X {
		for _, v := range r {
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(y[i]))
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestResultsSpeed times Plan + Train (rbf, d̂ = 256) on 200 000 × 20
// synthetic rows, three times, at the default C and at C = n (the same
// regularisation as sklearn's C = 1), and then runs
// docs/results/svm_speed_sklearn.py (RBFSampler(n_components=512) +
// LinearSVC) three times on the same rows in the same process tree.
func TestResultsSpeed(t *testing.T) {
	const n = 200_000
	X, y, cfg := synthetic(n, 20, 1)
	Xt, yt, _ := synthetic(20_000, 20, 2)
	test := dataset{x: Xt, y: yt}
	cfg.Kernel = KernelRBF
	for _, c := range []float64{DefaultC, n} {
		cfg.C = c
		var secs, accs []float64
		for rep := 0; rep < 3; rep++ {
			start := time.Now()
			tr, err := Plan(cfg)
			if err != nil {
				t.Fatal(err)
			}
			m, err := tr.Train(X, y)
			if err != nil {
				t.Fatal(err)
			}
			secs = append(secs, time.Since(start).Seconds())
			accs = append(accs, testAccuracy(t, tr, m.Weights, test))
			if rep == 0 { // untimed: the same model class without noise
				ws, sols, err := tr.fit(X, y)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("C=%v: noise-free test accuracy %.4f (%.1f passes, %d epochs)", c, testAccuracy(t, tr, ws, test), sols[0].passes, sols[0].epochs)
			}
		}
		t.Logf("dpsql Plan+Train rbf d̂=256 C=%v ε=1: %.2f s median of %.2f; test accuracy of the released (ε = 1) models %.4f", c, median(secs), secs, accs)
	}
	if !havePython() {
		t.Logf("python with sklearn unavailable: sklearn side not run")
		return
	}
	dir := t.TempDir()
	train, testPath := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	writeSynthetic(t, train, X, y)
	writeSynthetic(t, testPath, Xt, yt)
	cmd := exec.Command("/usr/bin/python3", filepath.Join(repoRoot(), "docs", "results", "svm_speed_sklearn.py"), train, testPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sklearn: %v\n%s", err, out)
	}
	t.Logf("sklearn:\n%s", out)
}

// peakRSS returns VmHWM from /proc/self/status (Linux), or "".
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
		}
	}
	return ""
}

// TestResultsMemory1M trains rbf d̂ = 256 at the default C on 1 000 000 × 20
// rows and reports the wall time and the peak RSS of the process. Run it
// alone (the peak covers the whole test binary), e.g. under /usr/bin/time -v.
func TestResultsMemory1M(t *testing.T) {
	X, y, cfg := synthetic(1_000_000, 20, 3)
	cfg.Kernel = KernelRBF
	t.Logf("after generating the rows: peak RSS %s", peakRSS())
	start := time.Now()
	tr, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Train(X, y); err != nil {
		t.Fatal(err)
	}
	t.Logf("Plan+Train 1M×20 rbf d̂=256 C=%v: %.1f s, peak RSS %s", tr.Config().C, time.Since(start).Seconds(), peakRSS())
}
