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
// n = 10⁶, d = 20, K = 2 with the Nesterov default before h/bohning
// (⌈2√T₀⌉ = 44 steps of step 200, T₀ = 476) and with the default
// (12 preconditioned steps after one XᵀX release), alternating inside every
// iteration so that load from other jobs hits both alike
// (docs/results/speed.md, issue 28 item 5).
func BenchmarkRulesN1e6D20K2(b *testing.B) {
	const n, k, d = 1000000, 2, 20
	rng := rand.New(rand.NewPCG(1, 2))
	ds := synthMixture(rng, 3, n, k, d, 1)
	old := ds.config(n, 1, 1e-6)
	old.StepRule, old.Steps, old.Horizon = StepNesterov, 44, MaxStepSize*44
	plans := map[string]*Trainer{}
	for name, cfg := range map[string]Config{"old": old, "new": ds.config(n, 1, 1e-6)} {
		tr, err := Plan(cfg)
		if err != nil {
			b.Fatal(err)
		}
		plans[name] = tr
	}
	times := map[string][]float64{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, name := range []string{"old", "new"} {
			t0 := time.Now()
			if _, err := plans[name].Train(ds.x, ds.y); err != nil {
				b.Fatal(err)
			}
			times[name] = append(times[name], time.Since(t0).Seconds()*1e3)
		}
	}
	b.ReportMetric(median(times["old"]), "nesterov44-ms")
	b.ReportMetric(median(times["new"]), "default-ms")
	b.ReportMetric(float64(plans["new"].p.steps), "default-steps")
	b.ReportMetric(median(times["old"])/median(times["new"]), "ratio")
}

// BenchmarkGramN1e6D20 times the XᵀX pass of the preconditioned rule
// beside one gradient pass on the same rows (n = 10⁶, d = 20, K = 2),
// each with the AVX2 kernels (gram-ms, pass-ms; where the CPU has them)
// and the Go kernels (gram-go-ms, pass-go-ms), alternating inside every
// iteration.
func BenchmarkGramN1e6D20(b *testing.B) {
	const n = 1000000
	_, tr, prob := benchProblem(b, n, 2, 20, 1e-6)
	theta, g := make([]float64, tr.f), make([]float64, tr.f)
	slots := make([][]float64, (n+chunkRows-1)/chunkRows)
	for c := range slots {
		slots[c] = make([]float64, tr.f)
	}
	simd := prob.simd
	var gram, pass, gramGo, passGo []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, s := range []bool{true, false} {
			if s && !simd {
				continue
			}
			prob.simd = s
			t0 := time.Now()
			prob.gram()
			t1 := time.Now()
			prob.gradSum(theta, g, slots)
			t2 := time.Now()
			if s {
				gram, pass = append(gram, t1.Sub(t0).Seconds()*1e3), append(pass, t2.Sub(t1).Seconds()*1e3)
			} else {
				gramGo, passGo = append(gramGo, t1.Sub(t0).Seconds()*1e3), append(passGo, t2.Sub(t1).Seconds()*1e3)
			}
		}
	}
	if simd {
		b.ReportMetric(median(gram), "gram-ms")
		b.ReportMetric(median(pass), "pass-ms")
	}
	b.ReportMetric(median(gramGo), "gram-go-ms")
	b.ReportMetric(median(passGo), "pass-go-ms")
}

// benchProblem plans a default call (ε = 1) on a synthetic mixture and
// scales its rows: the set-up of the pass benchmarks.
func benchProblem(b *testing.B, n, k, d int, delta float64) (*rand.Rand, *Trainer, *problem) {
	rng := rand.New(rand.NewPCG(1, 2))
	ds := synthMixture(rng, 3, n, k, d, 1)
	tr, err := Plan(ds.config(n, 1, delta))
	if err != nil {
		b.Fatal(err)
	}
	return rng, tr, newProblem(ds.x, ds.y, tr.prep, tr.kp, tr.binary, tr.workers, tr.p.clip)
}
