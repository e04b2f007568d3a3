package lmgc

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/dpsql/dpsql/mechanism"
)

// Public sizes of the gradient pass (functions of n, C and D only, so the
// work, the memory and the summation order never depend on the rows).
const (
	// partRows is the target number of rows per part: the rows are cut
	// into min(maxParts, ⌈n/partRows⌉) contiguous parts, each reduced into
	// its own partial gradient; the partials are summed in part order, so
	// the result does not depend on GOMAXPROCS or the schedule.
	partRows = 1024
	// maxParts bounds the number of parts (and of partial gradients).
	maxParts = 8
	// blockRows bounds the rows of one BLAS call inside a part.
	blockRows = 128
	// blockBytes bounds one worker's block of lifted rows (blockRows·m′
	// floats shrink for very large D).
	blockBytes = 1 << 20
	// MaxLiftCacheBytes bounds the cache of lifted rows z̃ᵢ (n·m′ floats):
	// below it the lift is computed once per release, above it once per
	// block and iteration.
	MaxLiftCacheBytes = 256 << 20
)

// huber is the Huber-smoothed hinge ℓ_h(z) on the hinge argument z
// (Chapelle 2007): 0 for z < −h, (z+h)²/(4h) for |z| ≤ h, z for z > h.
// It returns ℓ_h(z) and its slope ℓ_h′(z) ∈ [0, 1].
func huber(z, h float64) (value, slope float64) {
	switch {
	case z < -h:
		return 0, 0
	case z > h:
		return z, 1
	}
	u := z + h
	return u * u / (4 * h), u / (2 * h)
}

// problem is one instance of the (perturbed) objective
//
//	f(Φ) = (1/n)Σᵢ ℓ(Φ; x̃ᵢ, yᵢ) + λ Σ_c tr(I_Φ Φ_c I_Φ) + (Δ/2)‖Φ‖² + (1/n)⟨b, Φ⟩
//
// restricted to the PSD cone. Φ is stored as C row-major D×D blocks.
//
// The data term is evaluated on lifted rows: with z̃ᵢ = upper(x̃ᵢx̃ᵢᵀ) (the
// m′ = D(D+1)/2 products x̃ᵢⱼx̃ᵢₖ, j ≤ k) and s_c = upper(Φ_c) with the
// off-diagonal entries doubled, the margin term is x̃ᵢᵀΦ_c x̃ᵢ = ⟨z̃ᵢ, s_c⟩ and
// the gradient block Σᵢ wᵢ_c x̃ᵢx̃ᵢᵀ is the mirror of Σᵢ wᵢ_c z̃ᵢ: half the
// multiply-adds of the D×D form, as two long-vector GEMMs per block, and
// z̃ᵢ (a per-row constant) is computed once per release when it fits
// MaxLiftCacheBytes.
type problem struct {
	// stop ends the solve early when the query is killed (result discarded).
	stop            mechanism.Stop
	classes, dim, n int
	x               []float64 // n×D scaled rows x̃ᵢ, row-major
	y               []int     // labels in [0, classes)
	h, lambda       float64
	delta           float64   // Δ, the strong convexity
	b               []float64 // C·D·D symmetric perturbation blocks, or nil

	// unconstrained drops the PSD constraint: only the deliberately broken
	// variant of the lattice audit sets it (never a release path).
	unconstrained bool

	tri    int       // m′ = D(D+1)/2
	z      []float64 // n × m′ lifted rows, or nil (computed per block)
	s      []float64 // C × m′: s_c, the doubled upper triangles
	bounds []int     // part p holds rows [bounds[p], bounds[p+1])
	part   [][]float64
	loss   []float64 // per part
	gs     []float64 // C × m′: Σ over parts
	work   []*workScratch
}

// workScratch is one goroutine's workspace.
type workScratch struct {
	zb []float64 // block rows × m′ (when z is not cached)
	mb []float64 // block rows × C: margins, then weights
}

func newProblem(classes, dim int, x []float64, y []int, h, lambda, delta float64, b []float64) *problem {
	n := len(y)
	tri := dim * (dim + 1) / 2
	parts := min(maxParts, max(1, (n+partRows-1)/partRows))
	p := &problem{
		classes: classes, dim: dim, n: n, x: x, y: y,
		h: h, lambda: lambda, delta: delta, b: b,
		tri:    tri,
		s:      make([]float64, classes*tri),
		bounds: make([]int, parts+1),
		part:   make([][]float64, parts),
		loss:   make([]float64, parts),
		gs:     make([]float64, classes*tri),
	}
	for i := range p.bounds {
		p.bounds[i] = i * n / parts
	}
	if float64(n)*float64(tri)*8 <= MaxLiftCacheBytes {
		p.z = make([]float64, n*tri)
		for i := 0; i < n; i++ {
			lift(p.z[i*tri:(i+1)*tri], x[i*dim:(i+1)*dim])
		}
	}
	return p
}

// LiftBytes is the public size in bytes of the lifted-row cache and the
// per-part gradients of a release on n rows, C classes and D = d+1 (for the
// memory estimate of the SQL layer).
func LiftBytes(n, classes, dim int) float64 {
	tri := float64(dim) * float64(dim+1) / 2
	var cache float64
	if float64(n)*tri*8 <= MaxLiftCacheBytes {
		cache = float64(n) * tri * 8
	}
	parts := float64(min(maxParts, max(1, (n+partRows-1)/partRows)))
	workers := float64(runtime.GOMAXPROCS(0))
	return cache + (parts+2)*float64(classes)*tri*8 + workers*(blockBytes+float64(blockRows*classes)*8)
}

// lift writes z = upper(x xᵀ), row by row (j ≤ k).
func lift(z, x []float64) {
	t := 0
	for j, a := range x {
		for _, v := range x[j:] {
			z[t] = a * v
			t++
		}
	}
}

