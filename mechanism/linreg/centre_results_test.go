//go:build results

package linreg

// Evidence for §14 (the private label centre) and its share, on training-side
// data only: synthetic generators with labels off-centre in their declared
// box, and inner splits of the diabetes TRAINING part (as TestTuneLinReg).
//
//	CENTRE_RUNS=20 go test -tags results -run TuneCentre -v ./mechanism/linreg/
//
// Not part of CI: it measures, it does not assert.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/internal/syntest"
	"github.com/dpsql/dpsql/mechanism"
)

// offsetData draws n rows: d features ~ 0.3·N(0, 1) + a shared factor in the
// declared [−5, 5], label = off + sig·(standardised βᵀx) + N(0, noise²),
// winsorised to the declared [−4, 4]; 2 % uniform outliers.
func offsetData(seed uint64, n, d int, off, sig, noise float64) dataset {
	pr := rand.New(rand.NewPCG(uint64(d), 7))
	beta := make([]float64, d)
	for j := range beta {
		beta[j] = pr.NormFloat64()
	}
	r := rand.New(rand.NewPCG(seed, uint64(n*1000+d)))
	ds := dataset{x: make([][]float64, n), y: make([]float64, n)}
	// Var(βᵀx) with x = 0.3 z + 0.7 f·1: 0.09‖β‖² + 0.49(Σβ)².
	var b2, b1 float64
	for _, b := range beta {
		b2 += b * b
		b1 += b
	}
	sd := math.Sqrt(0.09*b2 + 0.49*b1*b1)
	for i := range ds.x {
		f := r.NormFloat64()
		x := make([]float64, d)
		var s float64
		for j := range x {
			x[j] = math.Max(-5, math.Min(5, 0.3*r.NormFloat64()+0.7*f))
			s += beta[j] * x[j]
		}
		y := off + sig*s/sd + noise*r.NormFloat64()
		if r.Float64() < 0.02 {
			y = -4 + 8*r.Float64()
		}
		ds.x[i], ds.y[i] = x, math.Max(-4, math.Min(4, y))
	}
	return ds
}

// dpMeanRMSE (unused by the default grid) is the constant predictor at the DP mean of the label with all
// of ε (Laplace): the best private constant a release could be compared with.
func dpMeanRMSE(t testing.TB, cfg Config, train, test dataset) float64 {
	m, err := mechanism.NewMean(cfg.LabelLo, cfg.LabelHi, cfg.Epsilon, int64(len(train.y)))
	if err != nil {
		t.Fatal(err)
	}
	a := m.Accumulator()
	for _, v := range train.y {
		a.Add(v)
	}
	mu, err := a.Release()
	if err != nil {
		t.Fatal(err)
	}
	return rmse(test, func([]float64) float64 { return mu })
}

