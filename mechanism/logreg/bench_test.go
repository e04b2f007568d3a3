package logreg

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkTrain measures one Train call (T = DefaultSteps) on synthetic
// mixtures; ns/op divided by T·n·K′·F gives the cost per multiply-add.
func BenchmarkTrainK20n20000(b *testing.B) { benchTrain(b, 20000, 20, 10) }
func BenchmarkTrainK2n100000(b *testing.B) { benchTrain(b, 100000, 2, 30) }

func benchTrain(b *testing.B, n, k, d int) {
	rng := rand.New(rand.NewPCG(1, 2))
	ds := synthMixture(rng, 3, n, k, d, 1)
	p, err := Plan(ds.config(n, 1, 1e-5))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Train(ds.x, ds.y); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDefault* time one default call (ε = 1, δ = 10⁻⁵) on grid-sized
// mixtures (docs/results/speed.md).
func BenchmarkDefaultN1e4D10K5(b *testing.B)  { benchTrain(b, 10000, 5, 10) }
func BenchmarkDefaultN1e5D10K20(b *testing.B) { benchTrain(b, 100000, 20, 10) }
