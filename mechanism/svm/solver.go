package svm

import (
	"math"
	"runtime"
	"sync"

	"github.com/dpsql/dpsql/mechanism"
)

// maxCacheEntries bounds n·F, the float32 feature cache (4 bytes an entry),
// so that training stays within a few GB of memory.
const maxCacheEntries = 1 << 30

// shrink32 is applied before rounding features to float32 so that rounding
// to nearest can never make ‖φᵢ‖₂ exceed its float64 value (≤ 1): the SVM
// that is solved is the SVM on these float32 features, and κ ≤ 1 holds for
// them exactly.
const shrink32 = 1 - 0x1p-22

// Summation layout of the gradient, fixed so that its rounding can be
// bounded from public values: each worker sums its rows in blocks of
// blockRows, adds the blocks into its own accumulator, and the (at most
// maxWorkers) accumulators are added at the end. A term therefore passes
// through at most blockRows + ⌈n/blockRows⌉ + maxWorkers additions.
const (
	blockRows  = 512
	maxWorkers = 64
)

// featureCache holds φ(xᵢ) for every row, row-major, as float32.
type featureCache struct {
	n, f int
	x    []float32
}

func (fc *featureCache) row(i int) []float32 { return fc.x[i*fc.f : (i+1)*fc.f : (i+1)*fc.f] }

// buildCache maps every raw row through the Scaler (public bounds, clipping)
// and, for kernel SVMs, the random Fourier features. Rows are split over
// GOMAXPROCS goroutines.
func buildCache(X [][]float64, sc mechanism.Scaler, rff *mechanism.RFF) *featureCache {
	f := sc.Dim()
	if rff != nil {
		f = rff.Dim()
	}
	n := len(X)
	fc := &featureCache{n: n, f: f, x: make([]float32, n*f)}
	parallelRows(n, func(lo, hi int) {
		z := make([]float64, sc.Dim())
		var phi []float64
		for i := lo; i < hi; i++ {
			z = sc.Transform(z, X[i])
			v := z
			if rff != nil {
				phi = rff.Map(phi, z)
				v = phi
			}
			r := fc.row(i)
			for j, t := range v {
				r[j] = float32(t * shrink32)
			}
		}
	})
	return fc
}

// workers returns the number of goroutines used on n rows.
func workers(n int) int {
	w := min(runtime.GOMAXPROCS(0), maxWorkers)
	// Below a few blocks per worker the goroutines cost more than they save.
	w = min(w, (n+4*blockRows-1)/(4*blockRows))
	return max(w, 1)
}

