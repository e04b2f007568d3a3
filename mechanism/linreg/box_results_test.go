//go:build results

package linreg

// Per-feature private box (docs/mechanisms/linreg.md §13) measurements.
// Run:
//
//	BOX_N=10000 BOX_D=10 BOX_EPS=1 go test -tags results -run TuneBox -v -timeout 2h ./mechanism/linreg/
//
// Not part of CI: it measures, it does not assert. Training-side synthetic
// generators only (plus an inner split of the diabetes TRAINING part); no
// accuracy-page or external split is read.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"
)

// boxGen is one synthetic generator with its declared (public) bounds.
type boxGen struct {
	name string
	draw func(seed uint64, n, d int) (dataset, Config)
}

// heavyData draws d features from kind ("lognorm", "pareto", "corner",
// "mixed", "counts") inside declared bounds 10–100× the bulk, a linear
// label with noise 0.5 (signal variance 1) and 2 % uniform outliers,
// declared [−4, 4].
func heavyData(kind string, seed uint64, n, d int) (dataset, Config) {
	pr := rand.New(rand.NewPCG(uint64(d)*13+5, 4321))
	sig := make([]float64, d)
	beta := make([]float64, d)
	for j := range sig {
		sig[j] = 0.5 + 0.7*pr.Float64()
		beta[j] = pr.NormFloat64()
	}
	cfg := factorConfig(d, n, 1, 1e-6, BoundsPrivate)
	col := func(j int) string { // the column's kind
		if kind == "mixed" {
			if j%2 == 0 {
				return "normal"
			}
			return "lognorm"
		}
		return kind
	}
	for j := 0; j < d; j++ {
		switch col(j) {
		case "lognorm":
			cfg.Lo[j], cfg.Hi[j] = 0, 60 // bulk ≈ e^{±2σ} ⊂ [0.1, 10]
		case "pareto":
			cfg.Lo[j], cfg.Hi[j] = 0, 100 // Pareto(α = 2.5, x_m = 1): 99 % below 6.3
		case "corner":
			cfg.Lo[j], cfg.Hi[j] = -5, 5 // rows at −4 ± 0.3
		case "counts":
			cfg.Lo[j], cfg.Hi[j] = 0, 40*math.Exp(float64(j%3)) // a shared size factor
		case "normal":
			cfg.Lo[j], cfg.Hi[j] = -5, 5
		}
	}
	r := rand.New(rand.NewPCG(seed, uint64(n*100+d)))
	raw := func() []float64 {
		x := make([]float64, d)
		size := math.Exp(0.7 * r.NormFloat64())
		for j := range x {
			switch col(j) {
			case "lognorm":
				x[j] = math.Exp(sig[j] * r.NormFloat64())
			case "pareto":
				x[j] = math.Pow(1-r.Float64(), -1/2.5)
			case "corner":
				x[j] = -4 + 0.3*r.NormFloat64()
			case "counts":
				x[j] = size * math.Exp(float64(j%3)) * math.Exp(0.25*r.NormFloat64())
			case "normal":
				x[j] = r.NormFloat64()
			}
			x[j] = math.Max(cfg.Lo[j], math.Min(cfg.Hi[j], x[j]))
		}
		return x
	}
	xs := make([][]float64, n)
	sig2 := make([]float64, n)
	for i := range xs {
		xs[i] = raw()
		var s float64
		for j, v := range xs[i] {
			s += beta[j] * v
		}
		sig2[i] = s
	}
	// Centre and scale the signal by its own moments (generator-side).
	m, v := 0.0, 0.0
	for _, s := range sig2 {
		m += s
	}
	m /= float64(n)
	for _, s := range sig2 {
		v += (s - m) * (s - m)
	}
	sd := math.Sqrt(v / float64(n))
	ds := dataset{x: xs, y: make([]float64, n)}
	for i := range xs {
		y := (sig2[i]-m)/sd + 0.5*r.NormFloat64()
		if r.Float64() < 0.02 {
			y = -4 + 8*r.Float64()
		}
		ds.y[i] = math.Max(-4, math.Min(4, y))
	}
	return ds, cfg
}

func boxGens() []boxGen {
	var gs []boxGen
	for _, k := range []string{"lognorm", "pareto", "corner", "mixed", "counts"} {
		gs = append(gs, boxGen{k, func(seed uint64, n, d int) (dataset, Config) { return heavyData(k, seed, n, d) }})
	}
	for _, g := range reg50Gens {
		if g.name == "synr" || g.name == "iso" || g.name == "heavy" || g.name == "loose" {
			gs = append(gs, boxGen{"r50-" + g.name, func(seed uint64, n, d int) (dataset, Config) {
				return g.draw(seed, n, d), genConfig(g, d, n, 1, 1e-6)
			}})
		}
	}
	return gs
}

