//go:build lmgcdev

package lmgc

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/dpsql/dpsql/mechanism"
)

func predictor(m *mechanism.Model) func([]float64) (string, error) {
	return func(x []float64) (string, error) { p, err := m.Predict(x); return p.Class, err }
}

func TestDevExplore(t *testing.T) {
	for _, name := range []string{"iris", "wine"} {
		ds := loadDataset(t, name)
		xtr, ytr, xte, yte := ds.split()
		for _, h := range []float64{0.5} {
			for _, share := range []float64{0.005, 0.01, 0.02, 0.05} {
				for _, eps := range []float64{0.5, 1, 2, 5, 10, 50} {
					cfg := ds.config(eps, len(xtr))
					cfg.H = h
					p, err := Plan(cfg)
					if err != nil {
						t.Fatal(err)
					}
					p.cal = calibrate(eps, len(xtr), len(ds.classes), p.dim, h, share)
					var accp, acc2 float64
					var elp time.Duration
					R := 20
					for r := 0; r < R; r++ {
						t1 := time.Now()
						mp, _, err := p.train(xtr, ytr, trainOptions{})
						if err != nil {
							t.Fatal(err)
						}
						elp += time.Since(t1)
						a := accuracy(t, predictor(mp), ds.classes, xte, yte)
						accp += a / float64(R)
						acc2 += a * a / float64(R)
					}
					mo, _, _ := p.train(xtr, ytr, trainOptions{noiseOff: true})
					ao := accuracy(t, predictor(mo), ds.classes, xte, yte)
					c := p.Calibration()
					fmt.Printf("%s h=%g share=%g eps=%g Δ=%.3g acc=%.3f±%.3f noiseoff@Δ=%.3f (%v)\n", name, h, share, eps, c.StrongConvexity, accp, math.Sqrt(acc2-accp*accp), ao, elp/time.Duration(R))
				}
			}
		}
	}
}
