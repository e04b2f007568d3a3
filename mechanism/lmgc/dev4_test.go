package lmgc

import (
	"fmt"
	"testing"
	"time"
)

func TestDevSmooth(t *testing.T) {
	ds := loadDataset(t, "digits")
	xtr, ytr, _, _ := ds.split()
	for _, eps := range []float64{1, 50} {
	p, _ := Plan(ds.config(eps, len(xtr)))
	D := p.dim
	xs := make([]float64, len(xtr)*D)
	for i, r := range xtr { p.scaler.Transform(xs[i*D:(i+1)*D], r) }
	b, _ := p.symmetricNoise(p.cal.PerturbationScale)
	delta := p.cal.StrongConvexity
	prob := newProblem(p.classes, D, xs, ytr, 0.5, 0.01, delta, b)
	var ref []float64
	for _, f := range []float64{1, 0.25, 0.0625, 0.015} {
		L := f*10 + delta
		t0 := time.Now()
		sol, err := prob.solve(L, p.cal.Radius/2, 100000)
		if err != nil { t.Fatal(err) }
		var dist float64
		if ref == nil { ref = sol.phi } else { for i := range ref { d := ref[i]-sol.phi[i]; dist += d*d } }
		fmt.Printf("eps=%g f=%g it=%d bound=%.3g capped=%v dist²=%.3g (%v)\n", eps, f, sol.iterations, sol.bound, sol.capped, dist, time.Since(t0))
	}
	}
}
