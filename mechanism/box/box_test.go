package box

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/internal/bigmem"
	"github.com/dpsql/dpsql/mechanism"
)

// TestGrid: every grid is sorted, distinct, finite, inside the declared box
// with both ends, and reaches 2^−Octaves of the width from each end (and
// from 0 when 0 is inside).
func TestGrid(t *testing.T) {
	for _, c := range [][2]float64{{0, 100}, {1, 16000}, {-5, 5}, {-1e300, 1e300}, {-3, -1}, {0, 1e-300}, {-1, 1000}} {
		g := Grid(c[0], c[1])
		if g[0] != c[0] || g[len(g)-1] != c[1] {
			t.Fatalf("grid of %v does not span it: [%v, %v]", c, g[0], g[len(g)-1])
		}
		for i := 1; i < len(g); i++ {
			if !(g[i] > g[i-1]) || math.IsInf(g[i], 0) {
				t.Fatalf("grid of %v not strictly increasing at %d: %v, %v", c, i, g[i-1], g[i])
			}
		}
		w := c[1] - c[0]
		if !math.IsInf(w, 0) && w > 1e-200 {
			if g[1]-g[0] > w*math.Exp2(-Octaves)*1.0001 || g[len(g)-1]-g[len(g)-2] > w*math.Exp2(-Octaves)*1.0001 {
				t.Fatalf("grid of %v: finest steps at the ends %v, %v exceed w·2^−%d", c, g[1]-g[0], g[len(g)-1]-g[len(g)-2], Octaves)
			}
		}
		if c[0] < 0 && c[1] > 0 && sort.SearchFloat64s(g, 0) == len(g) {
			t.Fatalf("grid of %v lacks 0", c)
		}
		if len(g) > 1+LinearPoints+4*Octaves*StepsPerOctave+2 {
			t.Fatalf("grid of %v has %d points", c, len(g))
		}
	}
}

// TestOrder: every pair of released indices becomes a box of positive width
// inside the grid.
func TestOrder(t *testing.T) {
	for k := 2; k < 6; k++ {
		for a := 0; a < k; a++ {
			for b := 0; b < k; b++ {
				lo, hi := Order(a, b, k)
				if !(lo >= 0 && lo < hi && hi < k) {
					t.Fatalf("Order(%d, %d, %d) = %d, %d", a, b, k, lo, hi)
				}
			}
		}
	}
}

// TestUtilitySensitivity: on adversarial neighbours (a row replaced by a
// value at either end, on a grid point, between points, outside the box,
// NULL) every utility of every level moves by at most 1, and by exactly 1
// for some pair (the bound is attained).
func TestUtilitySensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lo, hi := 0.0, 100.0
	g := Grid(lo, hi)
	special := []float64{lo, hi, g[1], g[len(g)/2], (g[3] + g[4]) / 2, -5, 1e6, math.NaN(), 1e-7}
	worst := 0.0
	for trial := 0; trial < 40; trial++ {
		n := 1 + rng.IntN(30)
		col := make([]float64, n)
		for i := range col {
			switch rng.IntN(3) {
			case 0:
				col[i] = special[rng.IntN(len(special))]
			case 1:
				col[i] = rng.Float64() * 3
			default:
				col[i] = rng.Float64() * 100
			}
		}
		c0 := counts(g, func(i int) float64 { return col[i] }, n)
		for i := 0; i < n; i++ {
			for _, v := range special {
				nb := append([]float64(nil), col...)
				nb[i] = v
				c1 := counts(g, func(i int) float64 { return nb[i] }, n)
				for _, q := range []float64{0.01, 0.1, 0.5, 0.9, 0.99} {
					u0, u1 := Utilities(c0, q, n), Utilities(c1, q, n)
					for k := range u0 {
						d := math.Abs(u0[k] - u1[k])
						if d > 1 {
							t.Fatalf("utility %d at q=%v moved by %v", k, q, d)
						}
						if u0[k] != math.Trunc(u0[k]) {
							t.Fatalf("utility %v is not an integer", u0[k])
						}
						worst = math.Max(worst, d)
					}
				}
			}
		}
	}
	if worst != 1 {
		t.Fatalf("largest utility change %v, want the bound 1 attained", worst)
	}
}

