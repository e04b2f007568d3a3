package logreg

import (
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/dpsql/dpsql/internal/bigmem"
)

// chunkGradGemm is the block gradient before the fused row loop (two
// matrix products per block), kept as the reference of TestFusedMatchesGemm.
func (p *problem) chunkGradGemm(c int, theta, out []float64) {
	lo := c * chunkRows
	rows := min(chunkRows, p.n-lo)
	f, kp := p.f, p.kp
	buf := make([]float64, rows*kp)
	xc := blas64.General{Rows: rows, Cols: f, Stride: f, Data: p.x[lo*f : (lo+rows)*f]}
	th := blas64.General{Rows: kp, Cols: f, Stride: f, Data: theta}
	s := blas64.General{Rows: rows, Cols: kp, Stride: kp, Data: buf}
	blas64.Gemm(blas.NoTrans, blas.Trans, 1, xc, th, 0, s)
	for r := 0; r < rows; r++ {
		res := s.Data[r*kp : (r+1)*kp]
		residual(res, p.y[lo+r], p.binary)
		clipRow(res, p.xnorm[lo+r], p.clip)
	}
	o := blas64.General{Rows: kp, Cols: f, Stride: f, Data: out}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, s, xc, 0, o)
}

// TestFusedMatchesGemm: the fused row loop computes the same block sums as
// the two matrix products it replaced, to rounding (1e-12 of the sum of
// the row terms' norms), binary and multinomial, clipped and unclipped, at
// θ = 0, moderate and saturating θ; and the sum over blocks is the same
// whatever the number of workers (bit for bit).
func TestFusedMatchesGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 55))
	for _, k := range []int{2, 3, 7} {
		for _, clip := range []float64{0.1, math.Inf(1)} {
			n, d := 2*chunkRows+517, 9
			ds := synthMixture(rng, 3, n, k, d, 1)
			tr, err := Plan(ds.config(n, 1, 1e-5))
			if err != nil {
				t.Fatal(err)
			}
			p := newProblem(ds.x, ds.y, tr.prep, tr.kp, tr.binary, 1, clip)
			dim := p.kp * p.f
			for _, scale := range []float64{0, 1, 300} {
				theta := make([]float64, dim)
				for j := range theta {
					theta[j] = scale * rng.NormFloat64()
				}
				nChunks := (n + chunkRows - 1) / chunkRows
				buf := p.newChunkBuf()
				for c := 0; c < nChunks; c++ {
					got, want := make([]float64, dim), make([]float64, dim)
					for j := range got {
						got[j] = 99 // chunkGrad must overwrite its slot
					}
					p.chunkGrad(c, theta, got, &buf)
					p.chunkGradGemm(c, theta, want)
					rows := float64(min(chunkRows, n-c*chunkRows))
					for j := range got {
						if math.Abs(got[j]-want[j]) > 1e-12*rows*math.Sqrt2 {
							t.Fatalf("K=%d clip=%v scale=%v block %d entry %d: fused %v, gemm %v", k, clip, scale, c, j, got[j], want[j])
						}
					}
				}
				slots := func() [][]float64 {
					s := make([][]float64, nChunks)
					for c := range s {
						s[c] = make([]float64, dim)
					}
					return s
				}
				g1, g4 := make([]float64, dim), make([]float64, dim)
				p.workers = 1
				p.gradSum(theta, g1, slots())
				p.workers = 4
				p.gradSum(theta, g4, slots())
				for j := range g1 {
					if g1[j] != g4[j] {
						t.Fatalf("K=%d: gradient entry %d differs with 1 and 4 workers: %v vs %v", k, j, g1[j], g4[j])
					}
				}
			}
		}
	}
}

// chunkGradRows is chunkGrad with the binary rows one at a time (the
// kernel before rows went in pairs), the reference of
// TestPairsMatchRows and BenchmarkGradSum.
func (p *problem) chunkGradRows(c int, theta, out []float64, buf *chunkBuf) {
	if p.kp > 1 {
		p.chunkGrad(c, theta, out, buf)
		return
	}
	lo := c * chunkRows
	rows := min(chunkRows, p.n-lo)
	f := p.f
	for j := range out {
		out[j] = 0
	}
	for r := 0; r < rows; r++ {
		i := lo + r
		x := p.x[i*f : (i+1)*f : (i+1)*f]
		s := [1]float64{dot(theta[:f], x)}
		residual(s[:], p.y[i], true)
		res := s[0]
		if g := math.Abs(res) * p.xnorm[i]; g > p.clip {
			res *= p.clip / g
		}
		axpy(res, x, out)
	}
}

