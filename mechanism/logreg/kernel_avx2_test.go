package logreg

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/dpsql/dpsql/internal/bigmem"
)

// needAVX2 skips where the AVX2 kernel cannot run (not amd64, or a CPU
// without AVX2/FMA): there the Go kernel is the only one, and every other
// test runs it. The project's machines and CI have AVX2.
func needAVX2(t *testing.T) {
	t.Helper()
	if !haveAVX2 {
		t.Skip("no AVX2+FMA on this CPU: only the Go kernel exists here")
	}
}

// kernelProblem builds a binary problem directly from scaled rows (as
// newProblem would store them: x row-major, ‖xᵢ‖ and rclip = C/‖xᵢ‖).
func kernelProblem(x []float64, y []int, f int, clip float64) *problem {
	n := len(y)
	p := &problem{x: x, xnorm: make([]float64, n), rclip: make([]float64, n), clip: clip, y: y, n: n, f: f, kp: 1, binary: true, workers: 1}
	for i := 0; i < n; i++ {
		var s float64
		for _, v := range x[i*f : (i+1)*f] {
			s += v * v
		}
		p.xnorm[i] = math.Sqrt(s)
		p.rclip[i] = clip / p.xnorm[i]
	}
	return p
}

// kernelRows returns n rows of F values of the kinds the scaler makes
// (|xⱼ| ≤ 1/√F, the last column the intercept 1/√F) mixed with
// adversarial ones: ±1/√F corners, rows of zeros (but the intercept),
// all-zero rows, and repeats of one row.
func kernelRows(rng *rand.Rand, n, f int) []float64 {
	x := make([]float64, n*f)
	u := 1 / math.Sqrt(float64(f))
	for i := 0; i < n; i++ {
		row := x[i*f : (i+1)*f]
		kind := rng.IntN(6)
		for j := range row {
			switch kind {
			case 0, 1:
				row[j] = (2*rng.Float64() - 1) * u
			case 2:
				row[j] = u
				if rng.IntN(2) == 0 {
					row[j] = -u
				}
			case 3, 4:
				row[j] = 0
			case 5:
				row[j] = float64(j%3-1) * u
			}
		}
		if kind != 4 {
			row[f-1] = u
		}
	}
	return x
}

// kernelThetas are the θ of the comparisons: 0, moderate, scores past
// exp's clamp (saturated σ), the projection radius, and the non-finite θ
// the kernel must still treat like the Go one (NaN scores ↦ σ = ½).
func kernelThetas(rng *rand.Rand, f int) [][]float64 {
	var out [][]float64
	for _, scale := range []float64{0, 1, 30, 3000, 1e100} {
		th := make([]float64, f)
		for j := range th {
			th[j] = scale * rng.NormFloat64()
		}
		out = append(out, th)
	}
	nan, inf := make([]float64, f), make([]float64, f)
	for j := range nan {
		nan[j] = rng.NormFloat64()
		inf[j] = rng.NormFloat64()
	}
	nan[rng.IntN(f)] = math.NaN()
	inf[f-1] = math.Inf(1)
	return append(out, nan, inf)
}

