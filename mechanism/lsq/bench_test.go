package lsq

import (
	"math/rand/v2"
	"testing"
)

// benchRows builds n raw rows of d features in [−1, 1] and labels, one
// slice per row as the storage layer hands them over.
func benchRows(n, d int) ([][]float64, []float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		row := make([]float64, d)
		for j := range row {
			row[j] = 2*rng.Float64() - 1
		}
		x[i] = row
		y[i] = row[0] - 0.5*row[1] + 0.1*rng.NormFloat64()
	}
	return x, y
}

// sumColumn is the baseline pass: the sum of one column over the same
// [][]float64 (what SELECT SUM(c1) does once rows are in memory).
func sumColumn(x [][]float64) float64 {
	var s float64
	for _, row := range x {
		s += row[0]
	}
	return s
}

var sink float64

const benchN, benchD = 1 << 20, 20

// BenchmarkTrainOutputLinear is one linear DP_LSQ release (method output)
// on 2²⁰ rows × 20 features: one pass for the sufficient statistics, a
// 21×21 Cholesky solve, 21 Laplace draws.
func BenchmarkTrainOutputLinear(b *testing.B) {
	x, y := benchRows(benchN, benchD)
	tr := mustPlan(b, synthConfig(benchD, benchN, 1, 0))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := tr.Train(x, y)
		if err != nil {
			b.Fatal(err)
		}
		sink += m.Weights[0][0]
	}
}

// BenchmarkSumColumn is the baseline single pass over the same rows.
func BenchmarkSumColumn(b *testing.B) {
	x, _ := benchRows(benchN, benchD)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink += sumColumn(x)
	}
}

// BenchmarkSufficientStats is the data pass alone on one goroutine.
func BenchmarkSufficientStats(b *testing.B) {
	x, y := benchRows(benchN/4, benchD)
	tr := mustPlan(b, synthConfig(benchD, benchN/4, 1, 0))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st := accumulate(x, y, tr.fm, tr.lm)
		sink += st.c[0]
	}
}
