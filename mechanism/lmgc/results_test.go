//go:build results

package lmgc

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// Run with: go test -tags results -run Results ./mechanism/lmgc/ -v -timeout 2h
// Writes docs/results/lmgc_*.csv and, when /usr/bin/python3 is present,
// runs docs/results/lmgc_plot.py (sklearn baselines and the PNG figure).

var resultsEpsilons = []float64{0.5, 1, 2, 5, 10, 50}

const (
	resultsRuns = 20
	// nonPrivateDelta is Δ for the non-private reference (noise off): small
	// enough not to bias the large-margin solution.
	nonPrivateDelta  = 1e-4
	nonPrivateTarget = 1e-4
)

var resultsDir = filepath.Join("..", "..", "docs", "results")

func writeCSV(t *testing.T, name string, rows [][]string) {
	t.Helper()
	f, err := os.Create(filepath.Join(resultsDir, name))
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
}

func ff(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func TestResultsAccuracy(t *testing.T) {
	acc := [][]string{{"dataset", "epsilon", "runs", "mean", "sd", "noise_off_same_delta", "delta", "epsilon_b", "jacobian", "epsilon_out", "mean_train_seconds"}}
	ref := [][]string{{"dataset", "method", "accuracy"}}
	for _, name := range []string{"iris", "wine", "digits"} {
		ds := loadDataset(t, name)
		xtr, ytr, xte, yte := ds.split()
		for _, eps := range resultsEpsilons {
			p, err := Plan(ds.config(eps, len(xtr)))
			if err != nil {
				t.Fatal(err)
			}
			var sum, sq float64
			var elapsed time.Duration
			for r := 0; r < resultsRuns; r++ {
				start := time.Now()
				m, _, err := p.train(xtr, ytr, trainOptions{})
				if err != nil {
					t.Fatal(err)
				}
				elapsed += time.Since(start)
				a := accuracy(t, predictor(m), ds.classes, xte, yte)
				sum += a
				sq += a * a
			}
			mean := sum / resultsRuns
			sd := math.Sqrt(math.Max(0, (sq-resultsRuns*mean*mean)/(resultsRuns-1)))
			off, _, err := p.train(xtr, ytr, trainOptions{noiseOff: true})
			if err != nil {
				t.Fatal(err)
			}
			aoff := accuracy(t, predictor(off), ds.classes, xte, yte)
			c := p.Calibration()
			secs := elapsed.Seconds() / resultsRuns
			t.Logf("%s ε=%g: accuracy %.3f ± %.3f (noise off at Δ=%.3g: %.3f), %.3fs per training",
				name, eps, mean, sd, c.StrongConvexity, aoff, secs)
			acc = append(acc, []string{name, ff(eps), strconv.Itoa(resultsRuns), ff(mean), ff(sd), ff(aoff),
				ff(c.StrongConvexity), ff(c.PerturbationEpsilon), ff(c.JacobianEpsilon), ff(c.OutputEpsilon), ff(secs)})
		}
		p, err := Plan(ds.config(1, len(xtr)))
		if err != nil {
			t.Fatal(err)
		}
		m, _, err := p.train(xtr, ytr, trainOptions{noiseOff: true, delta: nonPrivateDelta, target: nonPrivateTarget})
		if err != nil {
			t.Fatal(err)
		}
		a := accuracy(t, predictor(m), ds.classes, xte, yte)
		t.Logf("%s non-private LMGC (Δ=%g): %.3f", name, nonPrivateDelta, a)
		ref = append(ref, []string{name, "lmgc_nonprivate", ff(a)})
	}
	writeCSV(t, "lmgc_accuracy.csv", acc)
	writeCSV(t, "lmgc_reference.csv", ref)
}

func TestResultsTiming(t *testing.T) {
	rows := [][]string{{"table", "n", "d", "classes", "epsilon", "runs", "mean_seconds", "min_seconds", "max_seconds", "mean_iterations", "accuracy"}}
	digits := loadDataset(t, "digits")
	syn := synthetic(120000, 20, 5, 42)
	synTrain := &dataset{name: "synthetic", features: syn.features, lo: syn.lo, hi: syn.hi, classes: syn.classes,
		x: syn.x[:100000], y: syn.y[:100000]}
	for _, tc := range []struct {
		ds       *dataset
		xte      [][]float64
		yte      []int
		eps      float64
		runs     int
		noiseOff bool
	}{
		{digits, digits.x, digits.y, 1, 3, false},
		{digits, digits.x, digits.y, 10, 3, false},
		// Every release runs the plan's a-priori count T; at n = 10⁵ one
		// release takes minutes, so one run each (T is public and the same
		// for every run).
		{synTrain, syn.x[100000:], syn.y[100000:], 1, 1, false},
		{synTrain, syn.x[100000:], syn.y[100000:], 1, 1, true},
	} {
		p, err := Plan(tc.ds.config(tc.eps, len(tc.ds.x)))
		if err != nil {
			t.Fatal(err)
		}
		var total, lo, hi float64
		var iters int
		var accSum float64
		lo = math.Inf(1)
		for r := 0; r < tc.runs; r++ {
			start := time.Now()
			m, sol, err := p.train(tc.ds.x, tc.ds.y, trainOptions{noiseOff: tc.noiseOff})
			if err != nil {
				t.Fatal(err)
			}
			s := time.Since(start).Seconds()
			total += s
			lo, hi = math.Min(lo, s), math.Max(hi, s)
			iters += sol.iterations
			accSum += accuracy(t, predictor(m), tc.ds.classes, tc.xte, tc.yte)
		}
		label := tc.ds.name
		if tc.noiseOff {
			label += " (noise off)"
		}
		runs := float64(tc.runs)
		t.Logf("%s n=%d d=%d C=%d ε=%g: %.2fs per training (min %.2f, max %.2f), %.0f iterations, accuracy %.3f",
			label, len(tc.ds.x), len(tc.ds.features), len(tc.ds.classes), tc.eps, total/runs, lo, hi, float64(iters)/runs, accSum/runs)
		rows = append(rows, []string{label, strconv.Itoa(len(tc.ds.x)), strconv.Itoa(len(tc.ds.features)),
			strconv.Itoa(len(tc.ds.classes)), ff(tc.eps), strconv.Itoa(tc.runs), ff(total / runs), ff(lo), ff(hi),
			ff(float64(iters) / runs), ff(accSum / runs)})
	}
	writeCSV(t, "lmgc_timing.csv", rows)
}

// TestResultsPlot runs the Python baselines and plot when /usr/bin/python3
// (Debian's, with scikit-learn and matplotlib) is present.
func TestResultsPlot(t *testing.T) {
	const py = "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Logf("%s not found: run docs/results/lmgc_plot.py by hand for the baselines and figure", py)
		return
	}
	cmd := exec.Command(py, filepath.Join(resultsDir, "lmgc_plot.py"))
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatal(fmt.Errorf("lmgc_plot.py: %w", err))
	}
}

