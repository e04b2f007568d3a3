package lsq

import (
	"github.com/dpsql/dpsql/mechanism"
	"math"
	"math/rand/v2"
	"testing"
)

// TestStreamStatsMatchesBatch: the streaming pass (used by DP_LSQ on
// storage scans) computes the same sufficient statistics as the in-memory
// pass, for a row count that is not a multiple of the chunk size.
func TestStreamStatsMatchesBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d = 3*statsBatch + 77, 5
	cfg := Config{Epsilon: 1, N: n, Features: []string{"a", "b", "c", "d", "e"},
		Lo: []float64{-1, -1, -1, -1, -1}, Hi: []float64{1, 1, 1, 1, 1}, Label: "y", LabelLo: -2, LabelHi: 2}
	tr, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	X := make([][]float64, n)
	y := make([]float64, n)
	for i := range X {
		X[i] = make([]float64, d)
		for j := range X[i] {
			X[i][j] = 2*rng.Float64() - 1
		}
		y[i] = 4*rng.Float64() - 2
	}
	X[5][2] = math.NaN()
	batch := sufficientStats(X, y, tr.fm, tr.lm)
	stream, err := streamStats(d, tr.fm, tr.lm, func(emit func([]float64) error) error {
		row := make([]float64, d+1)
		for i := range X {
			copy(row, X[i])
			row[d] = y[i]
			if err := emit(row); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if stream.n != n {
		t.Fatalf("stream n = %d, want %d", stream.n, n)
	}
	f := tr.fm.f
	for j := 0; j < f; j++ {
		if math.Abs(stream.c[j]-batch.c[j]) > 1e-9 {
			t.Fatalf("c[%d]: stream %v, batch %v", j, stream.c[j], batch.c[j])
		}
		for k := j; k < f; k++ {
			if math.Abs(stream.s.At(j, k)-batch.s.At(j, k)) > 1e-9 {
				t.Fatalf("S[%d,%d]: stream %v, batch %v", j, k, stream.s.At(j, k), batch.s.At(j, k))
			}
		}
	}
	// A short scan is reported, not released.
	if _, err := tr.TrainStream(func(emit func([]float64) error) error { return emit(make([]float64, d+1)) }); err == nil {
		t.Fatal("TrainStream accepted 1 row for a plan of n rows")
	}
}

// trainNeighbour releases a model on D = (x, y) for nb = 0 or on the
// neighbour D′ = (x2, y2) for nb = 1: the audits' release path.
func trainNeighbour(t *testing.T, tr *Trainer, nb int, x [][]float64, y []float64, x2 [][]float64, y2 []float64) *mechanism.Model {
	t.Helper()
	if nb == 1 {
		x, y = x2, y2
	}
	m, err := tr.Train(x, y)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