// TestAVX2MatchesGo: the AVX2 binary kernel gives the Go kernel's block
// sums to rounding — per entry within 10⁻¹³·Σᵢ|r̂ᵢxᵢⱼ| + 10⁻¹⁵·Σᵢ|xᵢⱼ|
// (the summation orders differ; σ may differ by an ulp) — for F ∈ {1, 2,
// 3, 4, 5, 7, 8, 20, 21, 33} (every F mod 4), blocks of every length mod
// 4 (a full block of chunkRows, one less, two less, three less, and a
// short last block), clipped and not, over kernelRows and kernelThetas.
func TestAVX2MatchesGo(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(28, 5))
	for _, f := range []int{1, 2, 3, 4, 5, 7, 8, 20, 21, 33} {
		for _, n := range []int{chunkRows, chunkRows - 1, chunkRows - 2, chunkRows - 3, 2*chunkRows + 7} {
			for _, clip := range []float64{0.05, 0.25, math.Inf(1)} {
				if n > chunkRows && clip != 0.25 {
					continue // the short last block once is enough
				}
				y := make([]int, n)
				for i := range y {
					y[i] = rng.IntN(2)
				}
				p := kernelProblem(kernelRows(rng, n, f), y, f, clip)
				buf := p.newChunkBuf()
				nChunks := (n + chunkRows - 1) / chunkRows
				for ti, theta := range kernelThetas(rng, f) {
					for c := 0; c < nChunks; c++ {
						got, want := make([]float64, f), make([]float64, f)
						for j := range got {
							got[j], want[j] = 99, 99 // both must overwrite the slot
						}
						p.simd = true
						p.chunkGrad(c, theta, got, &buf)
						p.simd = false
						p.chunkGrad(c, theta, want, &buf)
						lo, rows := c*chunkRows, min(chunkRows, n-c*chunkRows)
						for j := range got {
							var abs, term float64
							for i := lo; i < lo+rows; i++ {
								x := p.x[i*f+j]
								abs += math.Abs(x)
								s := [1]float64{dot(theta, p.x[i*f:(i+1)*f])}
								term += math.Abs(p.binaryTerm(s[0], i) * x)
							}
							if d := math.Abs(got[j] - want[j]); !(d <= 1e-13*term+1e-15*abs) {
								t.Fatalf("F=%d n=%d clip=%v θ#%d block %d entry %d: avx2 %v, go %v (|Δ| %g, Σ|term| %g)", f, n, clip, ti, c, j, got[j], want[j], d, term)
							}
						}
					}
				}
			}
		}
	}
}

// TestAVX2Residual isolates the vectorised residual: rows xᵣ = eᵣ (F = 4,
// one group) make out[r] = r̂ᵣ exactly (the other products are 0), so the
// clipped residual σ(s) − y of each lane is compared with the Go
// binaryTerm at scores across exp's whole range — both clamps, the
// underflow and overflow of eˣ, ±Inf, NaN (σ = ½), ±0, tiny — within
// 2⁻⁵² + 10⁻¹⁴|r̂| (the two may round σ one ulp apart).
func TestAVX2Residual(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(28, 6))
	scores := []float64{0, math.Copysign(0, -1), 1e-300, -1e-300, 0.5, -0.5, 36.7, -36.7, 37.5, -37.5, 700, -700, 709.79, -709.79, 745.2, -745.2, 799.9, -799.9, 800, -800, 801, -801, 1e4, -1e4, 1e100, -1e100, math.Inf(1), math.Inf(-1), math.NaN()}
	for i := 0; i < 20000; i++ {
		scores = append(scores, (2*rng.Float64()-1)*900, (2*rng.Float64()-1)*40, (2*rng.Float64()-1)*1e-8)
	}
	x := []float64{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}
	for _, clip := range []float64{math.Inf(1), 1, 0.3} {
		for k := 0; k+4 <= len(scores); k++ {
			theta := scores[k : k+4]
			y := []int{rng.IntN(2), rng.IntN(2), rng.IntN(2), rng.IntN(2)}
			p := kernelProblem(x, y, 4, clip)
			out := make([]float64, 4)
			binaryGroupsAVX2(&p.x[0], &theta[0], &out[0], &p.y[0], &p.rclip[0], 1, 4, nil)
			for r := range out {
				// The score is θ·xᵣ = θᵣ, or NaN where another θⱼ is
				// non-finite (0·∞): the Go dot gives the same.
				want := p.binaryTerm(dot(theta, x[4*r:4*r+4]), r)
				if d := math.Abs(out[r] - want); !(d <= 0x1p-52+1e-14*math.Abs(want)) {
					t.Fatalf("clip=%v s=%v y=%d: avx2 residual %v, go %v", clip, theta[r], y[r], out[r], want)
				}
			}
		}
	}
}

