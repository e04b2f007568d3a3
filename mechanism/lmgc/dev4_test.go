//go:build lmgcdev

package lmgc

import (
	"fmt"
	"testing"
	"time"
)

func TestDevSolver(t *testing.T) {
	ds := loadDataset(t, "digits")
	xtr, ytr, xte, yte := ds.split()
	for _, eps := range []float64{1, 50} {
		p, _ := Plan(ds.config(eps, len(xtr)))
		for _, off := range []bool{false, true} {
			t0 := time.Now()
			m, sol, err := p.train(xtr, ytr, trainOptions{noiseOff: off})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Printf("eps=%g off=%v it=%d bound=%.3g target=%.3g capped=%v acc=%.3f (%v)\n", eps, off, sol.iterations, sol.bound, p.cal.Radius/2, sol.capped, accuracy(t, predictor(m), ds.classes, xte, yte), time.Since(t0))
		}
	}
	p, _ := Plan(ds.config(50, len(xtr)))
	t0 := time.Now()
	m, sol, _ := p.train(xtr, ytr, trainOptions{noiseOff: true, delta: 1e-4, target: 1e-3})
	fmt.Printf("nonprivate it=%d acc=%.3f (%v)\n", sol.iterations, accuracy(t, predictor(m), ds.classes, xte, yte), time.Since(t0))
}