// rowsPerBlock returns the rows of one BLAS call (public: depends on m′).
func (p *problem) rowsPerBlock() int {
	return max(1, min(blockRows, blockBytes/(8*p.tri)))
}

// size returns C·D·D, the length of a parameter vector.
func (p *problem) size() int { return p.classes * p.dim * p.dim }

// eval returns f(Φ) and, if grad is not nil, writes ∇f(Φ) into it.
func (p *problem) eval(phi, grad []float64) float64 {
	C, D, tri := p.classes, p.dim, p.tri
	dd := D * D
	// s_c = upper(Φ_c), off-diagonals doubled: x̃ᵀΦ_c x̃ = ⟨z̃, s_c⟩.
	for k := 0; k < C; k++ {
		blk, s := phi[k*dd:(k+1)*dd], p.s[k*tri:(k+1)*tri]
		t := 0
		for i := 0; i < D; i++ {
			s[t] = blk[i*D+i]
			t++
			for j := i + 1; j < D; j++ {
				s[t] = 2 * blk[i*D+j]
				t++
			}
		}
	}
	parts := len(p.part)
	if grad != nil {
		for i := range p.part {
			if p.part[i] == nil {
				p.part[i] = make([]float64, C*tri)
			}
		}
	}
	workers := min(parts, runtime.GOMAXPROCS(0))
	for len(p.work) < workers {
		ws := &workScratch{mb: make([]float64, p.rowsPerBlock()*C)}
		if p.z == nil {
			ws.zb = make([]float64, p.rowsPerBlock()*tri)
		}
		p.work = append(p.work, ws)
	}
	if workers <= 1 {
		for i := 0; i < parts; i++ {
			p.evalPart(i, p.work[0], grad != nil)
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func(ws *workScratch) {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= parts {
						return
					}
					p.evalPart(i, ws, grad != nil)
				}
			}(p.work[w])
		}
		wg.Wait()
	}
	// Reduce in part order (deterministic whatever the schedule).
	inv := 1 / float64(p.n)
	var loss float64
	for i := 0; i < parts; i++ {
		loss += p.loss[i]
	}
	value := loss * inv
	if grad != nil {
		copy(p.gs, p.part[0])
		for i := 1; i < parts; i++ {
			for j, v := range p.part[i] {
				p.gs[j] += v
			}
		}
		// Mirror: block c of the gradient is inv·Σᵢ wᵢ_c x̃ᵢx̃ᵢᵀ.
		for k := 0; k < C; k++ {
			g, blk := p.gs[k*tri:(k+1)*tri], grad[k*dd:(k+1)*dd]
			t := 0
			for i := 0; i < D; i++ {
				for j := i; j < D; j++ {
					v := inv * g[t]
					blk[i*D+j], blk[j*D+i] = v, v
					t++
				}
			}
		}
	}
	// Data-independent terms: λ I_Φ, ΔΦ and b/n.
	var sq, lin, tr float64
	for k := 0; k < C; k++ {
		off := k * dd
		for i := 0; i < D-1; i++ {
			tr += phi[off+i*D+i]
			if grad != nil {
				grad[off+i*D+i] += p.lambda
			}
		}
	}
	for i, v := range phi {
		sq += v * v
		if grad != nil {
			grad[i] += p.delta * v
		}
	}
	if p.b != nil {
		for i, v := range p.b {
			lin += v * phi[i]
			if grad != nil {
				grad[i] += inv * v
			}
		}
		lin *= inv
	}
	return value + p.lambda*tr + p.delta/2*sq + lin
}

// evalPart computes the loss of part i into p.loss[i] and, if grad, the sum
// Σᵢ wᵢ_c z̃ᵢ over its rows into p.part[i] (C × m′).
func (p *problem) evalPart(i int, ws *workScratch, grad bool) {
	C, D, tri := p.classes, p.dim, p.tri
	lo, hi := p.bounds[i], p.bounds[i+1]
	var gp []float64
	if grad {
		gp = p.part[i]
		clear(gp)
	}
	sm := blas64.General{Rows: C, Cols: tri, Stride: tri, Data: p.s}
	step := p.rowsPerBlock()
	var loss float64
	for start := lo; start < hi; start += step {
		rows := min(step, hi-start)
		var zd []float64
		if p.z != nil {
			zd = p.z[start*tri : (start+rows)*tri]
		} else {
			zd = ws.zb[:rows*tri]
			for r := 0; r < rows; r++ {
				lift(zd[r*tri:(r+1)*tri], p.x[(start+r)*D:(start+r+1)*D])
			}
		}
		zb := blas64.General{Rows: rows, Cols: tri, Stride: tri, Data: zd}
		mb := blas64.General{Rows: rows, Cols: C, Stride: C, Data: ws.mb[:rows*C]}
		// Margin terms: M = Z·Sᵀ (rows × C).
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, zb, sm, 0, mb)
		for r := 0; r < rows; r++ {
			w := mb.Data[r*C : (r+1)*C] // margins in, weights out
			yr := p.y[start+r]
			qy := w[yr]
			var wy float64
			for c := 0; c < C; c++ {
				if c == yr {
					continue
				}
				v, s := huber(1+qy-w[c], p.h)
				loss += v
				wy += s
				w[c] = -s
			}
			w[yr] = wy
		}
		if grad {
			// Σ wᵢ_c z̃ᵢ = Wᵀ·Z (C × m′); BLAS skips the zero weights of
			// rows whose margins are met.
			g := blas64.General{Rows: C, Cols: tri, Stride: tri, Data: gp}
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, mb, zb, 1, g)
		}
	}
	p.loss[i] = loss
}

// norm2 returns the Euclidean (Frobenius) norm of v.
func norm2(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}