// TestCandidates: the bound candidates are public functions of the
// released median and the declared box, on the right side of the median,
// from the declared end inwards, two per octave of distance.
func TestCandidates(t *testing.T) {
	for _, m := range []float64{0, 0.3, 50, 100} {
		down, up := Candidates(m, 0, 100)
		if down[0] != 0 || up[0] != 100 || len(up) != Octaves*StepsPerOctave+1 {
			t.Fatalf("m=%v: candidates do not start at the declared ends", m)
		}
		for k := 1; k < len(up); k++ {
			if up[k] > up[k-1] || up[k] < m || down[k] < down[k-1] || down[k] > m {
				t.Fatalf("m=%v: candidates not monotone towards the median at %d", m, k)
			}
			if m < 100 && math.Abs((up[k]-m)/(up[k-1]-m)-math.Exp2(-1.0/StepsPerOctave)) > 1e-9 {
				t.Fatalf("m=%v: upper step %d is not 2^(−1/%d)", m, k, StepsPerOctave)
			}
		}
	}
}

// TestRankUtilitySensitivity: the bound utilities (ranks at arbitrary
// candidates plus a public bonus) move by at most 1 on adversarial
// neighbours.
func TestRankUtilitySensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	down, up := Candidates(1.5, 0, 100)
	xs := append(append([]float64(nil), down...), up...)
	bonus := func(k int) float64 { return float64(k % 5) }
	special := []float64{0, 100, 1.5, up[3], down[7], math.NaN(), -1, 1e9}
	for trial := 0; trial < 30; trial++ {
		n := 1 + rng.IntN(20)
		col := make([]float64, n)
		for i := range col {
			col[i] = rng.Float64() * 4
		}
		for i := 0; i < n; i++ {
			for _, v := range special {
				nb := append([]float64(nil), col...)
				nb[i] = v
				for _, q := range []float64{0.01, 0.5, 0.99} {
					u0 := RankUtilities(xs, rankOf(col, 0, 100), q, n, bonus)
					u1 := RankUtilities(xs, rankOf(nb, 0, 100), q, n, bonus)
					for k := range u0 {
						if math.Abs(u0[k]-u1[k]) > 1 || u0[k] != math.Trunc(u0[k]) {
							t.Fatalf("utility %d moved from %v to %v", k, u0[k], u1[k])
						}
					}
				}
			}
		}
	}
}

// rankOf is releaseFeature's rank on the declared box [0, 100].
func rankOf(col []float64, lo, hi float64) func(float64) float64 {
	var vals []float64
	for _, v := range col {
		if !math.IsNaN(v) {
			vals = append(vals, mechanism.Clip(v, lo, hi))
		}
	}
	sort.Float64s(vals)
	return func(x float64) float64 {
		return float64(sort.Search(len(vals), func(i int) bool { return vals[i] > x }))
	}
}

