package logreg

import (
	"math/rand/v2"
	"testing"
	"time"
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

// BenchmarkRulesN1e6D20K2 times one default Train (ε = 1, δ = 10⁻⁶) at
// n = 10⁶, d = 20, K = 2 with the plain rule (T₀ = 476 averaged GD steps)
// and with the default (⌈2√T₀⌉ = 44 Nesterov steps), alternating inside
// every iteration so that load from other jobs hits both alike
// (docs/results/speed.md, issue 28 item 5).
func BenchmarkRulesN1e6D20K2(b *testing.B) {
	const n, k, d = 1000000, 2, 20
	rng := rand.New(rand.NewPCG(1, 2))
	ds := synthMixture(rng, 3, n, k, d, 1)
	plans := map[string]*Trainer{}
	for _, rule := range []string{StepPlain, ""} {
		cfg := ds.config(n, 1, 1e-6)
		cfg.StepRule = rule
		tr, err := Plan(cfg)
		if err != nil {
			b.Fatal(err)
		}
		plans[rule] = tr
	}
	var plain, nest []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, rule := range []string{StepPlain, ""} {
			t0 := time.Now()
			if _, err := plans[rule].Train(ds.x, ds.y); err != nil {
				b.Fatal(err)
			}
			ms := time.Since(t0).Seconds() * 1e3
			if rule == "" {
				nest = append(nest, ms)
			} else {
				plain = append(plain, ms)
			}
		}
	}
	b.ReportMetric(median(plain), "plain-ms")
	b.ReportMetric(median(nest), "default-ms")
	b.ReportMetric(float64(plans[""].p.steps), "default-steps")
	b.ReportMetric(float64(plans[StepPlain].p.steps), "plain-steps")
}
