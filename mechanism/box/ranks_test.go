package box

import (
	"math"
	"math/rand/v2"
	"testing"
)

// rankBoxes are declared boxes where the counter's buckets could go wrong:
// ordinary, one end at 0, 0 inside, all negative, narrow far from 0, huge
// (the key distances span every binade), subnormal, one ulp wide.
var rankBoxes = [][2]float64{
	{-1, 1}, {0, 100}, {1, 16000}, {0, 1}, {-1e6, 3}, {5, 7}, {-3, -1}, {100, 101}, {-1, 1000}, {-1000, 1},
	{-1e308, 1e308}, {-math.MaxFloat64, math.MaxFloat64}, {0, math.MaxFloat64}, {1e300, 1.0000001e300},
	{0, 1e-300}, {0, 4 * 5e-324}, {-1e-310, 1e-310}, {-5e-324, 5e-324},
	{1, math.Nextafter(1, 2)}, {0, 5e-324}, {-2, math.Nextafter(-2, 0)}, {math.Nextafter(0, -1), 0},
}

// rankSpecials are values where a counter could differ from the clip on
// values: NaNs of both signs and several payloads, ±Inf, ±0, subnormals,
// the largest floats.
var rankSpecials = []float64{
	math.NaN(), -math.NaN(), math.Float64frombits(0x7ff0000000000001), math.Float64frombits(0xfff0000000000001),
	math.Float64frombits(0x7fffffffffffffff), math.Float64frombits(0xffffffffffffffff), math.Float64frombits(0xfff8000000000123),
	math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 5e-324, -5e-324, 2.2250738585072014e-308, -2.2250738585072014e-308,
	math.MaxFloat64, -math.MaxFloat64, 1, -1,
}

// rankValues returns n values for points pts of a box [lo, hi]: every
// point and bound with its float neighbours, the specials, values uniform
// in and around the box, log-uniform towards each end and 0, and random
// bit patterns.
func rankValues(rng *rand.Rand, pts []float64, lo, hi float64, n int) []float64 {
	var adv []float64
	for _, x := range append(append([]float64{lo, hi}, pts...), rankSpecials...) {
		adv = append(adv, x, math.Nextafter(x, math.Inf(1)), math.Nextafter(x, math.Inf(-1)))
	}
	vals := make([]float64, n)
	for i := range vals {
		w := hi/2 - lo/2
		switch rng.IntN(6) {
		case 0, 1:
			vals[i] = adv[rng.IntN(len(adv))]
		case 2:
			vals[i] = lo + 2*w*(1.2*rng.Float64()-0.1)
		case 3:
			vals[i] = hi - 2*w*math.Exp2(-50*rng.Float64())
		case 4:
			vals[i] = lo + 2*w*math.Exp2(-50*rng.Float64())
		default:
			vals[i] = math.Float64frombits(rng.Uint64())
		}
	}
	return vals
}

// TestRanksMatchBinade: the counter gives exactly the ranks of the previous
// one (cellRanksBinade, commit 3a1c97e) and of the clip on values
// (cellRanksFloatClip), through the row callback and through Release's row
// path, on the grids and on the bound candidates around many medians (every
// grid point, the ends, 0), over the adversarial values of rankValues, for
// every box of rankBoxes; several features of different boxes share one
// pass, and n = 20000 puts several workers to work.
func TestRanksMatchBinade(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 7))
	for bi, box := range rankBoxes {
		// Three features: this box, [−1, 1] and the next box, so the
		// features of one pass have different tables and depths.
		next := rankBoxes[(bi+1)%len(rankBoxes)]
		los, his := []float64{box[0], -1, next[0]}, []float64{box[1], 1, next[1]}
		p, err := New(1, los, his, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		g := p.grids[0]
		meds := []float64{los[0], his[0], g[len(g)/2], g[rng.IntN(len(g))], g[rng.IntN(len(g))]}
		if los[0] < 0 && his[0] > 0 {
			meds = append(meds, 0)
		}
		if testing.Short() {
			meds = meds[:3]
		} else {
			meds = append(meds, g...)
		}
		for mi, m := range meds {
			n := 300
			if mi == 0 {
				n = 20000
			}
			p, err := New(n, los, his, 1, 0)
			if err != nil {
				t.Fatal(err)
			}
			fs := make([]featureRelease, len(los))
			grids, cands := make([][]float64, len(los)), make([][]float64, len(los))
			cols := make([][]float64, len(los))
			for j := range fs {
				fs[j] = featureRelease{p: p, j: j}
				grids[j] = p.grids[j]
				mj := m
				if j > 0 {
					mj = p.grids[j][rng.IntN(len(p.grids[j]))]
				}
				down, up := candidates(mj, los[j], his[j], Octaves)
				cands[j] = sortedUnion(down, up)
				cols[j] = rankValues(rng, append(append([]float64(nil), grids[j]...), cands[j]...), los[j], his[j], n)
			}
			X := make([][]float64, n)
			for i := range X {
				X[i] = make([]float64, len(los))
				for j := range X[i] {
					X[i][j] = cols[j][i]
				}
			}
			row := func(i int, out []float64) { copy(out, X[i]) }
			for pass, pts := range [][][]float64{grids, cands} {
				got := p.cellRanks(fs, pts, row)
				gotRows := p.cellRanksRows(fs, pts, X)
				old := p.cellRanksBinade(fs, pts, row)
				clip := p.cellRanksFloatClip(fs, pts, row)
				for j := range fs {
					var r int64
					for i, x := range pts[j] {
						r += clip[j][i]
						if got[j](x) != old[j](x) || gotRows[j](x) != old[j](x) || old[j](x) != float64(r) {
							t.Fatalf("box %v median %v pass %d feature %d: rank(%v) = %v (callback), %v (rows); previous %v, value clip %v",
								box, m, pass, j, x, got[j](x), gotRows[j](x), old[j](x), r)
						}
					}
				}
			}
		}
	}
}

