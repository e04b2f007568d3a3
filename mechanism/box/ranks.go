package box

import (
	"math"
	"math/bits"
	"runtime"
	"sort"
	"sync"
)

// The rank counter (docs/mechanisms/box.md §3). Every value is counted in
// the cell of the smallest point ≥ it (its clip to the declared bounds
// included) by a search on order-preserving integer keys that does the
// same operations for every value:
//
//  1. key: kv = orderKey(v), three integer operations on the float's bits.
//  2. bucket: h(kv) = kv's top bucketBits bits (sign, exponent and two
//     mantissa bits: resolves the points that crowd near 0 and the linear
//     ones) + the octave (bit length) of the key distance above an anchor
//     a₁ − the octave of the key distance below an anchor a₂ (bucket), or
//     the signed octave of the distance to one anchor (bucketOne): resolve
//     the points that crowd, geometrically, at the declared ends or around
//     the released median, inside one binade. h is non-decreasing in kv,
//     so the answer for a value of bucket t lies in [start[t], start[t+1]],
//     start[t] = #{points p : h(key(p)) < t}: a byte table per feature.
//  3. search: a branch-free binary search of one fixed depth D in the
//     window of 2^D keys from start[h], D the smallest depth that covers the
//     most crowded bucket of any feature (a function of the public points).
//
// No clip and no NaN test: every point is ≥ the declared lower bound, so a
// value below it finds the first point anyway; the point at the declared
// upper bound is searched under the key of +Inf, so a value above it finds
// that point; a positive NaN's key is above +Inf's (it finds the first pad
// key, MaxUint64) and a negative NaN's below −Inf's, where a dead point at
// the largest negative NaN's key catches it. Neither the pad cell nor the
// dead cell is read by any rank. The bucket of a point is computed exactly
// as a value's (the same function on its key).

// orderKey maps a float64 to a uint64 in the same order for numbers (−0
// one below +0, no key between them, so both count alike), positive NaNs
// above +Inf and negative NaNs below −Inf: the sign bit set for
// non-negatives, every bit flipped for negatives.
func orderKey(v float64) uint64 {
	b := math.Float64bits(v)
	return b ^ (uint64(int64(b)>>63) | 1<<63)
}

const (
	// keyInf is orderKey(+Inf), the search key of the upper bound's point.
	keyInf = 0xfff0000000000000
	// keyDead is the largest key of a negative NaN (orderKey(−Inf) − 1),
	// the dead point that catches negative NaNs.
	keyDead = 0x000ffffffffffffe
)

// bucketBits is the number of top key bits in the bucket.
const bucketBits = 14

// bucket is h(kv) for anchors a₁ (distance above) and a₂ (distance below):
// non-decreasing in kv, in [0, bucketCount). The borrow masks and the bit
// lengths (of x|1, so never of 0) have no branch.
func bucket(kv, a1, a2 uint64) int {
	up, bu := bits.Sub64(kv, a1, 0)
	dn, bd := bits.Sub64(a2, kv, 0)
	return int(kv>>(64-bucketBits)) + bits.Len64(up&^-bu|1) - bits.Len64(dn&^-bd|1) + 63
}

// bucketOne is h(kv) for one anchor a: the octave of the distance to a,
// complemented below a (so non-decreasing in kv) — seven operations instead
// of the two distances' fourteen. Below a, ^d = a − kv − 1 and ^l = −l − 1
// (ones' complements, one operation each). In [0, bucketCount); the mask
// 255 is a no-op (the sum is in [0, 129]) that lets the compiler drop the
// table's bounds check.
func bucketOne(kv, a uint64) int {
	d, b := bits.Sub64(kv, a, 0)
	s := -b // all ones iff kv < a
	l := uint64(bits.Len64(d ^ s | 1))
	return int(kv>>(64-bucketBits)) + int((l^s+65)&255)
}

// bucketCount bounds bucket and bucketOne: 2^bucketBits − 1 + 255 <
// bucketCount.
const bucketCount = 1<<bucketBits + 256

