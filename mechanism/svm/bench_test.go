package svm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// synthetic returns n rows of d features uniform in [−1, 1] and a label that
// depends non-linearly on the first five (a noisy sphere, about half
// positive), plus the matching public Config (bounds [−1, 1]).
func synthetic(n, d int, seed uint64) ([][]float64, []int, Config) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	X := make([][]float64, n)
	y := make([]int, n)
	for i := range X {
		r := make([]float64, d)
		var q float64
		for j := range r {
			r[j] = 2*rng.Float64() - 1
			if j < 5 {
				q += r[j] * r[j]
			}
		}
		X[i] = r
		if q+0.3*(rng.Float64()-0.5) > 5.0/3 {
			y[i] = 1
		}
	}
	cfg := Config{Epsilon: 1, N: n, Label: "y", Classes: []string{"0", "1"}}
	for j := 0; j < d; j++ {
		cfg.Features = append(cfg.Features, fmt.Sprintf("x%d", j))
		cfg.Lo = append(cfg.Lo, -1)
		cfg.Hi = append(cfg.Hi, 1)
	}
	return X, y, cfg
}

func benchTrain(b *testing.B, n int, kernel string) {
	X, y, cfg := synthetic(n, 20, 1)
	cfg.Kernel = kernel
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr, err := Plan(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tr.Train(X, y); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanTrainRBF20k times Plan + Train (rbf, d̂ = 256, default C) on
// 20 000 × 20 synthetic rows. The 200 000-row comparison with sklearn is in
// results_test.go (build tag results) and docs/results/svm.md.
func BenchmarkPlanTrainRBF20k(b *testing.B) { benchTrain(b, 20_000, KernelRBF) }

// BenchmarkPlanTrainLinear20k times the linear kernel on the same rows.
func BenchmarkPlanTrainLinear20k(b *testing.B) { benchTrain(b, 20_000, KernelLinear) }

// benchDefault times one default call (linear kernel, every default) on n
// rows of syntheticMulticlass: the accuracy grid's unit of work
// (docs/results/speed.md).
func benchDefault(b *testing.B, n, d, k int, eps float64) {
	ds := syntheticMulticlass(n, d, k, 3)
	cfg := unitBoxConfig(ds, k)
	cfg.Epsilon = eps
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr, err := Plan(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tr.Train(ds.x, ds.y); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDefaultN1e4D10K5Eps10(b *testing.B) { benchDefault(b, 10_000, 10, 5, 10) }
func BenchmarkDefaultN1e5D10K5Eps10(b *testing.B) { benchDefault(b, 100_000, 10, 5, 10) }
