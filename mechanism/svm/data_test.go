package svm

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// dataset is a CSV from testdata/: features, then the integer class label.
type dataset struct {
	names []string
	x     [][]float64
	y     []int
}

func loadCSV(t testing.TB, name string) dataset {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "testdata", name)
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var d dataset
	for line := 0; sc.Scan(); line++ {
		fields := strings.Split(strings.TrimSpace(sc.Text()), ",")
		if line == 0 {
			d.names = fields[:len(fields)-1]
			continue
		}
		row := make([]float64, len(fields)-1)
		for j := range row {
			if row[j], err = strconv.ParseFloat(fields[j], 64); err != nil {
				t.Fatalf("%s line %d: %v", name, line+1, err)
			}
		}
		lab, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			t.Fatalf("%s line %d: %v", name, line+1, err)
		}
		d.x = append(d.x, row)
		d.y = append(d.y, int(lab))
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return d
}

// breastCancerHi are public upper bounds for the 30 breast-cancer features
// (all lower bounds are 0). They stand in for a catalog declaration: chosen
// once, offline, by rounding each column's maximum in the file up to the next
// value 1, 2, 2.5 or 5 × 10^k (the kind of generous range a DBA declares),
// and frozen here; no test computes bounds from the rows.
var breastCancerHi = []float64{
	50, 50, 200, 5000, 0.2, 0.5, 0.5, 0.25, 0.5, 0.1,
	5, 5, 25, 1000, 0.05, 0.2, 0.5, 0.1, 0.1, 0.05,
	50, 50, 500, 5000, 0.25, 2, 2, 0.5, 1, 0.25,
}

// breastCancerConfig returns a Config for the breast-cancer table with the
// public bounds above; label 0 = benign ↦ −1, 1 = malignant ↦ +1.
func breastCancerConfig(d dataset, n int) Config {
	lo := make([]float64, len(breastCancerHi))
	return Config{
		Features: d.names,
		Lo:       lo,
		Hi:       append([]float64(nil), breastCancerHi...),
		Label:    "malignant",
		Classes:  []string{"0", "1"},
		N:        n,
		Epsilon:  1,
	}
}

// digitsConfig returns a Config for the digits table: 64 pixels with the
// public range 0–16, ten classes.
func digitsConfig(d dataset, n int) Config {
	lo := make([]float64, 64)
	hi := make([]float64, 64)
	for j := range hi {
		hi[j] = 16
	}
	classes := make([]string, 10)
	for k := range classes {
		classes[k] = strconv.Itoa(k)
	}
	return Config{Features: d.names, Lo: lo, Hi: hi, Label: "digit", Classes: classes, N: n, Epsilon: 1}
}

// split returns rows i with i%5 != 0 as training and i%5 == 0 as test set:
// a fixed 80/20 split.
func split(d dataset) (train, test dataset) {
	for i := range d.x {
		if i%5 == 0 {
			test.x = append(test.x, d.x[i])
			test.y = append(test.y, d.y[i])
		} else {
			train.x = append(train.x, d.x[i])
			train.y = append(train.y, d.y[i])
		}
	}
	train.names, test.names = d.names, d.names
	return train, test
}

// sharedDir is the directory of the shared data sets (../shared/data beside
// the repository, or $DPSQL_SHARED_DATA); the results tests read the larger
// tables from there rather than from testdata/.
func sharedDir() string {
	if d := os.Getenv("DPSQL_SHARED_DATA"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data")
}

// loadLabelled reads a CSV whose last column is a text label and maps it to
// the index of classes (a public domain, in declared order).
func loadLabelled(t testing.TB, path string, classes []string) dataset {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	idx := make(map[string]int, len(classes))
	for i, c := range classes {
		idx[c] = i
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var d dataset
	for line := 0; sc.Scan(); line++ {
		fields := strings.Split(strings.TrimSpace(sc.Text()), ",")
		if line == 0 {
			d.names = fields[:len(fields)-1]
			continue
		}
		row := make([]float64, len(fields)-1)
		for j := range row {
			if row[j], err = strconv.ParseFloat(fields[j], 64); err != nil {
				t.Fatalf("%s line %d: %v", path, line+1, err)
			}
		}
		k, ok := idx[fields[len(fields)-1]]
		if !ok {
			t.Fatalf("%s line %d: label %q outside the domain %v", path, line+1, fields[len(fields)-1], classes)
		}
		d.x = append(d.x, row)
		d.y = append(d.y, k)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return d
}

// ticdataConfig returns a Config for the CoIL 2000 table (ticdata.csv): the
// 85 coded attributes with bounds from the data dictionary, stated here as
// the catalog declaration (the file codes the dictionary's levels from 1):
// customer subtype 1–41, average household size and age classes 1–6, the
// A* policy counts 0–12, every other code 1–10. Classes: noinsurance ↦ −1,
// insurance ↦ +1.
func ticdataConfig(d dataset, n int) Config {
	lo := make([]float64, len(d.names))
	hi := make([]float64, len(d.names))
	for j, name := range d.names {
		switch {
		case name == "stype":
			lo[j], hi[j] = 1, 41
		case name == "mgemomv" || name == "mgemleef":
			lo[j], hi[j] = 1, 6
		case strings.HasPrefix(name, "a"):
			lo[j], hi[j] = 0, 12
		default:
			lo[j], hi[j] = 1, 10
		}
	}
	return Config{Features: d.names, Lo: lo, Hi: hi, Label: "caravan", Classes: ticdataClasses, N: n, Epsilon: 1}
}

var ticdataClasses = []string{"noinsurance", "insurance"}
