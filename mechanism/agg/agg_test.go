package agg

import (
	"math"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/mechanism"
)

func mustPlan(t testing.TB, s Spec) *Plan {
	t.Helper()
	p, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestScaleExact: ε split equally, count scale 2/ε_c, sum scale 2h·slack/ε_s
// (h = w/2 for these bounds).
func TestScaleExact(t *testing.T) {
	p := mustPlan(t, Spec{Groups: 3, Count: true, Sums: []Bound{{0, 100}, {-5, 5}}, Epsilon: 1.5})
	if p.EpsCount != 0.5 || p.EpsSum[0] != 0.5 || p.EpsSum[1] != 0.5 {
		t.Fatalf("split %v %v", p.EpsCount, p.EpsSum)
	}
	if p.CountScale() != 4 {
		t.Fatalf("count scale %v, want 4", p.CountScale())
	}
	if got, want := p.SumScale(0, 1000), 100*mechanism.SumSlack(1000)/0.5; got != want {
		t.Fatalf("sum scale %v, want %v", got, want)
	}
	if got, want := p.SumScale(1, 1000), 10*mechanism.SumSlack(1000)/0.5; got != want {
		t.Fatalf("sum scale %v, want %v", got, want)
	}
	ev := p.Events()
	total := 0.0
	for _, e := range ev {
		total += e.Epsilon
	}
	if len(ev) != 3 || math.Abs(total-1.5) > 1e-15 {
		t.Fatalf("events %v", ev)
	}
	// Count only: the whole ε goes to the counts.
	if q := mustPlan(t, Spec{Groups: 1, Count: true, Epsilon: 1}); q.CountScale() != 2 || len(q.Events()) != 1 {
		t.Fatalf("count-only plan %+v", q)
	}
	for _, bad := range []Spec{
		{Groups: 0, Count: true, Epsilon: 1},
		{Groups: MaxGroups + 1, Count: true, Epsilon: 1},
		{Groups: 1, Count: true, Epsilon: 0},
		{Groups: 1, Count: true, Epsilon: math.Inf(1)},
		{Groups: 1, Sums: []Bound{{1, 1}}, Epsilon: 1},
		{Groups: 1, Sums: []Bound{{-math.MaxFloat64, math.MaxFloat64}}, Epsilon: 1},
		{Groups: 1, Epsilon: 1},
	} {
		if _, err := New(bad); err == nil {
			t.Fatalf("New(%+v) accepted", bad)
		}
	}
}

type row struct {
	g int
	x float64
}

// exact returns the measured vectors before noise.
func exact(p *Plan, rows []row) ([]float64, []float64, int64) {
	a := p.Accumulator()
	for _, r := range rows {
		a.Row(r.g, []float64{r.x}[:len(p.Sums)])
	}
	c := make([]float64, p.Groups)
	s := make([]float64, p.Groups)
	for g := range c {
		c[g] = float64(a.counts[g])
		if len(a.sums) > 0 {
			s[g] = a.sums[0][g].Value()
		}
	}
	return c, s, a.n
}

func l1(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d += math.Abs(a[i] - b[i])
	}
	return d
}

