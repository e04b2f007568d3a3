package syntest

import (
	"math"
	"path/filepath"
	"testing"
)

const root = "../.."

// TestLoadCatalogSet: a testdata set gets the catalog's bounds and label
// domain, labels become indices into it.
func TestLoadCatalogSet(t *testing.T) {
	ds := Load(t, root, filepath.Join(t.TempDir(), "none"), "iris")
	if len(ds.X) != 150 || len(ds.Y) != 150 || len(ds.Features) != 4 || len(ds.Lo) != 4 || len(ds.Hi) != 4 {
		t.Fatalf("iris: %d rows, %d labels, features %v, bounds %v %v", len(ds.X), len(ds.Y), ds.Features, ds.Lo, ds.Hi)
	}
	if len(ds.Classes) != 3 || ds.Classes[0] != "setosa" {
		t.Fatalf("classes %v", ds.Classes)
	}
	count := make([]int, 3)
	for i, y := range ds.Y {
		count[y]++
		for j, v := range ds.X[i] {
			if v < ds.Lo[j] || v > ds.Hi[j] {
				t.Fatalf("row %d feature %s = %v outside the declared [%v, %v]", i, ds.Features[j], v, ds.Lo[j], ds.Hi[j])
			}
		}
	}
	if count[0] != 50 || count[1] != 50 || count[2] != 50 {
		t.Fatalf("class counts %v", count)
	}
}

func TestOwnerBounds(t *testing.T) {
	lo, hi := OwnerBounds("ticdata", []string{"stype", "maanthui", "mgemomv", "apersaut", "mhhuur"})
	wantLo, wantHi := []float64{1, 1, 1, 0, 1}, []float64{41, 10, 6, 12, 10}
	for j := range lo {
		if lo[j] != wantLo[j] || hi[j] != wantHi[j] {
			t.Fatalf("feature %d: [%v, %v], want [%v, %v]", j, lo[j], hi[j], wantLo[j], wantHi[j])
		}
	}
	if lo, hi := OwnerBounds("vowel", []string{"v1", "v2"}); lo[0] != 0 || hi[0] != 14 || lo[1] != -6 || hi[1] != 6 {
		t.Fatalf("vowel: %v %v", lo, hi)
	}
}

func TestReadNumeric(t *testing.T) {
	names, x, y := ReadNumeric(t, filepath.Join(root, "testdata", "diabetes.csv"))
	if len(names) != 10 || len(x) != 442 || len(y) != 442 || len(x[0]) != 10 {
		t.Fatalf("diabetes: names %v, %d rows, %d targets", names, len(x), len(y))
	}
	for i, v := range y {
		if v < 25 || v > 346 {
			t.Fatalf("target %d = %v outside the documented 25–346", i, v)
		}
	}
}

func TestMeanSD(t *testing.T) {
	if m, s := MeanSD([]float64{1, 2, 3, 6}); m != 3 || math.Abs(s-math.Sqrt(14.0/3)) > 1e-15 {
		t.Fatalf("MeanSD = %v, %v", m, s)
	}
	if m, s := MeanSD([]float64{5}); m != 5 || s != 0 {
		t.Fatalf("one value: %v, %v", m, s)
	}
}
