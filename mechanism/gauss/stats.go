package gauss

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/dpsql/dpsql/noise"
)

// layout places the statistics in one vector, in this order:
//
//	counts   K values n_k
//	sums     K blocks of d values S_k = Σ_{yᵢ=k} uᵢ
//	moments  lda: one packed upper triangle of M = Σ uᵢuᵢᵀ (d(d+1)/2 values)
//	         qda: K packed upper triangles of M_k = Σ_{yᵢ=k} uᵢuᵢᵀ
//	         gnb: K blocks of d values Q_k = Σ_{yᵢ=k} uᵢ∘uᵢ
//
// uᵢ ∈ [−1, 1]^d is row i mapped by the public bounds. A packed triangle
// stores (i, j), i ≤ j, row by row.
type layout struct {
	kind     string
	d, k     int
	sums     int // offset of the sums
	moments  int // offset of the moments
	blockLen int // length of one moment block
	blocks   int // number of moment blocks (1 for lda, K otherwise)
	size     int
}

func newLayout(kind string, d, k int) layout {
	l := layout{kind: kind, d: d, k: k, sums: k, moments: k + k*d}
	switch kind {
	case KindLDA:
		l.blockLen, l.blocks = d*(d+1)/2, 1
	case KindQDA:
		l.blockLen, l.blocks = d*(d+1)/2, k
	case KindGNB:
		l.blockLen, l.blocks = d, k
	}
	l.size = l.moments + l.blocks*l.blockLen
	return l
}

// packed returns the offset of (i, j), i ≤ j, in a packed upper triangle.
func (l layout) packed(i, j int) int { return i*l.d - i*(i-1)/2 + (j - i) }

// sum returns class k's sum block of v.
func (l layout) sum(v []float64, k int) []float64 {
	return v[l.sums+k*l.d : l.sums+(k+1)*l.d]
}

// moment returns moment block b of v.
func (l layout) moment(v []float64, b int) []float64 {
	return v[l.moments+b*l.blockLen : l.moments+(b+1)*l.blockLen]
}

// weights returns the per-coordinate weights of the released vector.
func (l layout) weights(w blockWeights) []float64 {
	out := make([]float64, l.size)
	for i := 0; i < l.k; i++ {
		out[i] = w.wc
	}
	for i := l.sums; i < l.moments; i++ {
		out[i] = w.ws
	}
	for b := 0; b < l.blocks; b++ {
		blk := l.moment(out, b)
		if l.kind == KindGNB {
			for i := range blk {
				blk[i] = w.wm
			}
			continue
		}
		for i := 0; i < l.d; i++ {
			blk[l.packed(i, i)] = w.wm
			for j := i + 1; j < l.d; j++ {
				blk[l.packed(i, j)] = w.wo
			}
		}
	}
	return out
}

// chunkRows is the number of buffered rows per rank-k update of a moment
// matrix.
const chunkRows = 256

// statistics makes one pass over the rows and returns the exact statistic
// vector (no noise). It is the non-private path: unexported, reached only
// through Train and the package's tests.
func (t *Trainer) statistics(X [][]float64, y []int) ([]float64, error) {
	if err := t.checkInput(X, y); err != nil {
		return nil, err
	}
	l := t.lay
	d := l.d
	v := make([]float64, l.size)
	p := t.scaler.Prepare()
	rootD := math.Sqrt(float64(p.Dim()))
	scratch := make([]float64, p.Dim())
	// Moment accumulators: full d×d upper triangles, one per block, fed
	// with chunkRows rows at a time (lda and qda).
	var acc [][]float64
	var buf [][]float64
	var fill []int
	if l.kind != KindGNB {
		acc = make([][]float64, l.blocks)
		buf = make([][]float64, l.blocks)
		fill = make([]int, l.blocks)
		for b := range acc {
			acc[b] = make([]float64, d*d)
			buf[b] = make([]float64, chunkRows*d)
		}
	}
	flush := func(b int) {
		if fill[b] == 0 {
			return
		}
		a := blas64.General{Rows: fill[b], Cols: d, Stride: d, Data: buf[b][:fill[b]*d]}
		c := blas64.Symmetric{Uplo: blas.Upper, N: d, Stride: d, Data: acc[b]}
		blas64.Syrk(blas.Trans, 1, a, 1, c)
		fill[b] = 0
	}
	u := make([]float64, d)
	for i, row := range X {
		t.unit(u, row, &p, rootD, scratch)
		k := y[i]
		if k < 0 || k >= l.k {
			k = 0
		}
		v[k]++
		s := l.sum(v, k)
		for j, uj := range u {
			s[j] += uj
		}
		switch l.kind {
		case KindGNB:
			q := l.moment(v, k)
			for j, uj := range u {
				q[j] += uj * uj
			}
		default:
			b := 0
			if l.kind == KindQDA {
				b = k
			}
			copy(buf[b][fill[b]*d:], u)
			if fill[b]++; fill[b] == chunkRows {
				flush(b)
			}
		}
	}
	for b := range acc {
		flush(b)
		blk := l.moment(v, b)
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				blk[l.packed(i, j)] = acc[b][i*d+j]
			}
		}
	}
	return v, nil
}

// unit maps a raw row to u ∈ [−1, 1]^d through the model's own Scaler (so a
// public per-feature transform added to the Scaler applies to training and
// prediction alike): u = √D·x̃ without the intercept, clamped so that the
// rounding of the rescaling cannot leave the box the sensitivities assume.
func (t *Trainer) unit(u, row []float64, p interface {
	Transform(dst, x []float64) []float64
}, rootD float64, scratch []float64) {
	z := p.Transform(scratch, row)
	for j := range u {
		x := z[j] * rootD
		switch {
		case x > 1:
			x = 1
		case x < -1:
			x = -1
		case x != x:
			x = 0
		}
		u[j] = x
	}
}

// release adds the plan's noise to the statistic vector in place: the
// vector is weighted per block, receives ONE draw of the discrete Gaussian
// (δ > 0) or Laplace (δ = 0) noise at the calibrated scale, and is
// unweighted (post-processing of the released, grid-snapped vector).
func (t *Trainer) release(v []float64) error {
	w := t.lay.weights(t.cal.w)
	for i := range v {
		v[i] *= w[i]
	}
	var err error
	if t.cfg.Delta > 0 {
		err = noise.AddGaussianVec(v, t.cal.scale)
	} else {
		err = noise.AddLaplaceVec(v, t.cal.scale)
	}
	if err != nil {
		return fmt.Errorf("gauss: adding noise: %w", err)
	}
	for i := range v {
		v[i] /= w[i]
	}
	return nil
}
