//go:build results

package lmgc

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Run with (from the repository root; docs/results/lmgc.md):
//
//	LMGC_SETS=iris,wine,breast_cancer,vehicle,vowel,digits,dna LMGC_EPS=0.1,1,10,10000 LMGC_RUNS=10 \
//	  go test -tags results -run ResultsShared ./mechanism/lmgc/ -v -timeout 10h
//
// Writes docs/results/lmgc_shared_<sets>.csv: per (data set, ε) the test
// accuracy of LMGC_RUNS releases (mean, sd), the median train time, Δ, T,
// the noise-off accuracy at the same Δ and the relative displacement
// ‖Φ_release − Φ_noise-off‖/‖Φ_noise-off‖ (mean). Split: shared_test.go
// (80/20, test rows i%5 == 0); sklearn LDA on the same split:
// docs/results/lmgc_lda.py.
//
// LMGC_DELTA (default 0) is a list of δ: 0 is the pure-ε release, δ > 0
// the Gaussian objective perturbation (lmgc.md §10); the CSV then ends in
// _delta.csv and has a delta column. A set named syn<n>x<d>_<C> is the
// synthetic Gaussian mixture of data_test.go (seed 1, bounds [−1, 1]).

func envFloats(name string, def []float64) []float64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			panic(err)
		}
		out = append(out, v)
	}
	return out
}

func TestResultsShared(t *testing.T) {
	sets := sharedSets
	if s := os.Getenv("LMGC_SETS"); s != "" {
		sets = strings.Split(s, ",")
	}
	epss := envFloats("LMGC_EPS", []float64{0.1, 1, 10, 1e4})
	runs := int(envFloats("LMGC_RUNS", []float64{10})[0])
	dps := envFloats("LMGC_DELTA", []float64{0})
	withDelta := os.Getenv("LMGC_DELTA") != ""
	rows := [][]string{{"dataset", "n_train", "d", "classes", "epsilon", "runs", "mean", "sd", "median_seconds",
		"delta", "iterations", "noise_off_same_delta", "rel_displacement", "epsilon_b", "jacobian"}}
	if withDelta {
		rows[0] = append(rows[0], "dp_delta", "perturbation_scale")
	}
	for _, name := range sets {
		var ds *dataset
		var n, d, k int
		if _, err := fmt.Sscanf(name, "syn%dx%d_%d", &n, &d, &k); err == nil {
			ds = synthetic(n, d, k, 1)
		} else {
			ds = loadShared(t, name)
		}
		xtr, ytr, xte, yte := ds.split80()
		for _, eps := range epss {
			for _, dp := range dps {
				cfg := ds.config(eps, len(xtr))
				cfg.Delta = dp
				p, err := Plan(cfg)
				if err != nil {
					t.Fatal(err)
				}
				// LMGC_NOISEOFF=0 skips the noise-off reference (one more
				// release's time; dna at ε = 1 takes many minutes per release).
				aoff, offPhi := math.NaN(), []float64(nil)
				if os.Getenv("LMGC_NOISEOFF") != "0" {
					off, offSol, err := p.train(xtr, ytr, trainOptions{noiseOff: true})
					if err != nil {
						t.Fatal(err)
					}
					aoff = accuracy(t, predictor(off), ds.classes, xte, yte)
					offPhi = offSol.phi
				}
				var accs, secs, disp []float64
				for r := 0; r < runs; r++ {
					start := time.Now()
					m, _, err := p.train(xtr, ytr, trainOptions{})
					if err != nil {
						t.Fatal(err)
					}
					secs = append(secs, time.Since(start).Seconds())
					accs = append(accs, accuracy(t, predictor(m), ds.classes, xte, yte))
					var released []float64
					for _, blk := range m.Phi {
						released = append(released, blk...)
					}
					if offPhi != nil {
						disp = append(disp, diffNorm(released, offPhi)/norm2(offPhi))
					}
				}
				mu, sd := meanSDf(accs)
				if runs < 2 {
					sd = math.NaN()
				}
				slices.Sort(secs)
				med := secs[len(secs)/2]
				if len(secs)%2 == 0 {
					med = (secs[len(secs)/2-1] + secs[len(secs)/2]) / 2
				}
				dm, _ := meanSDf(disp)
				c := p.cal
				t.Logf("%-14s δ=%g ε=%-6g acc %.3f ± %.3f (noise off %.3f) Δ=%.3g T=%d median %.2fs rel.disp %.3g",
					name, dp, eps, mu, sd, aoff, c.StrongConvexity, c.Iterations, med, dm)
				row := []string{name, strconv.Itoa(len(xtr)), strconv.Itoa(len(ds.features)), strconv.Itoa(len(ds.classes)),
					ff(eps), strconv.Itoa(runs), ff(mu), ff(sd), ff(med), ff(c.StrongConvexity), strconv.Itoa(c.Iterations),
					ff(aoff), ff(dm), ff(c.PerturbationEpsilon), ff(c.JacobianEpsilon)}
				if withDelta {
					row = append(row, ff(dp), ff(c.PerturbationScale))
				}
				rows = append(rows, row)
			}
		}
	}
	out := "lmgc_shared_" + strings.Join(sets, "_") + ".csv"
	if withDelta {
		out = "lmgc_gauss_" + strings.Join(sets, "_") + ".csv"
	}
	writeCSV(t, out, rows)
}