// TestNoiseScale: report-noisy-max draws Laplace noise of exactly Scale()
// = 2/ε_q: with two utilities 0 and −b the second wins with probability
// P[L₁ − L₀ > b] = ½e⁻¹(1 + ½) for iid Laplace(b) (the difference's tail
// ½e^(−x/b)(1 + x/(2b))).
func TestNoiseScale(t *testing.T) {
	p, err := New(10, []float64{0}, []float64{1}, 0.5, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Scale() != 4 {
		t.Fatalf("scale %v, want 2/ε_q = 4", p.Scale())
	}
	b := p.Scale()
	const draws = 20000
	wins := 0
	for range draws {
		i, err := noisyMax([]float64{0, -b}, p.noiseScale())
		if err != nil {
			t.Fatal(err)
		}
		wins += i
	}
	want := 0.5 * math.Exp(-1) * 1.5
	got := float64(wins) / draws
	if sd := math.Sqrt(want * (1 - want) / draws); math.Abs(got-want) > 5*sd {
		t.Fatalf("second index won %.4f of draws, want %.4f ± %.4f (scale 2/ε_q)", got, want, 5*sd)
	}
}

// TestSplitJoint: with δ > 0 the Per·d quantiles (ε_q²/2-zCDP each) and the
// kind's Gaussian release of ratio ≤ r fit exactly in the unit ratio R of
// the charged (ε, δ), the kind's ε′ has unit ratio just below r, and the
// charge is one Gaussian event of ratio R at (ε, δ).
func TestSplitJoint(t *testing.T) {
	for _, c := range []struct {
		eps, delta float64
		d          int
	}{{1, 1e-6, 10}, {0.1, 1e-6, 40}, {10, 1e-5, 57}, {1, 1e-6, 1}} {
		s, err := NewSplit(c.eps, c.delta, c.d)
		if err != nil {
			t.Fatal(err)
		}
		unit, _ := mechanism.GaussianSigma(1, c.eps, c.delta)
		R := 1 / unit
		if s.R != R || !s.Joint || s.Per != Quantiles {
			t.Fatalf("%+v: R %v want %v", c, s.R, R)
		}
		q := float64(s.Per * c.d)
		used := q*s.EpsQ*s.EpsQ + s.R2*s.R2
		if used > R*R || used < R*R*(1-1e-9) {
			t.Fatalf("%+v: quantiles and kind use ρ·2 = %v of R² = %v", c, used, R*R)
		}
		if share := q * s.EpsQ * s.EpsQ / (R * R); math.Abs(share-Share) > 1e-9 {
			t.Fatalf("%+v: box share %v, want %v", c, share, Share)
		}
		kr, err := unitRatio(s.KindEps, c.delta)
		if err != nil || kr > s.R2 || kr < s.R2*(1-1e-6) {
			t.Fatalf("%+v: kind unit ratio %v at ε′ %v, want just ≤ %v (%v)", c, kr, s.KindEps, s.R2, err)
		}
		ev, err := s.Events([]budget.Event{mechanism.GaussianEvent(1, 1/kr, s.KindEps, c.delta)})
		if err != nil {
			t.Fatal(err)
		}
		if len(ev) != 1 || ev[0].Kind != budget.Gaussian || ev[0].Epsilon != c.eps || ev[0].Delta != c.delta || ev[0].Ratio != R {
			t.Fatalf("%+v: events %+v, want one Gaussian (ε, δ) of ratio %v", c, ev, R)
		}
		if _, err := s.Events([]budget.Event{mechanism.GaussianEvent(1, 1/(s.R2*1.001), s.KindEps, c.delta)}); err == nil {
			t.Fatalf("%+v: a kind above ratio r was accepted", c)
		}
		if _, err := s.Events([]budget.Event{{Kind: budget.Laplace, Epsilon: s.KindEps}}); err == nil {
			t.Fatalf("%+v: a Laplace kind was accepted into the joint event", c)
		}
	}
}

// TestSplitPure: with δ = 0 the quantiles and the kind add up to at most ε
// (basic composition) and the box gets its Share.
func TestSplitPure(t *testing.T) {
	for _, d := range []int{1, 10, 57} {
		s, err := NewSplit(1, 0, d)
		if err != nil {
			t.Fatal(err)
		}
		q := float64(s.Per * d)
		if s.Joint || q*s.EpsQ+s.KindEps > 1 || q*s.EpsQ < Share*(1-1e-12) {
			t.Fatalf("d=%d: split %+v", d, s)
		}
		ev, err := s.Events([]budget.Event{{Kind: budget.Laplace, Epsilon: s.KindEps}})
		if err != nil {
			t.Fatal(err)
		}
		if len(ev) != 2 || ev[0].Kind != budget.Laplace || ev[0].Epsilon != q*s.EpsQ || ev[1].Epsilon != s.KindEps {
			t.Fatalf("d=%d: events %+v", d, ev)
		}
	}
}

// TestReleaseNeverFails: degenerate tables (all NULL, constant, one row,
// values outside the box) get a box of positive width inside the declared
// one, with no error.
func TestReleaseNeverFails(t *testing.T) {
	nan := math.NaN()
	for _, X := range [][][]float64{
		{{nan, nan}},
		{{3, 3}, {3, 3}, {3, 3}},
		{{-1e9, 1e9}},
		{{0, 100}, {0, 100}},
	} {
		p, err := New(len(X), []float64{0, 0}, []float64{100, 100}, 0.5, 0)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			b, err := p.Release(X)
			if err != nil {
				t.Fatal(err)
			}
			for j := range b.Lo {
				if !(b.Lo[j] >= 0 && b.Lo[j] < b.Hi[j] && b.Hi[j] <= 100) {
					t.Fatalf("box %v, %v of %v", b.Lo, b.Hi, X)
				}
			}
		}
	}
}

