package noise

import "testing"

// Benchmarks report ns/op; samples/s = 1e9 / (ns/op) × samples per op.

func BenchmarkUint64(b *testing.B) {
	for b.Loop() {
		Uint64()
	}
}

func BenchmarkAddLaplace(b *testing.B) {
	for b.Loop() {
		if _, err := AddLaplace(1, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAddLaplaceVec1000(b *testing.B) {
	x := make([]float64, 1000)
	for b.Loop() {
		if err := AddLaplaceVec(x, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/sample")
}

func BenchmarkDiscreteGaussianSigma10(b *testing.B) {
	dg := newDiscreteGaussian(10)
	for b.Loop() {
		dg.sample()
	}
}

func BenchmarkAddGaussianSigma10(b *testing.B) {
	for b.Loop() {
		if _, err := AddGaussian(1, 10); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAddGaussianVec1000(b *testing.B) {
	x := make([]float64, 1000)
	for b.Loop() {
		if err := AddGaussianVec(x, 10); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/sample")
}

func BenchmarkGamma(b *testing.B) {
	for b.Loop() {
		if _, err := Gamma(4225, 2); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGammaDirection65x65(b *testing.B) {
	for b.Loop() {
		if _, err := GammaDirection(65*65, 1); err != nil {
			b.Fatal(err)
		}
	}
}
