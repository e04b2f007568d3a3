package logreg

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// dataset is a classification table: raw features and class indices.
type dataset struct {
	names   []string
	x       [][]float64
	y       []int
	classes []string
	lo, hi  []float64
	label   string
}

func repoPath(parts ...string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(append([]string{filepath.Dir(file), "..", ".."}, parts...)...)
}

// loadClassCSV reads a CSV (header row, last column the class label).
// Bounds and the label domain come from testdata/demo_catalog.json when
// the table is listed there; otherwise the caller states them.
func loadClassCSV(t testing.TB, path string) (names []string, x [][]float64, labels []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	d := len(recs[0]) - 1
	names = recs[0][:d]
	for _, r := range recs[1:] {
		row := make([]float64, d)
		for j := range row {
			if row[j], err = strconv.ParseFloat(r[j], 64); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		x = append(x, row)
		labels = append(labels, r[d])
	}
	return names, x, labels
}

type catalogEntry struct {
	Bounds map[string][2]float64 `json:"bounds"`
	Label  struct {
		Column string   `json:"column"`
		Domain []string `json:"domain"`
	} `json:"label"`
}

// catalogDataset loads testdata/<name>.csv with the public bounds and
// label domain of testdata/demo_catalog.json.
func catalogDataset(t testing.TB, name string) dataset {
	t.Helper()
	raw, err := os.ReadFile(repoPath("testdata", "demo_catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cat map[string]catalogEntry
	if err := json.Unmarshal(raw, &cat); err != nil {
		t.Fatal(err)
	}
	e, ok := cat[name]
	if !ok {
		t.Fatalf("%s not in the demo catalog", name)
	}
	names, x, labels := loadClassCSV(t, repoPath("testdata", name+".csv"))
	ds := dataset{names: names, x: x, classes: e.Label.Domain, label: e.Label.Column}
	for _, n := range names {
		b, ok := e.Bounds[n]
		if !ok {
			t.Fatalf("%s: no bounds for %s", name, n)
		}
		ds.lo, ds.hi = append(ds.lo, b[0]), append(ds.hi, b[1])
	}
	ds.y = indices(t, labels, ds.classes)
	return ds
}

func indices(t testing.TB, labels, classes []string) []int {
	idx := map[string]int{}
	for k, c := range classes {
		idx[c] = k
	}
	y := make([]int, len(labels))
	for i, l := range labels {
		k, ok := idx[l]
		if !ok {
			t.Fatalf("label %q outside the domain %v", l, classes)
		}
		y[i] = k
	}
	return y
}

// synthMixture draws n rows of a K-class Gaussian mixture in d dimensions:
// class means on the sphere of radius sep (fixed by seed), x ~ N(μ_y, ½²I),
// classes uniform. Declared bounds [−2, 2] (values beyond are clipped).
func synthMixture(rng *rand.Rand, seed uint64, n, k, d int, sep float64) dataset {
	mr := rand.New(rand.NewPCG(seed, 99))
	means := make([][]float64, k)
	for c := range means {
		m := make([]float64, d)
		var s float64
		for j := range m {
			m[j] = mr.NormFloat64()
			s += m[j] * m[j]
		}
		for j := range m {
			m[j] *= sep / math.Sqrt(s)
		}
		means[c] = m
	}
	ds := dataset{label: "y"}
	for j := 0; j < d; j++ {
		ds.names = append(ds.names, fmt.Sprintf("x%d", j+1))
		ds.lo, ds.hi = append(ds.lo, -2), append(ds.hi, 2)
	}
	for c := 0; c < k; c++ {
		ds.classes = append(ds.classes, strconv.Itoa(c))
	}
	for i := 0; i < n; i++ {
		c := rng.IntN(k)
		row := make([]float64, d)
		for j := range row {
			row[j] = means[c][j] + 0.5*rng.NormFloat64()
		}
		ds.x = append(ds.x, row)
		ds.y = append(ds.y, c)
	}
	return ds
}

// config returns the Config of a dataset for n training rows.
func (ds dataset) config(n int, eps, delta float64) Config {
	return Config{Epsilon: eps, Delta: delta, N: n, Features: ds.names, Lo: ds.lo, Hi: ds.hi, Label: ds.label, Classes: ds.classes}
}

// split returns a random partition with a fraction frac of training rows.
func (ds dataset) split(rng *rand.Rand, frac float64) (train, test dataset) {
	train, test = ds, ds
	train.x, train.y, test.x, test.y = nil, nil, nil, nil
	p := rng.Perm(len(ds.x))
	nTrain := int(frac * float64(len(ds.x)))
	for i, k := range p {
		if i < nTrain {
			train.x, train.y = append(train.x, ds.x[k]), append(train.y, ds.y[k])
		} else {
			test.x, test.y = append(test.x, ds.x[k]), append(test.y, ds.y[k])
		}
	}
	return train, test
}
