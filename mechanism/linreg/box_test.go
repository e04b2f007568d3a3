package linreg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/agg"
)

func boxConfig(d, n int, eps, delta float64) Config {
	c := synthConfig(d, n, eps, delta)
	c.Bounds = BoundsBox
	return c
}

// TestBoxGrid: the grid is strictly increasing from lo to hi, resolves a
// corner (points within 2^−BoxOctaves of the width from each end), has the
// linear steps, and stays finite for bounds whose width overflows.
func TestBoxGrid(t *testing.T) {
	for _, b := range [][2]float64{{-1, 1}, {0, 40000}, {14999, 500001}, {-1e308, 1e308}, {1e15, 1e15 + 1}, {-5e-300, 5e-300}} {
		g := boxGrid(b[0], b[1])
		if g[0] != b[0] || g[len(g)-1] != b[1] || len(g) < 3 {
			t.Fatalf("%v: grid ends %v, %v (K = %d)", b, g[0], g[len(g)-1], len(g))
		}
		for i := 1; i < len(g); i++ {
			if !(g[i] > g[i-1]) || math.IsInf(g[i], 0) {
				t.Fatalf("%v: grid not strictly increasing and finite at %d: %v, %v", b, i, g[i-1], g[i])
			}
		}
		if len(g) > agg.MaxQuantileGrid {
			t.Fatalf("%v: K = %d", b, len(g))
		}
	}
	g := boxGrid(0, 40000)
	w := 40000.0
	if !(g[1] <= w*math.Exp2(-BoxOctaves)*1.0001) || !(w-g[len(g)-2] <= w*math.Exp2(-BoxOctaves)*1.0001) {
		t.Fatalf("corner not resolved: %v … %v", g[1], g[len(g)-2])
	}
	if want := 2*BoxOctaves*BoxStepsPerOctave + BoxLinear + 1; len(g) > want || len(g) < want-2*BoxOctaves {
		t.Fatalf("K = %d, want ≈ %d", len(g), want)
	}
}

