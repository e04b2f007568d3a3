package lmgc

import (
	"testing"
	"time"
	"fmt"
	"github.com/dpsql/dpsql/mechanism"
)

func predictor(m *mechanism.Model) func([]float64) (string, error) {
	return func(x []float64) (string, error) { p, err := m.Predict(x); return p.Class, err }
}

func TestDevExplore(t *testing.T) {
	for _, name := range []string{"iris", "wine"} {
		ds := loadDataset(t, name)
		xtr, ytr, xte, yte := ds.split()
		for _, lam := range []float64{1e-3, 1e-2, 1e-1} {
		for _, h := range []float64{0.5} {
			for _, eps := range []float64{1, 10, 50} {
				cfg := ds.config(eps, len(xtr)); cfg.Lambda = lam; cfg.H = h
				p, err := Plan(cfg)
				if err != nil { t.Fatal(err) }
				t0 := time.Now()
				m, sol, err := p.train(xtr, ytr, trainOptions{noiseOff: true})
				if err != nil { t.Fatal(err) }
				el := time.Since(t0)
				acc := accuracy(t, predictor(m), ds.classes, xte, yte)
				var accp float64
				var elp time.Duration
				for r := 0; r < 3; r++ {
					t1 := time.Now()
					mp, _, err := p.train(xtr, ytr, trainOptions{})
					if err != nil { t.Fatal(err) }
					elp += time.Since(t1)
					accp += accuracy(t, predictor(mp), ds.classes, xte, yte) / 3
				}
				c := p.Calibration()
				fmt.Printf("%s lam=%g h=%g eps=%g Δ=%.3g noiseoff acc=%.3f it=%d (%v) private acc=%.3f (%v) β=%.3g βZ=%.3g r=%.3g\n", name, lam, h, eps, c.StrongConvexity, acc, sol.iterations, el, accp, elp/3, c.PerturbationScale, c.OutputScale, c.Radius)
			}
		}
		}
	}
}
