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

// chunkRows bounds the rows processed per BLAS call, so that the scratch
// memory is O(chunkRows·D) whatever n is.
const chunkRows = 1024

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

	// scratch, reused across calls
	cat  []float64   // D × C·D: [Φ_1 | … | Φ_C]
	q    []float64   // rows × C·D: x̃ᵀ[Φ_1 | … | Φ_C]
	xa   [][]float64 // per class, rows × D: the chunk's rows with w_k ≠ 0
	wa   [][]float64 // per class, rows × D: w_k·x̃ for those rows
	na   []int       // per class, number of such rows
	marg []float64   // C margins of one row
}

func newProblem(classes, dim int, x []float64, y []int, h, lambda, delta float64, b []float64) *problem {
	n := len(y)
	rows := min(n, chunkRows)
	cd := classes * dim
	return &problem{
		classes: classes, dim: dim, n: n, x: x, y: y,
		h: h, lambda: lambda, delta: delta, b: b,
		cat:  make([]float64, dim*cd),
		q:    make([]float64, rows*cd),
		xa:   make([][]float64, classes),
		wa:   make([][]float64, classes),
		na:   make([]int, classes),
		marg: make([]float64, classes),
	}
}

// size returns C·D·D, the length of a parameter vector.
func (p *problem) size() int { return p.classes * p.dim * p.dim }

// eval returns f(Φ) and, if grad is not nil, writes ∇f(Φ) into it.
func (p *problem) eval(phi, grad []float64) float64 {
	C, D := p.classes, p.dim
	dd, cd := D*D, C*D
	// cat = [Φ_1 | … | Φ_C] (D × C·D), so that one GEMM per chunk gives all
	// the products x̃ᵀΦ_k.
	for k := 0; k < C; k++ {
		for i := 0; i < D; i++ {
			copy(p.cat[i*cd+k*D:i*cd+(k+1)*D], phi[k*dd+i*D:k*dd+(i+1)*D])
		}
	}
	cat := blas64.General{Rows: D, Cols: cd, Stride: cd, Data: p.cat}
	if grad != nil {
		clear(grad)
		for k := 0; k < C; k++ {
			if p.xa[k] == nil {
				rows := min(p.n, chunkRows)
				p.xa[k] = make([]float64, rows*D)
				p.wa[k] = make([]float64, rows*D)
			}
		}
	}
	inv := 1 / float64(p.n)
	var loss float64
	for start := 0; start < p.n; start += chunkRows {
		rows := min(chunkRows, p.n-start)
		xc := blas64.General{Rows: rows, Cols: D, Stride: D, Data: p.x[start*D : (start+rows)*D]}
		q := blas64.General{Rows: rows, Cols: cd, Stride: cd, Data: p.q[:rows*cd]}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, xc, cat, 0, q)
		clear(p.na)
		for r := 0; r < rows; r++ {
			xr := xc.Data[r*D : (r+1)*D]
			qr := q.Data[r*cd : (r+1)*cd]
			for k := 0; k < C; k++ {
				var s float64
				for j, v := range xr {
					s += v * qr[k*D+j]
				}
				p.marg[k] = s
			}
			yr := p.y[start+r]
			w := p.marg // reused: margins are read before weights are written
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
			if grad == nil {
				continue
			}
			// ∇ℓ = Σ_k w_k x̃x̃ᵀ in block k: keep the row for every class
			// with w_k ≠ 0 (few once most margins are met).
			for k, wk := range w {
				if wk == 0 {
					continue
				}
				a := p.na[k]
				copy(p.xa[k][a*D:(a+1)*D], xr)
				wa := p.wa[k][a*D : (a+1)*D]
				for j, v := range xr {
					wa[j] = wk * v
				}
				p.na[k]++
			}
		}
		if grad == nil {
			continue
		}
		p.gradBlocks(grad, inv)
	}
	value := loss * inv
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

// gradBlocks adds inv·Σ_rows w_k·x̃x̃ᵀ of the current chunk to every
// class block k of grad. The blocks are independent, so for D ≥
// minParallelDim they are computed on up to GOMAXPROCS goroutines (each
// block by one goroutine, the same arithmetic as serially).
func (p *problem) gradBlocks(grad []float64, inv float64) {
	D := p.dim
	dd := D * D
	one := func(k int) {
		a := p.na[k]
		if a == 0 {
			return
		}
		xa := blas64.General{Rows: a, Cols: D, Stride: D, Data: p.xa[k][:a*D]}
		wa := blas64.General{Rows: a, Cols: D, Stride: D, Data: p.wa[k][:a*D]}
		gk := blas64.General{Rows: D, Cols: D, Stride: D, Data: grad[k*dd : (k+1)*dd]}
		blas64.Gemm(blas.Trans, blas.NoTrans, inv, xa, wa, 1, gk)
	}
	workers := min(p.classes, runtime.GOMAXPROCS(0))
	if workers <= 1 || D < minParallelDim {
		for k := range p.na {
			one(k)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= p.classes {
					return
				}
				one(k)
			}
		}()
	}
	wg.Wait()
}

// norm2 returns the Euclidean (Frobenius) norm of v.
func norm2(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}