// TestBoxRanks: the index map behind the box quantiles. For every value
// (on grid points, between them, beyond the declared bounds, ±∞) the upper
// quantile's rank of grid point j is #{v ≤ g[j]} and the lower one's
// #{v ≥ g[K−1−j]}; each row lands in one cell, so replacing one row moves
// every rank — every report-noisy-max utility −|r_j − t| − pen_j — by at
// most 1, checked on adversarial neighbours through the mechanism's own
// counting and utilities (integers, on the Laplace sampler's grid).
func TestBoxRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	g := boxGrid(-1, 1)
	k := len(g)
	vals := []float64{-1, 1, -7, 7, math.Inf(1), math.Inf(-1), g[1], g[k-2], g[k/2], (g[3] + g[4]) / 2, 0, 1e-300}
	for i := 0; i < 200; i++ {
		vals = append(vals, 2*rng.Float64()-1, g[rng.IntN(k)])
	}
	ranks := func(vs []float64) (up, down []int) {
		up, down = make([]int, k), make([]int, k)
		for _, v := range vs {
			c, f := boxIndex(g, v)
			up[c]++
			down[k-1-f]++
		}
		for j := 1; j < k; j++ {
			up[j] += up[j-1]
			down[j] += down[j-1]
		}
		return up, down
	}
	up, down := ranks(vals)
	for j := 0; j < k; j++ {
		var wu, wd int
		for _, v := range vals {
			c := mechanism.Clip(v, -1, 1)
			if c <= g[j] {
				wu++
			}
			if c >= g[k-1-j] {
				wd++
			}
		}
		if up[j] != wu || down[j] != wd {
			t.Fatalf("grid %d: ranks %d %d, want %d %d", j, up[j], down[j], wu, wd)
		}
	}
	// The mechanism's own pass and utilities (boxPlan.counts,
	// boxQuantile.utilities, penalty included) on one-column tables and
	// their neighbours: every utility of both ends moves by at most 1.
	b, err := planBox(0.01, 0.005, BoxPenalty, []float64{-1}, []float64{1})
	if err != nil {
		t.Fatal(err)
	}
	utils := func(vs []float64) (u, d []float64) {
		X := make([][]float64, len(vs))
		for i, v := range vs {
			X[i] = []float64{v}
		}
		ups, downs := b.counts(X)
		return b.upper[0].utilities(ups[0], int64(len(vs))), b.lower[0].utilities(downs[0], int64(len(vs)))
	}
	u0, d0 := utils(vals)
	worst := 0.0
	for trial := 0; trial < 500; trial++ {
		nb := slices.Clone(vals)
		i := rng.IntN(len(nb))
		nb[i] = vals[rng.IntN(len(vals))]
		if trial%3 == 0 {
			nb[i] = []float64{math.Inf(1), -1, 1, g[1], math.NaN()}[trial%5]
		}
		u2, d2 := ranks(nb)
		for j := 0; j < k; j++ {
			if abs(u2[j]-up[j]) > 1 || abs(d2[j]-down[j]) > 1 {
				t.Fatalf("neighbour moves rank %d by %d / %d", j, u2[j]-up[j], d2[j]-down[j])
			}
		}
		u1, d1 := utils(nb)
		for j := 0; j < k; j++ {
			m := math.Max(math.Abs(u1[j]-u0[j]), math.Abs(d1[j]-d0[j]))
			if m > 1 || u1[j] != math.Trunc(u1[j]) || d1[j] != math.Trunc(d1[j]) {
				t.Fatalf("neighbour moves utility %d by %v (utilities %v, %v: must be integers)", j, m, u1[j], d1[j])
			}
			worst = math.Max(worst, m)
		}
	}
	if worst != 1 {
		t.Fatalf("neighbours move the utilities by at most %v, want 1 reached", worst)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestBoxScales: exact scales and the charged event. δ > 0 (joint zCDP):
// one Gaussian event of ratio R = unit ratio of (ε, δ); every box quantile
// has ε_b = R·√(BoxShare/(2d)) and noise scale 2/ε_b; the AdaSSP (and
// first-stage) ratios r satisfy r² + ε_C² + ε_y² + 2d·ε_b² ∈ [R²(1 − 10⁻⁹),
// R²]. δ = 0 (and the basic branch at large ε): 2d Laplace events of
// ε_b = BoxShareBasic·ε/(2d), and all events add up to (ε, δ).
func TestBoxScales(t *testing.T) {
	for _, c := range []struct {
		d, n       int
		eps, delta float64
	}{{10, 10000, 1, 1e-6}, {8, 16512, 1, 1e-6}, {50, 100000, 0.3, 1e-6}, {3, 1000, 10, 0}, {8, 100000, 1, 0}, {5, 1000, 1e4, 1e-6}} {
		tr := mustPlan(t, boxConfig(c.d, c.n, c.eps, c.delta))
		b := tr.priv.box
		if b == nil || tr.params["private_box"] != 1 {
			t.Fatalf("%+v: no box planned", c)
		}
		if len(b.grids) != c.d || len(b.lower) != c.d || len(b.upper) != c.d {
			t.Fatalf("%+v: %d grids", c, len(b.grids))
		}
		ev := tr.Events()
		eb := b.eps
		for j := range b.grids {
			for _, q := range []*boxQuantile{b.lower[j], b.upper[j]} {
				if q.eps != eb || q.scale() != 2/eb || q.q != 1-b.tail || q.k != len(b.grids[j]) || q.pen[q.k-1] != math.Floor(BoxPenalty*2/eb) || q.pen[0] != 0 {
					t.Fatalf("%+v: quantile %+v, want ε_b %v", c, q, eb)
				}
			}
		}
		if b.tail != BoxLevel(c.n, eb, BoxTail, BoxRankC) {
			t.Fatalf("%+v: tail %v", c, b.tail)
		}
		if c.delta > 0 && tr.params["joint_zcdp"] == 1 {
			unit, err := mechanism.GaussianSigma(1, c.eps, c.delta)
			if err != nil {
				t.Fatal(err)
			}
			total := 1 / unit
			if len(ev) != 1 || ev[0].Kind != budget.Gaussian || ev[0].Ratio != total || ev[0].Epsilon != c.eps || ev[0].Delta != c.delta {
				t.Fatalf("%+v: events %+v, want one Gaussian event of ratio %v", c, ev, total)
			}
			if want := total * math.Sqrt(BoxShare/float64(2*c.d)); !near(eb, want, 1e-15) {
				t.Fatalf("%+v: ε_b %v, want %v", c, eb, want)
			}
			q := stageRatio2(tr) + tr.priv.epsNorm*tr.priv.epsNorm + tr.priv.epsRad*tr.priv.epsRad + float64(2*c.d)*eb*eb
			if q > total*total || q < total*total*(1-1e-9) {
				t.Fatalf("%+v: ρ budget %v, want R² = %v", c, q, total*total)
			}
			if err := ev[0].Validate(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if want := BoxShareBasic * c.eps / float64(2*c.d); !near(eb, want, 1e-15) {
			t.Fatalf("%+v: basic ε_b %v, want %v", c, eb, want)
		}
		var sum, sumD float64
		nBox := 0
		for _, e := range ev {
			if err := e.Validate(); err != nil {
				t.Fatal(err)
			}
			sum += e.Epsilon
			sumD += e.Delta
			if e.Kind == budget.Laplace && e.Epsilon == eb {
				nBox++
			}
		}
		if !near(sum, c.eps, 1e-12) || sumD != c.delta || nBox != 2*c.d {
			t.Fatalf("%+v: events add to (%v, %v) with %d box events, want (%v, %v) and %d", c, sum, sumD, nBox, c.eps, c.delta, 2*c.d)
		}
	}
}

// boxRow maps one raw row as the box pass does (released box, then §11).
func boxRow(tr *Trainer, clip *privClip, x []float64, y float64) ([]float64, float64) {
	row := make([]float64, tr.f)
	clip.prep.Transform(row, x)
	return row, clip.apply(row, labelUnit(y, tr.cfg.LabelLo, tr.cfg.LabelHi))
}

// randomBox returns a box drawn from the grid as release could return it:
// any ordered pair of distinct grid points, one-step boxes at either end
// included.
func randomBox(rng *rand.Rand, lo, hi []float64, trial int) mechanism.Scaler {
	l, h := make([]float64, len(lo)), make([]float64, len(lo))
	for j := range lo {
		g := boxGrid(lo[j], hi[j])
		k := len(g)
		a, c := rng.IntN(k-1), 0
		switch trial % 3 {
		case 0:
			a, c = 0, 1
		case 1:
			a, c = k-2, k-1
		default:
			c = a + 1 + rng.IntN(k-1-a)
		}
		l[j], h[j] = g[a], g[c]
	}
	s, err := mechanism.NewScaler(l, h, true)
	if err != nil {
		panic(err)
	}
	return s
}

// TestBoxRowsInBall: whatever box is released (one grid step at either end
// of the declared bounds, huge or tiny bounds) and whatever radii, every
// mapped row — corners, NULL, ±∞, values far outside — has ‖x‖ ≤ κ̂ and
// |y″| ≤ 1, so §3's sensitivities hold; and on adversarial neighbours
// through the real pass the joint statistic stays within J·κ̂⁴.
func TestBoxRowsInBall(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	nan := math.NaN()
	for _, d := range []int{1, 3, 50} {
		tr := mustPlan(t, boxConfig(d, 10, 1, 1e-6))
		for _, bounds := range [][2]float64{{-1, 1}, {-1e308, 1e308}, {1e15, 1e15 + 1}} {
			lo, hi := make([]float64, d), make([]float64, d)
			for j := range lo {
				lo[j], hi[j] = bounds[0], bounds[1]
			}
			for trial := 0; trial < 300; trial++ {
				clip := newPrivClip(d, []float64{1e-3, 0.3, math.Sqrt(float64(d))}[trial%3], math.Exp2(-Octaves*rng.Float64()))
				clip.withBox(randomBox(rng, lo, hi, trial))
				x := make([]float64, d)
				for j := range x {
					switch trial % 4 {
					case 0:
						x[j] = []float64{bounds[0], bounds[1]}[rng.IntN(2)]
					case 1:
						x[j] = []float64{nan, math.Inf(1), math.Inf(-1), -1e300, 1e300}[rng.IntN(5)]
					default:
						x[j] = bounds[0]*(1-rng.Float64()) + bounds[1]*rng.Float64()
					}
				}
				row, yv := boxRow(tr, clip, x, []float64{1, -1, nan, 1e300, 0.3}[trial%5])
				var s float64
				for _, v := range row {
					s += v * v
				}
				if math.Sqrt(s) > kappaHat || math.Abs(yv) > 1 || math.IsNaN(s) || math.IsNaN(yv) {
					t.Fatalf("d=%d %v: ‖x‖ = %v, y″ = %v", d, bounds, math.Sqrt(s), yv)
				}
			}
		}
	}
	// Neighbours through the real pass with a tight released box.
	const d = 3
	tr := mustPlan(t, boxConfig(d, 4, 1, 1e-6))
	bound := jointA(Kappa) * math.Pow(kappaHat, 4)
	base := dataset{x: [][]float64{{0.01, 0.02, -0.01}, {0.02, 0, 0.01}, {-0.01, 0.01, 0}, {0, -0.02, 0.02}}, y: []float64{0.01, -0.02, 0, 0.01}}
	worst := 0.0
	box, err := mechanism.NewScaler([]float64{-0.03, -0.03, -0.03}, []float64{0.03, 0.03, 0.03}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []float64{0.05, math.Sqrt(d)} {
		clip := newPrivClip(d, c, 0.02)
		clip.withBox(box)
		rows := append(cornerRows(d), []float64{0.005, 0.005, 0, -0.02}, []float64{nan, nan, nan, nan})
		for _, r := range rows {
			for _, r0 := range [][]float64{{0.01, 0.02, -0.01, 0.01}, {-1, -1, -1, -1}, {0.004, -0.004, 0, 0.02}} {
				b := replaceRow(base, r0)
				nb := replaceRow(base, r)
				sb := sufficientStats(b.x, b.y, tr.prep, -1, 1, 1, clip)
				sn := sufficientStats(nb.x, nb.y, tr.prep, -1, 1, 1, clip)
				v := sqDist(packA(sb.a, tr.f, true), packA(sn.a, tr.f, true)) + Kappa*sqDist(sb.c, sn.c)
				if v > bound {
					t.Fatalf("C=%v: rows %v → %v move the releases by %v > J = %v", c, r0, r, v, bound)
				}
				worst = math.Max(worst, v)
			}
		}
	}
	if worst < 0.9*jointA(Kappa) {
		t.Fatalf("adversarial neighbours reach only %v of J = %v", worst, jointA(Kappa))
	}
}

// TestBoxRelease: the released box on a clear table brackets its bulk at
// the planned levels; a constant column gets a box around its value.
func TestBoxRelease(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const n = 20000
	cfg := boxConfig(3, n, 10, 1e-6)
	cfg.Lo, cfg.Hi = []float64{0, -5, 0}, []float64{40000, 5, 10}
	tr := mustPlan(t, cfg)
	tr.priv.box.margin = 0 // the quantiles themselves (widen: TestBoxWiden)
	X := make([][]float64, n)
	for i := range X {
		X[i] = []float64{math.Exp(5 + rng.NormFloat64()), -4 + 0.3*rng.NormFloat64(), 3.7}
	}
	s, err := tr.priv.box.release(X)
	if err != nil {
		t.Fatal(err)
	}
	tail := tr.priv.box.tail
	col := func(j int) []float64 {
		v := make([]float64, n)
		for i, x := range X {
			v[i] = x[j]
		}
		slices.Sort(v)
		return v
	}
	for j := 0; j < 2; j++ {
		v := col(j)
		// Within a few times the planned tail (rank error ≪ tail·n at n·ε_b here).
		if lo, hi := v[int(tail/4*n)], v[int(4*tail*n)]; !(s.Lo[j] >= lo && s.Lo[j] <= hi) {
			t.Fatalf("feature %d: lower end %v outside [%v, %v]", j, s.Lo[j], lo, hi)
		}
		if lo, hi := v[n-1-int(4*tail*n)], v[n-1-int(tail/4*n)]; !(s.Hi[j] >= lo && s.Hi[j] <= hi) {
			t.Fatalf("feature %d: upper end %v outside [%v, %v]", j, s.Hi[j], lo, hi)
		}
	}
	// The constant column: every grid point past the value has the same
	// rank utility, so the ends are set by the outward penalty: the box
	// always contains the value (points before it are ≈ n rows off) and is
	// usually a few dozen grid steps (≈ 0.04 each here) wide.
	var widths []float64
	for k := 0; k < 15; k++ {
		s, err := tr.priv.box.release(X)
		if err != nil {
			t.Fatal(err)
		}
		if !(s.Lo[2] < 3.7 && s.Hi[2] > 3.7) {
			t.Fatalf("constant column 3.7: box [%v, %v]", s.Lo[2], s.Hi[2])
		}
		widths = append(widths, s.Hi[2]-s.Lo[2])
	}
	slices.Sort(widths)
	if widths[7] > 4 {
		t.Fatalf("constant column: median box width %v of 10", widths[7])
	}
	t.Logf("box %v %v (tail %.4g)", s.Lo, s.Hi, tail)
}

// TestBoxFold: the model's Scaler is the released box and its weights are
// §11's fold, so DP_PREDICT on raw rows gives C_y·θᵀx with x the training
// map (box, radius) for every row inside the radius — also rows outside the
// box, which both clip to it.
func TestBoxFold(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 10))
	const d = 6
	cfg := boxConfig(d, 10, 1, 1e-6)
	for j := range cfg.Lo {
		cfg.Lo[j], cfg.Hi[j] = 0, 1000
	}
	tr := mustPlan(t, cfg)
	lo, hi := make([]float64, d), make([]float64, d)
	for j := range lo {
		lo[j], hi[j] = 10+float64(j), 30+5*float64(j)
	}
	box, err := mechanism.NewScaler(lo, hi, true)
	if err != nil {
		t.Fatal(err)
	}
	clip := newPrivClip(d, 2.2, 0.3)
	clip.withBox(box)
	theta := make([]float64, d+1)
	for j := range theta {
		theta[j] = 0.3 * rng.NormFloat64()
	}
	m := tr.model(slices.Clone(theta), tr.Params(), clip)
	if m.Scaler.Lo[0] != 10 || m.Scaler.Hi[d-1] != hi[d-1] {
		t.Fatalf("model scaler %+v, want the released box", m.Scaler)
	}
	inside := 0
	for trial := 0; trial < 300; trial++ {
		x := make([]float64, d)
		for j := range x {
			x[j] = lo[j] + (hi[j]-lo[j])*(rng.Float64()*1.4-0.2) // some outside the box
		}
		row, _ := boxRow(tr, clip, x, 0)
		var z2 float64
		zz := box.Transform(nil, x)
		for _, v := range zz[:d] {
			z2 += v * v / (zz[d] * zz[d])
		}
		if math.Sqrt(z2) >= clip.c { // §11's radius clips this row
			continue
		}
		inside++
		var dot float64
		for j, v := range row {
			dot += theta[j] * v
		}
		want := mechanism.Clip(clip.cy*dot, -1, 1)
		p, err := m.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		if !near(p.Value, want, 1e-9) && math.Abs(p.Value-want) > 1e-12 {
			t.Fatalf("prediction %v, want %v", p.Value, want)
		}
	}
	if inside < 50 {
		t.Fatalf("only %d rows inside the radius", inside)
	}
}

// TestBoxTrainNeverFails: degenerate tables (constant, all NULL, ±∞,
// n = 1, values outside the declared bounds) at extreme ε, δ give a finite
// model whose box is a valid Scaler inside the declared bounds, and no
// error.
func TestBoxTrainNeverFails(t *testing.T) {
	const d = 4
	nan := math.NaN()
	tables := map[string]dataset{}
	zero, nulls, huge, cons := dataset{}, dataset{}, dataset{}, dataset{}
	for i := 0; i < 40; i++ {
		zero.x, zero.y = append(zero.x, []float64{0, 0, 0, 0}), append(zero.y, 0)
		nulls.x, nulls.y = append(nulls.x, []float64{nan, nan, nan, nan}), append(nulls.y, nan)
		huge.x, huge.y = append(huge.x, []float64{1e300, -1e300, math.Inf(1), math.Inf(-1)}), append(huge.y, math.Inf(-1))
		cons.x, cons.y = append(cons.x, []float64{1, -1, 0.123, 1}), append(cons.y, 0.5)
	}
	tables["zero"], tables["nulls"], tables["huge"], tables["constant"] = zero, nulls, huge, cons
	tables["one"] = dataset{x: [][]float64{{1, 1, 1, 1}}, y: []float64{1}}
	for _, p := range []struct{ eps, delta float64 }{{1e-2, 1e-12}, {0.1, 0}, {1, 1e-5}, {1e4, 0.5}, {1e4, 0}} {
		for name, ds := range tables {
			tr := mustPlan(t, boxConfig(d, len(ds.x), p.eps, p.delta))
			m, err := tr.Train(ds.x, ds.y)
			if err != nil {
				t.Fatalf("ε=%v δ=%v %s: %v", p.eps, p.delta, name, err)
			}
			if !finite(m.Weights[0]) || !(m.Params["clip_feature_norm"] > 0) || m.Params["private_box"] != 1 {
				t.Fatalf("ε=%v δ=%v %s: model %+v", p.eps, p.delta, name, m)
			}
			for j := range m.Scaler.Lo {
				if !(m.Scaler.Lo[j] < m.Scaler.Hi[j]) || m.Scaler.Lo[j] < -1 || m.Scaler.Hi[j] > 1 {
					t.Fatalf("ε=%v δ=%v %s: box %v %v", p.eps, p.delta, name, m.Scaler.Lo, m.Scaler.Hi)
				}
			}
			if _, err := m.Predict([]float64{nan, 0, 1, -1}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// boxAuditTrainer is a box plan at the audits' (2, 10⁻²) on clipPair's
// d = 3, n = 2 whose box and radius grids have 5 points (report-noisy-max's
// guarantee does not depend on K), to keep the audit fast.
func boxAuditTrainer(t testing.TB) *Trainer {
	tr := auditClipTrainer(t)
	cfg := tr.cfg
	cfg.Bounds = BoundsBox
	bt := mustPlan(t, cfg)
	if bt.params["joint_zcdp"] != 1 || bt.priv.box == nil || bt.pre != nil {
		t.Fatalf("audit plan: joint %v, box %v", bt.params["joint_zcdp"], bt.priv.box != nil)
	}
	bt.priv.norm, bt.priv.radius = tr.priv.norm, tr.priv.radius
	b := bt.priv.box
	for j := range b.grids {
		b.grids[j] = []float64{-1, -0.5, 0, 0.5, 1}
		var err error
		if b.upper[j], err = newBoxQuantile(5, 1-b.tail, b.eps, BoxPenalty); err != nil {
			t.Fatal(err)
		}
		if b.lower[j], err = newBoxQuantile(5, 1-b.tail, b.eps, BoxPenalty); err != nil {
			t.Fatal(err)
		}
	}
	return bt
}

// exactBox is the broken variant's box: the non-private extremes of each
// column (widened to a grid step when constant).
func exactBox(tr *Trainer, ds dataset) mechanism.Scaler {
	d := len(tr.cfg.Features)
	lo, hi := make([]float64, d), make([]float64, d)
	for j := range lo {
		g := tr.priv.box.grids[j]
		a, c := len(g)-1, 0
		for _, x := range ds.x {
			cc, f := boxIndex(g, x[j])
			a, c = min(a, f), max(c, cc)
		}
		if a >= c {
			a, c = min(a, c), max(a, c)
			if a == c {
				if c < len(g)-1 {
					c++
				} else {
					a--
				}
			}
		}
		lo[j], hi[j] = g[a], g[c]
	}
	s, _ := mechanism.NewScaler(lo, hi, true)
	return s
}

// boxLLR runs the whole release on clipPair's D or D′ — the 2d box
// quantiles, the two radii on the boxed rows, AdaSSP on the mapped rows —
// and returns the Gaussian stage's log-likelihood ratio given the released
// box and radii plus 4·[C ≥ 0.1] plus 2 per feature whose released upper
// end is ≥ 0.75 (a bounded term that sees the box). With exact set the box
// is the non-private extremes (the must-fail variant).
func boxLLR(t testing.TB, tr *Trainer, exact bool) audit.Sampler {
	d0, d1 := clipPair()
	type pair struct{ s0, s1 stats }
	cache := map[string]pair{}
	return func(side int) float64 {
		ds := d0
		if side == 1 {
			ds = d1
		}
		clip := sideClip(t, tr, side, d0, d1)
		if exact {
			clip.withBox(exactBox(tr, ds))
		}
		key := fmt.Sprint(clip.c, clip.cy, clip.box.Lo, clip.box.Hi)
		p, ok := cache[key]
		if !ok {
			lo, hi := tr.cfg.LabelLo, tr.cfg.LabelHi
			p = pair{sufficientStats(d0.x, d0.y, tr.prep, lo, hi, 1, clip), sufficientStats(d1.x, d1.y, tr.prep, lo, hi, 1, clip)}
			cache[key] = p
		}
		v := releaseLLR(t, tr, side, p.s0, p.s1)
		if clip.c >= 0.1 {
			v += 4
		}
		for _, h := range clip.box.Hi {
			if h >= 0.75 {
				v += 2
			}
		}
		return v
	}
}

// TestAuditBoxRelease: the release with the private box on the pair whose
// box ends and norm quantile move must not show ε > 2 at δ = 10⁻².
func TestAuditBoxRelease(t *testing.T) {
	tr := boxAuditTrainer(t)
	audit.RequirePass(t, boxLLR(t, tr, false), auditEps, audit.Config{N: 20000, Delta: auditDelta})
}

// TestAuditBoxExactCaught is an expected failure: a box from the
// non-private extremes reveals the moved corner row.
func TestAuditBoxExactCaught(t *testing.T) {
	tr := boxAuditTrainer(t)
	audit.RequireCatch(t, boxLLR(t, tr, true), auditEps, audit.Config{N: 8000, Delta: auditDelta})
}

// TestBoxWiden: the margin moves both ends by the same amount, never past
// the declared bounds, keeps the centre and the order.
func TestBoxWiden(t *testing.T) {
	for _, c := range []struct{ a, c, lo, hi, wantA, wantC float64 }{
		{-2, 2, -5, 5, -3, 3},       // room on both sides: margin·width = 1 (margin ¼)
		{-4.7, -3.3, -5, 5, -5, -3}, // the corner: limited by a − lo = 0.3 on both sides
		{0, 10, 0, 60, 0, 10},       // at the declared lower end: unchanged
		{1e300, 1.5e300, -1e308, 1e308, 0.875e300, 1.625e300},
	} {
		a, b := widen(c.a, c.c, 0.25, c.lo, c.hi)
		if !near(a, c.wantA, 1e-12) && a != c.wantA || !near(b, c.wantC, 1e-12) && b != c.wantC || !(a < b) || a < c.lo || b > c.hi {
			t.Fatalf("widen(%v, %v) in [%v, %v] = [%v, %v], want [%v, %v]", c.a, c.c, c.lo, c.hi, a, b, c.wantA, c.wantC)
		}
	}
}

// TestBoxRule: UseBox is n·ε_b ≥ BoxMinNEps with ε_b as planned (δ = 0:
// n·ε_b ≥ BoxMinNEpsPure and d ≤ BoxMaxFeaturesPure; the table of
// linreg.md §13), bounds=auto adds the box exactly when both rules say
// so, and BoxLevel's tail.
func TestBoxRule(t *testing.T) {
	for _, c := range []struct {
		n, d       int
		eps, delta float64
		want       bool
	}{{16512, 8, 1, 1e-6, true}, {16512, 8, 0.1, 1e-6, false}, {10000, 10, 1, 1e-6, true}, {10000, 10, 0.1, 1e-6, false},
		{10000, 50, 1, 1e-6, false}, {100000, 50, 1, 1e-6, true}, {1000, 10, 10, 1e-6, true}, {353, 10, 10, 1e-6, false},
		{16512, 8, 1, 0, false}, {50000, 8, 1, 0, true}, {10000, 10, 10, 0, true}, {100000, 50, 10, 0, false}, {10000, 10, 1, 0, false}} {
		eb := boxEpsilon(c.d, c.eps, c.delta)
		rule := float64(c.n)*eb >= BoxMinNEps
		if c.delta == 0 {
			rule = float64(c.n)*eb >= BoxMinNEpsPure && c.d <= BoxMaxFeaturesPure
		}
		if got := UseBox(c.n, c.d, c.eps, c.delta); got != c.want || got != rule {
			t.Fatalf("UseBox(%d, %d, %v, %v) = %v (n·ε_b = %v), want %v", c.n, c.d, c.eps, c.delta, got, float64(c.n)*eb, c.want)
		}
		// bounds=auto follows the two rules (§11, then §13).
		auto := boxConfig(c.d, c.n, c.eps, c.delta)
		auto.Bounds = BoundsAuto
		want := BoundsPublic
		if UsePrivateBounds(c.n, c.eps) {
			want = BoundsPrivate
			if c.want {
				want = BoundsBox
			}
		}
		if at := mustPlan(t, auto); at.Config().Bounds != want || (at.priv != nil && (at.priv.box != nil) != (want == BoundsBox)) {
			t.Fatalf("%+v: auto plans %q, want %q", c, at.Config().Bounds, want)
		}
		tr := mustPlan(t, boxConfig(c.d, c.n, c.eps, c.delta))
		if tr.priv.box.eps != eb && tr.params["joint_zcdp"] == 1 {
			t.Fatalf("%+v: planned ε_b %v, rule's %v", c, tr.priv.box.eps, eb)
		}
		if tail := BoxLevel(c.n, eb, BoxTail, BoxRankC); tail != math.Min(BoxMaxTail, math.Max(BoxTail, BoxRankC/(float64(c.n)*eb))) {
			t.Fatalf("tail %v", tail)
		}
	}
}