// TestPairsMatchRows: the binary kernel with rows in pairs gives the
// block sums of the one-row-at-a-time kernel to rounding (10⁻¹³ of the
// block's Σ‖term‖), clipped and not, at θ = 0, moderate and saturating,
// for block sizes of both parities.
func TestPairsMatchRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 56))
	for _, clip := range []float64{0.05, 0.25, math.Inf(1)} {
		n, d := 2*chunkRows+517, 20
		ds := synthMixture(rng, 3, n, 2, d, 1)
		tr, err := Plan(ds.config(n, 1, 1e-5))
		if err != nil {
			t.Fatal(err)
		}
		p := newProblem(ds.x, ds.y, tr.prep, tr.kp, tr.binary, 1, clip)
		buf := p.newChunkBuf()
		for _, scale := range []float64{0, 1, 300} {
			theta := make([]float64, p.f)
			for j := range theta {
				theta[j] = scale * rng.NormFloat64()
			}
			for c := 0; c < 3; c++ {
				got, want := make([]float64, p.f), make([]float64, p.f)
				p.chunkGrad(c, theta, got, &buf)
				p.chunkGradRows(c, theta, want, &buf)
				rows := float64(min(chunkRows, n-c*chunkRows))
				for j := range got {
					if math.Abs(got[j]-want[j]) > 1e-13*rows*min(1, clip) {
						t.Fatalf("clip=%v scale=%v block %d entry %d: pairs %v, rows %v", clip, scale, c, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// gradSumWith is gradSum with another block kernel (same workers, same
// slot order): the reference of BenchmarkGradSum.
func (p *problem) gradSumWith(kernel func(c int, theta, out []float64, buf *chunkBuf), theta, g []float64, slots [][]float64) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(p.workers, len(slots)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := p.newChunkBuf()
			for {
				c := int(next.Add(1)) - 1
				if c >= len(slots) {
					return
				}
				kernel(c, theta, slots[c], &buf)
			}
		}()
	}
	wg.Wait()
	for j := range g {
		g[j] = 0
	}
	for _, s := range slots {
		for j, v := range s {
			g[j] += v
		}
	}
}

// BenchmarkGradSum* time one gradient pass (the cost of one of the T
// steps) with the Go kernel (fused-ms), the AVX2 kernel (asm-ms, binary
// only: K = 2), binary rows one at a time (chunkGradRows, rows-ms) and the
// old block products (chunkGradGemm, gemm-ms), alternating within each
// iteration so that load from other jobs hits all alike; medians. The
// process CPU time of the fused and asm passes (fused-cpu-ms, asm-cpu-ms:
// both workers, nothing else running) resolves what wall time under load
// from other processes does not.
func BenchmarkGradSumN1e6D20K2(b *testing.B)  { benchGradSum(b, 1000000, 2, 20) }
func BenchmarkGradSumN1e5D10K20(b *testing.B) { benchGradSum(b, 100000, 20, 10) }

func benchGradSum(b *testing.B, n, k, d int) {
	rng, _, p := benchProblem(b, n, k, d, 1e-5)
	dim := p.kp * p.f
	theta := make([]float64, dim)
	for j := range theta {
		theta[j] = rng.NormFloat64()
	}
	nChunks := (n + chunkRows - 1) / chunkRows
	slots := make([][]float64, nChunks)
	for c := range slots {
		slots[c] = make([]float64, dim)
	}
	g := make([]float64, dim)
	gemmKernel := func(c int, theta, out []float64, _ *chunkBuf) { p.chunkGradGemm(c, theta, out) }
	simd := p.simd && p.kp == 1
	var fused, asm, rows, gemm, fusedCPU, asmCPU []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c0, _ := bigmem.Usage()
		t0 := time.Now()
		p.simd = false
		p.gradSum(theta, g, slots)
		t1 := time.Now()
		c1, _ := bigmem.Usage()
		if simd {
			p.simd = true
			p.gradSum(theta, g, slots)
		}
		t2 := time.Now()
		c2, _ := bigmem.Usage()
		p.gradSumWith(p.chunkGradRows, theta, g, slots)
		t3 := time.Now()
		p.gradSumWith(gemmKernel, theta, g, slots)
		fused = append(fused, t1.Sub(t0).Seconds()*1e3)
		asm = append(asm, t2.Sub(t1).Seconds()*1e3)
		rows = append(rows, t3.Sub(t2).Seconds()*1e3)
		gemm = append(gemm, time.Since(t3).Seconds()*1e3)
		fusedCPU = append(fusedCPU, (c1-c0).Seconds()*1e3)
		asmCPU = append(asmCPU, (c2-c1).Seconds()*1e3)
	}
	b.ReportMetric(median(fused), "fused-ms")
	b.ReportMetric(median(fusedCPU), "fused-cpu-ms")
	if simd {
		b.ReportMetric(median(asm), "asm-ms")
		b.ReportMetric(median(asmCPU), "asm-cpu-ms")
	}
	b.ReportMetric(median(rows), "rows-ms")
	b.ReportMetric(median(gemm), "gemm-ms")
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// TestExpFixed compares expFixed with math.Exp: relative error below
// 10⁻¹³ where eˣ is a normal float, below 2⁻¹⁰⁶⁰ absolute where it is
// subnormal, the same 0 beyond and +Inf (or the largest floats) at the top; exactly 1 at 0, never above 1 for
// x ≤ 0 (the softmax's terms), NaN for NaN.
func TestExpFixed(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	xs := []float64{0, -0.0, 1e-300, -1e-300, 0.5 * math.Ln2, -0.5 * math.Ln2, 700, -700, 709, 709.78, 709.79, -708.4, -745, -745.2, -746, 1e308, -1e308, math.Inf(1), math.Inf(-1)}
	for i := 0; i < 200000; i++ {
		xs = append(xs, (rng.Float64()*2-1)*760, (rng.Float64()*2-1)*3, -rng.Float64()*1e-10)
	}
	for _, x := range xs {
		got, want := expFixed(x), math.Exp(x)
		ok := math.Abs(got-want) <= 1e-13*want
		if want < 0x1p-1022 {
			ok = math.Abs(got-want) <= 0x1p-1060
		}
		if math.IsInf(want, 1) { // amd64's math.Exp overflows a little early (e^709.78 < MaxFloat64)
			ok = got > 8e307 // e^709 ≈ 8.2·10³⁰⁷
		}
		if !ok {
			t.Fatalf("expFixed(%v) = %v, want %v", x, got, want)
		}
		if x <= 0 && got > 1 {
			t.Fatalf("expFixed(%v) = %v > 1", x, got)
		}
	}
	if expFixed(0) != 1 {
		t.Fatalf("expFixed(0) = %v", expFixed(0))
	}
	if v := expFixed(math.NaN()); v == v {
		t.Fatalf("expFixed(NaN) = %v", v)
	}
}

// BenchmarkExp compares expFixed with math.Exp on the binary residual's
// arguments (scores in [−8, 8]), alternating inside every iteration.
func BenchmarkExp(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	xs := make([]float64, 1<<16)
	for i := range xs {
		xs[i] = (rng.Float64()*2 - 1) * 8
	}
	var fixed, horner, std []float64
	var sink float64
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		for _, x := range xs {
			sink += expFixed(x)
		}
		t1 := time.Now()
		for _, x := range xs {
			sink += expHorner(x)
		}
		t2 := time.Now()
		for _, x := range xs {
			sink += math.Exp(x)
		}
		fixed = append(fixed, float64(t1.Sub(t0).Nanoseconds())/float64(len(xs)))
		horner = append(horner, float64(t2.Sub(t1).Nanoseconds())/float64(len(xs)))
		std = append(std, float64(time.Since(t2).Nanoseconds())/float64(len(xs)))
	}
	b.ReportMetric(median(fixed), "fixed-ns")
	b.ReportMetric(median(horner), "horner-ns")
	b.ReportMetric(median(std), "mathexp-ns")
	if sink == 0 {
		b.Log(sink)
	}
}

// expHorner is expFixed with the polynomial in Horner form (the version
// before Estrin's), the reference of BenchmarkExp and TestExpFixed.
func expHorner(x float64) float64 {
	r, k := expReduce(x)
	p := 1.0 / 479001600
	p = p*r + 1.0/39916800
	p = p*r + 1.0/3628800
	p = p*r + 1.0/362880
	p = p*r + 1.0/40320
	p = p*r + 1.0/5040
	p = p*r + 1.0/720
	p = p*r + 1.0/120
	p = p*r + 1.0/24
	p = p*r + 1.0/6
	p = p*r + 0.5
	p = p*r + 1
	p = p*r + 1
	return expScale(p, k)
}