// oracleBounds returns cfg with each feature's box at the training rows'
// q and 1 − q quantiles (NON-private: an upper reference only).
func oracleBounds(cfg Config, ds dataset, q float64) Config {
	c := cfg
	c.Lo, c.Hi = append([]float64(nil), cfg.Lo...), append([]float64(nil), cfg.Hi...)
	for j := range c.Lo {
		v := make([]float64, len(ds.x))
		for i, x := range ds.x {
			v[i] = x[j]
		}
		sort.Float64s(v)
		lo, hi := v[int(q*float64(len(v)))], v[min(len(v)-1, int((1-q)*float64(len(v))))]
		if hi > lo {
			c.Lo[j], c.Hi[j] = lo, hi
		}
	}
	return c
}

// TestTuneBox prints, per generator and cell, the mean test RMSE / OLS of
// bounds=private (§11 alone), the non-private oracle box, and bounds=box at
// each (tail, share).
func TestTuneBox(t *testing.T) {
	runs := envInt("BOX_RUNS", 4)
	ns := envFloats("BOX_N", []float64{10000})
	ds := envFloats("BOX_D", []float64{10})
	epss := envFloats("BOX_EPS", []float64{1})
	tails := envFloats("BOX_TAIL", []float64{BoxTail})
	rankCs := envFloats("BOX_RANKC", []float64{4, 8, 16})
	pens := envFloats("BOX_PEN", []float64{BoxPenalty})
	margins := envFloats("BOX_MARGIN", []float64{BoxMargin})
	shares := envFloats("BOX_SHARE", []float64{0.05, 0.1, 0.2})
	delta := envFloats("BOX_DELTA", []float64{1e-6})[0]
	logsum := map[string]float64{}
	cells := 0
	var names []string
	addName := func(s string) {
		for _, x := range names {
			if x == s {
				return
			}
		}
		names = append(names, s)
	}
	for _, nf := range ns {
		for _, df := range ds {
			for _, eps := range epss {
				n, d := int(nf), int(df)
				for _, g := range boxGens() {
					if only := os.Getenv("BOX_GENS"); only != "" && !strings.Contains(","+only+",", ","+g.name+",") {
						continue
					}
					train, cfg := g.draw(1, n, d)
					test, _ := g.draw(2, 5000, d)
					cfg.Epsilon, cfg.Delta, cfg.N = eps, delta, n
					ols := olsRMSE(t, mustPlan(t, withBounds(cfg, BoundsPublic)), train, test)
					type res struct {
						name string
						v    float64
					}
					var rs []res
					run := func(name string, mk func() *Trainer) {
						var s float64
						for k := 0; k < runs; k++ {
							s += trainRMSE(t, mk(), train, test) / ols
						}
						rs = append(rs, res{name, s / float64(runs)})
						logsum[name] += math.Log(s / float64(runs))
						addName(name)
					}
					run("norm", func() *Trainer { return mustPlan(t, withBounds(cfg, BoundsPrivate)) })
					run("oracle", func() *Trainer { return mustPlan(t, withBounds(oracleBounds(cfg, train, 0.005), BoundsPrivate)) })
					for _, tl := range tails {
						for _, rc := range rankCs {
							for _, sh := range shares {
								for _, pe := range pens {
									for _, mg := range margins {
										run(fmt.Sprintf("box t%.3g c%g s%.2g p%g m%g", tl, rc, sh, pe, mg), func() *Trainer {
											tr, err := plan(withBounds(cfg, BoundsBox), boxOpts{sh, sh, tl, rc, pe, mg, CentreShare, CentreNEps, MeanOnlyNEps, false, false})
											if err != nil {
												t.Fatal(err)
											}
											return tr
										})
									}
								}
							}
						}
					}
					var line []string
					for _, x := range rs {
						line = append(line, fmt.Sprintf("%s %.4f", x.name, x.v))
					}
					t.Logf("n=%d d=%d eps=%v %-12s | %s", n, d, eps, g.name, strings.Join(line, " | "))
					cells++
				}
			}
		}
	}
	for _, nm := range names {
		t.Logf("geomean over %d cells: %-16s %.4f", cells, nm, math.Exp(logsum[nm]/float64(cells)))
	}
}