// maxPoints is the most points per feature a counter table holds (its
// entries are bytes, and the dead point is one more); every grid (≤ 179
// points, TestGrid) and candidate set (2·(Octaves·StepsPerOctave + 1))
// fits. New refuses a larger grid.
const maxPoints = 254

// cellSize (≥ maxPoints + 1 + the widest window, 256) is the per-feature
// size of the key and cell arrays. The features' arrays are tableStride and
// cellStride entries apart, three cache lines more than their sizes, so
// that the hot entries of features alike do not all fall in the same L1
// cache sets.
const (
	cellSize    = 512
	tableStride = bucketCount + 3*64
	cellStride  = cellSize + 3*8
)

// rankTable is the public search structure of one counting pass: per
// feature k its bucket function (one[k]) and anchors a1[k], a2[k], the
// window start start[k·tableStride + t] of each bucket t, the search keys
// keys[k·cellStride + i] of the dead point (i = 0) and the points (i ≥ 1),
// padded with MaxUint64; half = 2^(D−1) (0: D = 0).
type rankTable struct {
	a1, a2 []uint64
	one    []bool // bucketOne(kv, a1[k]) instead of bucket(kv, a1[k], a2[k])
	start  []uint8
	keys   []uint64
	half   int
}

// rankBucket is one choice of a feature's bucket function.
type rankBucket struct {
	one    bool
	a1, a2 uint64
}

// of is r's bucket of kv (the branch is on the public choice, not on kv).
func (r rankBucket) of(kv uint64) int {
	if r.one {
		return bucketOne(kv, r.a1)
	}
	return bucket(kv, r.a1, r.a2)
}

// newRankTable builds the table of the features' points pts[k], all inside
// the declared [lo[k], hi[k]], sorted and distinct, at most maxPoints each.
// Each feature's bucket is one of: bucketOne around the point closest to
// its successor (where the bound candidates crowd, around the released
// median), around lo or around hi, or bucket with anchors (lo, hi) (the
// grid's crowds at both ends): the depth D covers the least crowded choice
// of every feature, and each feature then takes the first choice in that
// order (the cheaper function first) that D covers. A function of the
// public points only.
func newRankTable(lo, hi []float64, pts [][]float64) *rankTable {
	d := len(pts)
	t := &rankTable{a1: make([]uint64, d), a2: make([]uint64, d), one: make([]bool, d), start: make([]uint8, d*tableStride), keys: make([]uint64, d*cellStride)}
	choices := make([][]rankBucket, d)
	crowds := make([][]int, d)
	width := 1 // the most points a search must choose among
	for k, ps := range pts {
		if len(ps) > maxPoints {
			panic("box: more than maxPoints points per feature") // public sizes, fixed by construction
		}
		ek := t.keys[k*cellStride : k*cellStride+cellSize]
		for i := range ek {
			ek[i] = math.MaxUint64
		}
		ek[0] = keyDead
		for i, p := range ps {
			ek[i+1] = orderKey(p + 0) // −0 as +0
			if p == hi[k] {
				ek[i+1] = keyInf // a value above hi counts at hi
			}
		}
		ek = ek[:len(ps)+1]
		klo, khi := orderKey(lo[k]+0), orderKey(hi[k]+0)
		c := ek[closest(ps)+1]
		choices[k] = []rankBucket{{true, c, c}, {true, klo, klo}, {true, khi, khi}, {false, klo, khi}}
		least := len(ek)
		for _, r := range choices[k] {
			w := crowd(ek, r)
			crowds[k] = append(crowds[k], w)
			least = min(least, w)
		}
		width = max(width, least+1)
	}
	win := 1
	for win < width {
		win *= 2
	}
	t.half = win / 2
	for k, ps := range pts {
		var r rankBucket
		for i, w := range crowds[k] {
			if w+1 <= win {
				r = choices[k][i]
				break
			}
		}
		t.use(k, len(ps), r)
	}
	return t
}

