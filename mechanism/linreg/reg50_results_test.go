//go:build results

package linreg

// Issue 11 design runs at n = 10⁴, d = 50 (docs/mechanisms/linreg.md §12).
// Run:
//
//	REG50_RUNS=8 go test -tags results -run TuneReg50 -v -timeout 2h ./mechanism/linreg/
//
// Not part of CI: it measures, it does not assert. Training-side synthetic
// generators only (no accuracy-page split is read); every post-processing
// filter is evaluated on the same noisy release of each run.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// genSpec is one synthetic regression generator.
type genSpec struct {
	name   string
	spec   string  // "factor", "iso", "power"
	tails  bool    // Student-t(3) features, Laplace label noise
	noise  float64 // label noise sd (signal variance 1)
	scale  float64 // feature scale inside the declared box ±5
	labelB float64 // declared label box ±labelB
}

func (g genSpec) draw(seed uint64, n, d int) dataset {
	if g.spec == "synr" {
		return factorData(seed, n, d)
	}
	pr := rand.New(rand.NewPCG(uint64(d)*7+3, 1234))
	// Mixing matrix M (x = M g): factor, isotropic or power-law spectrum.
	m := make([][]float64, d)
	for j := range m {
		m[j] = make([]float64, d)
	}
	switch g.spec {
	case "iso":
		for j := range m {
			m[j][j] = 1
		}
	case "factor":
		for j := range m {
			for a := 0; a < 3; a++ {
				m[j][a] = 0.5 * pr.NormFloat64()
			}
			if j >= 3 {
				m[j][j] = 0.5 * math.Exp(pr.Float64()*math.Log(2))
			} else {
				m[j][j] += 0.6
			}
		}
	case "power":
		// Random rotation times singular values j^−½ (condition number √d... d).
		q := mat.NewDense(d, d, nil)
		for j := 0; j < d; j++ {
			for k := 0; k < d; k++ {
				q.Set(j, k, pr.NormFloat64())
			}
		}
		var qr mat.QR
		qr.Factorize(q)
		var qq mat.Dense
		qr.QTo(&qq)
		for j := 0; j < d; j++ {
			for k := 0; k < d; k++ {
				m[j][k] = qq.At(j, k) * 1.5 / math.Sqrt(float64(k+1))
			}
		}
	}
	beta := make([]float64, d)
	for j := range beta {
		beta[j] = pr.NormFloat64()
	}
	// Normalise Var(βᵀx) = ‖Mᵀβ‖² (t(3) has variance 3: scaled below).
	var v float64
	for k := 0; k < d; k++ {
		var s float64
		for j := 0; j < d; j++ {
			s += beta[j] * m[j][k]
		}
		v += s * s
	}
	for j := range beta {
		beta[j] /= math.Sqrt(v) * g.scale
	}
	r := rand.New(rand.NewPCG(seed, uint64(n*1000+d)))
	ds := dataset{x: make([][]float64, n), y: make([]float64, n)}
	gv := make([]float64, d)
	for i := range ds.x {
		for k := range gv {
			gv[k] = r.NormFloat64()
			if g.tails {
				var c float64
				for a := 0; a < 3; a++ {
					z := r.NormFloat64()
					c += z * z
				}
				gv[k] /= math.Sqrt(c) // t(3)/√3: variance 1
			}
		}
		x := make([]float64, d)
		var y float64
		for j := range x {
			var s float64
			for k, mk := range m[j] {
				s += mk * gv[k]
			}
			x[j] = math.Max(-5, math.Min(5, g.scale*s))
			y += beta[j] * x[j]
		}
		e := r.NormFloat64()
		if g.tails {
			e = r.ExpFloat64() * float64(1-2*r.IntN(2)) / math.Sqrt2
		}
		y += g.noise * e
		if r.Float64() < 0.02 {
			y = -g.labelB + 2*g.labelB*r.Float64()
		}
		ds.x[i], ds.y[i] = x, math.Max(-g.labelB, math.Min(g.labelB, y))
	}
	return ds
}

