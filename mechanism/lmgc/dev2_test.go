//go:build lmgcdev

package lmgc

import (
	"fmt"
	"testing"
	"time"
)

func TestDevDigits(t *testing.T) {
	ds := loadDataset(t, "digits")
	xtr, ytr, xte, yte := ds.split()
	for _, eps := range []float64{1, 10, 50} {
		p, err := Plan(ds.config(eps, len(xtr)))
		if err != nil {
			t.Fatal(err)
		}
		t1 := time.Now()
		mp, sol, err := p.train(xtr, ytr, trainOptions{})
		if err != nil {
			t.Fatal(err)
		}
		el := time.Since(t1)
		a := accuracy(t, predictor(mp), ds.classes, xte, yte)
		t1 = time.Now()
		mo, solo, _ := p.train(xtr, ytr, trainOptions{noiseOff: true})
		elo := time.Since(t1)
		ao := accuracy(t, predictor(mo), ds.classes, xte, yte)
		c := p.Calibration()
		fmt.Printf("digits eps=%g Δ=%.3g acc=%.3f it=%d (%v) noiseoff=%.3f it=%d (%v) r=%.3g\n", eps, c.StrongConvexity, a, sol.iterations, el, ao, solo.iterations, elo, c.Radius)
	}
	for _, delta := range []float64{1e-3, 1e-4} {
		p, _ := Plan(ds.config(50, len(xtr)))
		t1 := time.Now()
		mo, solo, _ := p.train(xtr, ytr, trainOptions{noiseOff: true, delta: delta, target: 1e-3})
		ao := accuracy(t, predictor(mo), ds.classes, xte, yte)
		fmt.Printf("digits nonprivate Δ=%g acc=%.3f it=%d (%v)\n", delta, ao, solo.iterations, time.Since(t1))
	}
}