// use sets feature k's bucket function to r and fills its bucket table
// from its n points' keys: start[b] = #{keys with bucket < b}, runs of
// equal entries between the keys' buckets (non-decreasing along the keys).
func (t *rankTable) use(k, n int, r rankBucket) {
	t.one[k], t.a1[k], t.a2[k] = r.one, r.a1, r.a2
	ek := t.keys[k*cellStride : k*cellStride+n+1]
	st := t.start[k*tableStride : k*tableStride+bucketCount]
	b := 0
	for i, x := range ek {
		for h := r.of(x); b <= h; b++ {
			st[b] = uint8(i)
		}
	}
	for ; b < len(st); b++ {
		st[b] = uint8(len(ek))
	}
}

// crowd is the most of the keys ek (sorted) that share a bucket.
func crowd(ek []uint64, r rankBucket) int {
	most, run := 0, 0
	for i, x := range ek {
		run++
		if i > 0 && r.of(x) != r.of(ek[i-1]) {
			run = 1
		}
		most = max(most, run)
	}
	return most
}

// closest is the index of the point closest to its successor (the first
// such; 0 for a single point).
func closest(ps []float64) int {
	best, gap := 0, math.Inf(1)
	for i := 1; i < len(ps); i++ {
		if g := ps[i] - ps[i-1]; g < gap {
			best, gap = i-1, g
		}
	}
	return best
}

// blockRows is the number of rows counted feature by feature: one feature's
// loop runs over a block whose rows stay in the L1 cache for the next, and
// keeps that feature's anchors and tables in registers.
const blockRows = 128

// countBlock counts the rows of X (X[i][k] is feature k's value) in c
// (cells c[k·cellStride + i]): the same operations for every value, NaN
// and values outside the box included. The bucket function and the search
// depth are specialised per feature (both public).
func (t *rankTable) countBlock(X [][]float64, c []int64) {
	d := len(t.a1)
	for k := 0; k < d; k++ {
		st := (*[bucketCount]uint8)(t.start[k*tableStride:])
		ks := (*[cellSize]uint64)(t.keys[k*cellStride:])
		cs := (*[cellSize]int64)(c[k*cellStride:])
		a1, a2 := t.a1[k], t.a2[k]
		if k+1 < d && t.one[k] == t.one[k+1] {
			st2 := (*[bucketCount]uint8)(t.start[(k+1)*tableStride:])
			ks2 := (*[cellSize]uint64)(t.keys[(k+1)*cellStride:])
			cs2 := (*[cellSize]int64)(c[(k+1)*cellStride:])
			b1, b2 := t.a1[k+1], t.a2[k+1]
			paired := true
			switch {
			case t.half == 1 && t.one[k]:
				countOne1x2(X, k, a1, b1, st, st2, ks, ks2, cs, cs2)
			case t.half == 2 && t.one[k]:
				countOne2x2(X, k, a1, b1, st, st2, ks, ks2, cs, cs2)
			case t.half == 2 && !t.one[k]:
				countTwo2x2(X, k, a1, a2, b1, b2, st, st2, ks, ks2, cs, cs2)
			case t.half == 4 && !t.one[k]:
				countTwo3x2(X, k, a1, a2, b1, b2, st, st2, ks, ks2, cs, cs2)
			default:
				paired = false
			}
			if paired {
				k++
				continue
			}
		}
		switch {
		case t.half == 1 && t.one[k]:
			countOne1(X, k, a1, st, ks, cs)
		case t.half == 2 && t.one[k]:
			countOne2(X, k, a1, st, ks, cs)
		case t.half == 4 && t.one[k]:
			countOne3(X, k, a1, st, ks, cs)
		case t.half == 1:
			countTwo1(X, k, a1, a2, st, ks, cs)
		case t.half == 2:
			countTwo2(X, k, a1, a2, st, ks, cs)
		case t.half == 4:
			countTwo3(X, k, a1, a2, st, ks, cs)
		default:
			countD(X, k, rankBucket{t.one[k], a1, a2}, st, ks, cs, t.half)
		}
	}
}