// TestSensitivityAdversarial: replace-one neighbours, including a row that
// moves between groups, a row dropped by the predicate, out-of-bound and
// NULL values, and huge |lo| (the float attack of docs/mechanisms/mean.md).
func TestSensitivityAdversarial(t *testing.T) {
	for _, b := range []Bound{{0, 10}, {-3, 7}, {1e9, 1e9 + 1}, {-1e12, -1e12 + 0.5}} {
		p := mustPlan(t, Spec{Groups: 3, Sums: []Bound{b}, Epsilon: 1})
		base := make([]row, 0, 2001)
		for i := 0; i < 2000; i++ {
			base = append(base, row{i % 3, b.Lo + (b.Hi-b.Lo)*float64(i%7)/6.3})
		}
		w := b.Hi - b.Lo
		cases := []struct{ from, to row }{
			{row{0, b.Hi}, row{1, b.Hi}},                 // moves between groups, max value
			{row{0, b.Hi}, row{1, b.Lo}},                 // moves and changes value
			{row{0, b.Hi + 1e6}, row{2, b.Lo - 1e6}},     // out of bounds both ways
			{row{0, b.Hi}, row{-1, b.Hi}},                // dropped by the predicate
			{row{1, math.NaN()}, row{2, b.Hi}},           // NULL (midpoint)
			{row{2, b.Lo + 0.37*w}, row{2, b.Hi - 1e-9}}, // same group
		}
		for _, c := range cases {
			d := append(append([]row(nil), base...), c.from)
			d2 := append(append([]row(nil), base...), c.to)
			c1, s1, n := exact(p, d)
			c2, s2, _ := exact(p, d2)
			if got := l1(c1, c2); got > CountSensitivity {
				t.Fatalf("bounds %v %v→%v: count ℓ₁ %v > %v", b, c.from, c.to, got, CountSensitivity)
			}
			if got, lim := l1(s1, s2), p.SumSensitivity(0, n); got > lim {
				t.Fatalf("bounds %v %v→%v: sum ℓ₁ %v > %v", b, c.from, c.to, got, lim)
			}
		}
		// The bound is attained (it is not loose by a factor 2).
		c1, s1, _ := exact(p, append(append([]row(nil), base...), row{0, b.Hi}))
		c2, s2, _ := exact(p, append(append([]row(nil), base...), row{1, b.Hi}))
		if l1(c1, c2) != 2 || l1(s1, s2) < 0.99*w {
			t.Fatalf("bounds %v: moving a row gives count ℓ₁ %v, centred sum ℓ₁ %v (w = %v)", b, l1(c1, c2), l1(s1, s2), w)
		}
	}
}

// llr is the Laplace privacy-loss statistic of output y between the exact
// vectors a (D) and b (D′), in units of the scale: the most powerful test.
func llr(y, a, b []float64) float64 {
	s := 0.0
	for i := range y {
		s += math.Abs(y[i]-b[i]) - math.Abs(y[i]-a[i])
	}
	return s
}

// neighbours: one row in group 0 (D) or group 1 (D′), value hi.
func neighbours(b Bound) ([]row, []row) {
	base := []row{{0, b.Lo}, {1, b.Hi}, {2, b.Lo}, {0, b.Hi}, {1, b.Lo}}
	d := append(append([]row(nil), base...), row{0, b.Hi})
	d2 := append(append([]row(nil), base...), row{1, b.Hi})
	return d, d2
}

func countSampler(t *testing.T, p *Plan, b Bound) audit.Sampler {
	d, d2 := neighbours(b)
	ca, _, _ := exact(p, d)
	cb, _, _ := exact(p, d2)
	return func(side int) float64 {
		a := p.Accumulator()
		rows := d
		if side == 1 {
			rows = d2
		}
		for _, r := range rows {
			a.Row(r.g, []float64{r.x}[:len(p.Sums)])
		}
		y, err := a.noisyCounts()
		if err != nil {
			t.Fatal(err)
		}
		return llr(y, ca, cb)
	}
}

func sumSampler(t *testing.T, p *Plan, b Bound) audit.Sampler {
	d, d2 := neighbours(b)
	_, sa, _ := exact(p, d)
	_, sb, _ := exact(p, d2)
	return func(side int) float64 {
		a := p.Accumulator()
		rows := d
		if side == 1 {
			rows = d2
		}
		for _, r := range rows {
			a.Row(r.g, []float64{r.x})
		}
		y, err := a.noisySums(0)
		if err != nil {
			t.Fatal(err)
		}
		return llr(y, sa, sb)
	}
}

// TestAuditGroupedCount: a row moving between groups; must-fail variant
// calibrated for sensitivity 1 (forgetting that two groups change).
func TestAuditGroupedCount(t *testing.T) {
	t.Parallel() // pure computation; halves the wall time under -race
	cfg := audit.Config{N: 10000}
	b := Bound{0, 1}
	p := mustPlan(t, Spec{Groups: 3, Count: true, Epsilon: 1})
	audit.RequirePass(t, countSampler(t, p, b), 1, cfg)
	broken := mustPlan(t, Spec{Groups: 3, Count: true, Epsilon: 2}) // scale 1/ε
	audit.RequireCatch(t, countSampler(t, broken, b), 1, cfg)
}

