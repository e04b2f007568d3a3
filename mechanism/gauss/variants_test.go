package gauss

import (
	"math"
	"testing"
)

// TestTrainVariants: one release, one model per variant; the zero variant
// is the default post-processing, shrinkage and ridge change the model;
// invalid variants are refused before any release; a plan releases once.
func TestTrainVariants(t *testing.T) {
	ds := synthetic(600, 4, 3, 11, 1)
	for _, kind := range []string{KindLDA, KindQDA, KindGNB} {
		tr, err := Plan(ds.config(kind, 50, 1e-6)) // spikes above the noise edge, so γ acts
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.TrainVariants(ds.x, ds.y, []Variant{{}, {Shrink: 1}}); err == nil {
			t.Fatalf("%s: shrink 1 accepted", kind)
		}
		ms, err := tr.TrainVariants(ds.x, ds.y, []Variant{{}, {Shrink: 0.5}, {Shrink: 0.5, Ridge: 2}})
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 3 {
			t.Fatalf("%s: %d models", kind, len(ms))
		}
		if _, err := tr.TrainVariants(ds.x, ds.y, []Variant{{}}); err == nil {
			t.Fatalf("%s: a second release from one plan", kind)
		}
		if _, ok := ms[0].Params["shrink"]; ok || ms[1].Params["shrink"] != 0.5 || ms[2].Params["post_ridge"] != 2 {
			t.Fatalf("%s: params %v / %v", kind, ms[0].Params, ms[1].Params)
		}
		differ := func(a, b [][]float64) bool {
			for i := range a {
				for j := range a[i] {
					if math.Abs(a[i][j]-b[i][j]) > 1e-9*(1+math.Abs(a[i][j])) {
						return true
					}
				}
			}
			return false
		}
		w := func(i int) [][]float64 {
			if kind == KindLDA {
				return ms[i].Weights
			}
			return ms[i].Phi
		}
		if !differ(w(0), w(1)) || !differ(w(1), w(2)) {
			t.Fatalf("%s: a variant left the model unchanged", kind)
		}
		// Shared release: the class priors (intercepts of the counts) are
		// the same statistics in every variant; for lda with γ = 0 the
		// model is exactly model() on the released vector.
		if kind == KindLDA && (len(ms[0].Weights) != 3 || len(ms[0].Weights[0]) != 5) {
			t.Fatalf("lda weights shape")
		}
	}
}

// TestShrinkToMean: (1 − γ)v + γ·mean(v), trace kept.
func TestShrinkToMean(t *testing.T) {
	v := shrinkToMean([]float64{1, 2, 6}, 0.5)
	want := []float64{2, 2.5, 4.5}
	for i := range v {
		if math.Abs(v[i]-want[i]) > 1e-12 {
			t.Fatalf("%v, want %v", v, want)
		}
	}
}

// TestTrainVariantsZeroIsTrain: with no noise worth the name (ε = 1e6),
// the zero variant equals Train's model on the same rows.
func TestTrainVariantsZeroIsTrain(t *testing.T) {
	ds := synthetic(400, 3, 2, 12, 1)
	a, err := Plan(ds.config(KindLDA, 1e6, 1e-6))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Plan(ds.config(KindLDA, 1e6, 1e-6))
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.Train(ds.x, ds.y)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := b.TrainVariants(ds.x, ds.y, []Variant{{}})
	if err != nil {
		t.Fatal(err)
	}
	for k := range m.Weights {
		for j := range m.Weights[k] {
			if d := math.Abs(m.Weights[k][j] - ms[0].Weights[k][j]); d > 2e-2*(1+math.Abs(m.Weights[k][j])) {
				t.Fatalf("weight %d,%d: Train %v, zero variant %v", k, j, m.Weights[k][j], ms[0].Weights[k][j])
			}
		}
	}
}
