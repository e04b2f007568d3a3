//go:build results

package linreg

// Utility evidence (docs/results/linreg.md). Run from the repository root:
//
//	go test -tags results -run ResultsLinReg -v ./mechanism/linreg/ -timeout 60m
//	go test -tags results -run TuneLinReg -v ./mechanism/linreg/
//
// Not part of CI: it measures, it does not assert.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/internal/syntest"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/lsq"
)

func lsqRMSE(t testing.TB, cfg Config, train, test dataset) float64 {
	tr, err := lsq.Plan(lsq.Config{Epsilon: cfg.Epsilon, Delta: cfg.Delta, N: cfg.N, Features: cfg.Features, Lo: cfg.Lo, Hi: cfg.Hi,
		Label: cfg.Label, LabelLo: cfg.LabelLo, LabelHi: cfg.LabelHi})
	if err != nil {
		t.Fatal(err)
	}
	m, err := tr.Train(train.x, train.y)
	if err != nil {
		t.Fatal(err)
	}
	return modelRMSE(t, m, test)
}

func meanRMSE(train, test dataset) float64 {
	mu := mean(train.y)
	return rmse(test, func([]float64) float64 { return mu })
}

// TestTuneLinReg chooses FloorFactor on synthetic data and on an inner
// split of the diabetes TRAINING part (the first 353 rows of a fixed
// permutation; the other 89 rows are never looked at).
func TestTuneLinReg(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	all := loadCSV(t, "diabetes.csv")
	trainPart, _ := split(rng, all, 353)
	floors := []float64{0.5, 1, 2, 4}
	for _, delta := range []float64{1e-5, 0} {
		for _, eps := range []float64{0.1, 1, 10} {
			var line []string
			for _, fl := range floors {
				var r []float64
				for rep := 0; rep < 20; rep++ {
					in, val := split(rng, trainPart, 283)
					tr, err := Plan(diabetesConfig(len(in.x), eps, delta))
					if err != nil {
						t.Fatal(err)
					}
					tr.floor = fl
					r = append(r, trainRMSE(t, tr, in, val))
				}
				m, s := syntest.MeanSD(r)
				line = append(line, fmt.Sprintf("floor %.1f: %.1f±%.1f", fl, m, s))
			}
			t.Logf("diabetes-train δ=%g ε=%g  %s", delta, eps, strings.Join(line, "  "))
		}
	}
	for _, d := range []int{10, 50} {
		beta := synthBeta(rand.New(rand.NewPCG(uint64(d), 1)), d)
		test := synthLinear(rng, beta, 5000, 0.1)
		for _, n := range []int{1000, 10000} {
			for _, delta := range []float64{1e-5, 0} {
				for _, eps := range []float64{0.1, 1, 10} {
					var line []string
					for _, fl := range floors {
						var r []float64
						for rep := 0; rep < 10; rep++ {
							train := synthLinear(rng, beta, n, 0.1)
							tr, err := Plan(synthConfig(d, n, eps, delta))
							if err != nil {
								t.Fatal(err)
							}
							tr.floor = fl
							r = append(r, trainRMSE(t, tr, train, test))
						}
						m, s := syntest.MeanSD(r)
						line = append(line, fmt.Sprintf("floor %.1f: %.4f±%.4f", fl, m, s))
					}
					t.Logf("synthetic d=%d n=%d δ=%g ε=%g  %s", d, n, delta, eps, strings.Join(line, "  "))
				}
			}
		}
	}
}

