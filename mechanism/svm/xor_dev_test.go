//go:build results

package svm

import (
	"math/rand/v2"
	"testing"
)

func syntheticXOR(n, d int, seed uint64) ([][]float64, []int, Config) {
	rng := rand.New(rand.NewPCG(seed, 0x0c0c))
	X, y, cfg := synthetic(n, d, seed)
	for i := range X {
		for j := range X[i] {
			X[i][j] = 2*rng.Float64() - 1
		}
		y[i] = 0
		if X[i][0]*X[i][1]+0.05*rng.NormFloat64() > 0 {
			y[i] = 1
		}
	}
	return X, y, cfg
}

func TestDevXOR(t *testing.T) {
	for _, d := range []int{2, 5, 10} {
		for _, g := range []float64{1, 4} {
			for _, c := range []float64{10, 100, 1000} {
				X, y, cfg := syntheticXOR(10000, d, 1)
				Xt, yt, _ := syntheticXOR(5000, d, 2)
				cfg.Kernel, cfg.Dim, cfg.C, cfg.Gamma = KernelRBF, 64, c, g
				tr := mustPlan(t, cfg)
				ws, _, err := tr.fit(X, y)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("d=%d γ=%v C=%v acc %.3f λ(ε=1)=%.3g", d, g, c, testAccuracy(t, tr, ws, dataset{x: Xt, y: yt}), tr.Scale())
			}
		}
	}
}