func TestTuneCentre(t *testing.T) {
	runs := centreRuns()
	type variant struct {
		name   string
		bounds string
		opt    func(*boxOpts)
		post   func(testing.TB, *Trainer) // nil: the plan as made
	}
	def := func(*boxOpts) {}
	// "old" is bounds=auto before §14: public boxes below n·ε = 1000, private
	// radii with the penalised intercept above.
	vars := []variant{{"old", BoundsAuto, func(o *boxOpts) { o.centre, o.meanNEps, o.noCentredSolve = 0, 0, true }, nil},
		{"new", BoundsAuto, def, nil},
		{"clip.10", BoundsCentre, func(o *boxOpts) { o.centre, o.centreNEps = 0.1, math.Inf(1) }, nil},
		{"clip.25", BoundsCentre, func(o *boxOpts) { o.centreNEps = math.Inf(1) }, nil},
		{"clip.cap", BoundsCentre, def, nil},
		{"resc.25", BoundsCentre, func(o *boxOpts) { o.centreRescale, o.centreNEps = true, math.Inf(1) }, nil},
		{"meanonly", BoundsMean, def, nil},
		// "noref" is "new" without §15's gradient steps (AdaSSP at the whole
		// stage ratio).
		{"noref", BoundsAuto, def, func(t testing.TB, tr *Trainer) {
			if tr.ref != nil {
				withRefine(t, tr, refineVariant{})
			}
		}}}
	// CENTRE_REF=share/steps/tau/step,… adds "new" with §15's refinement
	// re-planned at those constants (variant "ref:<spec>").
	if v := os.Getenv("CENTRE_REF"); v != "" {
		for i, rv := range parseRefineVariants(t, v) {
			spec := strings.Split(v, ",")[i]
			vars = append(vars, variant{"ref:" + spec, BoundsAuto, def, func(t testing.TB, tr *Trainer) {
				if tr.ref != nil {
					withRefine(t, tr, rv)
				}
			}})
		}
	}
	if v := os.Getenv("CENTRE_VARS"); v != "" {
		keep := vars[:0:0]
		for _, x := range vars {
			if strings.Contains(","+v+",", ","+x.name+",") || strings.HasPrefix(x.name, "ref:") {
				keep = append(keep, x)
			}
		}
		vars = keep
	}
	cell := func(name string, cfg Config, draw func(rep int) (dataset, dataset)) {
		res := make([][]float64, len(vars)+2)
		for rep := 0; rep < runs; rep++ {
			train, test := draw(rep)
			c := cfg
			c.N = len(train.x)
			for k, v := range vars {
				o := boxOpts{BoxShare, BoxShareBasic, BoxTail, BoxRankC, BoxPenalty, BoxMargin, CentreShare, CentreNEps, MeanOnlyNEps, false, false}
				v.opt(&o)
				tr, err := plan(withBounds(c, v.bounds), o)
				if err != nil {
					t.Fatal(err)
				}
				if v.post != nil {
					v.post(t, tr)
				}
				res[k] = append(res[k], trainRMSE(t, tr, train, test))
			}
			tr, _ := plan(withBounds(c, BoundsPublic), boxOpts{centre: 0})
			res[len(vars)] = append(res[len(vars)], meanRMSE(train, test))
			res[len(vars)+1] = append(res[len(vars)+1], olsRMSE(t, tr, train, test))
		}
		mm, _ := syntest.MeanSD(res[len(vars)])
		om, _ := syntest.MeanSD(res[len(vars)+1])
		var line []string
		for k, v := range vars {
			m, s := syntest.MeanSD(res[k])
			line = append(line, fmt.Sprintf("%s %.3f±%.3f", v.name, m/mm, s/mm/math.Sqrt(float64(runs))))
		}
		t.Logf("%s | /mean: %s | mean %.4g ols/mean %.3f", name, strings.Join(line, " "), mm, om/mm)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	all := loadCSV(t, "diabetes.csv")
	trainPart, _ := split(rng, all, 353)
	deltas := []float64{1e-6, 0}
	switch os.Getenv("CENTRE_PURE") {
	case "0":
		deltas = deltas[:1]
	case "only":
		deltas = deltas[1:]
	}
	for _, delta := range deltas {
		for _, eps := range []float64{0.1, 0.3, 1, 2, 3, 5} {
			r := rand.New(rand.NewPCG(11, uint64(eps*10)))
			cell(fmt.Sprintf("diabetes-train δ=%g ε=%g nε=%.0f", delta, eps, 283*eps), diabetesConfig(283, eps, delta), func(int) (dataset, dataset) {
				return split(r, trainPart, 283)
			})
		}
	}
	neps := []float64{100, 300, 600, 1000, 3000, 10000}
	if v := os.Getenv("CENTRE_NEPS"); v != "" {
		neps = nil
		for _, f := range strings.Split(v, ",") {
			x, _ := strconv.ParseFloat(f, 64)
			neps = append(neps, x)
		}
	}
	gens := os.Getenv("CENTRE_GENS")
	for _, delta := range deltas {
		for _, d := range envInts("CENTRE_D", []int{5, 10, 20, 50}) {
			if strings.Contains(gens, "unif") {
				// Features filling their box (U[−1, 1]), label βᵀz + β₀ + off +
				// N(0, 0.3²) in [−2, 2] (mechanism/lsq's model): the
				// optimistic case for the declared boxes.
				for _, ne := range neps {
					n := 1000
					eps := ne / float64(n)
					for _, off := range []float64{0, 0.8} {
						beta := synthBeta(rand.New(rand.NewPCG(uint64(d), 1)), d)
						cfg := synthConfig(d, n, eps, delta)
						cfg.LabelLo, cfg.LabelHi = -2, 2
						draw := func(rep int) (dataset, dataset) {
							r := rand.New(rand.NewPCG(uint64(rep), 5))
							tr, te := synthLinear(r, beta, n, 0.3), synthLinear(r, beta, 2000, 0.3)
							for i := range tr.y {
								tr.y[i] += off
							}
							for i := range te.y {
								te.y[i] += off
							}
							return tr, te
						}
						cell(fmt.Sprintf("unif δ=%g d=%d n=%d ε=%g nε=%g off=%g", delta, d, n, eps, ne, off), cfg, draw)
					}
				}
			}
			if !strings.Contains(gens, "offset") && gens != "" {
				continue
			}
			for _, ne := range neps {
				for _, n := range []int{500, 2000} {
					eps := ne / float64(n)
					for _, g := range [][3]float64{{0, 1, 0.5}, {1, 1, 0.5}, {2, 0.5, 1}, {-1.5, 0.3, 0.3}} {
						cfg := factorConfig(d, n, eps, delta, BoundsPublic)
						cell(fmt.Sprintf("offset δ=%g d=%d n=%d ε=%g nε=%g off=%g sig=%g noise=%g", delta, d, n, eps, ne, g[0], g[1], g[2]), cfg, func(rep int) (dataset, dataset) {
							return offsetData(uint64(100+rep), n, d, g[0], g[1], g[2]), offsetData(uint64(9000+rep), 2000, d, g[0], g[1], g[2])
						})
					}
				}
			}
		}
	}
}

func centreRuns() int {
	if v, err := strconv.Atoi(os.Getenv("CENTRE_RUNS")); err == nil {
		return v
	}
	return 10
}

// envInts parses a comma list of integers from the environment.
func envInts(name string, def []int) []int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		x, err := strconv.Atoi(f)
		if err != nil {
			panic(err)
		}
		out = append(out, x)
	}
	return out
}