// TestTuneKappa compares the Gaussian split b/a = Kappa on the same data
// as TestTuneLinReg (δ = 10⁻⁵).
func TestTuneKappa(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	all := loadCSV(t, "diabetes.csv")
	trainPart, _ := split(rng, all, 353)
	kappas := []float64{0.25, 0.5, 1, 2}
	run := func(cfg Config, train, test dataset, kappa float64) float64 {
		tr, err := Plan(cfg)
		if err != nil {
			t.Fatal(err)
		}
		g, err := planGaussian(cfg.Epsilon, cfg.Delta, cfg.N, tr.f, tr.depth(), kappa)
		if err != nil {
			t.Fatal(err)
		}
		tr.gauss = &g
		tr.noiseNorm = g.sigmaA * (math.Sqrt(2*float64(tr.f)) + math.Sqrt(2*math.Log(1/Failure)))
		tr.margin = g.sigmaL * normalQuantile(1-Failure)
		return trainRMSE(t, tr, train, test)
	}
	for _, eps := range []float64{0.1, 1, 10} {
		var line []string
		for _, k := range kappas {
			var r []float64
			for rep := 0; rep < 20; rep++ {
				in, val := split(rng, trainPart, 283)
				r = append(r, run(diabetesConfig(len(in.x), eps, 1e-5), in, val, k))
			}
			m, s := syntest.MeanSD(r)
			line = append(line, fmt.Sprintf("κ %.2f: %.1f±%.1f", k, m, s))
		}
		t.Logf("diabetes-train ε=%g  %s", eps, strings.Join(line, "  "))
	}
	for _, d := range []int{10, 50} {
		beta := synthBeta(rand.New(rand.NewPCG(uint64(d), 1)), d)
		test := synthLinear(rng, beta, 5000, 0.1)
		for _, n := range []int{1000, 10000} {
			for _, eps := range []float64{0.1, 1, 10} {
				var line []string
				for _, k := range kappas {
					var r []float64
					for rep := 0; rep < 10; rep++ {
						r = append(r, run(synthConfig(d, n, eps, 1e-5), synthLinear(rng, beta, n, 0.1), test, k))
					}
					m, s := syntest.MeanSD(r)
					line = append(line, fmt.Sprintf("κ %.2f: %.4f±%.4f", k, m, s))
				}
				t.Logf("synthetic d=%d n=%d ε=%g  %s", d, n, eps, strings.Join(line, "  "))
			}
		}
	}
}

