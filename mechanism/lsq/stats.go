package lsq

import (
	"fmt"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/mechanism"
)

// featureMap is the public map φ from a raw row to the feature space:
// mechanism.Scaler (public bounds → unit ball, intercept) followed by random
// Fourier features for the rbf, laplacian and cauchy kernels. ‖φ(x)‖ ≤ κ = 1
// for every possible row.
type featureMap struct {
	scaler mechanism.Scaler
	prep   mechanism.Prepared // scaler with precomputed maps (hot loop)
	rff    *mechanism.RFF     // nil for the linear kernel
	f      int                // F, the dimension of φ
}

func newFeatureMap(scaler mechanism.Scaler, rff *mechanism.RFF) featureMap {
	f := scaler.Dim()
	if rff != nil {
		f = rff.Dim()
	}
	return featureMap{scaler: scaler, prep: scaler.Prepare(), rff: rff, f: f}
}

// apply writes φ(x) into dst (length F); z is scratch of length Scaler.Dim().
func (m *featureMap) apply(dst, z, x []float64) {
	if m.rff == nil {
		m.prep.Transform(dst, x)
		return
	}
	m.rff.Map(dst, m.prep.Transform(z, x))
}

// labelMap maps a raw label to y′ = (clip(y) − mid)/half ∈ [−1, 1] (M = 1)
// with the public bounds; NULL (NaN) maps to the midpoint, y′ = 0.
type labelMap struct{ lo, hi float64 }

func (l labelMap) unit(y float64) float64 {
	mid, half := (l.lo+l.hi)/2, (l.hi-l.lo)/2
	u := (mechanism.Clip(y, l.lo, l.hi) - mid) / half
	return mechanism.Clip(u, -1, 1)
}

// value maps y′ back to label units.
func (l labelMap) value(u float64) float64 {
	mid, half := (l.lo+l.hi)/2, (l.hi-l.lo)/2
	return mid + half*u
}

// stats are the sufficient statistics of least squares in feature space:
// S = Σᵢ φ(xᵢ)φ(xᵢ)ᵀ (upper triangle) and c = Σᵢ y′ᵢφ(xᵢ).
type stats struct {
	s *mat.SymDense
	c []float64
	n int
}

// statsBatch is the number of rows mapped into a dense block before its
// contribution to S and c is added (long dot products per entry).
const statsBatch = 512

// minRowsPerWorker keeps small inputs on one goroutine.
const minRowsPerWorker = 1 << 14

// checkRows verifies the public shape of the input: n rows of d values.
func checkRows(X [][]float64, y []float64, n, d int) error {
	if len(X) != n {
		return fmt.Errorf("got %d rows, the plan was made for n = %d", len(X), n)
	}
	if len(y) != n {
		return fmt.Errorf("got %d labels for %d rows", len(y), n)
	}
	for i, row := range X {
		if len(row) != d {
			return fmt.Errorf("row %d has %d feature values, want %d", i, len(row), d)
		}
	}
	return nil
}

// sufficientStats makes one pass over the rows, in parallel blocks: each
// worker maps statsBatch rows at a time into a dense block B and adds the
// upper triangle of BᵀB and Bᵀy′ to its own accumulators, which are summed
// at the end.
func sufficientStats(X [][]float64, y []float64, fm featureMap, lm labelMap) stats {
	n := len(X)
	workers := runtime.GOMAXPROCS(0)
	if w := n / minRowsPerWorker; w < workers {
		workers = max(w, 1)
	}
	parts := make([]stats, workers)
	var wg sync.WaitGroup
	for k := 0; k < workers; k++ {
		lo, hi := k*n/workers, (k+1)*n/workers
		wg.Add(1)
		go func(k, lo, hi int) {
			defer wg.Done()
			parts[k] = accumulate(X[lo:hi], y[lo:hi], fm, lm)
		}(k, lo, hi)
	}
	wg.Wait()
	out := parts[0]
	for _, p := range parts[1:] {
		out.s.AddSym(out.s, p.s)
		for j := range out.c {
			out.c[j] += p.c[j]
		}
		out.n += p.n
	}
	return out
}

// accumulate is one worker's share of the pass.
func accumulate(X [][]float64, y []float64, fm featureMap, lm labelMap) stats {
	a := newAccumulator(fm, lm)
	for start := 0; start < len(X); start += statsBatch {
		rows := min(statsBatch, len(X)-start)
		a.addBlock(rows, func(r int) ([]float64, float64) { return X[start+r], y[start+r] })
	}
	return a.stats()
}

// midBlocks is the number of blocks whose sums are collected in a middle
// accumulator before it is added to the total: two-level summation keeps
// the depth of every entry's summation tree (hence its rounding bound,
// statsDepth) near statsBatch + midBlocks + n/(statsBatch·midBlocks)
// instead of n/statsBatch.
const midBlocks = 512