// TestAVX2GradSum: a whole gradient pass (workers, blocks, slot order)
// with the AVX2 kernel agrees with the Go kernel on a scaled synthetic
// problem, and is bit-for-bit the same with 1 and 3 workers.
func TestAVX2GradSum(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(28, 7))
	n, d := 3*chunkRows+123, 20
	ds := synthMixture(rng, 3, n, 2, d, 1)
	tr, err := Plan(ds.config(n, 1, 1e-5))
	if err != nil {
		t.Fatal(err)
	}
	p := newProblem(ds.x, ds.y, tr.prep, tr.kp, tr.binary, 1, tr.p.clip)
	if !p.simd {
		t.Fatal("newProblem did not select the AVX2 kernel on an AVX2 CPU")
	}
	theta := make([]float64, p.f)
	for j := range theta {
		theta[j] = rng.NormFloat64()
	}
	run := func(simd bool, workers int) []float64 {
		p.simd, p.workers = simd, workers
		slots := make([][]float64, (n+chunkRows-1)/chunkRows)
		for c := range slots {
			slots[c] = make([]float64, p.f)
		}
		g := make([]float64, p.f)
		p.gradSum(theta, g, slots)
		return g
	}
	a1, a3, g1 := run(true, 1), run(true, 3), run(false, 1)
	for j := range a1 {
		if a1[j] != a3[j] {
			t.Fatalf("entry %d: %v with 1 worker, %v with 3", j, a1[j], a3[j])
		}
		if math.Abs(a1[j]-g1[j]) > 1e-12*float64(n)*tr.p.clip {
			t.Fatalf("entry %d: avx2 %v, go %v", j, a1[j], g1[j])
		}
	}
}

// TestGoKernelFallback runs the sensitivity and kernel tests again with
// the Go binary kernel selected (kernelAVX2 = false), so that both the
// fallback and the AVX2 path are tested on a machine that has AVX2.
func TestGoKernelFallback(t *testing.T) {
	saved := kernelAVX2
	kernelAVX2 = false
	defer func() { kernelAVX2 = saved }()
	t.Run("GradientSensitivity", TestGradientSensitivity)
	t.Run("FusedMatchesGemm", TestFusedMatchesGemm)
	t.Run("PairsMatchRows", TestPairsMatchRows)
	t.Run("GramSensitivity", TestGramSensitivity)
	p := newProblem([][]float64{{0}}, []int{0}, mustPlan(t, testConfig(1, 2, 1, 1, 1e-6)).prep, 1, true, 1, 1)
	if p.simd {
		t.Fatal("kernelAVX2 = false, yet newProblem selected the AVX2 kernel")
	}
}

// TestAVX2RestoresMXCSR: both kernels run with flush-to-zero and
// denormals-are-zero (so subnormal values take no slow path) and must give
// MXCSR back unchanged — a kernel that leaked its mode would change the
// rounding of every later float operation on the thread. Subnormal
// inputs and a score whose eˣ and σ underflow are among the rows.
func TestAVX2RestoresMXCSR(t *testing.T) {
	needAVX2(t)
	if m := getMXCSR(); m&0x8040 != 0 {
		t.Fatalf("MXCSR %#x already has FTZ/DAZ: the test cannot tell", m)
	}
	for _, f := range []int{4, 5} {
		x := make([]float64, 8*f)
		for i := range x {
			x[i] = 0x1p-1070 * float64(i%3)
		}
		x[0] = 1
		th, out, sq := make([]float64, 8), make([]float64, 8), make([]float64, f*8)
		th[0] = -750 // row 0: s = −750, e^750 overflows, σ = 0; θ₀·x tiny: subnormal products
		y := []int{0, 1, 0, 1}
		rclip := []float64{1, 1, 1, 1}
		// Read just before each call: the set-up above may have raised a
		// sticky flag (a subnormal operand), which the kernel must keep.
		before := getMXCSR()
		binaryGroupsAVX2(&x[0], &th[0], &out[0], &y[0], &rclip[0], 1, f, tailMask(f))
		if got := getMXCSR(); got != before {
			t.Fatalf("F=%d: MXCSR %#x after binaryGroupsAVX2, %#x before", f, got, before)
		}
		before = getMXCSR()
		gramGroupsAVX2(&x[0], &sq[0], 1, f, tailMask(f))
		if got := getMXCSR(); got != before {
			t.Fatalf("F=%d: MXCSR %#x after gramGroupsAVX2, %#x before", f, got, before)
		}
	}
}