func genConfig(g genSpec, d, n int, eps, delta float64) Config {
	cfg := factorConfig(d, n, eps, delta, BoundsPrivate)
	cfg.LabelLo, cfg.LabelHi = -g.labelB, g.labelB
	return cfg
}

var reg50Gens = []genSpec{
	{name: "synr", spec: "synr", noise: 0.5, scale: 1, labelB: 4},
	{name: "factor", spec: "factor", noise: 0.5, scale: 1, labelB: 4},
	{name: "iso", spec: "iso", noise: 0.5, scale: 1, labelB: 4},
	{name: "power", spec: "power", noise: 0.5, scale: 1, labelB: 4},
	{name: "heavy", spec: "factor", tails: true, noise: 0.5, scale: 1, labelB: 4},
	{name: "noisy", spec: "factor", noise: 1.5, scale: 1, labelB: 8},
	{name: "loose", spec: "iso", noise: 0.3, scale: 0.3, labelB: 4},
}

// filter is a spectral post-processing θ = Σ_k g(w_k)(v_kᵀc)v_k of the
// noisy XᵀX̂ = Σ w_k v_k v_kᵀ and Xᵀŷ.
type filter struct {
	name string
	g    func(w float64, tr *Trainer, r noisy) float64
}

func reg50Filters() []filter {
	fs := []filter{{"cur", func(w float64, tr *Trainer, r noisy) float64 {
		return 1 / math.Max(w+tr.ridge(r.q), tr.floor*tr.noiseNorm)
	}}}
	for _, l := range []float64{0, 0.125, 0.25} {
		for _, f := range []float64{0.25, 0.5, 1} {
			fs = append(fs, filter{fmt.Sprintf("L%.3g/F%.3g", l, f), func(w float64, tr *Trainer, r noisy) float64 {
				return 1 / math.Max(w+l*tr.noiseNorm, f*tr.noiseNorm)
			}})
		}
	}
	return fs
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// variant is a plan change: quantile levels, bounds share, Kappa.
type variant struct {
	normQ, labelQ, share, kappa, pre, lift float64
}

func (v variant) String() string {
	return fmt.Sprintf("q%.2f/%.2f s%.2f k%.2g p%.2f l%.2g", v.normQ, v.labelQ, v.share, v.kappa, v.pre, v.lift)
}

// replan applies v to a private-bounds plan (joint zCDP accounting as Plan
// would choose at ε, δ).
func replan(t testing.TB, tr *Trainer, v variant) {
	t.Helper()
	cfg := tr.cfg
	p, err := planPrivScale(cfg.Epsilon, len(cfg.Features), v.share, v.normQ, v.labelQ)
	if err != nil {
		t.Fatal(err)
	}
	tr.priv = p
	g, _, _, ok := p.jointGaussian(cfg.Epsilon, cfg.Delta, cfg.N, tr.f, tr.depth())
	if !ok {
		t.Fatal("joint")
	}
	g, err = planGaussianRatio(g.ratio, cfg.Epsilon, cfg.Delta, cfg.N, tr.f, tr.depth(), v.kappa)
	if err != nil {
		t.Fatal(err)
	}
	tr.pre = nil
	if v.pre > 0 {
		r := g.ratio
		pre, err := planPrecond(math.Sqrt(v.pre)*r, cfg.N, tr.f-1, tr.depth())
		if err != nil {
			t.Fatal(err)
		}
		pre.edge *= v.lift / PrecondLift
		tr.pre = &pre
		if g, err = planGaussianRatio(math.Sqrt(1-v.pre)*r, cfg.Epsilon, cfg.Delta, cfg.N, tr.f, tr.depth(), v.kappa); err != nil {
			t.Fatal(err)
		}
	}
	*tr.gauss = g
	f := float64(tr.f)
	tr.noiseNorm = g.sigmaA * (math.Sqrt(2*f) + math.Sqrt(2*math.Log(1/Failure)))
	tr.margin = g.sigmaL * normalQuantile(1-Failure)
}

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

// TestTuneReg50 prints, per generator and plan variant, the mean RMSE / OLS
// of every filter on the same releases.
func TestTuneReg50(t *testing.T) {
	runs := envInt("REG50_RUNS", 6)
	n, d := envInt("REG50_N", 10000), envInt("REG50_D", 50)
	eps, delta := envFloats("REG50_EPS", []float64{1})[0], 1e-6
	var variants []variant
	for _, nq := range envFloats("REG50_NQ", []float64{NormLevel(n, eps)}) {
		for _, lq := range envFloats("REG50_LQ", []float64{LabelLevel(n, eps)}) {
			for _, sh := range envFloats("REG50_SHARE", []float64{ScaleShare}) {
				for _, k := range envFloats("REG50_KAPPA", []float64{Kappa}) {
					for _, pre := range envFloats("REG50_PRE", []float64{0, PrecondShare}) {
						for _, lift := range envFloats("REG50_LIFT", []float64{PrecondLift}) {
							if pre == 0 && lift != PrecondLift {
								continue
							}
							variants = append(variants, variant{nq, lq, sh, k, pre, lift})
						}
					}
				}
			}
		}
	}
	filters := reg50Filters()
	logsum := map[string]float64{}
	cells := 0
	for _, g := range reg50Gens {
		if only := os.Getenv("REG50_GENS"); only != "" && !strings.Contains(","+only+",", ","+g.name+",") {
			continue
		}
		train, test := g.draw(1, n, d), g.draw(2, 5000, d)
		cfg := genConfig(g, d, n, eps, delta)
		ols := olsRMSE(t, mustPlan(t, withBounds(cfg, BoundsPublic)), train, test)
		for _, va := range variants {
			tr := mustPlan(t, cfg)
			replan(t, tr, va)
			switch os.Getenv("REG50_ONLY") {
			case "A": // diagnostics: noise on XᵀX only
				tr.gauss.sigmaC = 1e-6
			case "c":
				tr.gauss.sigmaA = 1e-6
			case "0":
				tr.gauss.sigmaA, tr.gauss.sigmaC = 1e-6, 1e-6
			}
			sums := make([]float64, len(filters))
			for k := 0; k < runs; k++ {
				clip, err := tr.releaseClip(train.x, train.y)
				if err != nil {
					t.Fatal(err)
				}
				if tr.pre != nil {
					if clip.m, err = tr.releasePrecond(sufficientStats(train.x, train.y, tr.prep, tr.cfg.LabelLo, tr.cfg.LabelHi, tr.workers, clip)); err != nil {
						t.Fatal(err)
					}
				}
				st := sufficientStats(train.x, train.y, tr.prep, tr.cfg.LabelLo, tr.cfg.LabelHi, tr.workers, clip)
				r, err := tr.addNoise(st)
				if err != nil {
					t.Fatal(err)
				}
				var es mat.EigenSym
				if !es.Factorize(r.a, true) {
					t.Fatal("eigen")
				}
				var vecs mat.Dense
				es.VectorsTo(&vecs)
				w := es.Values(nil)
				proj := make([]float64, tr.f)
				for c := 0; c < tr.f; c++ {
					for j := 0; j < tr.f; j++ {
						proj[c] += vecs.At(j, c) * r.c[j]
					}
				}
				for i, fl := range filters {
					theta := make([]float64, tr.f)
					for c := 0; c < tr.f; c++ {
						p := proj[c] * fl.g(w[c], tr, r)
						for j := 0; j < tr.f; j++ {
							theta[j] += p * vecs.At(j, c)
						}
					}
					m := tr.model(theta, tr.Params(), clip)
					sums[i] += modelRMSE(t, m, test) / ols
				}
			}
			type res struct {
				name string
				v    float64
			}
			var rs []res
			for i, fl := range filters {
				v := sums[i] / float64(runs)
				rs = append(rs, res{fl.name, v})
				logsum[va.String()+" "+fl.name] += math.Log(v)
			}
			cur := rs[0].v
			sort.Slice(rs, func(i, j int) bool { return rs[i].v < rs[j].v })
			var line []string
			for _, x := range rs[:4] {
				line = append(line, fmt.Sprintf("%s %.4f", x.name, x.v))
			}
			t.Logf("%-7s %s sigA %.3g E %.3g EF/n %.3g | cur %.4f | best: %s", g.name, va, tr.gauss.sigmaA, tr.noiseNorm, tr.noiseNorm*float64(tr.f)/float64(n), cur, strings.Join(line, ", "))
		}
		cells++
	}
	type res struct {
		name string
		v    float64
	}
	var rs []res
	for k, v := range logsum {
		rs = append(rs, res{k, math.Exp(v / float64(cells))})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].v < rs[j].v })
	for _, x := range rs[:min(len(rs), 25)] {
		t.Logf("geomean over %d generators: %-34s %.4f", cells, x.name, x.v)
	}
	for _, va := range variants {
		t.Logf("geomean over %d generators: %-34s %.4f (current post-processing)", cells, va.String()+" cur", math.Exp(logsum[va.String()+" cur"]/float64(cells)))
	}
}