// TestReleaseFindsCorner: at a large n·ε_q the box of data uniform on
// [0, 2] of a declared [0, 100] starts at 0 and ends just above the data.
// The bonus makes one more octave of width cost γ = b, so a single
// release overshoots by an octave or more about one time in ten (measured:
// median 2.65, 90 % quantile 4.2 over 200 releases); the median of 21
// releases above 4 has probability below 10⁻⁵.
func TestReleaseFindsCorner(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 20000
	X := make([][]float64, n)
	for i := range X {
		X[i] = []float64{2 * rng.Float64()}
	}
	p, err := New(n, []float64{0}, []float64{100}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var his []float64
	for range 21 {
		b, err := p.Release(X)
		if err != nil {
			t.Fatal(err)
		}
		if !(b.Lo[0] < 0.1 && b.Hi[0] > 1.5) {
			t.Fatalf("box [%v, %v] for data uniform on [0, 2]", b.Lo[0], b.Hi[0])
		}
		his = append(his, b.Hi[0])
	}
	sort.Float64s(his)
	if his[10] > 4 {
		t.Fatalf("median upper bound %v over 21 releases for data uniform on [0, 2] of [0, 100]", his[10])
	}
}

// auditPlan is a one-feature plan on [0, 1] for n = 4 rows at ε_q with
// tail 0.25, and the neighbouring columns D = {0, ½, ½, 1} and
// D′ = {0, ½, 1, 1}: the moved row changes the rank of the middle grid
// points, so the upper quantile's unique best point becomes a tie.
func auditPlan(t testing.TB, epsQ float64) (*Plan, []float64, []float64) {
	p, err := New(4, []float64{0}, []float64{1}, epsQ, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	// A 5-point grid and 5 candidates per bound keep the audit fast;
	// report-noisy-max's guarantee does not depend on their number.
	p.grids[0] = []float64{0, 0.25, 0.5, 0.75, 1}
	p.candOct = 2
	return p, []float64{0, 0.5, 0.5, 1}, []float64{0, 0.5, 1, 1}
}

// boxSampler releases the box of D or D′ and returns lo + 10·hi (the
// pair as one number, both in [0, 1]: the audit searches thresholds on it).
func boxSampler(t testing.TB, p *Plan, d0, d1 []float64) audit.Sampler {
	return func(side int) float64 {
		col := d0
		if side == 1 {
			col = d1
		}
		lo, hi, err := p.releaseFeature(0, func(i int) float64 { return col[i] })
		if err != nil {
			t.Fatal(err)
		}
		return lo + 10*hi
	}
}

// quantileSampler releases only the upper (1 − t)-quantile's index.
func quantileSampler(t testing.TB, p *Plan, d0, d1 []float64) audit.Sampler {
	return func(side int) float64 {
		col := d0
		if side == 1 {
			col = d1
		}
		c := counts(p.grids[0], func(i int) float64 { return col[i] }, p.n)
		j, err := noisyMax(Utilities(c, 1-p.tail, p.n), p.noiseScale())
		if err != nil {
			t.Fatal(err)
		}
		return float64(j)
	}
}

const auditEpsQ, auditN = 0.5, 10000

// TestAuditBoxRelease: the one-feature box (median, lower, upper at ε_q
// each, the penalty anchored at the released median) must not show
// ε > 3ε_q.
func TestAuditBoxRelease(t *testing.T) {
	p, d0, d1 := auditPlan(t, auditEpsQ)
	audit.RequirePass(t, boxSampler(t, p, d0, d1), Quantiles*auditEpsQ, audit.Config{N: auditN})
}

// TestAuditBoxNoNoiseCaught is an expected failure: the box from
// (practically) noiseless quantiles is caught.
func TestAuditBoxNoNoiseCaught(t *testing.T) {
	p, d0, d1 := auditPlan(t, auditEpsQ)
	p.noiseMul = 1e-6
	audit.RequireCatch(t, boxSampler(t, p, d0, d1), Quantiles*auditEpsQ, audit.Config{N: auditN})
}

// TestAuditQuantile: one bound's report-noisy-max must not show ε > ε_q.
func TestAuditQuantile(t *testing.T) {
	p, d0, d1 := auditPlan(t, auditEpsQ)
	audit.RequirePass(t, quantileSampler(t, p, d0, d1), auditEpsQ, audit.Config{N: auditN})
}

// TestAuditQuantileTenthNoiseCaught is an expected failure: the same
// quantile at a tenth of the noise is caught.
func TestAuditQuantileTenthNoiseCaught(t *testing.T) {
	p, d0, d1 := auditPlan(t, auditEpsQ)
	p.noiseMul = 0.1
	audit.RequireCatch(t, quantileSampler(t, p, d0, d1), auditEpsQ, audit.Config{N: auditN})
}

// TestBonusCap: the largest bonus stays (ln k + 2)·b below the rank loss
// of a candidate at the median, and reaches PenaltyOctaves at large n·ε_q.
func TestBonusCap(t *testing.T) {
	k := Octaves*StepsPerOctave + 1
	for _, c := range []struct {
		n    int
		epsQ float64
	}{{100, 0.01}, {1500, 0.02}, {5000, 0.01}, {100000, 0.05}} {
		p, err := New(c.n, []float64{0}, []float64{1}, c.epsQ, 0)
		if err != nil {
			t.Fatal(err)
		}
		cp := p.bonusCap(k)
		room := (0.5-p.tail)*float64(c.n) - (math.Log(float64(k))+2)*p.Scale()
		if cp < 0 || cp > PenaltyOctaves || p.gamma*cp > math.Max(room, 0)*(1+1e-12) {
			t.Fatalf("n=%d ε_q=%v: cap %v octaves, bonus %v, room %v", c.n, c.epsQ, cp, p.gamma*cp, room)
		}
	}
	p, _ := New(100000, []float64{0}, []float64{1}, 0.05, 0)
	if p.bonusCap(k) != PenaltyOctaves {
		t.Fatalf("large n·ε_q: cap %v, want %v", p.bonusCap(k), PenaltyOctaves)
	}
}

// TestRanksMatchSort: the counted ranks of Release are exactly the ranks
// #{v ≤ x} of the sorted clipped column, for the grid and for the bound
// candidates around any median, with ties, NULLs and values outside the
// declared box, for several features of different grid sizes counted in
// the same lockstep pass, and whatever the number of workers.
func TestRanksMatchSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 5))
	los, his := []float64{0, 5, -1e6}, []float64{100, 7, 3}
	for _, n := range []int{1, 7, 1000, 40000} {
		cols := make([][]float64, len(los))
		for j := range cols {
			col := make([]float64, n)
			lo, hi := los[j], his[j]
			w := hi - lo
			for i := range col {
				switch (i + j) % 7 {
				case 0:
					col[i] = math.NaN()
				case 1:
					col[i] = lo + w/2 // ties
				case 2:
					col[i] = lo - 0.03*w + 2*w*rng.Float64() // outside the box too
				case 3:
					col[i] = math.Inf(2*(i%2) - 1)
				default:
					col[i] = lo + w*math.Round(100*rng.Float64())/400 // ties on grid points
				}
			}
			cols[j] = col
		}
		p, err := New(n, los, his, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		fs, grids, cands, row := rankSetup(p, cols, 1.0/8)
		for _, pts := range [][][]float64{grids, cands} {
			got := p.cellRanks(fs, pts, row)
			for j := range fs {
				want := rankOf(cols[j], los[j], his[j])
				for _, x := range pts[j] {
					if got[j](x) != want(x) {
						t.Fatalf("n=%d feature %d: rank(%v) = %v, sorted column gives %v", n, j, x, got[j](x), want(x))
					}
				}
			}
		}
	}
}