// TestAVX2Constants checks the constant table of kernel_amd64.s against
// the Go constants of expFixed, expReduce and residual, bit for bit.
func TestAVX2Constants(t *testing.T) {
	want := []uint64{
		math.Float64bits(800), math.Float64bits(-800), math.Float64bits(1.4426950408889634), math.Float64bits(0x1.8p52),
		math.Float64bits(6.93147180369123816490e-01), math.Float64bits(1.90821492927058770002e-10),
		math.Float64bits(1), math.Float64bits(0.5), math.Float64bits(1.0 / 6), math.Float64bits(1.0 / 24),
		math.Float64bits(1.0 / 120), math.Float64bits(1.0 / 720), math.Float64bits(1.0 / 5040), math.Float64bits(1.0 / 40320),
		math.Float64bits(1.0 / 362880), math.Float64bits(1.0 / 3628800), math.Float64bits(1.0 / 39916800), math.Float64bits(1.0 / 479001600),
		2048, 2047, math.MaxUint64, math.Float64bits(0x1p52), 1 << 63,
	}
	fh, err := os.Open("kernel_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	re := regexp.MustCompile(`^C4\((\d+), 0x([0-9a-f]{16})\)`)
	var got []uint64
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		off, _ := strconv.Atoi(m[1])
		if off != 32*len(got) {
			t.Fatalf("constant at offset %d, want %d", off, 32*len(got))
		}
		v, err := strconv.ParseUint(m[2], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if len(got) != len(want) {
		t.Fatalf("%d constants, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("constant %d (offset %d): %#016x, want %#016x", i, 32*i, got[i], want[i])
		}
	}
}

// TestAVX2Gram: XᵀX through gramGroupsAVX2 (groups of eight rows) agrees
// with the Go kernel (gramRows8) per packed entry within
// 10⁻¹³·Σᵢ|xᵢⱼxᵢₖ| (+ 10⁻³⁰⁰), for every F mod 4 and block lengths of every
// residue mod 8, over kernelRows.
func TestAVX2Gram(t *testing.T) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(28, 8))
	for _, f := range []int{1, 2, 3, 4, 5, 7, 8, 20, 21, 33} {
		for _, n := range []int{chunkRows, chunkRows + 1, 2*chunkRows - 3, 2*chunkRows + 7, 13, 5} {
			y := make([]int, n)
			p := kernelProblem(kernelRows(rng, n, f), y, f, 1)
			p.workers = 2
			p.simd = true
			got := p.gram()
			p.simd = false
			want := p.gram()
			idx := 0
			for i := 0; i < f; i++ {
				for j := i; j < f; j++ {
					var abs float64
					for r := 0; r < n; r++ {
						abs += math.Abs(p.x[r*f+i] * p.x[r*f+j])
					}
					if i != j {
						abs *= math.Sqrt2
					}
					if d := math.Abs(got[idx] - want[idx]); !(d <= 1e-13*abs+1e-300) {
						t.Fatalf("F=%d n=%d entry (%d,%d): avx2 %v, go %v", f, n, i, j, got[idx], want[idx])
					}
					idx++
				}
			}
		}
	}
}

// BenchmarkSaturatedScores times a gradient block of 16384 rows (F = 4,
// xᵣ = eᵣ, so every score is θᵣ) at s = 1 and at s = 750 (eˣ and σ
// underflow to subnormals or 0), AVX2 and Go kernels alternating; CPU ns
// per row (process CPU time). The AVX2 kernel runs with flush-to-zero, so
// its two figures should agree; the Go kernel's do not (a subnormal result
// takes a slow path) — its time depends on how many scores saturate.
func BenchmarkSaturatedScores(b *testing.B) {
	n, f := 4*chunkRows, 4
	x := make([]float64, n*f)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		x[i*f+i%4] = 1
		y[i] = i % 2
	}
	p := kernelProblem(x, y, f, 0.25)
	buf := p.newChunkBuf()
	out := make([]float64, f)
	kernels := []bool{false}
	if haveAVX2 {
		kernels = append(kernels, true)
	}
	res := map[string][]float64{}
	for i := 0; i < b.N; i++ {
		for _, s := range []float64{1, 750} {
			theta := []float64{s, s, s, s}
			for _, simd := range kernels {
				p.simd = simd
				c0, _ := bigmem.Usage()
				for c := 0; c < n/chunkRows; c++ {
					p.chunkGrad(c, theta, out, &buf)
				}
				c1, _ := bigmem.Usage()
				name := fmt.Sprintf("go-s%v-ns", s)
				if simd {
					name = fmt.Sprintf("asm-s%v-ns", s)
				}
				res[name] = append(res[name], float64((c1-c0).Nanoseconds())/float64(n))
			}
		}
	}
	for name, v := range res {
		b.ReportMetric(median(v), name)
	}
}
