package logreg

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/internal/bigmem"
	"github.com/dpsql/dpsql/mechanism"
)

// maxThetaNorm is a public radius onto which every iterate is projected: a
// post-processing that keeps scores finite whatever the noise drew. It is
// never reached by a useful model.
const maxThetaNorm = 1e100

// problem is the scaled training set: x holds n rows of F values
// (mechanism.Scaler with intercept, ‖x‖ ≤ 1); y holds class indices
// (multiclass, K′ = K) or 0/1 (binary, K′ = 1, Classes[1] ↦ 1).
type problem struct {
	x     []float64
	xnorm []float64 // ‖xᵢ‖₂ of every scaled row
	// rclip (binary only) is fl(C/‖xᵢ‖): the clipped binary residual is
	// clamp(r, ±rclip[i]) (logreg.md §6–7).
	rclip   []float64
	clip    float64 // C
	y       []int
	n, f    int
	kp      int
	binary  bool
	workers int
	// trace, if set (tests only), sees θ_t and the released noisy
	// gradient sum of every step.
	trace func(theta, noisy []float64)
	// stop ends the descent when the query is killed (result discarded).
	stop mechanism.Stop
	// simd selects the AVX2 kernels of the binary pass and of XᵀX
	// (kernelAVX2 at construction; tests turn it off to run the Go
	// kernels, their fallback and reference).
	simd bool
}

func newProblem(X [][]float64, y []int, prep mechanism.Prepared, kp int, binary bool, workers int, clip float64) *problem {
	n, f := len(X), prep.Dim()
	// The scaled copy (n·F values, 168 MB at 10⁶ × 21) is written once here:
	// huge pages spare its first writes ≈ 40k page faults (internal/bigmem).
	// Its buffers come from internal/bigmem's pool (zeroed, resident) and go
	// back with free once the model is out.
	p := &problem{x: bigmem.Get[float64](n * f), xnorm: bigmem.Get[float64](n), clip: clip, y: bigmem.Get[int](len(y)), n: n, f: f, kp: kp, binary: binary, workers: workers, simd: kernelAVX2}
	copy(p.y, y)
	if binary {
		p.rclip = bigmem.Get[float64](n)
	}
	// Rows are independent: one contiguous part per worker.
	parts := max(1, min(workers, n/chunkRows))
	var wg sync.WaitGroup
	for w := 0; w < parts; w++ {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				z := prep.Transform(p.x[i*f:(i+1)*f], X[i])
				var s float64
				for _, v := range z {
					s += v * v
				}
				p.xnorm[i] = math.Sqrt(s)
				if binary {
					p.rclip[i] = clip / p.xnorm[i]
				}
			}
		}(w*n/parts, (w+1)*n/parts)
	}
	wg.Wait()
	return p
}

// kernelAVX2 selects the AVX2 kernels for new problems where the CPU has
// them (tests set it false to run the Go kernels end to end).
var kernelAVX2 = haveAVX2

// free gives the scaled copy's buffers back to the pool (zeroed there);
// nothing may read p afterwards.
func (p *problem) free() {
	bigmem.Put(p.x)
	bigmem.Put(p.xnorm)
	bigmem.Put(p.y)
	if p.rclip != nil {
		bigmem.Put(p.rclip)
	}
	p.x, p.xnorm, p.y, p.rclip = nil, nil, nil, nil
}

// correct counts the rows whose predicted class under θ (K′·F,
// class-major, as the model's weights) is their label: for K′ = 1 class 1
// iff θ·x ≥ 0, else the first class of largest score — DP_PREDICT's rule,
// on the scaled copy (Prepared's map) instead of the model's Scaler, so a
// row whose score rounds across a tie can count differently; each row's
// term is still a function of that row and θ alone (prior.md §5). One
// contiguous part per worker, integer counts added: the same count
// whatever the schedule, the same work for every value.
func (p *problem) correct(theta []float64) int64 {
	parts := max(1, min(p.workers, p.n/chunkRows))
	counts := make([]int64, parts)
	var wg sync.WaitGroup
	for w := range parts {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f, kp := p.f, p.kp
			var c int64
			for i := lo; i < hi; i++ {
				x := p.x[i*f : (i+1)*f : (i+1)*f]
				pred := 0
				if kp == 1 {
					pred = b2i(dot(theta[:f], x) >= 0)
				} else {
					best := dot(theta[:f], x)
					for k := 1; k < kp; k++ {
						s := dot(theta[k*f:(k+1)*f], x)
						gt := b2i(s > best)
						pred += (k - pred) * gt
						best = max(best, s)
					}
				}
				c += int64(b2i(pred == p.y[i]))
			}
			counts[w] = c
		}(w*p.n/parts, (w+1)*p.n/parts)
	}
	wg.Wait()
	var n int64
	for _, c := range counts {
		n += c
	}
	return n
}

