package gauss

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/dpsql/dpsql/internal/syntest"
	"github.com/dpsql/dpsql/mechanism"
)

// dataset is a labelled table with its public declaration (bounds and
// label domain).
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

// sharedDataDir is where the shared/ data sets live (beside the worktrees);
// GAUSS_DATA overrides it.
func sharedDataDir() string {
	if d := os.Getenv("GAUSS_DATA"); d != "" {
		return d
	}
	return filepath.Join(repoRoot(), "..", "shared", "data")
}

// loadDataset reads a data set with its public declaration: from testdata/
// with the demo catalog's bounds when the catalog has it, else from the
// shared data directory with the owner declarations of syntest.OwnerBounds.
func loadDataset(tb testing.TB, name string) *dataset {
	tb.Helper()
	l := syntest.Load(tb, repoRoot(), sharedDataDir(), name)
	return &dataset{name: l.Name, features: l.Features, lo: l.Lo, hi: l.Hi, classes: l.Classes, x: l.X, y: l.Y}
}

// subset returns the rows idx of d.
func (d *dataset) subset(idx []int) *dataset {
	out := &dataset{name: d.name, features: d.features, lo: d.lo, hi: d.hi, classes: d.classes}
	for _, i := range idx {
		out.x = append(out.x, d.x[i])
		out.y = append(out.y, d.y[i])
	}
	return out
}

// splitIdx returns a seeded random partition of n indices into a first
// part of ⌊frac·n⌋ and the rest.
func splitIdx(n int, seed uint64, frac float64) (a, b []int) {
	rng := rand.New(rand.NewPCG(seed, 0x9a55))
	p := rng.Perm(n)
	cut := int(frac * float64(n))
	return p[:cut], p[cut:]
}

// config returns a Config for the data set at (ε, δ).
func (d *dataset) config(kind string, eps, delta float64) Config {
	return Config{Kind: kind, Epsilon: eps, Delta: delta, N: len(d.x), Features: d.features,
		Lo: d.lo, Hi: d.hi, Label: "label", Classes: d.classes}
}

// synthetic draws the factor-model data of docs/results/gauss.md: K classes
// with means N(0, sep²·10/d) per coordinate, x = μ_y + L·f + e with three
// N(0, 1) factors (loadings N(0, 0.36)), noise sd log-uniform in
// [0.2, 0.6], labels uniform; declared bounds [−4, 4] for every feature.
func synthetic(n, d, k int, seed uint64, sep float64) *dataset {
	rng := rand.New(rand.NewPCG(seed, 0x5e7))
	const nf = 3
	mu := make([][]float64, k)
	for c := range mu {
		mu[c] = make([]float64, d)
		for j := range mu[c] {
			mu[c][j] = rng.NormFloat64() * sep * math.Sqrt(10/float64(d))
		}
	}
	load := make([][]float64, d)
	se := make([]float64, d)
	for j := range load {
		load[j] = make([]float64, nf)
		for f := range load[j] {
			load[j][f] = 0.6 * rng.NormFloat64()
		}
		se[j] = math.Exp(math.Log(0.2) + rng.Float64()*(math.Log(0.6)-math.Log(0.2)))
	}
	ds := &dataset{name: "synthetic"}
	for j := 0; j < d; j++ {
		ds.features = append(ds.features, "x"+strconv.Itoa(j))
		ds.lo, ds.hi = append(ds.lo, -4), append(ds.hi, 4)
	}
	for c := 0; c < k; c++ {
		ds.classes = append(ds.classes, "c"+strconv.Itoa(c))
	}
	f := make([]float64, nf)
	for i := 0; i < n; i++ {
		c := rng.IntN(k)
		for a := range f {
			f[a] = rng.NormFloat64()
		}
		row := make([]float64, d)
		for j := range row {
			v := mu[c][j] + rng.NormFloat64()*se[j]
			for a := range f {
				v += load[j][a] * f[a]
			}
			row[j] = v
		}
		ds.x, ds.y = append(ds.x, row), append(ds.y, c)
	}
	return ds
}

// accuracy returns the share of rows the model labels correctly.
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