// The kernels count feature k (and k+1: the x2 ones, one row header load
// for both) of the rows X: countTwoD with bucket, countOneD with
// bucketOne, at search depth D. All their calls are inlined; the indices
// stay below maxPoints + 2^D < cellSize.

// level is one level of the window search: i + half if the key at
// i + half − 1 is below kv (a borrow mask, no branch).
func level(ks *[cellSize]uint64, i int, kv uint64, half int) int {
	_, below := bits.Sub64(ks[i+half-1], kv, 0)
	return i + int(-below)&half
}

// tally is the last level and the count: the cell is i + 1 if the key at
// i is below kv, else i.
func tally(cs *[cellSize]int64, ks *[cellSize]uint64, i int, kv uint64) {
	_, below := bits.Sub64(ks[i], kv, 0)
	cs[(i-int(-below))&(cellSize-1)]++
}

func countTwo1(X [][]float64, k int, a1, a2 uint64, st *[bucketCount]uint8, ks *[cellSize]uint64, cs *[cellSize]int64) {
	for _, r := range X {
		kv := orderKey(r[k])
		tally(cs, ks, int(st[bucket(kv, a1, a2)]), kv)
	}
}

func countTwo2(X [][]float64, k int, a1, a2 uint64, st *[bucketCount]uint8, ks *[cellSize]uint64, cs *[cellSize]int64) {
	for _, r := range X {
		kv := orderKey(r[k])
		tally(cs, ks, level(ks, int(st[bucket(kv, a1, a2)]), kv, 2), kv)
	}
}

func countTwo3(X [][]float64, k int, a1, a2 uint64, st *[bucketCount]uint8, ks *[cellSize]uint64, cs *[cellSize]int64) {
	for _, r := range X {
		kv := orderKey(r[k])
		tally(cs, ks, level(ks, level(ks, int(st[bucket(kv, a1, a2)]), kv, 4), kv, 2), kv)
	}
}

func countOne1(X [][]float64, k int, a uint64, st *[bucketCount]uint8, ks *[cellSize]uint64, cs *[cellSize]int64) {
	for _, r := range X {
		kv := orderKey(r[k])
		tally(cs, ks, int(st[bucketOne(kv, a)]), kv)
	}
}

func countOne2(X [][]float64, k int, a uint64, st *[bucketCount]uint8, ks *[cellSize]uint64, cs *[cellSize]int64) {
	for _, r := range X {
		kv := orderKey(r[k])
		tally(cs, ks, level(ks, int(st[bucketOne(kv, a)]), kv, 2), kv)
	}
}

func countOne3(X [][]float64, k int, a uint64, st *[bucketCount]uint8, ks *[cellSize]uint64, cs *[cellSize]int64) {
	for _, r := range X {
		kv := orderKey(r[k])
		tally(cs, ks, level(ks, level(ks, int(st[bucketOne(kv, a)]), kv, 4), kv, 2), kv)
	}
}

func countTwo2x2(X [][]float64, k int, a1, a2, b1, b2 uint64, st, st2 *[bucketCount]uint8, ks, ks2 *[cellSize]uint64, cs, cs2 *[cellSize]int64) {
	for _, r := range X {
		r = r[k : k+2]
		kv := orderKey(r[0])
		tally(cs, ks, level(ks, int(st[bucket(kv, a1, a2)]), kv, 2), kv)
		kw := orderKey(r[1])
		tally(cs2, ks2, level(ks2, int(st2[bucket(kw, b1, b2)]), kw, 2), kw)
	}
}

func countTwo3x2(X [][]float64, k int, a1, a2, b1, b2 uint64, st, st2 *[bucketCount]uint8, ks, ks2 *[cellSize]uint64, cs, cs2 *[cellSize]int64) {
	for _, r := range X {
		r = r[k : k+2]
		kv := orderKey(r[0])
		tally(cs, ks, level(ks, level(ks, int(st[bucket(kv, a1, a2)]), kv, 4), kv, 2), kv)
		kw := orderKey(r[1])
		tally(cs2, ks2, level(ks2, level(ks2, int(st2[bucket(kw, b1, b2)]), kw, 4), kw, 2), kw)
	}
}

