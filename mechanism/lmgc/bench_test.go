package lmgc

import (
	"math/rand/v2"
	"testing"
)

// Run with: go test -run XXX -bench . ./mechanism/lmgc/ -benchtime 5x

func benchTrain(b *testing.B, name string, eps float64) {
	ds := loadDataset(b, name)
	p, err := Plan(ds.config(eps, len(ds.x)))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, _, err := p.train(ds.x, ds.y, trainOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTrainIrisEps1(b *testing.B)   { benchTrain(b, "iris", 1) }
func BenchmarkTrainWineEps1(b *testing.B)   { benchTrain(b, "wine", 1) }
func BenchmarkTrainDigitsEps1(b *testing.B) { benchTrain(b, "digits", 1) }

// BenchmarkEvalDigits is one objective-and-gradient evaluation on digits
// (n = 1797, D = 65, C = 10), the solver's unit of work.
func BenchmarkEvalDigits(b *testing.B) {
	ds := loadDataset(b, "digits")
	p, err := Plan(ds.config(1, len(ds.x)))
	if err != nil {
		b.Fatal(err)
	}
	D := p.dim
	xs := make([]float64, len(ds.x)*D)
	for i, row := range ds.x {
		p.scaler.Transform(xs[i*D:(i+1)*D], row)
	}
	prob := newProblem(p.classes, D, xs, ds.y, p.cfg.H, p.cfg.Lambda, p.cal.StrongConvexity, nil)
	phi := randomPhi(rand.New(rand.NewPCG(1, 1)), p.classes, D, 0.1, true)
	g := make([]float64, prob.size())
	b.ResetTimer()
	for range b.N {
		prob.eval(phi, g)
	}
}

// BenchmarkProjectPSDDigits projects the 10 blocks of 65×65 (one solver
// step's projection on digits).
func BenchmarkProjectPSDDigits(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	src := randomPhi(r, 10, 65, 1, false)
	phi := make([]float64, len(src))
	b.ResetTimer()
	for range b.N {
		copy(phi, src)
		projectPSD(phi, 10, 65)
	}
}

// benchSynthetic times one default Train call (both noises, the a-priori
// count) on n synthetic rows: the grid's unit of work (docs/results/speed.md).
func benchSynthetic(b *testing.B, n, d, classes int, eps float64) {
	ds := synthetic(n, d, classes, 7)
	p, err := Plan(ds.config(eps, n))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(p.cal.Iterations), "iters")
	b.ResetTimer()
	for range b.N {
		if _, _, err := p.train(ds.x, ds.y, trainOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTrainSynN1e4D10K5Eps1(b *testing.B)  { benchSynthetic(b, 10000, 10, 5, 1) }
func BenchmarkTrainSynN1e4D50K5Eps1(b *testing.B)  { benchSynthetic(b, 10000, 50, 5, 1) }
func BenchmarkTrainSynN1e4D10K20Eps1(b *testing.B) { benchSynthetic(b, 10000, 10, 20, 1) }
func BenchmarkTrainSynN1e4D50K20Eps1(b *testing.B) { benchSynthetic(b, 10000, 50, 20, 1) }