// TestReg50OraclePrecondition measures the upside of a preconditioner that
// flattens the spikes of the feature covariance (x ↦ P x, P = V·diag(min(1,
// √(τ/λ_k)))·Vᵀ, τ the median eigenvalue), computed NON-privately from the
// training rows: an upper bound on what a private first stage could buy.
func TestReg50OraclePrecondition(t *testing.T) {
	runs := envInt("REG50_RUNS", 4)
	n, d := envInt("REG50_N", 10000), envInt("REG50_D", 50)
	eps, delta := 1.0, 1e-6
	for _, g := range reg50Gens {
		train, test := g.draw(1, n, d), g.draw(2, 5000, d)
		cfg := genConfig(g, d, n, eps, delta)
		ols := olsRMSE(t, mustPlan(t, withBounds(cfg, BoundsPublic)), train, test)
		s := mat.NewSymDense(d, nil)
		for _, x := range train.x {
			for j := 0; j < d; j++ {
				for k := j; k < d; k++ {
					s.SetSym(j, k, s.At(j, k)+x[j]*x[k])
				}
			}
		}
		var es mat.EigenSym
		es.Factorize(s, true)
		var v mat.Dense
		es.VectorsTo(&v)
		w := es.Values(nil)
		sorted := append([]float64(nil), w...)
		sort.Float64s(sorted)
		tau := sorted[d/2]
		p := mat.NewDense(d, d, nil)
		for j := 0; j < d; j++ {
			for k := 0; k < d; k++ {
				var sum float64
				for c := 0; c < d; c++ {
					sum += v.At(j, c) * math.Min(1, math.Sqrt(tau/w[c])) * v.At(k, c)
				}
				p.Set(j, k, sum)
			}
		}
		tf := func(ds dataset) dataset {
			out := dataset{y: ds.y}
			for _, x := range ds.x {
				z := make([]float64, d)
				for j := range z {
					for k, xv := range x {
						z[j] += p.At(j, k) * xv
					}
					z[j] = math.Max(-5, math.Min(5, z[j]))
				}
				out.x = append(out.x, z)
			}
			return out
		}
		ptrain, ptest := tf(train), tf(test)
		pols := olsRMSE(t, mustPlan(t, withBounds(cfg, BoundsPublic)), ptrain, ptest)
		var a, b []float64
		for k := 0; k < runs; k++ {
			a = append(a, trainRMSE(t, mustPlan(t, cfg), train, test)/ols)
			b = append(b, trainRMSE(t, mustPlan(t, cfg), ptrain, ptest)/ols)
		}
		t.Logf("%-7s OLS %.4f (preconditioned OLS %.4f) | AdaSSP %.4f | oracle-preconditioned AdaSSP %.4f", g.name, ols, pols, mean(a), mean(b))
	}
}
