//go:build lmgcdev

package lmgc

import "testing"

func BenchmarkDevDigitsGrad(b *testing.B) {
	ds := loadDataset(b, "digits")
	xtr, ytr, _, _ := ds.split()
	p, _ := Plan(ds.config(10, len(xtr)))
	D := p.dim
	xs := make([]float64, len(xtr)*D)
	for i, r := range xtr {
		p.scaler.Transform(xs[i*D:(i+1)*D], r)
	}
	prob := newProblem(p.classes, D, xs, ytr, 0.5, 0.01, 0.01, nil)
	phi := make([]float64, prob.size())
	g := make([]float64, prob.size())
	for i := range phi {
		phi[i] = 0.01 * float64(i%7)
	}
	projectPSD(phi, p.classes, D)
	b.Run("grad", func(b *testing.B) {
		for range b.N {
			prob.eval(phi, g)
		}
	})
	b.Run("proj", func(b *testing.B) {
		for range b.N {
			copy(g, phi)
			for i := range g {
				g[i] -= 0.001 * float64(i%5)
			}
			projectPSD(g, p.classes, D)
		}
	})
}