// TestRankBuckets: on the points of every box's grid and of the candidates
// around its grid points, the bucket is non-decreasing along the sorted
// search keys (the window argument needs exactly that) and every window
// fits the key arrays; on [−1, 1] the depth is 2 for the grid and 1 for
// the candidates around 0 (the figures of docs/results/speed.md).
func TestRankBuckets(t *testing.T) {
	for _, box := range rankBoxes {
		lo, hi := []float64{box[0]}, []float64{box[1]}
		g := Grid(box[0], box[1])
		sets := [][]float64{g}
		for _, m := range g {
			down, up := candidates(m, box[0], box[1], Octaves)
			sets = append(sets, sortedUnion(down, up))
		}
		for _, ps := range sets {
			tb := newRankTable(lo, hi, [][]float64{ps})
			ek := tb.keys[:len(ps)+1]
			rb := rankBucket{tb.one[0], tb.a1[0], tb.a2[0]}
			for i := 1; i < len(ek); i++ {
				if !(ek[i] > ek[i-1]) || rb.of(ek[i]) < rb.of(ek[i-1]) {
					t.Fatalf("box %v: keys or buckets decrease at point %d of %v", box, i, ps)
				}
			}
			if 2*tb.half > 256 {
				t.Fatalf("box %v: window %d", box, 2*tb.half)
			}
		}
	}
	p, _ := New(1, []float64{-1}, []float64{1}, 1, 0)
	down, up := candidates(0, -1, 1, Octaves)
	for _, c := range []struct {
		pts  []float64
		want int
	}{{p.grids[0], 2}, {sortedUnion(down, up), 1}} {
		if tb := newRankTable([]float64{-1}, []float64{1}, [][]float64{c.pts}); tb.half != 1<<c.want>>1 {
			t.Fatalf("depth %d (half %d) on %d points, want %d", c.want, tb.half, len(c.pts), c.want)
		}
	}
}

// cellRanks is cellRanksRows on rows read by row(i, out) (out[k] for
// fs[k]), copied into blocks of blockRows: the entry of the rank tests
// written for the previous counters' callback.
func (p *Plan) cellRanks(fs []featureRelease, pts [][]float64, row func(i int, out []float64)) []func(float64) float64 {
	d := len(fs)
	return p.ranks(fs, pts, func(t *rankTable, first, last int, c []int64) {
		buf := make([]float64, blockRows*d)
		X := make([][]float64, blockRows)
		for i := range X {
			X[i] = buf[i*d : (i+1)*d]
		}
		for i := first; i < last; i += blockRows {
			B := X[:min(blockRows, last-i)]
			for r, x := range B {
				row(i+r, x)
			}
			t.countBlock(B, c)
		}
	})
}

// TestRankKernels forces every counting kernel — each bucket function (one
// anchor at the closest point, lo or hi; two anchors lo, hi) at every
// depth from the least its points allow to 8 (a deeper window still holds
// the answer), one feature alone (countOneD, countTwoD, countD) and two or
// three alike (the pair kernels, then a single) — and checks the cells
// against the previous counter on adversarial values, for the grid and the
// candidates of several boxes.
func TestRankKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 8))
	for _, box := range [][2]float64{{-1, 1}, {0, 100}, {5, 7}, {-1e308, 1e308}, {0, 4 * 5e-324}, {1, math.Nextafter(1, 2)}} {
		lo, hi := box[0], box[1]
		g := Grid(lo, hi)
		down, up := candidates(g[len(g)/3], lo, hi, Octaves)
		for _, ps := range [][]float64{g, sortedUnion(down, up)} {
			const n = 500
			col := rankValues(rng, ps, lo, hi, n)
			for _, d := range []int{1, 2, 3} {
				los, his, pts := make([]float64, d), make([]float64, d), make([][]float64, d)
				for k := range pts {
					los[k], his[k], pts[k] = lo, hi, ps
				}
				p, err := New(n, los, his, 1, 0)
				if err != nil {
					t.Fatal(err)
				}
				fs := make([]featureRelease, d)
				X := make([][]float64, n)
				for i := range X {
					X[i] = make([]float64, d)
					for k := range X[i] {
						X[i][k] = col[(i+k)%n]
					}
				}
				for k := range fs {
					fs[k] = featureRelease{p: p, j: k}
				}
				want := p.cellRanksBinade(fs, pts, func(i int, out []float64) { copy(out, X[i]) })
				tb := newRankTable(los, his, pts)
				ek := tb.keys[:len(ps)+1]
				klo, khi, c := orderKey(lo+0), orderKey(hi+0), ek[closest(ps)+1]
				for _, r := range []rankBucket{{true, c, c}, {true, klo, klo}, {true, khi, khi}, {false, klo, khi}} {
					for k := range pts {
						tb.use(k, len(ps), r)
					}
					for D := 1; D <= 8; D++ {
						if 1<<D < crowd(ek, r)+1 {
							continue
						}
						tb.half = 1 << D >> 1
						cells := make([]int64, d*cellStride)
						for i := 0; i < n; i += blockRows {
							tb.countBlock(X[i:min(i+blockRows, n)], cells)
						}
						for k := range pts {
							var r64 int64
							for i, x := range ps {
								r64 += cells[k*cellStride+i+1]
								if float64(r64) != want[k](x) {
									t.Fatalf("box %v, %d points, bucket %+v, depth %d, feature %d of %d: rank(%v) = %d, previous %v", box, len(ps), r, D, k, d, x, r64, want[k](x))
								}
							}
						}
					}
				}
			}
		}
	}
}