func countOne1x2(X [][]float64, k int, a, b uint64, st, st2 *[bucketCount]uint8, ks, ks2 *[cellSize]uint64, cs, cs2 *[cellSize]int64) {
	for _, r := range X {
		r = r[k : k+2]
		kv := orderKey(r[0])
		tally(cs, ks, int(st[bucketOne(kv, a)]), kv)
		kw := orderKey(r[1])
		tally(cs2, ks2, int(st2[bucketOne(kw, b)]), kw)
	}
}

func countOne2x2(X [][]float64, k int, a, b uint64, st, st2 *[bucketCount]uint8, ks, ks2 *[cellSize]uint64, cs, cs2 *[cellSize]int64) {
	for _, r := range X {
		r = r[k : k+2]
		kv := orderKey(r[0])
		tally(cs, ks, level(ks, int(st[bucketOne(kv, a)]), kv, 2), kv)
		kw := orderKey(r[1])
		tally(cs2, ks2, level(ks2, int(st2[bucketOne(kw, b)]), kw, 2), kw)
	}
}

// countD counts at any depth (half = 2^(D−1) ≤ 128), through r.of.
func countD(X [][]float64, k int, rb rankBucket, st *[bucketCount]uint8, ks *[cellSize]uint64, cs *[cellSize]int64, half0 int) {
	for _, r := range X {
		kv := orderKey(r[k])
		i := int(st[rb.of(kv)])
		for half := half0; half > 0; half >>= 1 {
			i = level(ks, i, kv, half)
		}
		cs[i&(cellSize-1)]++
	}
}

// cellRanksRows returns, per feature k, rank(x) = #{v ≤ x} over the values
// of feature fs[k].j clipped to its declared bounds (NaN = NULL counted
// nowhere), for x among the sorted distinct points pts[k] (inside the
// declared bounds, at most maxPoints), from the rows X[i] whose k-th value
// is feature fs[k].j's (every row of length at least len(fs)): blocks of
// blockRows rows counted in place, no copy.
func (p *Plan) cellRanksRows(fs []featureRelease, pts [][]float64, X [][]float64) []func(float64) float64 {
	return p.ranks(fs, pts, func(t *rankTable, first, last int, c []int64) {
		for i := first; i < last; i += blockRows {
			t.countBlock(X[i:min(i+blockRows, last)], c)
		}
	})
}

// ranks runs count on one contiguous part of the rows per worker (workers
// = cores) and turns the summed integer cell counts into ranks: the result
// does not depend on the schedule. The cell of point i is i + 1 (cell 0 is
// the dead point's).
func (p *Plan) ranks(fs []featureRelease, pts [][]float64, count func(t *rankTable, first, last int, c []int64)) []func(float64) float64 {
	d := len(fs)
	lo, hi := make([]float64, d), make([]float64, d)
	for k, f := range fs {
		lo[k], hi[k] = p.lo[f.j], p.hi[f.j]
	}
	t := newRankTable(lo, hi, pts)
	workers := max(1, min(runtime.GOMAXPROCS(0), p.n/8192))
	parts := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := range parts {
		c := make([]int64, d*cellStride)
		parts[w] = c
		first, last := w*p.n/workers, (w+1)*p.n/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			count(t, first, last, c)
		}()
	}
	wg.Wait()
	out := make([]func(float64) float64, d)
	for k := range fs {
		cum := make([]float64, len(pts[k]))
		var r int64
		for i := range cum {
			for _, c := range parts {
				r += c[k*cellStride+i+1]
			}
			cum[i] = float64(r)
		}
		ps := pts[k]
		out[k] = func(x float64) float64 {
			// x is one of ps (every caller asks for a candidate).
			return cum[sort.SearchFloat64s(ps, x)]
		}
	}
	return out
}
