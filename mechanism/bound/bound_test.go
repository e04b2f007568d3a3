package bound

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/noise"
)

type row struct {
	person, group string
	vals          []float64
}

func mustPlan(t *testing.T, s Spec) *Plan {
	t.Helper()
	p, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func bounded(t *testing.T, p *Plan, rows []row) *Bounded {
	t.Helper()
	b, err := accumulate(p, rows).Bound()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestScalesExact(t *testing.T) {
	p := mustPlan(t, Spec{MaxGroups: 3, MaxRows: 2, Domain: []string{"a", "b"}, Epsilon: 2,
		Measures: []Measure{{Kind: Count}, {Kind: Sum, Lo: -5, Hi: 10}, {Kind: Avg, Lo: 0, Hi: 4}}})
	if p.Share != 0.5 {
		t.Fatalf("share %v, want ε/4 (COUNT, SUM, AVG persons, AVG sum)", p.Share)
	}
	want := [][2]float64{{3 * 2 / 0.5, 0}, {3 * 10 * Sigma / 0.5, 0}, {3 / 0.5, 3 * 2 * Sigma / 0.5}}
	for i, w := range want {
		a, b := p.Scales(i)
		if a != w[0] || b != w[1] {
			t.Fatalf("measure %d scales (%v, %v), want %v", i, a, b, w)
		}
	}
	if Sigma < 1 || Sigma > 1.001 {
		t.Fatalf("Sigma %v", Sigma)
	}
	ev := p.Events()
	if len(ev) != 4 {
		t.Fatalf("events %v", ev)
	}
	for _, e := range ev {
		if e.Kind != budget.Laplace || e.Epsilon != 0.5 {
			t.Fatalf("event %+v", e)
		}
	}
	s := mustPlan(t, Spec{MaxGroups: 4, MaxRows: 1, Epsilon: 1, Delta: 1e-6, Measures: []Measure{{Kind: Count}}})
	if s.Share != 0.5 || s.SelectScale() != 8 {
		t.Fatalf("selection share %v scale %v", s.Share, s.SelectScale())
	}
	if ev := s.Events(); len(ev) != 2 || ev[0].Kind != budget.Generic || ev[0].Delta != 1e-6 || ev[0].Epsilon != 0.5 {
		t.Fatalf("selection events %+v", ev)
	}
	// A singleton group (one person) is released with probability ≤ δ/k
	// under the noise actually sampled, and τ is close to the continuous one.
	tau := s.Threshold()
	if q := noise.LaplaceTail(s.SelectScale(), tau-1); q > 1e-6/4 {
		t.Fatalf("P[release singleton] = %v > δ/k", q)
	}
	if c := 1 + 8*math.Log(4/(2*1e-6)); math.Abs(tau-c) > 0.01*c {
		t.Fatalf("τ = %v, far from the continuous 1 + b·ln(k/2δ) = %v", tau, c)
	}
}

func TestSpecRefused(t *testing.T) {
	ok := Spec{MaxGroups: 1, MaxRows: 1, Domain: []string{"x"}, Epsilon: 1, Measures: []Measure{{Kind: Count}}}
	bad := map[string]func(s *Spec){
		"k=0":          func(s *Spec) { s.MaxGroups = 0 },
		"C=0":          func(s *Spec) { s.MaxRows = 0 },
		"huge k":       func(s *Spec) { s.MaxGroups = MaxGroupsCap + 1 },
		"eps":          func(s *Spec) { s.Epsilon = 0 },
		"eps inf":      func(s *Spec) { s.Epsilon = math.Inf(1) },
		"no measure":   func(s *Spec) { s.Measures = nil },
		"dup group":    func(s *Spec) { s.Domain = []string{"x", "x"} },
		"empty domain": func(s *Spec) { s.Domain = []string{} },
		"no delta":     func(s *Spec) { s.Domain = nil },
		"sum bounds":   func(s *Spec) { s.Measures = []Measure{{Kind: Sum, Lo: 1, Hi: 1}} },
		"avg nan":      func(s *Spec) { s.Measures = []Measure{{Kind: Avg, Lo: math.NaN(), Hi: 1}} },
		"kind":         func(s *Spec) { s.Measures = []Measure{{Kind: 9}} },
	}
	for name, f := range bad {
		s := ok
		f(&s)
		if _, err := New(s); !errors.Is(err, ErrSpec) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := New(ok); err != nil {
		t.Fatal(err)
	}
}

// base persons contribute to at most k groups each, so Bound is
// deterministic on them and neighbours differ only by the added person.
func base(groups []string, k int) []row {
	var out []row
	for i := 0; i < 60; i++ {
		for j := 0; j < k; j++ {
			g := groups[(i+j)%len(groups)]
			out = append(out, row{fmt.Sprint("p", i), g, []float64{1, float64(i % 7), float64(i % 5)}})
		}
	}
	return out
}

func l1(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	return s
}

// TestSensitivityAdversarial: unit-level neighbours (one person added with
// all their rows) for every measure, k ∈ {1, 3}, a person with 1 row,
// 10,000 rows in one group, rows in every group, extreme and NULL values.
// The bounded vectors move by at most the charged sensitivity, and the
// heavy cases attain it (the bound is not loose).
func TestSensitivityAdversarial(t *testing.T) {
	groups := []string{"g0", "g1", "g2", "g3", "g4"}
	const lo, hi = -3.0, 8.0
	for _, k := range []int{1, 3} {
		for _, c := range []int{1, 4} {
			p := mustPlan(t, Spec{MaxGroups: k, MaxRows: c, Domain: groups, Epsilon: 3,
				Measures: []Measure{{Kind: Count}, {Kind: Sum, Lo: float64(c) * lo, Hi: float64(c) * hi}, {Kind: Avg, Lo: lo, Hi: hi}}})
			d := base(groups, k)
			heavy := func(gs []string, n int, v float64) []row {
				var out []row
				for _, g := range gs {
					for i := 0; i < n; i++ {
						out = append(out, row{"victim", g, []float64{1, v, v}})
					}
				}
				return out
			}
			cases := map[string][]row{
				"1 row":                 heavy(groups[:1], 1, hi),
				"10000 rows, 1 group":   heavy(groups[:1], 10000, hi),
				"10000 rows, low":       heavy(groups[:1], 10000, lo),
				"all groups, 2000 each": heavy(groups, 2000, hi),
				"NULL values":           {{"victim", "g1", []float64{math.NaN(), math.NaN(), math.NaN()}}},
				"outside domain":        {{"victim", "nope", []float64{1, hi, hi}}},
			}
			b0 := bounded(t, p, d)
			for name, extra := range cases {
				for rep := 0; rep < 5; rep++ { // the victim's group sample varies
					b1 := bounded(t, p, append(append([]row(nil), d...), extra...))
					for i := range p.Measures {
						s1, s2 := p.Sensitivity(i)
						if got := l1(b0.First[i], b1.First[i]); got > s1 {
							t.Fatalf("k=%d C=%d %s: measure %d first vector moved %v > %v", k, c, name, i, got, s1)
						}
						if got := l1(b0.Second[i], b1.Second[i]); got > s2 {
							t.Fatalf("k=%d C=%d %s: measure %d second vector moved %v > %v", k, c, name, i, got, s2)
						}
					}
				}
			}
			// Attained: a person in every group with many rows at hi.
			b1 := bounded(t, p, append(append([]row(nil), d...), cases["all groups, 2000 each"]...))
			if got := l1(b0.First[0], b1.First[0]); got != float64(k*c) {
				t.Fatalf("k=%d C=%d: COUNT moved %v, want exactly k·C", k, c, got)
			}
			if got, want := l1(b0.First[1], b1.First[1]), float64(k*c)*hi; math.Abs(got-want) > 1e-9 {
				t.Fatalf("k=%d C=%d: SUM moved %v, want k·C·hi = %v", k, c, got, want)
			}
		}
	}
}

// TestSelectionSensitivity: with undeclared groups a person adds 1 to the
// person count of at most k groups, and creates at most k groups, each with
// one person.
func TestSelectionSensitivity(t *testing.T) {
	p := mustPlan(t, Spec{MaxGroups: 2, MaxRows: 1, Epsilon: 1, Delta: 1e-5, Measures: []Measure{{Kind: Count}}})
	d := base([]string{"a", "b", "c"}, 2)
	var extra []row
	for i := 0; i < 50; i++ {
		extra = append(extra, row{"victim", fmt.Sprint("new", i%10), []float64{1}}, row{"victim", "a", []float64{1}})
	}
	b0 := bounded(t, p, d)
	for rep := 0; rep < 20; rep++ {
		b1 := bounded(t, p, append(append([]row(nil), d...), extra...))
		old := map[string]float64{}
		for g, k := range b0.Keys {
			old[k] = b0.Persons[g]
		}
		moved, created := 0.0, 0
		for g, k := range b1.Keys {
			if o, ok := old[k]; ok {
				moved += b1.Persons[g] - o
			} else {
				created++
				if b1.Persons[g] != 1 {
					t.Fatalf("created group %s has %v persons", k, b1.Persons[g])
				}
			}
		}
		if moved+float64(created) > 2 || created > 2 {
			t.Fatalf("victim moved %v existing and created %d groups (k = 2)", moved, created)
		}
	}
}

// TestHeavyPersonBoundedRelease: a person with 10,000 rows moves the
// released COUNT by at most k·C plus noise (the "500 orders").
func TestHeavyPersonBoundedRelease(t *testing.T) {
	p := mustPlan(t, Spec{MaxGroups: 1, MaxRows: 1, Domain: []string{"all"}, Epsilon: 4, Measures: []Measure{{Kind: Count}}})
	var rows []row
	for i := 0; i < 1000; i++ {
		rows = append(rows, row{fmt.Sprint(i), "all", []float64{1}})
	}
	for i := 0; i < 10000; i++ {
		rows = append(rows, row{"heavy", "all", []float64{1}})
	}
	res := release(t, p, rows)
	// scale 1/4: |noise| > 10 has probability e^-40.
	if got := res.Values[0][0]; math.Abs(got-1001) > 10 {
		t.Fatalf("count %v, want 1001 ± noise (the heavy person counts once)", got)
	}
}

// llr is the Laplace privacy-loss statistic Σ |y − a′| − |y − a|.
func llr(y, a, a2 []float64) float64 {
	s := 0.0
	for g := range y {
		s += math.Abs(y[g]-a2[g]) - math.Abs(y[g]-a[g])
	}
	return s
}

// victimRows: a person with n rows in each of groups gs.
func victimRows(gs []string, n int) []row {
	var out []row
	for _, g := range gs {
		for i := 0; i < n; i++ {
			out = append(out, row{"victim", g, []float64{1}})
		}
	}
	return out
}

// countAudit samples the released COUNT vector of D (side 0) or D plus the
// victim (side 1), reduced by the privacy-loss statistic; release is the
// mechanism under test.
func countAudit(t *testing.T, p *Plan, d, victim []row, exact func([]row) []float64, release func([]row) []float64) audit.Sampler {
	d1 := append(append([]row(nil), d...), victim...)
	a0, a1 := exact(d), exact(d1)
	return func(side int) float64 {
		rows := d
		if side == 1 {
			rows = d1
		}
		return llr(release(rows), a0, a1)
	}
}

// TestAuditPersonCount: Clopper–Pearson audit of the person-level COUNT on
// neighbours differing by a person with 300 rows in k = 3 groups (C = 1).
// Pass: the real release. Must fail: (1) row-level calibration (no person
// bounding, mechanism/agg's scale 2/ε) on these unit-level neighbours;
// (2) bounding but a scale blind to k (C/ε for a person in 3 groups).
func TestAuditPersonCount(t *testing.T) {
	t.Parallel()
	groups := []string{"a", "b", "c", "d"}
	const eps = 1.0
	p := mustPlan(t, Spec{MaxGroups: 3, MaxRows: 1, Domain: groups, Epsilon: eps, Measures: []Measure{{Kind: Count}}})
	var d []row
	for i := 0; i < 40; i++ {
		d = append(d, row{fmt.Sprint(i), groups[i%4], []float64{1}})
	}
	victim := victimRows(groups[:3], 100) // 300 rows: far above C = 1 (the 10,000-row case is in the sensitivity test)
	cfg := audit.Config{N: 10000}
	exactBounded := func(rows []row) []float64 { return bounded(t, p, rows).First[0] }
	real := func(rows []row) []float64 { return release(t, p, rows).Values[0] }
	audit.RequirePass(t, countAudit(t, p, d, victim, exactBounded, real), eps, cfg)

	// (1) Row-level: raw row counts, Laplace 2/ε (replace-one, one row).
	raw := func(rows []row) []float64 {
		c := make([]float64, len(groups))
		for _, r := range rows {
			for g, k := range groups {
				if k == r.group {
					c[g]++
				}
			}
		}
		return c
	}
	rowLevel := func(rows []row) []float64 {
		c := raw(rows)
		q := mustPlan(t, Spec{MaxGroups: 1, MaxRows: 1, Domain: groups, Epsilon: eps / 2, Measures: []Measure{{Kind: Count}}})
		if err := addVec(c, 2/eps, q); err != nil {
			t.Fatal(err)
		}
		return c
	}
	audit.RequireCatch(t, countAudit(t, p, d, victim, raw, rowLevel), eps, cfg)

	// (2) k-blind: bounded to 3 groups × 1 row, but scale C/ε.
	kBlind := func(rows []row) []float64 {
		c := append([]float64(nil), bounded(t, p, rows).First[0]...)
		if err := addVec(c, 1/eps, p); err != nil {
			t.Fatal(err)
		}
		return c
	}
	audit.RequireCatch(t, countAudit(t, p, d, victim, exactBounded, kBlind), eps, cfg)
}

// TestAuditPersonSum: the SUM vector on a person with 300 rows at the
// upper bound in 2 groups (k = 2, per-group clamp [0, 5]); must fail: the
// clamp applied per row instead of per person (row-level bounding).
func TestAuditPersonSum(t *testing.T) {
	t.Parallel()
	groups := []string{"a", "b", "c"}
	const eps = 1.0
	p := mustPlan(t, Spec{MaxGroups: 2, MaxRows: 1, Domain: groups, Epsilon: eps, Measures: []Measure{{Kind: Sum, Lo: 0, Hi: 5}}})
	var d []row
	for i := 0; i < 30; i++ {
		d = append(d, row{fmt.Sprint(i), groups[i%3], []float64{float64(i % 4)}})
	}
	var victim []row
	for _, g := range groups[:2] {
		for i := 0; i < 150; i++ {
			victim = append(victim, row{"victim", g, []float64{5}})
		}
	}
	cfg := audit.Config{N: 10000}
	exact := func(rows []row) []float64 { return bounded(t, p, rows).First[0] }
	real := func(rows []row) []float64 { return release(t, p, rows).Values[0] }
	audit.RequirePass(t, countAudit(t, p, d, victim, exact, real), eps, cfg)
	perRow := func(rows []row) []float64 {
		s := make([]float64, len(groups))
		for _, r := range rows {
			for g, k := range groups {
				if k == r.group {
					s[g] += math.Min(5, math.Max(0, r.vals[0]))
				}
			}
		}
		return s
	}
	perRowNoisy := func(rows []row) []float64 {
		s := perRow(rows)
		a, _ := p.Scales(0)
		if err := addVec(s, a, p); err != nil {
			t.Fatal(err)
		}
		return s
	}
	audit.RequireCatch(t, countAudit(t, p, d, victim, perRow, perRowNoisy), eps, cfg)
}

// TestReleaseUtilityAndAvg: many persons with several rows each; COUNT (C
// large enough), SUM and AVG (average of person means) are close to the
// bounded truth.
func TestReleaseUtilityAndAvg(t *testing.T) {
	p := mustPlan(t, Spec{MaxGroups: 1, MaxRows: 3, Domain: []string{"x", "y"}, Epsilon: 3,
		Measures: []Measure{{Kind: Count}, {Kind: Sum, Lo: 0, Hi: 30}, {Kind: Avg, Lo: 0, Hi: 10}}})
	a := p.Accumulator()
	for i := 0; i < 20000; i++ {
		g := []string{"x", "y"}[i%2]
		for j := 0; j < 3; j++ {
			v := float64(2 + 4*(i%2))
			a.Row(fmt.Sprint(i), g, []float64{1, v, v})
		}
	}
	r, err := a.Release()
	if err != nil {
		t.Fatal(err)
	}
	for g, v := range []float64{2, 6} {
		if c := r.Values[0][g]; math.Abs(c-30000) > 50 {
			t.Fatalf("group %d count %v", g, c)
		}
		if s := r.Values[1][g]; math.Abs(s-30000*v) > 500 {
			t.Fatalf("group %d sum %v", g, s)
		}
		if m := r.Values[2][g]; math.Abs(m-v) > 0.05 {
			t.Fatalf("group %d avg %v", g, m)
		}
	}
}

// addVec is the noise of the must-fail variants (same sampler, wrong scale).
func addVec(x []float64, scale float64, _ *Plan) error { return noise.AddLaplaceVec(x, scale) }

// TestAuditPersonAvg: AVG's two vectors (persons, centred sum of person
// means) on a person with 100 rows at the upper bound in k = 2 groups, with
// the Laplace privacy-loss statistic over both vectors. Must fail: the same
// bounded statistics noised at the scales of k = 1 (a person assumed to
// reach one group).
func TestAuditPersonAvg(t *testing.T) {
	t.Parallel()
	groups := []string{"a", "b", "c"}
	const eps = 1.0
	spec := Spec{MaxGroups: 2, MaxRows: 1, Domain: groups, Epsilon: eps, Measures: []Measure{{Kind: Avg, Lo: 0, Hi: 10}}}
	p := mustPlan(t, spec)
	spec1 := spec
	spec1.MaxGroups = 1
	p1 := mustPlan(t, spec1)
	var d []row
	for i := 0; i < 6; i++ {
		d = append(d, row{fmt.Sprint(i), groups[i%3], []float64{0}})
	}
	var victim []row
	for _, g := range groups[:2] {
		for i := 0; i < 50; i++ {
			victim = append(victim, row{"victim", g, []float64{10}})
		}
	}
	d1 := append(append([]row(nil), d...), victim...)
	b0, b1 := bounded(t, p, d), bounded(t, p, d1)
	sampler := func(noiseAt *Plan) audit.Sampler {
		s1, s2 := noiseAt.Scales(0)
		return func(side int) float64 {
			b := b0
			if side == 1 {
				b = b1
			}
			x := append([]float64(nil), b.First[0]...)
			y := append([]float64(nil), b.Second[0]...)
			if err := noise.AddLaplaceVec(x, s1); err != nil {
				t.Fatal(err)
			}
			if err := noise.AddLaplaceVec(y, s2); err != nil {
				t.Fatal(err)
			}
			return llr(x, b0.First[0], b1.First[0])/s1 + llr(y, b0.Second[0], b1.Second[0])/s2
		}
	}
	cfg := audit.Config{N: 30000} // the catch's true ε is 2: more samples keep its bound clear of 1
	audit.RequirePass(t, sampler(p), eps, cfg)
	audit.RequireCatch(t, sampler(p1), eps, cfg)
}

// accumulate feeds rows to a fresh accumulator of p.
func accumulate(p *Plan, rows []row) *Accumulator {
	a := p.Accumulator()
	for _, r := range rows {
		a.Row(r.person, r.group, r.vals)
	}
	return a
}

// release runs the real mechanism on rows.
func release(t *testing.T, p *Plan, rows []row) *Result {
	t.Helper()
	res, err := accumulate(p, rows).Release()
	if err != nil {
		t.Fatal(err)
	}
	return res
}
