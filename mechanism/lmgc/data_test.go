package lmgc

import (
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// dataset is a CSV from testdata with public bounds stated as assumptions.
type dataset struct {
	name     string
	features []string
	lo, hi   []float64
	classes  []string
	x        [][]float64
	y        []int
}

// Public bounds, written down once from documented domain ranges (never
// computed from the rows):
//   - iris: UCI iris.names summary statistics (sepal length 4.3–7.9,
//     sepal width 2.0–4.4, petal length 1.0–6.9, petal width 0.1–2.5 cm),
//     rounded outwards;
//   - wine: the attribute ranges printed in the UCI/scikit-learn wine
//     description, rounded outwards;
//   - digits: pixel intensities 0–16.
var publicBounds = map[string][2][]float64{
	"iris": {{4, 2, 1, 0}, {8, 4.5, 7, 2.5}},
	"wine": {
		{11, 0.5, 1, 10, 70, 0.9, 0.3, 0.1, 0.4, 1, 0.4, 1.2, 250},
		{15, 6, 3.5, 30, 165, 4, 5.1, 0.7, 3.6, 13, 1.8, 4, 1700},
	},
}

// publicClasses is the declared label domain of each dataset.
var publicClasses = map[string][]string{
	"iris":   {"setosa", "versicolor", "virginica"},
	"wine":   {"0", "1", "2"},
	"digits": {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"},
}

// loadDataset reads ../../testdata/<name>.csv (last column = label).
func loadDataset(tb testing.TB, name string) *dataset {
	tb.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", name+".csv"))
	if err != nil {
		tb.Fatalf("open %s: %v", name, err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		tb.Fatalf("read %s: %v", name, err)
	}
	head := recs[0]
	ds := &dataset{name: name, features: head[:len(head)-1], classes: publicClasses[name]}
	index := map[string]int{}
	for i, c := range ds.classes {
		index[c] = i
	}
	for _, r := range recs[1:] {
		row := make([]float64, len(r)-1)
		for j := range row {
			if row[j], err = strconv.ParseFloat(r[j], 64); err != nil {
				tb.Fatalf("%s: %v", name, err)
			}
		}
		lab, ok := index[r[len(r)-1]]
		if !ok {
			tb.Fatalf("%s: label %q not in the declared domain", name, r[len(r)-1])
		}
		ds.x = append(ds.x, row)
		ds.y = append(ds.y, lab)
	}
	d := len(ds.features)
	if b, ok := publicBounds[name]; ok {
		ds.lo, ds.hi = b[0], b[1]
	} else { // digits
		ds.lo, ds.hi = make([]float64, d), make([]float64, d)
		for j := range ds.hi {
			ds.hi[j] = 16
		}
	}
	if len(ds.lo) != d {
		tb.Fatalf("%s: %d bounds for %d features", name, len(ds.lo), d)
	}
	return ds
}

// split returns the deterministic train/test split used everywhere (also by
// docs/results/lmgc_baselines.py): rows with index i%3 == 0 are the test set.
func (ds *dataset) split() (xtr [][]float64, ytr []int, xte [][]float64, yte []int) {
	for i := range ds.x {
		if i%3 == 0 {
			xte, yte = append(xte, ds.x[i]), append(yte, ds.y[i])
		} else {
			xtr, ytr = append(xtr, ds.x[i]), append(ytr, ds.y[i])
		}
	}
	return
}

// config returns a Config for training on n rows of ds.
func (ds *dataset) config(eps float64, n int) Config {
	return Config{Epsilon: eps, N: n, Features: ds.features, Lo: ds.lo, Hi: ds.hi, Label: "label", Classes: ds.classes}
}

// synthetic draws n rows of a C-class Gaussian mixture in [−1, 1]^d (means
// on a random grid, clipped), with bounds [−1, 1].
func synthetic(n, d, classes int, seed uint64) *dataset {
	r := rand.New(rand.NewPCG(seed, 1))
	means := make([][]float64, classes)
	for c := range means {
		means[c] = make([]float64, d)
		for j := range means[c] {
			means[c][j] = 0.6 * (2*r.Float64() - 1)
		}
	}
	ds := &dataset{name: fmt.Sprintf("synthetic_%dx%d_%d", n, d, classes)}
	for j := 0; j < d; j++ {
		ds.features = append(ds.features, fmt.Sprintf("f%d", j))
		ds.lo = append(ds.lo, -1)
		ds.hi = append(ds.hi, 1)
	}
	for c := 0; c < classes; c++ {
		ds.classes = append(ds.classes, strconv.Itoa(c))
	}
	for i := 0; i < n; i++ {
		c := r.IntN(classes)
		row := make([]float64, d)
		for j := range row {
			row[j] = means[c][j] + 0.35*r.NormFloat64()
		}
		ds.x = append(ds.x, row)
		ds.y = append(ds.y, c)
	}
	return ds
}

// accuracy of a trained model on rows x with labels y.
func accuracy(tb testing.TB, predict func([]float64) (string, error), classes []string, x [][]float64, y []int) float64 {
	tb.Helper()
	var ok int
	for i, row := range x {
		c, err := predict(row)
		if err != nil {
			tb.Fatal(err)
		}
		if c == classes[y[i]] {
			ok++
		}
	}
	return float64(ok) / float64(len(x))
}