// rankSetup returns the features of p, their grids, the bound candidates
// around a median at lo + at·(hi − lo), and a row reader of the columns.
func rankSetup(p *Plan, cols [][]float64, at float64) ([]featureRelease, [][]float64, [][]float64, func(i int, out []float64)) {
	fs := make([]featureRelease, len(p.lo))
	grids, cands := make([][]float64, len(p.lo)), make([][]float64, len(p.lo))
	for j := range fs {
		fs[j] = featureRelease{p: p, j: j}
		grids[j] = p.grids[j]
		down, up := candidates(p.lo[j]+(p.hi[j]-p.lo[j])*at, p.lo[j], p.hi[j], Octaves)
		cands[j] = sortedUnion(down, up)
	}
	row := func(i int, out []float64) {
		for k := range out {
			out[k] = cols[k][i]
		}
	}
	return fs, grids, cands, row
}

// TestRanksMatchPrevious: the clip on keys counts exactly as the clip on
// values did, on the values where the two could differ: NaNs of both
// signs and payloads, ±Inf, ±0, the bounds, their neighbours inside and
// outside, subnormals, grid points and their neighbours.
func TestRanksMatchPrevious(t *testing.T) {
	los, his := []float64{-1, 0, 5, -1e6}, []float64{1, 100, 7, -2}
	var special []float64
	for j := range los {
		for _, x := range append(Grid(los[j], his[j]), los[j], his[j]) {
			special = append(special, x, math.Nextafter(x, math.Inf(1)), math.Nextafter(x, math.Inf(-1)))
		}
	}
	special = append(special, math.NaN(), -math.NaN(), math.Float64frombits(0x7ff0000000000001), math.Float64frombits(0xfff8000000000123),
		math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 5e-324, -5e-324, math.MaxFloat64, -math.MaxFloat64)
	n := len(special)
	cols := make([][]float64, len(los))
	for j := range cols {
		cols[j] = make([]float64, n)
		for i := range cols[j] {
			cols[j][i] = special[(i*(j+3))%n] // each feature sees every value
		}
	}
	p, err := New(n, los, his, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	fs, grids, cands, row := rankSetup(p, cols, 1.0/3)
	for _, pts := range [][][]float64{grids, cands} {
		got := p.cellRanks(fs, pts, row)
		prev := p.cellRanksFloatClip(fs, pts, row)
		for j := range fs {
			var r int64
			for i, x := range pts[j] {
				r += prev[j][i]
				if got[j](x) != float64(r) {
					t.Fatalf("feature %d: rank(%v) = %v, previous count %v", j, x, got[j](x), r)
				}
			}
		}
	}
}

// BenchmarkRanks1e6D20 times the rank computation of one Release on
// 10⁶ × 20 rows uniform on the declared box [−1, 1]: the counter of Release
// (cellRanksRows, both passes: the grid, then the bound candidates around a
// median at BENCH_MEDIAN·hi, default 0) against the previous one
// (cellRanksBinade, commit 3a1c97e, through a row callback as Release
// called it), on one core each (GOMAXPROCS 1), alternating within each
// iteration; medians of CPU time per value, both passes (new-ns/value,
// old-ns/value) and each (-grid, -cands), and the search depths.
func BenchmarkRanks1e6D20(b *testing.B) {
	const n, d = 1000000, 20
	rng := rand.New(rand.NewPCG(28, 6))
	lo, hi := make([]float64, d), make([]float64, d)
	for j := range hi {
		lo[j], hi[j] = -1, 1
	}
	X := make([][]float64, n)
	back := make([]float64, n*d)
	for i := range X {
		X[i] = back[i*d : (i+1)*d]
		for j := range X[i] {
			X[i][j] = 2*rng.Float64() - 1
		}
	}
	p, err := New(n, lo, hi, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	m := 0.0
	if s := os.Getenv("BENCH_MEDIAN"); s != "" {
		if m, err = strconv.ParseFloat(s, 64); err != nil {
			b.Fatal(err)
		}
	}
	fs := make([]featureRelease, d)
	grids, cands := make([][]float64, d), make([][]float64, d)
	for j := range fs {
		fs[j] = featureRelease{p: p, j: j}
		grids[j] = p.grids[j]
		down, up := candidates(m, -1, 1, Octaves)
		cands[j] = sortedUnion(down, up)
	}
	row := func(i int, out []float64) {
		r := X[i]
		for k := range out {
			out[k] = r[fs[k].j]
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	m1 := map[string][]float64{}
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		c0 := cpuTime()
		p.cellRanksRows(fs, grids, X)
		c1 := cpuTime()
		p.cellRanksRows(fs, cands, X)
		c2 := cpuTime()
		p.cellRanksBinade(fs, grids, row)
		c3 := cpuTime()
		p.cellRanksBinade(fs, cands, row)
		c4 := cpuTime()
		for name, v := range map[string]time.Duration{"new": c2 - c0, "old": c4 - c2, "new-grid": c1 - c0, "old-grid": c3 - c2, "new-cands": c2 - c1, "old-cands": c4 - c3} {
			per := float64(n * d)
			if len(name) == 3 {
				per *= 2
			}
			m1[name] = append(m1[name], float64(v)/per)
		}
	}
	for name, v := range m1 {
		sort.Float64s(v)
		b.ReportMetric(v[len(v)/2], name+"-ns/value")
	}
	g, c := newRankTable(lo, hi, grids), newRankTable(lo, hi, cands)
	b.ReportMetric(float64(bits.Len(uint(g.half))), "depth-grid")
	b.ReportMetric(float64(bits.Len(uint(c.half))), "depth-cands")
}

// cellRanksFloatClip is cellRanks before the clip moved to the keys (float
// min/max, then nanKey): the reference of BenchmarkRanks1e6D20 and
// TestRanksMatchPrevious.
func (p *Plan) cellRanksFloatClip(fs []featureRelease, pts [][]float64, row func(i int, out []float64)) [][]int64 {
	d := len(fs)
	size := 1
	for _, ps := range pts {
		for size <= len(ps) {
			size *= 2
		}
	}
	keys := make([]uint64, d*size)
	for k, ps := range pts {
		for i := range size {
			keys[k*size+i] = math.MaxUint64
			if i < len(ps) {
				keys[k*size+i] = orderKeyOld(ps[i])
			}
		}
	}
	lo, hi := make([]float64, d), make([]float64, d)
	for k, f := range fs {
		lo[k], hi[k] = p.lo[f.j], p.hi[f.j]
	}
	c := make([]int64, d*size)
	vals := make([]float64, d)
	key, base := make([]uint64, d), make([]int, d)
	for i := 0; i < p.n; i++ {
		row(i, vals)
		for k, v := range vals {
			key[k] = nanKey(min(max(v, lo[k]), hi[k]))
			base[k] = k * size
		}
		for half := size / 2; half >= 1; half /= 2 {
			for k, b := range base {
				_, below := bits.Sub64(keys[b+half-1], key[k], 0) // 1 iff key < v
				base[k] = b + int(below)*half
			}
		}
		for _, b := range base {
			c[b]++
		}
	}
	out := make([][]int64, d)
	for k := range fs {
		out[k] = c[k*size : k*size+len(pts[k])]
	}
	return out
}

// nanKey is orderKeyOld(v) for a number and MaxUint64 for NaN (NULL), without
// a branch on v: the NaN test becomes a mask.
func nanKey(v float64) uint64 {
	isNum := uint64(0)
	if v == v {
		isNum = 1
	}
	m := isNum - 1 // all ones iff NaN
	return orderKeyOld(v) | m
}

// cpuTime is the process's CPU time: under load from other processes it
// resolves what wall time does not.
func cpuTime() time.Duration {
	c, _ := bigmem.Usage()
	return c
}

// cellRanksBinade is the counter before the float-difference buckets
// (commit 3a1c97e): the reference of TestRanksMatchBinade and
// BenchmarkRanks1e6D20. It returns, per feature k, rank(x) = #{v ≤ x} over the values of
// feature fs[k].j clipped to its declared bounds (NaN = NULL counted
// nowhere), for x among the sorted distinct points pts[k], whose last
// point is the declared upper bound. row(i, out) reads row i's values of
// the features (out[k] for fs[k]). Each value is counted in the cell of
// the smallest point ≥ it, found on order-preserving keys: the top
// binadeBitsOld bits of a value's key (its sign and exponent) index a table
// of the first point at or above that bucket, and a binary search of fixed
// depth D finishes inside the window of 2^D points from there, D the
// smallest depth that covers the most crowded bucket of any feature (a
// function of the public points only; every key array is padded with
// MaxUint64 so that every window exists). The d searches of a row run in
// lockstep (one level of all of them, then the next: independent loads the
// core overlaps). A NULL gets the key MaxUint64 and lands in the first pad
// cell, which no rank reads. The work is the same for every value. The
// rows are cut into one contiguous part per worker and the integer counts
// added, so the result does not depend on the schedule.
func (p *Plan) cellRanksBinade(fs []featureRelease, pts [][]float64, row func(i int, out []float64)) []func(float64) float64 {
	d := len(fs)
	const buckets = 1 << binadeBitsOld
	// start[k·(buckets+1) + t] = #{points of feature k with key < t·2^(64−binadeBitsOld)}.
	start := make([]int32, d*(buckets+1))
	width := 1 // the most points a search must choose among, over buckets and features
	for k, ps := range pts {
		st := start[k*(buckets+1) : (k+1)*(buckets+1)]
		i := 0
		for t := range buckets {
			for i < len(ps) && orderKeyOld(ps[i])>>(64-binadeBitsOld) < uint64(t) {
				i++
			}
			st[t] = int32(i)
		}
		st[buckets] = int32(len(ps))
		for t := range buckets {
			// The answer for a key of bucket t is in [st[t], st[t+1]].
			width = max(width, int(st[t+1]-st[t])+1)
		}
	}
	win := 1
	for win < width {
		win *= 2
	}
	stride := 1
	for _, ps := range pts {
		for stride < len(ps)+win {
			stride *= 2
		}
	}
	keys := make([]uint64, d*stride)
	for k, ps := range pts {
		for i := range stride {
			keys[k*stride+i] = math.MaxUint64
			if i < len(ps) {
				keys[k*stride+i] = orderKeyOld(ps[i])
			}
		}
		st := start[k*(buckets+1) : (k+1)*(buckets+1)]
		for t := range st {
			st[t] += int32(k * stride) // absolute window starts
		}
	}
	// The clip to the declared bounds is done on the keys (order-preserving,
	// so clamping keys is clamping values; minKey/maxKey are three integer
	// operations each, the float min/max carry NaN and −0 rules).
	klo, khi := make([]uint64, d), make([]uint64, d)
	for k, f := range fs {
		klo[k], khi[k] = orderKeyOld(p.lo[f.j]), orderKeyOld(p.hi[f.j])
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), p.n/8192))
	parts := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := range parts {
		c := make([]int64, d*stride)
		parts[w] = c
		first, last := w*p.n/workers, (w+1)*p.n/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			vals := make([]float64, d)
			key, base := make([]uint64, d), make([]int, d)
			for i := first; i < last; i++ {
				row(i, vals)
				countRowBinade(vals, klo, khi, start, keys, key, base, win, c)
			}
		}()
	}
	wg.Wait()
	out := make([]func(float64) float64, d)
	for k := range fs {
		cum := make([]float64, len(pts[k]))
		var r int64
		for i := range cum {
			for _, c := range parts {
				r += c[k*stride+i]
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

// binadeBitsOld is the number of top key bits (sign and exponent) cellRanks
// indexes its table with.
const binadeBitsOld = 12

// countRowBinade counts one row's values (vals[k] for feature k) in the cells
// of c: key[k] = the key of vals[k] clipped to [klo[k], khi[k]] (MaxUint64
// for NaN), its window's start from the table, then the d fixed-depth
// searches of cellRanks level by level; key and base are scratch of length
// d. The same operations for every value.
func countRowBinade(vals []float64, klo, khi []uint64, start []int32, keys, key []uint64, base []int, win int, c []int64) {
	d := len(vals)
	klo, khi, key, base = klo[:d], khi[:d], key[:d], base[:d]
	const row = 1<<binadeBitsOld + 1
	for k, v := range vals {
		x := minKey(maxKey(orderKeyOld(v), klo[k]), khi[k]) | nanMask(v)
		key[k] = x
		base[k] = int(start[k*row+int(x>>(64-binadeBitsOld))])
	}
	for half := win / 2; half >= 1; half /= 2 {
		for k, b := range base {
			_, below := bits.Sub64(keys[b+half-1], key[k], 0) // 1 iff key < v
			base[k] = b + int(below)*half
		}
	}
	for _, b := range base {
		c[b]++
	}
}

// minKey and maxKey are min and max of two keys by a borrow mask: the
// compiler turns the builtin min/max of uint64 into a conditional jump,
// whose time would depend on whether a value lies outside its bounds.
func minKey(a, b uint64) uint64 {
	_, lt := bits.Sub64(a, b, 0) // 1 iff a < b
	return b ^ ((a ^ b) & -lt)
}

func maxKey(a, b uint64) uint64 {
	_, lt := bits.Sub64(a, b, 0) // 1 iff a < b
	return a ^ ((a ^ b) & -lt)
}

// nanMask is all ones for NaN (NULL) and 0 for a number, without a branch.
func nanMask(v float64) uint64 {
	isNum := uint64(0)
	if v == v {
		isNum = 1
	}
	return isNum - 1
}

// orderKeyOld (the reference's) maps a non-NaN float64 to a uint64 with the same order (−0 is
// +0 first, so equal floats get equal keys): the sign bit set for
// non-negatives, every bit flipped for negatives.
func orderKeyOld(v float64) uint64 {
	b := math.Float64bits(v + 0)
	return b ^ (uint64(int64(b)>>63) | 1<<63)
}