// TestAuditGroupedSum: same neighbours for the centred sums (count and sum
// get ε/2 each); must-fail variant calibrated for h instead of 2h (one
// group's change only).
func TestAuditGroupedSum(t *testing.T) {
	t.Parallel() // pure computation; halves the wall time under -race
	cfg := audit.Config{N: 10000}
	b := Bound{-2, 3}
	p := mustPlan(t, Spec{Groups: 3, Sums: []Bound{b}, Epsilon: 2})
	audit.RequirePass(t, sumSampler(t, p, b), p.EpsSum[0], cfg)
	broken := mustPlan(t, Spec{Groups: 3, Sums: []Bound{b}, Epsilon: 4})
	audit.RequireCatch(t, sumSampler(t, broken, b), p.EpsSum[0], cfg)
}

// TestReleaseUtility: on a large table the answers are close to the truth
// and SUM/AVG are consistent post-processing.
func TestReleaseUtility(t *testing.T) {
	p := mustPlan(t, Spec{Groups: 2, Sums: []Bound{{0, 10}}, Epsilon: 2})
	a := p.Accumulator()
	for i := 0; i < 100000; i++ {
		a.Row(i%2, []float64{float64(2 + 4*(i%2))})
	}
	a.Row(-1, []float64{5})
	r, err := a.Release()
	if err != nil {
		t.Fatal(err)
	}
	for g, want := range []float64{2, 6} {
		if math.Abs(r.Count[g]-50000) > 200 || math.Abs(r.Avg[0][g]-want) > 0.05 || math.Abs(r.Sum[0][g]-want*50000) > 2000 {
			t.Fatalf("group %d: count %v avg %v sum %v", g, r.Count[g], r.Avg[0][g], r.Sum[0][g])
		}
	}
	if a.N() != 100001 {
		t.Fatalf("n = %d", a.N())
	}
}

// TestCentredSumFloat: the split centred sum of a million values near a huge
// lower bound stays within the charged sensitivity when one row moves
// between groups (the float attack of docs/mechanisms/mean.md); the naive
// float sum of raw values, kept as the must-fail variant, does not.
func TestCentredSumFloat(t *testing.T) {
	b := Bound{1e9 + 0.3, 1e9 + 1.3}
	p := mustPlan(t, Spec{Groups: 2, Sums: []Bound{b}, Epsilon: 1})
	const n = 1_000_000
	run := func(first row) (centred []float64, naive []float64) {
		a := p.Accumulator()
		raw := make([]float64, 2)
		cnt := make([]float64, 2)
		// The moving row comes first, so every later rounding differs.
		a.Row(first.g, []float64{first.x})
		raw[first.g] += first.x
		cnt[first.g]++
		for i := 0; i < n-1; i++ {
			v := b.Lo + float64(i%1000)/999
			a.Row(i%2, []float64{v})
			raw[i%2] += v
			cnt[i%2]++
		}
		m, _ := Mid(b)
		// Must-fail variant: plain float sums of the raw values, centred
		// afterwards with the exact counts; rounding is at the scale of |lo|.
		naive = []float64{raw[0] - m*cnt[0], raw[1] - m*cnt[1]}
		return []float64{a.sums[0][0].Value(), a.sums[0][1].Value()}, naive
	}
	c1, n1 := run(row{0, b.Hi})
	c2, n2 := run(row{1, b.Hi})
	lim := p.SumSensitivity(0, n)
	if got := l1(c1, c2); got > lim {
		t.Fatalf("centred split sum moved %v > sensitivity %v", got, lim)
	}
	if got := l1(n1, n2); got <= lim {
		t.Fatalf("naive float sum moved only %v ≤ %v: the must-fail variant does not fail", got, lim)
	}
	t.Logf("one row moving: centred split sums move %.6f (charged %.6f); naive raw sums move %.1f", l1(c1, c2), lim, l1(n1, n2))
}
