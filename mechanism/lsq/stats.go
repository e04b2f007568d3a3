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
	rff    *mechanism.RFF // nil for the linear kernel
	f      int            // F, the dimension of φ
}

func newFeatureMap(scaler mechanism.Scaler, rff *mechanism.RFF) featureMap {
	f := scaler.Dim()
	if rff != nil {
		f = rff.Dim()
	}
	return featureMap{scaler: scaler, rff: rff, f: f}
}

// apply writes φ(x) into dst (length F); z is scratch of length Scaler.Dim().
func (m *featureMap) apply(dst, z, x []float64) {
	if m.rff == nil {
		m.scaler.Transform(dst, x)
		return
	}
	m.rff.Map(dst, m.scaler.Transform(z, x))
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
	f := fm.f
	sData := make([]float64, f*f)
	c := make([]float64, f)
	// The block is stored transposed (feature-major): column j of the batch
	// is contiguous, so each entry of the upper triangle of BᵀB is one long
	// dot product (vectorised Ddot) instead of many short axpys.
	block := make([]float64, f*statsBatch)
	yb := make([]float64, statsBatch)
	row := make([]float64, f)
	z := make([]float64, fm.scaler.Dim())
	for start := 0; start < len(X); start += statsBatch {
		rows := min(statsBatch, len(X)-start)
		for r := 0; r < rows; r++ {
			fm.apply(row, z, X[start+r])
			for j, v := range row {
				block[j*statsBatch+r] = v
			}
			yb[r] = lm.unit(y[start+r])
		}
		vy := blas64.Vector{N: rows, Inc: 1, Data: yb[:rows]}
		for j := 0; j < f; j++ {
			vj := blas64.Vector{N: rows, Inc: 1, Data: block[j*statsBatch : j*statsBatch+rows]}
			for k := j; k < f; k++ {
				sData[j*f+k] += blas64.Dot(vj, blas64.Vector{N: rows, Inc: 1, Data: block[k*statsBatch : k*statsBatch+rows]})
			}
			c[j] += blas64.Dot(vj, vy)
		}
	}
	return stats{s: mat.NewSymDense(f, sData), c: c, n: len(X)}
}