// TestResultsLinReg writes docs/results/linreg.csv: test RMSE (label
// units) of linreg, DP_LSQ's default and the non-private references.
func TestResultsLinReg(t *testing.T) {
	const reps = 10
	f, err := os.Create("../../docs/results/linreg.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintln(f, "data,n,d,epsilon,delta,method,rmse_mean,rmse_sd,runs")
	emit := func(data string, n, d int, eps, delta float64, method string, r []float64) {
		m, s := syntest.MeanSD(r)
		fmt.Fprintf(f, "%s,%d,%d,%g,%g,%s,%.6g,%.3g,%d\n", data, n, d, eps, delta, method, m, s, len(r))
		t.Logf("%-9s n=%-6d d=%-2d ε=%-4g δ=%-6g %-12s %.4f ± %.4f", data, n, d, eps, delta, method, m, s)
	}
	rng := rand.New(rand.NewPCG(2026, 11))
	// Diabetes: 20 random 353/89 splits; references on the same splits.
	all := loadCSV(t, "diabetes.csv")
	type splitPair struct{ train, test dataset }
	var splits []splitPair
	for k := 0; k < 20; k++ {
		a, b := split(rng, all, 353)
		splits = append(splits, splitPair{a, b})
	}
	var ols, mp []float64
	for _, s := range splits {
		tr, err := Plan(diabetesConfig(353, 1, 1e-5))
		if err != nil {
			t.Fatal(err)
		}
		ols = append(ols, olsRMSE(t, tr, s.train, s.test))
		mp = append(mp, meanRMSE(s.train, s.test))
	}
	emit("diabetes", 353, 10, 0, 0, "ols", ols)
	emit("diabetes", 353, 10, 0, 0, "mean", mp)
	for _, delta := range []float64{1e-5, 0} {
		for _, eps := range []float64{0.1, 1, 10} {
			var ada, ls []float64
			for _, s := range splits {
				cfg := diabetesConfig(353, eps, delta)
				tr, err := Plan(cfg)
				if err != nil {
					t.Fatal(err)
				}
				ada = append(ada, trainRMSE(t, tr, s.train, s.test))
				ls = append(ls, lsqRMSE(t, cfg, s.train, s.test))
			}
			emit("diabetes", 353, 10, eps, delta, "linreg", ada)
			emit("diabetes", 353, 10, eps, delta, "dp_lsq", ls)
		}
	}
	// Synthetic: a fresh training set per run, one test set of 10⁴ rows.
	for _, d := range []int{10, 50} {
		beta := synthBeta(rand.New(rand.NewPCG(uint64(d), 1)), d)
		test := synthLinear(rng, beta, 10000, 0.1)
		for _, n := range []int{1000, 10000, 100000} {
			trains := make([]dataset, reps)
			var ols, mp []float64
			for k := range trains {
				trains[k] = synthLinear(rng, beta, n, 0.1)
				tr, err := Plan(synthConfig(d, n, 1, 1e-5))
				if err != nil {
					t.Fatal(err)
				}
				ols = append(ols, olsRMSE(t, tr, trains[k], test))
				mp = append(mp, meanRMSE(trains[k], test))
			}
			emit("synthetic", n, d, 0, 0, "ols", ols)
			emit("synthetic", n, d, 0, 0, "mean", mp)
			for _, delta := range []float64{1e-5, 0} {
				for _, eps := range []float64{0.1, 1, 10} {
					var ada, ls []float64
					for _, train := range trains {
						cfg := synthConfig(d, n, eps, delta)
						tr, err := Plan(cfg)
						if err != nil {
							t.Fatal(err)
						}
						ada = append(ada, trainRMSE(t, tr, train, test))
						ls = append(ls, lsqRMSE(t, cfg, train, test))
					}
					emit("synthetic", n, d, eps, delta, "linreg", ada)
					emit("synthetic", n, d, eps, delta, "dp_lsq", ls)
				}
			}
		}
	}
}

// TestTuneRidgeFloor compares the ridge factor c of λ = max(0, c·E − λ̃_min)
// and the eigenvalue floor (both post-processing) on synthetic data and on
// inner splits of the diabetes TRAINING part (δ = 10⁻⁵; mean RMSE over
// repetitions, relative to the shipped c = 1, floor = 1 in the last column).
//
//	go test -tags results -run TuneRidgeFloor -v ./mechanism/linreg/
func TestTuneRidgeFloor(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 5))
	all := loadCSV(t, "diabetes.csv")
	trainPart, _ := split(rng, all, 353)
	type combo struct{ c, fl float64 }
	var combos []combo
	for _, c := range []float64{0, 0.25, 0.5, 1} {
		for _, fl := range []float64{0.25, 0.5, 1} {
			combos = append(combos, combo{c, fl})
		}
	}
	report := func(name string, draw func() (Config, dataset, dataset), reps int) {
		res := make([][]float64, len(combos))
		for rep := 0; rep < reps; rep++ {
			cfg, train, test := draw()
			tr, err := Plan(cfg)
			if err != nil {
				t.Fatal(err)
			}
			// The same noisy statistics for every combination: the two
			// constants are post-processing.
			r, err := tr.addNoise(tr.stats(train.x, train.y))
			if err != nil {
				t.Fatal(err)
			}
			for i, cb := range combos {
				tr.ridgeFactor, tr.floor = cb.c, cb.fl
				theta, _ := tr.estimate(r)
				m := &mechanism.Model{Kind: mechanism.KindLinReg, Features: tr.cfg.Features, LabelLo: tr.cfg.LabelLo, LabelHi: tr.cfg.LabelHi, Scaler: tr.scaler, Weights: [][]float64{theta}}
				res[i] = append(res[i], modelRMSE(t, m, test))
			}
		}
		var line []string
		for i, cb := range combos {
			m, _ := syntest.MeanSD(res[i])
			line = append(line, fmt.Sprintf("c=%g,fl=%g:%.4f", cb.c, cb.fl, m))
		}
		t.Logf("%s  %s", name, strings.Join(line, " "))
	}
	for _, eps := range []float64{0.1, 1, 10} {
		report(fmt.Sprintf("diabetes-train ε=%g", eps), func() (Config, dataset, dataset) {
			in, val := split(rng, trainPart, 283)
			return diabetesConfig(len(in.x), eps, 1e-5), in, val
		}, 20)
	}
	for _, d := range []int{10, 50} {
		beta := synthBeta(rand.New(rand.NewPCG(uint64(d), 1)), d)
		test := synthLinear(rng, beta, 5000, 0.1)
		for _, n := range []int{1000, 10000, 100000} {
			for _, eps := range []float64{0.1, 1, 10} {
				report(fmt.Sprintf("synthetic d=%d n=%d ε=%g", d, n, eps), func() (Config, dataset, dataset) {
					return synthConfig(d, n, eps, 1e-5), synthLinear(rng, beta, n, 0.1), test
				}, 8)
			}
		}
	}
}