// b2i is 1 for true, 0 for false (compiled to a flag set, not a branch).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// chunkBuf is one worker's scratch for a block of rows.
type chunkBuf struct {
	s []float64 // scores, rows × K′
	// th and out (binary, AVX2 kernel): θ and the block's sum padded with
	// zeros to a multiple of 4 values; tx, ty, tc: the block's last rows
	// mod 4 (x, y, rclip) padded with zero rows to one group.
	th, out, tx, tc []float64
	ty              []int
}

// newChunkBuf is one worker's scratch.
func (p *problem) newChunkBuf() chunkBuf {
	b := chunkBuf{s: make([]float64, chunkRows*p.kp)}
	if p.kp == 1 {
		f4 := (p.f + 3) &^ 3
		b.th, b.out = make([]float64, f4), make([]float64, f4)
		b.tx, b.tc, b.ty = make([]float64, 4*p.f), make([]float64, 4), make([]int, 4)
	}
	return b
}

// gradSum writes G(θ) = Σᵢ r̂ᵢ ⊗ xᵢ into g (K′·F, class-major), one block
// of chunkRows rows at a time: each block's K′×F product is computed into
// its own slot, then the slots are added in block order. Every entry is
// thus a chain of at most chunkRows + ⌈n/chunkRows⌉ + 1 additions, the
// depth the rounding bound in sensitivity uses. The work does not depend on
// the values of the rows.
func (p *problem) gradSum(theta, g []float64, slots [][]float64) {
	nChunks := len(slots)
	var next atomic.Int64
	var wg sync.WaitGroup
	workers := min(p.workers, nChunks)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := p.newChunkBuf()
			for {
				c := int(next.Add(1)) - 1
				if c >= nChunks {
					return
				}
				p.chunkGrad(c, theta, slots[c], &buf)
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

// chunkGrad computes Σ_{i ∈ block c} r̂ᵢ ⊗ xᵢ into out, one row at a time:
// the K′ scores θₖ·xᵢ, the residual, the clip, then out += r̂ᵢ ⊗ xᵢ. Each
// entry of out is a chain of the block's row terms in row order (at most
// chunkRows additions, the depth sensitivity charges), and the block is
// read once per step (the two matrix products it replaces read it twice).
func (p *problem) chunkGrad(c int, theta, out []float64, buf *chunkBuf) {
	lo := c * chunkRows
	rows := min(chunkRows, p.n-lo)
	f, kp := p.f, p.kp
	for j := range out {
		out[j] = 0
	}
	if kp == 1 {
		p.chunkGradBinary(lo, rows, theta[:f], out[:f], buf)
		return
	}
	res := buf.s[:kp]
	for r := 0; r < rows; r++ {
		i := lo + r
		x := p.x[i*f : (i+1)*f : (i+1)*f]
		for k := range res {
			res[k] = dot(theta[k*f:(k+1)*f], x)
		}
		residual(res, p.y[i], false)
		clipRow(res, p.xnorm[i], p.clip)
		for k, rk := range res {
			axpy(rk, x, out[k*f:(k+1)*f])
		}
	}
}

// chunkGradBinary is chunkGrad for K′ = 1: residual σ(θ·x) − y ∈ [−1, 1]
// and its clip inlined (|r| is √(r²), clipRow's norm for one value).
//
// With AVX2 (p.simd) the rows go four at a time through
// binaryGroupsAVX2: the four terms summed as (r₀x₀ + r₁x₁) + (r₂x₂ + r₃x₃)
// and the sum added to the block's slot, so a row's term passes through
// at most 3 roundings in its group and ⌈rows/4⌉ additions in the slot.
// The last rows mod 4 go through the kernel too, as one group padded with
// zero rows (x = 0, y = 0, rclip = 0: their terms are exactly 0), so that
// every row runs under its flush-to-zero (logreg.md §6).
//
// The Go kernel (no AVX2, and the reference of the tests) takes rows in
// pairs: both scores in one pass over θ, then out += (r₀x₀ + r₁x₁), so θ
// and out are read once per two rows. Each entry of out is then a chain
// of ⌈rows/2⌉ additions of pair sums, one addition each.
//
// Either way every row term goes through far fewer than chunkRows
// additions in the block, within the depth sensitivity charges
// (logreg.md §6).
func (p *problem) chunkGradBinary(lo, rows int, theta, out []float64, buf *chunkBuf) {
	f := p.f
	if p.simd {
		copy(buf.th, theta) // the padding stays 0
		clear(buf.out)
		if g := rows / 4; g > 0 {
			_ = p.x[(lo+4*g)*f-1] // the rows the kernel reads
			_, _ = p.y[lo+4*g-1], p.rclip[lo+4*g-1]
			binaryGroupsAVX2(&p.x[lo*f], &buf.th[0], &buf.out[0], &p.y[lo], &p.rclip[lo], g, f, tailMask(f))
			lo, rows = lo+4*g, rows-4*g
		}
		if rows > 0 {
			clear(buf.tx)
			clear(buf.tc)
			clear(buf.ty)
			copy(buf.tx, p.x[lo*f:(lo+rows)*f])
			copy(buf.ty, p.y[lo:lo+rows])
			copy(buf.tc, p.rclip[lo:lo+rows])
			binaryGroupsAVX2(&buf.tx[0], &buf.th[0], &buf.out[0], &buf.ty[0], &buf.tc[0], 1, f, tailMask(f))
		}
		copy(out, buf.out[:f])
		return
	}
	r := 0
	for ; r+2 <= rows; r += 2 {
		i := lo + r
		x0 := p.x[i*f : (i+1)*f : (i+1)*f]
		x1 := p.x[(i+1)*f : (i+2)*f : (i+2)*f]
		s0, s1 := dot2(theta, x0, x1)
		axpy2(p.binaryTerm(s0, i), x0, p.binaryTerm(s1, i+1), x1, out)
	}
	if r < rows {
		i := lo + r
		x := p.x[i*f : (i+1)*f : (i+1)*f]
		axpy(p.binaryTerm(dot(theta, x), i), x, out)
	}
}

// tailMasks[m] selects the first m of four lanes.
var tailMasks = [4][4]int64{{}, {-1}, {-1, -1}, {-1, -1, -1}}

// tailMask is the AVX2 kernel's mask for the last F mod 4 columns (nil
// if none).
func tailMask(f int) *[4]int64 {
	if f%4 == 0 {
		return nil
	}
	return &tailMasks[f%4]
}

// binaryTerm is row i's clipped residual at score s: r = σ(s) − y clamped
// to ±fl(C/‖xᵢ‖) — for one value, scaling r by min(1, C/(|r|‖xᵢ‖)) is the
// clamp — with min/max, no division and no branch on the row. The term
// then has norm |r̂|·‖x̂ᵢ‖ ≤ C(1 + γ_{F+4}), within the clipped-term bound
// of logreg.md §6.
func (p *problem) binaryTerm(s float64, i int) float64 {
	v := [1]float64{s}
	residual(v[:], p.y[i], true)
	c := p.rclip[i]
	return max(-c, min(v[0], c))
}

// dot2 is (θ·x₀, θ·x₁) in one pass over θ, two partial sums each.
func dot2(theta, x0, x1 []float64) (float64, float64) {
	theta, x1 = theta[:len(x0)], x1[:len(x0)]
	var a0, a1, b0, b1 float64
	j := 0
	for ; j+2 <= len(x0); j += 2 {
		t0, t1 := theta[j], theta[j+1]
		a0 += t0 * x0[j]
		a1 += t1 * x0[j+1]
		b0 += t0 * x1[j]
		b1 += t1 * x1[j+1]
	}
	if j < len(x0) {
		a0 += theta[j] * x0[j]
		b0 += theta[j] * x1[j]
	}
	return a0 + a1, b0 + b1
}

// axpy2 adds a₀x₀ + a₁x₁ to out, the pair summed first (one addition per
// entry per pair of rows).
func axpy2(a0 float64, x0 []float64, a1 float64, x1, out []float64) {
	out, x1 = out[:len(x0)], x1[:len(x0)]
	for j, v := range x0 {
		out[j] += a0*v + a1*x1[j]
	}
}

// dot is θ·x with four partial sums (any order of the F products errs by
// at most γ_F, the bound the objective method's errStep uses).
func dot(theta, x []float64) float64 {
	theta = theta[:len(x)]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(x); j += 4 {
		s0 += theta[j] * x[j]
		s1 += theta[j+1] * x[j+1]
		s2 += theta[j+2] * x[j+2]
		s3 += theta[j+3] * x[j+3]
	}
	for ; j < len(x); j++ {
		s0 += theta[j] * x[j]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy adds a·x to out (one addition per entry: the chain stays one term
// per row).
func axpy(a float64, x, out []float64) {
	out = out[:len(x)]
	j := 0
	for ; j+4 <= len(x); j += 4 {
		out[j] += a * x[j]
		out[j+1] += a * x[j+1]
		out[j+2] += a * x[j+2]
		out[j+3] += a * x[j+3]
	}
	for ; j < len(x); j++ {
		out[j] += a * x[j]
	}
}

// residual overwrites the scores s of one row with r = ∇_s ℓ: σ(s) − y for
// binary logistic, softmax(s) − e_y for the multinomial loss. Probabilities
// are clamped to [0, 1]; the softmax is shifted by its maximum, so every
// exponential is in (0, 1] and the sum is at least 1.
func residual(s []float64, y int, binary bool) {
	if binary {
		p := 1 / (1 + expFixed(-s[0]))
		s[0] = nanTo(p, 0.5) - float64(y)
		return
	}
	m := s[0]
	for _, v := range s[1:] {
		m = max(m, v) // finite scores (descend keeps θ finite): the builtin's NaN rule never applies
	}
	var z float64
	for k, v := range s {
		e := nanTo(min(expFixed(v-m), 1), 0) // v − m ≤ 0; the max's term is exactly 1
		s[k] = e
		z += e
	}
	inv := 1 / z
	for k := range s {
		s[k] = min(max(nanTo(s[k]*inv, 0), 0), 1)
	}
	s[y]--
}

// nanTo is v, or alt if v is NaN, by a bit mask: the residual's guards
// must not branch on a value (threat-model.md, running time).
func nanTo(v, alt float64) float64 {
	num := uint64(b2i(v == v)) // 1 for a number, 0 for NaN
	return math.Float64frombits(math.Float64bits(v)&-num | math.Float64bits(alt)&(num-1))
}

// expFixed is eˣ to about 10⁻¹⁴ relative (math.Exp's overflow to +Inf and
// underflow to 0 included: x is clamped to [−800, 800], where both have
// happened) with the same operations for every x: no table, no early
// return (math.Exp branches on the range of x). x = k·ln 2 + r with
// k = round(x/ln 2) by the 1.5·2⁵² trick and r reduced with a two-part
// ln 2 (|r| ≤ 0.35), a degree-12 Taylor polynomial (Estrin's form), then
// times 2^⌊k/2⌋ and 2^(k−⌊k/2⌋) (two normal powers of two for |k| ≤ 1155,
// so subnormal results and the underflow round as one product would).
// exp(0) is exactly 1 and a result is never negative; the residual bounds
// (logreg.md §6) need nothing more. NaN stays NaN.
func expFixed(x float64) float64 {
	r, k := expReduce(x)
	// Estrin's scheme: the same degree-12 Taylor polynomial as pairs,
	// quads and octets of terms, about eight dependent operations instead
	// of Horner's 24 (the exponential's latency bounds the gradient pass).
	r2 := r * r
	r4 := r2 * r2
	r8 := r4 * r4
	q0 := 1 + r
	q1 := 0.5 + r*(1.0/6)
	q2 := 1.0/24 + r*(1.0/120)
	q3 := 1.0/720 + r*(1.0/5040)
	q4 := 1.0/40320 + r*(1.0/362880)
	q5 := 1.0/3628800 + r*(1.0/39916800)
	lo := (q0 + r2*q1) + r4*(q2+r2*q3)
	hi := (q4 + r2*q5) + r4*(1.0/479001600)
	return expScale(lo+r8*hi, k)
}

// expReduce writes x (clamped to [−800, 800]) as k·ln 2 + r, k =
// round(x/ln 2) by the 1.5·2⁵² trick, r reduced with a two-part ln 2.
func expReduce(x float64) (r float64, k int64) {
	const (
		log2e = 1.4426950408889634
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
		shift = 0x1.8p52
	)
	x = max(min(x, 800), -800)
	kf := (x*log2e + shift) - shift
	return (x - kf*ln2Hi) - kf*ln2Lo, int64(kf)
}

// expScale is p·2ᵏ as two products by normal powers of two.
func expScale(p float64, k int64) float64 {
	k1 := k >> 1
	return p * math.Float64frombits(uint64(k1+1023)<<52) * math.Float64frombits(uint64(k-k1+1023)<<52)
}

// clipRow scales the residual r of a row with ‖x‖ = xnorm so that the
// row's gradient r ⊗ x has norm at most C: r ← r·min(1, C/(‖r‖‖x‖)).
func clipRow(r []float64, xnorm, c float64) {
	var s float64
	for _, v := range r {
		s += v * v
	}
	// k = c/g where g > c, else 1 (c/g ≥ 1 rounds to ≥ 1, and c may be
	// +Inf or g 0): r unchanged, with no branch on the row.
	k := min(1, c/(math.Sqrt(s)*xnorm))
	for i := range r {
		r[i] *= k
	}
}

// descend runs T noisy gradient steps from θ₀ = 0. Plain (nesterov false):
// θ_{t+1} = θ_t − step·Ĝ(θ_t), released value the average of θ₁ … θ_T.
// Nesterov: the gradient is released at the look-ahead point
// y_t = θ_t + t/(t+3)·(θ_t − θ_{t−1}) and θ_{t+1} = y_t − step·Ĝ(y_t); the
// released value is the last iterate θ_T. addNoise adds the
// planned noise to one gradient sum in place (the release); the point at
// which the next gradient is taken, the iterates and the average are
// functions of earlier releases only (post-processing, logreg.md §4).
//
// precond, if not nil, maps the released gradient sum in place to the step
// direction (the preconditioned rule: P applied to the class-centred sum,
// a function of the released X̂ᵀX̂ only); the update is then
// θ_{t+1} = y_t − (η/n)·precond(Ĝ_t, y_t).
func (p *problem) descend(steps int, eta float64, nesterov bool, precond func(g, at []float64), addNoise func([]float64) error) ([]float64, error) {
	dim := p.kp * p.f
	theta := make([]float64, dim)
	prev := make([]float64, dim) // θ_{t−1} (Nesterov)
	at := theta                  // the point of the next gradient
	if nesterov {
		at = make([]float64, dim)
	}
	avg := make([]float64, dim)
	g := make([]float64, dim)
	nChunks := (p.n + chunkRows - 1) / chunkRows
	slots := make([][]float64, nChunks)
	for c := range slots {
		slots[c] = make([]float64, dim)
	}
	step := eta / float64(p.n)
	first := 0 // the first iterate index (0-based t) in the average
	if nesterov {
		first = steps - 1
	}
	for t := 0; t < steps; t++ {
		if err := p.stop.Err(); err != nil {
			return nil, err // killed: checked between steps (a public schedule)
		}
		if nesterov {
			mom := float64(t) / float64(t+3)
			var norm float64
			for j := range at {
				at[j] = theta[j] + mom*(theta[j]-prev[j])
				norm += at[j] * at[j]
			}
			if norm = math.Sqrt(norm); norm > maxThetaNorm || math.IsNaN(norm) {
				project(at, norm)
			}
			copy(prev, theta)
		}
		p.gradSum(at, g, slots)
		if err := addNoise(g); err != nil {
			return nil, err
		}
		if p.trace != nil {
			p.trace(at, g)
		}
		if precond != nil {
			precond(g, at)
		}
		var norm float64
		for j := range theta {
			theta[j] = at[j] - step*g[j]
			norm += theta[j] * theta[j]
		}
		if norm = math.Sqrt(norm); norm > maxThetaNorm || math.IsNaN(norm) {
			project(theta, norm)
		}
		if t >= first {
			for j := range avg {
				avg[j] += theta[j]
			}
		}
	}
	inv := 1 / float64(steps-first)
	for j := range avg {
		avg[j] *= inv
	}
	return avg, nil
}

// gramSize is the number of released coordinates of XᵀX: F(F+1)/2.
func gramSize(f int) int { return f * (f + 1) / 2 }

// gram returns v(S), S = Σᵢ xᵢxᵢᵀ over the scaled rows, packed by rows of
// the upper triangle ((0,0), (0,1), …, (0,F−1), (1,1), …) with every
// off-diagonal entry times fl(√2), so that ‖v(A)‖₂ = ‖A‖_F for symmetric
// A (logreg.md §13). Blocks of chunkRows rows, one slot per block, slots
// added in block order: every entry is a chain of at most chunkRows +
// ⌈n/chunkRows⌉ + 1 additions of rounded products, the depth
// gramSensitivity charges. The work does not depend on the values. With
// AVX2 (p.simd) the groups of eight rows go through gramGroupsAVX2, the
// same tree and one addition per group (FMA: one rounding fewer), the last
// rows mod 8 as one group padded with zero rows.
func (p *problem) gram() []float64 {
	f, size := p.f, gramSize(p.f)
	nChunks := (p.n + chunkRows - 1) / chunkRows
	slots := make([][]float64, nChunks)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(p.workers, nChunks); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sq, tx []float64 // the AVX2 kernel's F × F4 square, a padded group
			if p.simd {
				sq, tx = make([]float64, f*((f+3)&^3)), make([]float64, 8*f)
			}
			for {
				c := int(next.Add(1)) - 1
				if c >= nChunks {
					return
				}
				out := make([]float64, size)
				i, hi := c*chunkRows, min((c+1)*chunkRows, p.n)
				if p.simd {
					// The last rows mod 8 as one group padded with zero
					// rows (exact zero products), all under the flush.
					clear(sq)
					if g := (hi - i) / 8; g > 0 {
						_ = p.x[(i+8*g)*f-1] // the rows the kernel reads
						gramGroupsAVX2(&p.x[i*f], &sq[0], g, f, tailMask(f))
						i += 8 * g
					}
					if i < hi {
						clear(tx)
						copy(tx, p.x[i*f:hi*f])
						gramGroupsAVX2(&tx[0], &sq[0], 1, f, tailMask(f))
						i = hi
					}
					unpackUpper(sq, f, out)
				}
				for ; i+8 <= hi; i += 8 {
					gramRows8(p.x[i*f:(i+8)*f:(i+8)*f], f, out)
				}
				for ; i < hi; i++ {
					gramRow(p.x[i*f:(i+1)*f:(i+1)*f], out)
				}
				slots[c] = out
			}
		}()
	}
	wg.Wait()
	v := make([]float64, size)
	for _, s := range slots {
		for j, x := range s {
			v[j] += x
		}
	}
	idx := 0
	for i := 0; i < f; i++ {
		for j := i + 1; j < f; j++ {
			v[idx+j-i] *= math.Sqrt2
		}
		idx += f - i
	}
	return v
}

// gramRows8 adds the upper triangle of Σ xᵣxᵣᵀ over eight consecutive
// rows (x holds them, f values each) to out: the eight products of an
// entry are summed as a balanced tree of depth 3, then added once to out,
// so out is read and written once per eight rows and a product passes
// through at most chunkRows/8 + 3 additions in its block (within the
// depth gramSensitivity charges).
func gramRows8(x []float64, f int, out []float64) {
	x0, x1, x2, x3 := x[:f:f], x[f:2*f:2*f], x[2*f:3*f:3*f], x[3*f:4*f:4*f]
	x4, x5, x6, x7 := x[4*f:5*f:5*f], x[5*f:6*f:6*f], x[6*f:7*f:7*f], x[7*f:8*f:8*f]
	idx := 0
	for i := 0; i < f; i++ {
		a0, a1, a2, a3 := x0[i], x1[i], x2[i], x3[i]
		a4, a5, a6, a7 := x4[i], x5[i], x6[i], x7[i]
		o := out[idx : idx+f-i : idx+f-i]
		m := len(o)
		r0, r1, r2, r3 := x0[i:i+m], x1[i:i+m], x2[i:i+m], x3[i:i+m]
		r4, r5, r6, r7 := x4[i:i+m], x5[i:i+m], x6[i:i+m], x7[i:i+m]
		for j := range o {
			o[j] += ((a0*r0[j] + a1*r1[j]) + (a2*r2[j] + a3*r3[j])) + ((a4*r4[j] + a5*r5[j]) + (a6*r6[j] + a7*r7[j]))
		}
		idx += f - i
	}
}

// unpackUpper copies the upper triangle of the F × ⌈F/4⌉·4 square sq
// (gramGroupsAVX2's layout) into out, packed by rows.
func unpackUpper(sq []float64, f int, out []float64) {
	f4 := (f + 3) &^ 3
	idx := 0
	for i := 0; i < f; i++ {
		idx += copy(out[idx:idx+f-i], sq[i*f4+i:i*f4+f])
	}
}

// gramRow adds the upper triangle of xxᵀ to out (packed by rows).
func gramRow(x, out []float64) {
	idx := 0
	for i, xi := range x {
		row := x[i:]
		o := out[idx : idx+len(row) : idx+len(row)]
		for j, xj := range row {
			o[j] += xi * xj
		}
		idx += len(row)
	}
}

// preconditioner builds the map (g, θ) ↦ P·(g + n·μθ) of the
// preconditioned rule from the released v̂ = v(X̂ᵀX̂) (post-processing): μ
// is the objective's ridge l2reg (θ = nil: none), Ŝ is unpacked, its
// eigenvalues clamped at 0 (so P is positive definite whatever the noise
// drew), and P = (c·Ŝ₊/n + λI)⁻¹ with c the Böhning factor and λ ≥ μ.
// Softmax: the class mean is removed first (the direction 1 ⊗ v changes
// no prediction and Böhning's bound is singular along it), then P acts on
// every class block. If the eigensolver fails (it does not on a finite
// symmetric matrix), P = I/λ.
func preconditioner(v []float64, f, kp, n int, binary bool, ridge, l2reg float64) func(g, theta []float64) {
	s := mat.NewSymDense(f, nil)
	idx := 0
	for i := 0; i < f; i++ {
		s.SetSym(i, i, v[idx])
		for j := i + 1; j < f; j++ {
			s.SetSym(i, j, v[idx+j-i]/math.Sqrt2)
		}
		idx += f - i
	}
	pm := mat.NewDense(f, f, nil)
	var eig mat.EigenSym
	if ok := eig.Factorize(s, true); ok {
		var vec mat.Dense
		eig.VectorsTo(&vec)
		vals := eig.Values(nil)
		c := bohningFactor(binary)
		for a := 0; a < f; a++ {
			for b := 0; b < f; b++ {
				var x float64
				for k, mu := range vals {
					x += vec.At(a, k) * vec.At(b, k) / (c*max(mu, 0)/float64(n) + ridge)
				}
				pm.Set(a, b, x)
			}
		}
	} else {
		for a := 0; a < f; a++ {
			pm.Set(a, a, 1/ridge)
		}
	}
	pr := pm.RawMatrix().Data
	tmp := make([]float64, f)
	return func(g, theta []float64) {
		if theta != nil {
			axpy(float64(n)*l2reg, theta, g)
		}
		if !binary {
			for j := 0; j < f; j++ {
				var m float64
				for k := 0; k < kp; k++ {
					m += g[k*f+j]
				}
				m /= float64(kp)
				for k := 0; k < kp; k++ {
					g[k*f+j] -= m
				}
			}
		}
		for k := 0; k < kp; k++ {
			blk := g[k*f : (k+1)*f]
			for a := 0; a < f; a++ {
				tmp[a] = dot(pr[a*f:(a+1)*f], blk)
			}
			copy(blk, tmp)
		}
	}
}

// project scales θ onto the ball of radius maxThetaNorm (or resets a
// non-finite iterate to 0).
func project(theta []float64, norm float64) {
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		for j := range theta {
			theta[j] = 0
		}
		return
	}
	s := maxThetaNorm / norm
	for j := range theta {
		theta[j] *= s
	}
}

// defaultWorkers is the number of goroutines for the gradient blocks.
func defaultWorkers() int { return max(runtime.GOMAXPROCS(0), 1) }
