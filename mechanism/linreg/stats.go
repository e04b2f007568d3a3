package linreg

import (
	"sync"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/dpsql/dpsql/mechanism"
)

// statsBatch is the number of rows mapped into a dense block before its
// contribution to XᵀX and Xᵀy is added. It also enters the rounding bound
// (depth), so it is a constant.
const statsBatch = 512

// minRowsPerWorker keeps small inputs on one goroutine.
const minRowsPerWorker = 1 << 14

// labelUnit maps a raw label to y′ = (clip(y) − mid)/half ∈ [−1, 1] with the
// public bounds; NULL (NaN) maps to the midpoint, y′ = 0.
func labelUnit(y, lo, hi float64) float64 {
	mid, half := (lo+hi)/2, (hi-lo)/2
	return mechanism.Clip((mechanism.Clip(y, lo, hi)-mid)/half, -1, 1)
}

// stats are the sufficient statistics A = Σxxᵀ (full F×F, row-major, both
// triangles filled) and c = Σy′x of n scaled rows.
type stats struct {
	a []float64
	c []float64
	n int
	f int
}

// accumulator is one worker's share of the pass: upper triangle of A and c.
type accumulator struct {
	prep   mechanism.Prepared
	lo, hi float64
	f      int
	a      []float64
	c      []float64
	block  []float64 // feature-major: column j of the block is contiguous
	yb     []float64
	row    []float64
	n      int
	clip   *privClip // nil: public bounds
}

func newAccumulator(prep mechanism.Prepared, lo, hi float64, clip *privClip) *accumulator {
	if clip != nil && clip.prep != nil {
		prep = *clip.prep // the released box (§13) replaces the declared one
	}
	f := prep.Dim()
	return &accumulator{prep: prep, lo: lo, hi: hi, f: f, clip: clip, a: make([]float64, f*f), c: make([]float64, f),
		block: make([]float64, f*statsBatch), yb: make([]float64, statsBatch), row: make([]float64, f)}
}

// addBlock adds rows ≤ statsBatch rows, row r given by get(r). Every entry
// of A and c receives one block dot product (≤ statsBatch terms) per call.
func (a *accumulator) addBlock(rows int, get func(r int) ([]float64, float64)) {
	f := a.f
	for r := 0; r < rows; r++ {
		x, y := get(r)
		a.prep.Transform(a.row, x)
		yv := labelUnit(y, a.lo, a.hi)
		if a.clip != nil {
			yv = a.clip.apply(a.row, yv)
		}
		for j, v := range a.row {
			a.block[j*statsBatch+r] = v
		}
		a.yb[r] = yv
	}
	vy := blas64.Vector{N: rows, Inc: 1, Data: a.yb[:rows]}
	for j := 0; j < f; j++ {
		vj := blas64.Vector{N: rows, Inc: 1, Data: a.block[j*statsBatch : j*statsBatch+rows]}
		for k := j; k < f; k++ {
			a.a[j*f+k] += blas64.Dot(vj, blas64.Vector{N: rows, Inc: 1, Data: a.block[k*statsBatch : k*statsBatch+rows]})
		}
		a.c[j] += blas64.Dot(vj, vy)
	}
	a.n += rows
}

// merge adds the worker sums (one addition per worker and entry) and fills
// the lower triangle.
func merge(parts []*accumulator) stats {
	f := parts[0].f
	out := stats{a: make([]float64, f*f), c: make([]float64, f), f: f}
	for _, p := range parts {
		for j := 0; j < f; j++ {
			for k := j; k < f; k++ {
				out.a[j*f+k] += p.a[j*f+k]
			}
			out.c[j] += p.c[j]
		}
		out.n += p.n
	}
	for j := 0; j < f; j++ {
		for k := 0; k < j; k++ {
			out.a[j*f+k] = out.a[k*f+j]
		}
	}
	return out
}

// sufficientStats makes one pass over in-memory rows with at most workers
// goroutines.
func sufficientStats(X [][]float64, y []float64, prep mechanism.Prepared, lo, hi float64, workers int, clip *privClip) stats {
	n := len(X)
	w := min(workers, max(n/minRowsPerWorker, 1))
	parts := make([]*accumulator, w)
	var wg sync.WaitGroup
	for k := range parts {
		parts[k] = newAccumulator(prep, lo, hi, clip)
		a, from, to := parts[k], k*n/w, (k+1)*n/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			for start := from; start < to; start += statsBatch {
				rows := min(statsBatch, to-start)
				a.addBlock(rows, func(r int) ([]float64, float64) { return X[start+r], y[start+r] })
			}
		}()
	}
	wg.Wait()
	return merge(parts)
}

// streamStats is sufficientStats for rows that arrive one at a time from a
// storage scan (d feature values followed by the raw label): the scan fills
// chunks of statsBatch rows while the workers fold finished chunks into
// their accumulators; no n × d copy of the table is held.
func streamStats(d int, prep mechanism.Prepared, lo, hi float64, workers int, scan func(emit func(row []float64) error) error) (stats, error) {
	parts := make([]*accumulator, workers)
	for k := range parts {
		parts[k] = newAccumulator(prep, lo, hi, nil)
	}
	if err := mechanism.StreamBlocks(d, statsBatch, workers, scan, func(k, rows int, get func(r int) ([]float64, float64)) {
		parts[k].addBlock(rows, get)
	}); err != nil {
		return stats{}, err
	}
	return merge(parts), nil
}
