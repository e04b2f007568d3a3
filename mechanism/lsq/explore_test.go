package lsq

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
)

func TestExploreAdversarial(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, d := range []int{1, 2} {
		for _, n := range []int{1, 2, 5, 20} {
			for _, lam := range []float64{0.01, 0.1, 1} {
				cfg := synthConfig(d, n, 1, 0)
				cfg.Lambda = lam
				tr, err := Plan(cfg)
				if err != nil {
					t.Fatal(err)
				}
				d2 := tr.out.delta2
				ratio := func(x [][]float64, y []float64, xr []float64, yr float64) float64 {
					w0, _ := tr.fit(x, y)
					x2 := append([][]float64(nil), x...)
					y2 := append([]float64(nil), y...)
					x2[n-1], y2[n-1] = xr, yr
					w1, _ := tr.fit(x2, y2)
					return floats.Distance(w0, w1, 2) / d2
				}
				clip := func(v float64) float64 { return max(-1, min(1, v)) }
				best := 0.0
				for restart := 0; restart < 20; restart++ {
					x := make([][]float64, n)
					y := make([]float64, n)
					for i := range x {
						x[i] = make([]float64, d)
						for j := range x[i] {
							x[i][j] = 2*rng.Float64() - 1
						}
						y[i] = 2*rng.Float64() - 1
					}
					xr := make([]float64, d)
					for j := range xr {
						xr[j] = 2*rng.Float64() - 1
					}
					yr := 2*rng.Float64() - 1
					cur := ratio(x, y, xr, yr)
					step := 0.5
					for it := 0; it < 3000; it++ {
						// perturb everything a bit
						x2 := make([][]float64, n)
						for i := range x {
							x2[i] = append([]float64(nil), x[i]...)
							for j := range x2[i] {
								if rng.Float64() < 0.3 {
									x2[i][j] = clip(x2[i][j] + step*rng.NormFloat64())
								}
							}
						}
						y2 := append([]float64(nil), y...)
						for i := range y2 {
							if rng.Float64() < 0.3 {
								y2[i] = clip(y2[i] + step*rng.NormFloat64())
							}
						}
						xr2 := append([]float64(nil), xr...)
						for j := range xr2 {
							xr2[j] = clip(xr2[j] + step*rng.NormFloat64())
						}
						yr2 := clip(yr + step*rng.NormFloat64())
						if r := ratio(x2, y2, xr2, yr2); r > cur {
							x, y, xr, yr, cur = x2, y2, xr2, yr2, r
						}
						if it%500 == 499 {
							step /= 2
						}
					}
					if cur > best {
						best = cur
						t.Logf("d=%d n=%d λ=%v ratio=%.4f x=%.3v y=%.3v xr=%.3v yr=%.3v", d, n, lam, cur, x, y, xr, yr)
					}
				}
			}
		}
	}
}