// maxWorkers bounds the number of partial sums added at the end (a public
// constant, so the rounding bound does not depend on the machine).
const maxWorkers = 256

// statsDepth bounds the number of additions any term of S = Σφφᵀ or
// c = Σy′φ goes through: a Ddot over ≤ statsBatch rows, ≤ midBlocks block
// sums into the middle accumulator, ≤ ⌈n/(statsBatch·midBlocks)⌉ flushes
// per worker, ≤ maxWorkers partial sums. The computed S and c then satisfy
// ‖Ŝ − S‖₂ ≤ γ_d·Σ‖φᵢ‖² and ‖ĉ − c‖ ≤ γ_d·Σ|y′ᵢ|‖φᵢ‖ (Higham, Lemma 3.1 for
// any summation tree of depth d), S and c being the exact sums of the
// computed features.
func statsDepth(n int) int {
	d := statsBatch + midBlocks + (n+statsBatch*midBlocks-1)/(statsBatch*midBlocks) + maxWorkers
	return min(max(n, 1), d)
}

// accumulator holds one worker's partial sums.
type accumulator struct {
	fm     featureMap
	lm     labelMap
	sData  []float64 // total S (upper triangle)
	c      []float64 // total c
	sMid   []float64 // middle accumulators, flushed every midBlocks blocks
	cMid   []float64
	blocks int
	block  []float64
	yb     []float64
	row    []float64
	z      []float64
	n      int
}

func newAccumulator(fm featureMap, lm labelMap) *accumulator {
	f := fm.f
	return &accumulator{fm: fm, lm: lm, sData: make([]float64, f*f), c: make([]float64, f),
		sMid: make([]float64, f*f), cMid: make([]float64, f),
		// The block is stored transposed (feature-major): column j of the
		// batch is contiguous, so each entry of the upper triangle of BᵀB is
		// one long dot product (vectorised Ddot) instead of many short axpys.
		block: make([]float64, f*statsBatch), yb: make([]float64, statsBatch),
		row: make([]float64, f), z: make([]float64, fm.scaler.Dim())}
}

// addBlock adds rows ≤ statsBatch rows, row r given by get(r).
func (a *accumulator) addBlock(rows int, get func(r int) ([]float64, float64)) {
	f := a.fm.f
	for r := 0; r < rows; r++ {
		x, y := get(r)
		a.fm.apply(a.row, a.z, x)
		for j, v := range a.row {
			a.block[j*statsBatch+r] = v
		}
		a.yb[r] = a.lm.unit(y)
	}
	vy := blas64.Vector{N: rows, Inc: 1, Data: a.yb[:rows]}
	for j := 0; j < f; j++ {
		vj := blas64.Vector{N: rows, Inc: 1, Data: a.block[j*statsBatch : j*statsBatch+rows]}
		for k := j; k < f; k++ {
			a.sMid[j*f+k] += blas64.Dot(vj, blas64.Vector{N: rows, Inc: 1, Data: a.block[k*statsBatch : k*statsBatch+rows]})
		}
		a.cMid[j] += blas64.Dot(vj, vy)
	}
	a.n += rows
	if a.blocks++; a.blocks == midBlocks {
		a.flush()
	}
}

// flush adds the middle accumulators to the totals.
func (a *accumulator) flush() {
	for i, v := range a.sMid {
		a.sData[i] += v
	}
	for i, v := range a.cMid {
		a.c[i] += v
	}
	clear(a.sMid)
	clear(a.cMid)
	a.blocks = 0
}

func (a *accumulator) stats() stats {
	a.flush()
	return stats{s: mat.NewSymDense(a.fm.f, a.sData), c: a.c, n: a.n}
}

// streamStats is sufficientStats for rows that arrive one at a time from a
// storage scan (d feature values followed by the raw label): the scan fills
// flat chunks of statsBatch rows while the workers fold finished chunks into
// their accumulators, so reading and arithmetic overlap and no n × d copy of
// the table is ever held.
func streamStats(d int, fm featureMap, lm labelMap, scan func(emit func(row []float64) error) error) (stats, error) {
	workers := max(runtime.GOMAXPROCS(0), 1)
	parts := make([]*accumulator, workers)
	for k := range parts {
		parts[k] = newAccumulator(fm, lm)
	}
	if err := mechanism.StreamBlocks(d, statsBatch, workers, scan, func(k, rows int, get func(r int) ([]float64, float64)) {
		parts[k].addBlock(rows, get)
	}); err != nil {
		return stats{}, err
	}
	out := parts[0].stats()
	for _, p := range parts[1:] {
		ps := p.stats()
		out.s.AddSym(out.s, ps.s)
		for j := range out.c {
			out.c[j] += ps.c[j]
		}
		out.n += ps.n
	}
	return out, nil
}
