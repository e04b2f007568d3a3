package linreg

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkTrainAuto times the default plan's Train (bounds=auto: private
// radii, §12's first stage and, from §15 on, the gradient steps) at
// ε = 1, δ = 10⁻⁶ on synthetic rows. Compare revisions side by side
// (docs/results/linreg.md "h/reg52").
func BenchmarkTrainAuto(b *testing.B) {
	for _, c := range []struct{ n, d int }{{10000, 50}, {100000, 50}, {100000, 10}} {
		b.Run(fmt.Sprintf("n%d_d%d", c.n, c.d), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(81, uint64(c.n+c.d)))
			ds := synthLinear(rng, synthBeta(rng, c.d), c.n, 0.1)
			cfg := synthConfig(c.d, c.n, 1, 1e-6)
			cfg.Bounds = BoundsAuto
			tr, err := Plan(cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := tr.Train(ds.x, ds.y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
