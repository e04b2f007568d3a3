//go:build results

package lsq

// Results for docs/results/lsq.md. Run with
//
//	go test -tags results -run Results ./mechanism/lsq/ -v -timeout 60m
//
// It writes CSV files to docs/results/ and, when /usr/bin/python3 with
// matplotlib is present, the PNG plots (mechanism/lsq/testdata/plot_results.py).

import (
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
	"testing"
	"time"

	"gonum.org/v1/gonum/floats"

	"github.com/dpsql/dpsql/noise"
)

const resultsDir = "../../docs/results"

func writeCSV(t *testing.T, name string, header []string, rows [][]string) {
	t.Helper()
	f, err := os.Create(filepath.Join(resultsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	_ = w.Write(header)
	_ = w.WriteAll(rows)
	w.Flush()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", filepath.Join(resultsDir, name))
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// rmseUnits is the RMSE of clipped linear predictions ⟨w, φ(x)⟩ on the
// rows, in y′ units (labels mapped to [−1, 1]).
func rmseUnits(fm featureMap, lm labelMap, w []float64, x [][]float64, y []float64) float64 {
	phi := make([]float64, fm.f)
	z := make([]float64, fm.scaler.Dim())
	var s float64
	for i, row := range x {
		fm.apply(phi, z, row)
		d := max(-1, min(1, floats.Dot(w, phi))) - lm.unit(y[i])
		s += d * d
	}
	return math.Sqrt(s / float64(len(x)))
}

// split4to1 returns a random 4:1 train/test split of ds.
func split4to1(rng *rand.Rand, ds dataset) (train, test dataset) {
	idx := rng.Perm(len(ds.x))
	cut := len(idx) * 4 / 5
	for k, i := range idx {
		if k < cut {
			train.x, train.y = append(train.x, ds.x[i]), append(train.y, ds.y[i])
		} else {
			test.x, test.y = append(test.x, ds.x[i]), append(test.y, ds.y[i])
		}
	}
	return train, test
}

// bootstrap draws n rows with replacement.
func bootstrap(rng *rand.Rand, ds dataset, n int) dataset {
	out := dataset{x: make([][]float64, n), y: make([]float64, n)}
	for i := range out.x {
		j := rng.IntN(len(ds.x))
		out.x[i], out.y[i] = ds.x[j], ds.y[j]
	}
	return out
}

// fig1Methods are the releases compared in the Figure 1 reproduction.
var fig1Methods = []struct {
	name   string
	method string
	delta  float64 // δ of the release (0: pure ε)
}{
	{"output-laplace", MethodOutput, 0},
	{"output-gauss", MethodOutput, 0.01},
	{"objective", MethodObjective, 0.01},
	{"input", MethodInput, 0.01},
}

// TestResultsFigure1 reproduces the shape of Fukuchi et al.'s Figure 1:
// test RMSE against the training size n = 2⁷ … 2¹⁷ at ε ∈ {0.1, 1},
// δ = 0.01, 4:1 split, 20 trials, for input, objective and output
// perturbation and non-private ridge, on (a) a synthetic linear model with
// 14 features and (b) diabetes.csv, whose training sets of size n are
// bootstrap resamples of the 80 % split (the 20 % held out is the test set).
func TestResultsFigure1(t *testing.T) {
	const trials = 20
	rng := rand.New(rand.NewPCG(2024, 1))
	beta := synthBeta(rng, 14)
	diabetes := loadCSV(t, "diabetes.csv")
	var rows [][]string
	for _, dsName := range []string{"synthetic", "diabetes"} {
		for e := 7; e <= 17; e++ {
			n := 1 << e
			res := map[string][]float64{}
			for trial := 0; trial < trials; trial++ {
				var train, test dataset
				var cfgFor func(eps, delta float64) Config
				if dsName == "synthetic" {
					all := synthLinear(rng, beta, n+n/4, 0.1)
					train = dataset{x: all.x[:n], y: all.y[:n]}
					test = dataset{x: all.x[n:], y: all.y[n:]}
					cfgFor = func(eps, delta float64) Config { return synthConfig(14, n, eps, delta) }
				} else {
					tr, te := split4to1(rng, diabetes)
					train, test = bootstrap(rng, tr, n), te
					cfgFor = func(eps, delta float64) Config { return diabetesConfig(n, eps, delta) }
				}
				// Non-private baseline: ridge with λ = 10⁻⁹ (ordinary least squares).
				base := mustPlan(t, cfgFor(1, 0))
				st := sufficientStats(train.x, train.y, base.fm, base.lm)
				wNP, err := ridgeSolve(st.s, 1e-9*float64(n), st.c)
				if err != nil {
					t.Fatal(err)
				}
				res["np"] = append(res["np"], rmseUnits(base.fm, base.lm, wNP, test.x, test.y))
				for _, eps := range []float64{0.1, 1} {
					for _, m := range fig1Methods {
						cfg := cfgFor(eps, m.delta)
						cfg.Method = m.method
						tr, err := Plan(cfg)
						key := fmt.Sprintf("%s/%g", m.name, eps)
						if err != nil {
							res[key] = append(res[key], math.NaN())
							continue
						}
						model, err := tr.Train(train.x, train.y)
						if err != nil {
							t.Fatal(err)
						}
						res[key] = append(res[key], rmseUnits(tr.fm, tr.lm, model.Weights[0], test.x, test.y))
					}
				}
			}
			keys := make([]string, 0, len(res))
			for k := range res {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				v := res[k]
				mean, sd := meanSD(v)
				rows = append(rows, []string{dsName, strconv.Itoa(n), k, fmtF(mean), fmtF(sd), strconv.Itoa(len(v))})
				t.Logf("%-9s n=2^%-2d %-20s RMSE %.4f ± %.4f", dsName, e, k, mean, sd)
			}
		}
	}
	writeCSV(t, "lsq_fig1.csv", []string{"dataset", "n", "method", "rmse_mean", "rmse_sd", "trials"}, rows)
	// Planned noise of input perturbation against the paper's formulas
	// (synthetic model: F = 15, η = √15, δ = 0.01).
	var sig [][]string
	for e := 7; e <= 21; e++ {
		n := 1 << e
		for _, eps := range []float64{0.1, 1} {
			eta := math.Sqrt(15)
			pu, pb := paperInputSigmas(n, 15, eps, 0.01, eta)
			su, sb := math.NaN(), math.NaN()
			if cal, err := calibrateInput(n, 15, eps, 0.01, eta); err == nil {
				su, sb = cal.sigmaU, cal.sigmaB
			}
			objBeta, _ := objGaussSigma(lossGradDiff(eta), eps, 0.01, 2)
			sig = append(sig, []string{strconv.Itoa(n), fmtF(eps), fmtF(su), fmtF(sb), fmtF(pu), fmtF(pb), fmtF(objBeta)})
		}
	}
	writeCSV(t, "lsq_input_sigmas.csv", []string{"n", "epsilon", "sigma_u", "sigma_b", "paper_sigma_u", "paper_sigma_b", "objective_beta"}, sig)
	plot(t)
}

func meanSD(v []float64) (mean, sd float64) {
	var k int
	for _, x := range v {
		if !math.IsNaN(x) {
			mean += x
			k++
		}
	}
	if k == 0 {
		return math.NaN(), math.NaN()
	}
	mean /= float64(k)
	for _, x := range v {
		if !math.IsNaN(x) {
			sd += (x - mean) * (x - mean)
		}
	}
	return mean, math.Sqrt(sd / float64(max(k-1, 1)))
}

// TestResultsPredict measures DP_LSQ_PREDICT (Nie & Wang, exact rbf kernel
// ridge) accuracy against ε with λ = auto ((mε)^(−1/2)) and fixed λ: RMSE
// of one private prediction per test row, in y′ units, 20 random 4:1
// splits; on diabetes (m = 353) and on the synthetic model (m = 1000).
func TestResultsPredict(t *testing.T) {
	const trials = 20
	rng := rand.New(rand.NewPCG(2024, 2))
	beta := synthBeta(rng, 14)
	epsilons := []float64{0.1, 0.2, 0.5, 1, 2, 5, 10, 20}
	lambdas := []float64{0, 1e-3, 1e-2, 1e-1, 1} // 0 = auto
	diabetes := loadCSV(t, "diabetes.csv")
	var rows [][]string
	for _, dsName := range []string{"diabetes", "synthetic"} {
		res := map[string][]float64{}
		for trial := 0; trial < trials; trial++ {
			var train, test dataset
			var cfgFor func(eps float64) Config
			if dsName == "diabetes" {
				train, test = split4to1(rng, diabetes)
				cfgFor = func(eps float64) Config { return diabetesConfig(len(train.x), eps, 0) }
			} else {
				all := synthLinear(rng, beta, 1250, 0.1)
				train, test = dataset{x: all.x[:1000], y: all.y[:1000]}, dataset{x: all.x[1000:], y: all.y[1000:]}
				cfgFor = func(eps float64) Config { return synthConfig(14, 1000, eps, 0) }
			}
			fits := map[float64]*Predictor{}
			for _, eps := range epsilons {
				for _, lam := range lambdas {
					cfg := cfgFor(eps)
					cfg.Kernel, cfg.Lambda = KernelRBF, lam
					p := mustPlanPredict(t, cfg)
					pr, ok := fits[p.Lambda()]
					if !ok {
						var err error
						if pr, err = p.Fit(train.x, train.y); err != nil {
							t.Fatal(err)
						}
						fits[p.Lambda()] = pr
					}
					// Reuse the fit (same λ, same data), noise from this plan.
					pr = &Predictor{p: p, f: pr.f}
					var s, s0 float64
					for i, xq := range test.x {
						v, err := pr.Predict(xq)
						if err != nil {
							t.Fatal(err)
						}
						d := p.lm.unit(v) - p.lm.unit(test.y[i])
						d0 := max(-1, min(1, pr.f(xq))) - p.lm.unit(test.y[i])
						s, s0 = s+d*d, s0+d0*d0
					}
					name := "auto"
					if lam != 0 {
						name = fmtF(lam)
					}
					k := fmt.Sprintf("%s/%g", name, eps)
					res[k] = append(res[k], math.Sqrt(s/float64(len(test.x))))
					res["nonprivate-"+k] = append(res["nonprivate-"+k], math.Sqrt(s0/float64(len(test.x))))
				}
			}
		}
		for _, eps := range epsilons {
			for _, lam := range lambdas {
				name := "auto"
				if lam != 0 {
					name = fmtF(lam)
				}
				k := fmt.Sprintf("%s/%g", name, eps)
				mean, sd := meanSD(res[k])
				m0, _ := meanSD(res["nonprivate-"+k])
				rows = append(rows, []string{dsName, fmtF(eps), name, fmtF(mean), fmtF(sd), fmtF(m0)})
				t.Logf("%-9s ε=%-4g λ=%-6s RMSE %.4f ± %.4f (noise-free %.4f)", dsName, eps, name, mean, sd, m0)
			}
		}
	}
	writeCSV(t, "lsq_predict.csv", []string{"dataset", "epsilon", "lambda", "rmse_mean", "rmse_sd", "rmse_noise_free"}, rows)
	plot(t)
}

// TestResultsSpeed times one linear DP_LSQ release (method output) on
// 2²⁰ rows × 20 features against plain passes over the same [][]float64 in
// the same process: the sum of one column, and the sum of all 20 columns.
// Median of 7 runs each, interleaved.
func TestResultsSpeed(t *testing.T) {
	x, y := benchRows(benchN, benchD)
	tr := mustPlan(t, synthConfig(benchD, benchN, 1, 0))
	sumAll := func() float64 {
		var s float64
		for _, row := range x {
			for _, v := range row {
				s += v
			}
		}
		return s
	}
	var tTrain, tSum1, tSumAll []float64
	for r := 0; r < 7; r++ {
		runtime.GC()
		t0 := time.Now()
		m, err := tr.Train(x, y)
		if err != nil {
			t.Fatal(err)
		}
		tTrain = append(tTrain, time.Since(t0).Seconds())
		sink += m.Weights[0][0]
		t0 = time.Now()
		sink += sumColumn(x)
		tSum1 = append(tSum1, time.Since(t0).Seconds())
		t0 = time.Now()
		sink += sumAll()
		tSumAll = append(tSumAll, time.Since(t0).Seconds())
	}
	med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	mt, m1, ma := med(tTrain), med(tSum1), med(tSumAll)
	t.Logf("Train %.1f ms, SUM(c1) pass %.1f ms (ratio %.1f), sum of all columns %.1f ms (ratio %.2f), GOMAXPROCS=%d",
		1e3*mt, 1e3*m1, mt/m1, 1e3*ma, mt/ma, runtime.GOMAXPROCS(0))
	writeCSV(t, "lsq_speed.csv", []string{"rows", "features", "train_ms", "sum_one_column_ms", "sum_all_columns_ms", "ratio_one", "ratio_all", "gomaxprocs"},
		[][]string{{strconv.Itoa(benchN), strconv.Itoa(benchD), fmtF(1e3 * mt), fmtF(1e3 * m1), fmtF(1e3 * ma), fmtF(mt / m1), fmtF(mt / ma), strconv.Itoa(runtime.GOMAXPROCS(0))}})
}

// plot renders the PNGs from the CSVs when matplotlib is available.
func plot(t *testing.T) {
	const py = "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Logf("no %s: CSVs written, plots skipped", py)
		return
	}
	out, err := exec.Command(py, "testdata/plot_results.py", resultsDir).CombinedOutput()
	t.Logf("plot_results.py: %s", out)
	if err != nil {
		t.Logf("plotting failed: %v", err)
	}
}

// TestResultsOutputStep measures the utility cost of the output step of
// objective and input perturbation (docs/results/lsq_output_step.md): on
// the same training/test data, the test RMSE of the current release and of
// the previous one (the whole (ε, δ) for the ideal mechanism, b from the
// discrete Gaussian, no output step — the release this change replaced, on
// the same solver), 40 trials per point, synthetic model (F = 15) and
// diabetes (F = 11), δ = 0.01.
func TestResultsOutputStep(t *testing.T) {
	const trials = 40
	rng := rand.New(rand.NewPCG(2024, 9))
	beta := synthBeta(rng, 14)
	diabetes := loadCSV(t, "diabetes.csv")
	var rows [][]string
	for _, dsName := range []string{"synthetic", "diabetes"} {
		for _, e := range []int{9, 11, 13, 15, 17} {
			n := 1 << e
			for _, eps := range []float64{0.1, 1} {
				for _, method := range []string{MethodObjective, MethodInput} {
					var cur, old, diff []float64
					var radius, outSigma float64
					for trial := 0; trial < trials; trial++ {
						var train, test dataset
						var cfg Config
						if dsName == "synthetic" {
							all := synthLinear(rng, beta, n+n/4, 0.1)
							train = dataset{x: all.x[:n], y: all.y[:n]}
							test = dataset{x: all.x[n:], y: all.y[n:]}
							cfg = synthConfig(14, n, eps, 0.01)
						} else {
							tr, te := split4to1(rng, diabetes)
							train, test = bootstrap(rng, tr, n), te
							cfg = diabetesConfig(n, eps, 0.01)
						}
						cfg.Method = method
						tr, err := Plan(cfg)
						if err != nil {
							break
						}
						radius, outSigma = tr.Params()["radius"], tr.Params()["output_sigma"]
						st := sufficientStats(train.x, train.y, tr.fm, tr.lm)
						m, err := tr.release(st)
						if err != nil {
							t.Fatal(err)
						}
						w := oldRelease(t, tr, cfg, st)
						a := rmseUnits(tr.fm, tr.lm, m.Weights[0], test.x, test.y)
						b := rmseUnits(tr.fm, tr.lm, w, test.x, test.y)
						cur, old, diff = append(cur, a), append(old, b), append(diff, a-b)
					}
					if len(cur) == 0 {
						continue
					}
					mc, sc := meanSD(cur)
					mo, so := meanSD(old)
					md, sd := meanSD(diff)
					se := sd / math.Sqrt(float64(len(diff)))
					rows = append(rows, []string{dsName, strconv.Itoa(n), fmtF(eps), method, fmtF(mo), fmtF(so), fmtF(mc), fmtF(sc), fmtF(md), fmtF(se), fmtF(radius), fmtF(outSigma), strconv.Itoa(len(cur))})
					t.Logf("%-9s n=2^%-2d ε=%-3g %-9s before %.4f ± %.4f  after %.4f ± %.4f  diff %+.5f ± %.5f (se)  r=%.2g σ_out=%.2g",
						dsName, e, eps, method, mo, so, mc, sc, md, se, radius, outSigma)
				}
			}
		}
	}
	writeCSV(t, "lsq_output_step.csv", []string{"dataset", "n", "epsilon", "method", "rmse_before", "sd_before", "rmse_after", "sd_after", "diff_mean", "diff_se", "radius", "output_sigma", "trials"}, rows)
}

// oldRelease is the release this change replaced, for the comparison: the
// ideal mechanism calibrated on the whole (ε, δ), b from the discrete
// Gaussian of noise.AddGaussianVec, the same ball solver, no output step.
func oldRelease(t *testing.T, tr *Trainer, cfg Config, st stats) []float64 {
	t.Helper()
	f := tr.fm.f
	eta := cfg.Eta
	if eta == 0 {
		eta = math.Sqrt(float64(f))
	}
	if tr.obj != nil {
		beta, err := objGaussSigma(lossGradDiff(eta), cfg.Epsilon, cfg.Delta, 2)
		if err != nil {
			t.Fatal(err)
		}
		p := &objectivePlan{eta: eta, kifer: 2 * lossSmoothness / cfg.Epsilon, beta: beta, ridge: autoRidge(f, beta, eta), muMax: tr.obj.muMax * 2}
		return oldObjectiveRelease(t, p, st)
	}
	cal, err := calibrateInput(cfg.N, f, cfg.Epsilon, cfg.Delta, eta)
	if err != nil {
		t.Fatal(err)
	}
	ridge := autoRidge(f, cal.sigmaB, eta)
	p := &inputPlan{eta: eta, s: cal.s, sigmaB: cal.sigmaB, n: cfg.N, f: f, ridge: ridge, tau: ridge / 2, muMax: tr.in.muMax * 2}
	g := p.perturbedGram(st.s)
	b := make([]float64, f)
	if err := noise.AddGaussianVec(b, p.sigmaB); err != nil {
		t.Fatal(err)
	}
	c := make([]float64, f)
	for i := range c {
		c[i] = st.c[i] - b[i]
	}
	w, _ := ballSolve(shifted(g, p.ridge-p.tau), c, p.eta, p.muMax)
	return w
}