// parallelRows runs fn over [0, n) split into contiguous chunks, one per
// worker.
func parallelRows(n int, fn func(lo, hi int)) {
	w := workers(n)
	if w <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for k := 0; k < w; k++ {
		lo, hi := k*n/w, (k+1)*n/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

// gd is full-batch gradient descent on K binary problems that share the
// feature cache: problem k minimises
//
//	P_k(w) = ½‖w‖² + (C/n)·Σᵢ ℓ(yᵢₖ⟨w, φᵢ⟩),  yᵢₖ = +1 if cls[i] = pos[k], else −1,
//
// by w ← a·w − b·Σᵢ ℓ′(yᵢₖ⟨w, φᵢ⟩)·yᵢₖ·φᵢ from w = 0, where a = 1 − η and
// b = η·C/n are the public float64 coefficients fixed by Plan. It runs
// exactly iters iterations whatever the data: no stopping test, no failure
// path, the same arithmetic on every row (docs/mechanisms/svm.md §4–5).
type gd struct {
	fc    *featureCache
	cls   []int32 // class index of each row
	pos   []int32 // positive class of each problem
	loss  loss
	a, b  float64
	iters int
	done  int // steps executed (always iters; observed by the tests)
	// stop ends the loop early only when the query is killed (then the
	// result is discarded): checked between iterations, a public schedule.
	stop mechanism.Stop
}

// run returns the K weight vectors after iters iterations from w = 0.
func (g *gd) run() [][]float64 {
	k, f := len(g.pos), g.fc.f
	w := make([]float64, k*f)
	st := g.newState()
	for it := 0; it < g.iters; it++ {
		if g.stop.Stopped() {
			break
		}
		g.step(w, st)
		g.done++
	}
	out := make([][]float64, k)
	for m := range out {
		out[m] = w[m*f : (m+1)*f : (m+1)*f]
	}
	return out
}

// gdState is the scratch space of gd.step: per-worker accumulators and
// block sums, and the gradient.
type gdState struct {
	acc, blk [][]float64
	grad     []float64
}

func (g *gd) newState() *gdState {
	kf := len(g.pos) * g.fc.f
	nw := workers(g.fc.n)
	st := &gdState{acc: make([][]float64, nw), blk: make([][]float64, nw), grad: make([]float64, kf)}
	for i := range st.acc {
		st.acc[i] = make([]float64, kf)
		st.blk[i] = make([]float64, kf)
	}
	return st
}

// step performs one iteration w ← a·w − b·Σᵢ ℓ′(yᵢ⟨w, φᵢ⟩)yᵢφᵢ in place on
// the K stacked weight vectors.
func (g *gd) step(w []float64, st *gdState) {
	n, nw := g.fc.n, len(st.acc)
	if nw == 1 {
		g.partial(w, 0, n, st.acc[0], st.blk[0])
	} else {
		var wg sync.WaitGroup
		for p := 0; p < nw; p++ {
			lo, hi := p*n/nw, (p+1)*n/nw
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.partial(w, lo, hi, st.acc[p], st.blk[p])
			}()
		}
		wg.Wait()
	}
	copy(st.grad, st.acc[0])
	for p := 1; p < nw; p++ {
		for j, v := range st.acc[p] {
			st.grad[j] += v
		}
	}
	for j := range w {
		w[j] = g.a*w[j] - g.b*st.grad[j]
	}
}

// partial writes Σᵢ ℓ′(yᵢₖ⟨wₖ, φᵢ⟩)·yᵢₖ·φᵢ over rows [lo, hi) into acc (K
// vectors of length F), summing blocks of blockRows rows in blk first.
// Every row costs the same: one dot product and one axpy per problem, even
// where ℓ′ = 0.
func (g *gd) partial(w []float64, lo, hi int, acc, blk []float64) {
	// The loss is switched on once, outside the loop, so that its ℓ′ is
	// inlined.
	switch l := g.loss.(type) {
	case huber:
		partialLoss(g, l, w, lo, hi, acc, blk)
	case logistic:
		partialLoss(g, l, w, lo, hi, acc, blk)
	default:
		partialLoss(g, l, w, lo, hi, acc, blk)
	}
}

func partialLoss[L loss](g *gd, l L, w []float64, lo, hi int, acc, blk []float64) {
	f := g.fc.f
	clear(acc)
	for b0 := lo; b0 < hi; b0 += blockRows {
		clear(blk)
		for i := b0; i < min(b0+blockRows, hi); i++ {
			x := g.fc.row(i)
			ci := g.cls[i]
			for m, pos := range g.pos {
				y := -1.0
				if ci == pos {
					y = 1
				}
				wm := w[m*f : (m+1)*f : (m+1)*f]
				s := l.deriv(y*dot(wm, x)) * y
				axpy(s, x, blk[m*f:(m+1)*f:(m+1)*f])
			}
		}
		for j, v := range blk {
			acc[j] += v
		}
	}
}

// gamma is Higham's γ_k = k·u/(1 − k·u).
func gamma(k int) float64 {
	ku := float64(k) * u
	return ku / (1 - ku)
}

// roundingSlack returns ε_fp, a bound on ‖w̃_{t+1} − G(w̃_t)‖₂ for one
// iteration of gd.run on one problem, where w̃ are the computed iterates
// and G is the exact map w ↦ a·w − b·Σ ℓ′(yᵢ⟨w, φᵢ⟩)yᵢφᵢ with the same
// float64 a, b as real numbers (docs/mechanisms/svm.md §5). Public inputs
// only: n, F, a, b and the loss constants; κ = 1. wMax is the bound on
// ‖w̃_t‖ it assumes; Plan checks that ε_fp ≤ b·n·L, which makes wMax valid
// for every iterate by induction.
func roundingSlack(n, f int, a, b float64, l loss) (eps, wMax float64) {
	nf := float64(n)
	lip, beta := l.lipschitz(), l.smoothness()
	oneMinusA := (1 - a) * (1 - 2*u)
	wMax = 2 * b * nf * lip / oneMinusA * (1 + 4*u)
	gF := gamma(f)
	// Error of each computed ℓ′(m̃ᵢ)·yᵢ against ℓ′(mᵢ)·yᵢ: the dot product is
	// within γ_F‖w̃‖‖φᵢ‖ (Higham §3.1), ℓ′ is β_ℓ-Lipschitz, plus the
	// evaluation of ℓ′ itself.
	ds := beta*gF*wMax + l.derivErr()
	sMax := lip + ds
	// Summation of n vectors sᵢφᵢ (‖φᵢ‖ ≤ 1): every term through at most
	// depth additions and one product, so the ℓ₂ error is at most
	// γ_(depth+1)·Σ|sᵢ|‖φᵢ‖ ≤ γ_(depth+1)·n·sMax.
	depth := blockRows + (n+blockRows-1)/blockRows + 1 + maxWorkers
	gD := gamma(depth + 1)
	gradMax := nf * sMax * (1 + gD)
	// The update fl(fl(a·w) − fl(b·G)) rounds three times: γ₂(|a·w| + |b·G|).
	eps = gamma(2)*(a*wMax+b*gradMax) + b*(gD*nf*sMax+nf*ds)
	return eps * (1 + 16*u), wMax
}

// dot returns ⟨w, x⟩ in float64.
func dot(w []float64, x []float32) float64 {
	w = w[:len(x)]
	var s0, s1, s2, s3 float64
	for len(x) >= 4 {
		xs, ws := x[:4:4], w[:4:4]
		s0 += ws[0] * float64(xs[0])
		s1 += ws[1] * float64(xs[1])
		s2 += ws[2] * float64(xs[2])
		s3 += ws[3] * float64(xs[3])
		x, w = x[4:], w[4:]
	}
	for i := range x {
		s0 += w[i] * float64(x[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy computes w += s·x.
func axpy(s float64, x []float32, w []float64) {
	w = w[:len(x)]
	for len(x) >= 4 {
		xs, ws := x[:4:4], w[:4:4]
		ws[0] += s * float64(xs[0])
		ws[1] += s * float64(xs[1])
		ws[2] += s * float64(xs[2])
		ws[3] += s * float64(xs[3])
		x, w = x[4:], w[4:]
	}
	for i := range x {
		w[i] += s * float64(x[i])
	}
}

// contraction returns an upper bound on q = max(a, b·n·β_ℓ − a), the
// Lipschitz constant of the exact gradient map G (κ = 1), and the matching
// Σ_{t<T} q^t = (1 − q^T)/(1 − q), both rounded up.
func contraction(n int, a, b, beta float64, iters int) (q, sum float64) {
	q = math.Max(a, b*float64(n)*beta*(1+4*u)-a) * (1 + 4*u)
	if q >= 1 {
		return q, math.Inf(1)
	}
	// (1 − q^T)/(1 − q) = −expm1(T·log q)/(1 − q), increasing in q.
	sum = -math.Expm1(float64(iters)*math.Log(q)) / (1 - q)
	return q, sum * (1 + 1e-12)
}
