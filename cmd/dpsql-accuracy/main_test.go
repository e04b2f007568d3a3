package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/sirupsen/logrus"
)

// Every training and test value of every set lies inside its declared
// bounds (the import refuses rows outside them, and a declaration the data
// violates would be a wrong page), and the split is the documented 80/20.
func TestSetsRespectDeclaredBounds(t *testing.T) {
	data := filepath.Join("..", "..", "..", "shared", "data")
	checked := 0
	for _, name := range allSetNames() {
		if testing.Short() && name != "iris" && name != "syn_c_n1000_d10_k5" && name != "syn_r_n1000_d10" {
			continue
		}
		var n, d, k int
		if c, _ := fmtSscanf(name, &n, &d, &k); c >= 2 && n > 10000 {
			continue // same generator as the smaller n; keeps the test short
		}
		ds, err := loadSet(name, data, filepath.Join("..", ".."))
		if err != nil {
			if os.IsNotExist(err) || isNotExist(err) {
				// shared/ lies outside the repository (absent in CI): the
				// synthetic sets are still checked.
				t.Logf("%s: shared data not available: %v", name, err)
				continue
			}
			t.Fatal(err)
		}
		if ds.family == famSharedCls || ds.family == famSharedReg {
			total := len(ds.trainX) + len(ds.testX)
			if len(ds.trainX) != total*8/10 {
				t.Fatalf("%s: %d training rows of %d, want 80 %%", name, len(ds.trainX), total)
			}
		}
		for _, X := range [][][]float64{ds.trainX, ds.testX} {
			for _, x := range X {
				for j, v := range x {
					if !(v >= ds.lo[j] && v <= ds.hi[j]) {
						t.Fatalf("%s: feature %s = %v outside the declared [%v, %v]", name, ds.features[j], v, ds.lo[j], ds.hi[j])
					}
				}
			}
		}
		dom := map[string]bool{}
		for _, c := range ds.classes {
			dom[c] = true
		}
		for _, c := range append(append([]string(nil), ds.trainC...), ds.testC...) {
			if !dom[c] {
				t.Fatalf("%s: label %q outside the declared domain", name, c)
			}
		}
		for _, y := range append(append([]float64(nil), ds.trainY...), ds.testY...) {
			if !(y >= ds.labelLo && y <= ds.labelHi) {
				t.Fatalf("%s: label %v outside [%v, %v]", name, y, ds.labelLo, ds.labelHi)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no data set checked")
	}
}

// The synthetic generator is deterministic in its public seed and not
// degenerate: every class occurs, and the labels are not all one class.
func TestSyntheticDeterministic(t *testing.T) {
	a := synClassification("syn_c_n1000_d10_k5", 1000, 10, 5)
	b := synClassification("syn_c_n1000_d10_k5", 1000, 10, 5)
	for i := range a.trainX {
		if a.trainC[i] != b.trainC[i] || a.trainX[i][3] != b.trainX[i][3] {
			t.Fatalf("row %d differs between two generations", i)
		}
	}
	count := map[string]int{}
	for _, c := range a.trainC {
		count[c]++
	}
	if len(count) != 5 {
		t.Fatalf("classes drawn: %v", count)
	}
	for c, n := range count {
		if n > 600 {
			t.Fatalf("class %s has %d of 1000 rows", c, n)
		}
	}
	r := synRegression("syn_r_n1000_d10", 1000, 10)
	var m, v float64
	for _, y := range r.trainY {
		m += y
	}
	m /= float64(len(r.trainY))
	for _, y := range r.trainY {
		v += (y - m) * (y - m)
	}
	v /= float64(len(r.trainY))
	// Var(xᵀβ) = 1 plus noise 0.25 plus outliers: about 1.3 before clipping.
	if v < 0.9 || v > 1.8 {
		t.Fatalf("label variance %v, want about 1.3", v)
	}
}

// One default call over the wire end to end: the model comes back, is
// scored on the test split, and what was charged is the call's ε.
func TestOneCallOverTheWire(t *testing.T) {
	ds, err := loadSet("syn_c_n1000_d10_k5", "", filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	train, _, err := ds.writeSplit(work)
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	srv, err := openServer(work, log)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.close()
	if err := srv.ensureTable(ds, train); err != nil {
		t.Fatal(err)
	}
	out, err := srv.train(ds, "lda", "", 10, tableDelta, 0)
	if err != nil || out.err != "" {
		t.Fatalf("train: %v %s", err, out.err)
	}
	if out.modelKind != "lda" || math.Abs(out.epsCharged-10) > 1e-9 {
		t.Fatalf("trained %q charged ε=%v", out.modelKind, out.epsCharged)
	}
	// ε = 10 on 1,000 rows of an 8 %-Bayes-error problem: far above chance (0.2).
	if !(out.value > 0.5 && out.value <= 1) {
		t.Fatalf("test accuracy %v", out.value)
	}
	k, err := srv.autoKind(ds, kindAutoPure, 1)
	if err != nil || !wanted(classKinds, k) || k == "auto" {
		t.Fatalf("dry run of auto: kind %q, %v", k, err)
	}
	// The table's own budget is untouched: each call had a fresh one.
	if _, err := srv.e.Budget.Status(benchDB + "." + ds.name); err == nil {
		t.Fatal("the engine's accountant has a budget for the table; calls should use fresh accountants")
	}
}

func fmtSscanf(name string, n, d, k *int) (int, error) {
	if c, err := fmt.Sscanf(name, "syn_c_n%d_d%d_k%d", n, d, k); c == 3 {
		return c, err
	}
	return fmt.Sscanf(name, "syn_r_n%d_d%d", n, d)
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
