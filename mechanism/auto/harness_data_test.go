package auto_test

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/internal/syntest"
	"github.com/dpsql/dpsql/mechanism"
)

// dataset is a labelled table with its public declaration (bounds and
// label domain). Loading follows mechanism/gauss/data_test.go (same owner
// declarations for the shared/ sets), so the numbers are comparable.
type dataset struct {
	name     string
	features []string
	lo, hi   []float64
	classes  []string
	x        [][]float64
	y        []int
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func sharedDataDir() string {
	if d := os.Getenv("AUTO_DATA"); d != "" {
		return d
	}
	return filepath.Join(repoRoot(), "..", "shared", "data")
}

func loadDataset(tb testing.TB, name string) *dataset {
	tb.Helper()
	l := syntest.Load(tb, repoRoot(), sharedDataDir(), name)
	return &dataset{name: l.Name, features: l.Features, lo: l.Lo, hi: l.Hi, classes: l.Classes, x: l.X, y: l.Y}
}

func (d *dataset) subset(idx []int) *dataset {
	out := &dataset{name: d.name, features: d.features, lo: d.lo, hi: d.hi, classes: d.classes}
	for _, i := range idx {
		out.x = append(out.x, d.x[i])
		out.y = append(out.y, d.y[i])
	}
	return out
}

// splitIdx is gauss's public-seed split (seed 12345 there): a random
// partition into ⌊frac·n⌋ and the rest.
func splitIdx(n int, seed uint64, frac float64) (a, b []int) {
	rng := rand.New(rand.NewPCG(seed, 0x9a55))
	p := rng.Perm(n)
	cut := int(frac * float64(n))
	return p[:cut], p[cut:]
}

// synthSpec is one synthetic problem: d features, K classes, a class-mean
// scale sep (calibrated so non-private LDA reaches ≈ target before label
// noise) and a label-noise rate.
type synthSpec struct {
	d, k  int
	sep   float64
	noise float64 // share of rows whose label is redrawn uniformly
	seed  uint64
	major float64 // > 0: class 0 has this probability, the others share the rest (imbalanced sets)
}

// synthGen draws rows of the factor model of docs/results/gauss.md
// (correlated features: three N(0,1) factors with loadings N(0, 0.6²),
// idiosyncratic sd log-uniform in [0.2, 0.6]) with class means
// N(0, sep²) per coordinate and label noise. Bounds are declared at ±4
// marginal standard deviations of the typical coordinate.
type synthGen struct {
	spec  synthSpec
	mu    [][]float64
	load  [][]float64
	se    []float64
	bound float64
}

func newSynth(s synthSpec) *synthGen {
	rng := rand.New(rand.NewPCG(s.seed, 0x5e7))
	g := &synthGen{spec: s}
	g.mu = make([][]float64, s.k)
	for c := range g.mu {
		g.mu[c] = make([]float64, s.d)
		for j := range g.mu[c] {
			g.mu[c][j] = rng.NormFloat64() * s.sep
		}
	}
	g.load = make([][]float64, s.d)
	g.se = make([]float64, s.d)
	for j := range g.load {
		g.load[j] = make([]float64, 3)
		for f := range g.load[j] {
			g.load[j][f] = 0.6 * rng.NormFloat64()
		}
		g.se[j] = math.Exp(math.Log(0.2) + rng.Float64()*(math.Log(0.6)-math.Log(0.2)))
	}
	// Typical marginal variance: factors 3·0.36 + noise ≈ 0.16 + means sep².
	g.bound = 4 * math.Sqrt(1.24+s.sep*s.sep)
	return g
}

func (g *synthGen) draw(n int, seed uint64, labelNoise bool) *dataset {
	s := g.spec
	rng := rand.New(rand.NewPCG(seed, 0xda7a))
	ds := &dataset{name: "syn_d" + strconv.Itoa(s.d) + "_K" + strconv.Itoa(s.k)}
	for j := 0; j < s.d; j++ {
		ds.features = append(ds.features, "x"+strconv.Itoa(j))
		ds.lo, ds.hi = append(ds.lo, -g.bound), append(ds.hi, g.bound)
	}
	for c := 0; c < s.k; c++ {
		ds.classes = append(ds.classes, "c"+strconv.Itoa(c))
	}
	f := make([]float64, 3)
	for i := 0; i < n; i++ {
		c := rng.IntN(s.k)
		if s.major > 0 { // a second draw only for imbalanced sets (balanced streams unchanged)
			c = 0
			if u := rng.Float64(); u >= s.major {
				c = 1 + int((u-s.major)/(1-s.major)*float64(s.k-1))
			}
		}
		for a := range f {
			f[a] = rng.NormFloat64()
		}
		row := make([]float64, s.d)
		for j := range row {
			v := g.mu[c][j] + rng.NormFloat64()*g.se[j]
			for a := range f {
				v += g.load[j][a] * f[a]
			}
			row[j] = v
		}
		if labelNoise && rng.Float64() < s.noise {
			c = rng.IntN(s.k)
		}
		ds.x, ds.y = append(ds.x, row), append(ds.y, c)
	}
	return ds
}

// ldaFit is non-private LDA on the raw features (pooled covariance with a
// 1e-6 ridge): the calibration reference and a baseline.
type ldaFit struct {
	w [][]float64 // K × (d+1)
}

func fitLDA(ds *dataset) *ldaFit {
	d, k := len(ds.features), len(ds.classes)
	cnt := make([]float64, k)
	mu := make([][]float64, k)
	for c := range mu {
		mu[c] = make([]float64, d)
	}
	for i, row := range ds.x {
		c := ds.y[i]
		cnt[c]++
		for j, v := range row {
			mu[c][j] += v
		}
	}
	for c := range mu {
		for j := range mu[c] {
			mu[c][j] /= math.Max(cnt[c], 1)
		}
	}
	cov := mat.NewSymDense(d, nil)
	diff := make([]float64, d)
	for i, row := range ds.x {
		for j, v := range row {
			diff[j] = v - mu[ds.y[i]][j]
		}
		cov.SymRankOne(cov, 1, mat.NewVecDense(d, diff))
	}
	n := float64(len(ds.x))
	for j := 0; j < d; j++ {
		cov.SetSym(j, j, cov.At(j, j)+1e-6*n)
	}
	cov.ScaleSym(1/n, cov)
	var ch mat.Cholesky
	ch.Factorize(cov)
	out := &ldaFit{w: make([][]float64, k)}
	for c := range mu {
		var pm mat.VecDense
		_ = ch.SolveVecTo(&pm, mat.NewVecDense(d, mu[c]))
		w := make([]float64, d+1)
		var q float64
		for j := 0; j < d; j++ {
			w[j] = pm.AtVec(j)
			q += w[j] * mu[c][j]
		}
		w[d] = -q/2 + math.Log(math.Max(cnt[c], 0.5)/n)
		out.w[c] = w
	}
	return out
}

func (l *ldaFit) accuracy(ds *dataset) float64 {
	ok := 0
	for i, row := range ds.x {
		best, arg := math.Inf(-1), 0
		for c, w := range l.w {
			s := w[len(row)]
			for j, v := range row {
				s += w[j] * v
			}
			if s > best {
				best, arg = s, c
			}
		}
		if arg == ds.y[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(ds.x))
}

// calibrateSep finds the class-mean scale at which non-private LDA on
// noise-free labels has accuracy ≈ target (bisection on a 20,000-row pilot).
func calibrateSep(d, k int, seed uint64, target float64) float64 {
	lo, hi := 0.01, 5.0
	for it := 0; it < 18; it++ {
		mid := math.Sqrt(lo * hi)
		g := newSynth(synthSpec{d: d, k: k, sep: mid, seed: seed})
		tr, te := g.draw(20000, seed+1, false), g.draw(10000, seed+2, false)
		if fitLDA(tr).accuracy(te) < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Sqrt(lo * hi)
}

func accuracy(tb testing.TB, m *mechanism.Model, d *dataset) float64 {
	tb.Helper()
	ok := 0
	for i, row := range d.x {
		p, err := m.Predict(row)
		if err != nil {
			tb.Fatal(err)
		}
		if p.Class == d.classes[d.y[i]] {
			ok++
		}
	}
	return float64(ok) / float64(len(d.x))
}

func majority(tr, te *dataset) float64 {
	cnt := make([]int, len(tr.classes))
	for _, y := range tr.y {
		cnt[y]++
	}
	arg := 0
	for c := range cnt {
		if cnt[c] > cnt[arg] {
			arg = c
		}
	}
	ok := 0
	for _, y := range te.y {
		if y == arg {
			ok++
		}
	}
	return float64(ok) / float64(len(te.y))
}