// TestResultsOutputStep compares the current release with the release this
// change replaced (docs/results/lmgc_output_step.md), 100 releases per
// point on the same split, iris and wine, ε ∈ {1, 10}. "Before" is emulated
// with the previous noise laws on the current solver: b from the
// continuous Gamma-direction sampler (noise.GammaDirectionScaled, the same
// density), the minimiser to the same accuracy, and the Gamma-direction
// output noise of scale β_Z (‖Z‖ ~ Gamma(m, β_Z)) before the projection.
func TestResultsOutputStep(t *testing.T) {
	const runs = 100
	rows := [][]string{{"dataset", "epsilon", "runs", "before_mean", "before_sd", "after_mean", "after_sd", "diff", "diff_se", "iterations"}}
	for _, name := range []string{"iris", "wine"} {
		ds := loadDataset(t, name)
		xtr, ytr, xte, yte := ds.split()
		for _, eps := range []float64{1, 10} {
			p, err := Plan(ds.config(eps, len(xtr)))
			if err != nil {
				t.Fatal(err)
			}
			var before, after []float64
			for r := 0; r < runs; r++ {
				m, _, err := p.train(xtr, ytr, trainOptions{})
				if err != nil {
					t.Fatal(err)
				}
				after = append(after, accuracy(t, predictor(m), ds.classes, xte, yte))
				before = append(before, accuracy(t, predictor(oldLMGCRelease(t, p, xtr, ytr)), ds.classes, xte, yte))
			}
			mb, sb := meanSDf(before)
			ma, sa := meanSDf(after)
			se := math.Sqrt(sb*sb/runs + sa*sa/runs)
			t.Logf("%s ε=%g: before %.3f ± %.3f, after %.3f ± %.3f, diff %+.3f ± %.3f (se), T = %d",
				name, eps, mb, sb, ma, sa, ma-mb, se, p.cal.Iterations)
			rows = append(rows, []string{name, ff(eps), strconv.Itoa(runs), ff(mb), ff(sb), ff(ma), ff(sa), ff(ma - mb), ff(se), strconv.Itoa(p.cal.Iterations)})
		}
	}
	writeCSV(t, "lmgc_output_step.csv", rows)
}

func meanSDf(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(v)-1))
}

// oldLMGCRelease emulates the previous release path (see
// TestResultsOutputStep).
func oldLMGCRelease(t *testing.T, p *Trainer, X [][]float64, y []int) *mechanism.Model {
	t.Helper()
	C, D, m := p.classes, p.dim, p.cal.Dim
	toBlocks := func(v []float64) []float64 {
		out := make([]float64, C*D*D)
		k := 0
		for c := 0; c < C; c++ {
			blk := out[c*D*D : (c+1)*D*D]
			for i := 0; i < D; i++ {
				blk[i*D+i] = v[k]
				k++
				for j := i + 1; j < D; j++ {
					blk[i*D+j] = v[k] / math.Sqrt2
					blk[j*D+i] = blk[i*D+j]
					k++
				}
			}
		}
		return out
	}
	bv, err := noise.GammaDirectionScaled(m, p.cal.PerturbationScale)
	if err != nil {
		t.Fatal(err)
	}
	xs := make([]float64, len(X)*D)
	for i, row := range X {
		p.scaler.Transform(xs[i*D:(i+1)*D], row)
	}
	prob := newProblem(C, D, xs, y, p.cfg.H, p.cfg.Lambda, p.cal.StrongConvexity, toBlocks(bv))
	phi := prob.solve(p.cal.Smoothness, p.cal.Iterations).phi
	zv, err := noise.GammaDirectionScaled(m, p.cal.OutputScale)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range toBlocks(zv) {
		phi[i] += v
	}
	projectPSD(phi, C, D)
	return p.model(phi)
}
