package agg

import (
	"math"
	"testing"

	"github.com/dpsql/dpsql/audit"
)

func TestQuantileScaleAndGrid(t *testing.T) {
	m, err := NewQuantile(0, 10, 0.5, 0.5, 11)
	if err != nil {
		t.Fatal(err)
	}
	if m.Scale() != 4 || m.Point(0) != 0 || m.Point(10) != 10 || m.Point(3) != 3 {
		t.Fatalf("scale %v grid %v %v %v", m.Scale(), m.Point(0), m.Point(3), m.Point(10))
	}
	a := m.Accumulator()
	for _, v := range []float64{-5, 0, 0.5, 3, 3.0000001, 10, 99, math.NaN()} {
		a.Add(v)
	}
	// cells: 0 ← {−5, 0}, 1 ← {0.5}, 3 ← {3}, 4 ← {3.0000001}, 10 ← {10, 99}.
	want := map[int]int64{0: 2, 1: 1, 3: 1, 4: 1, 10: 2}
	for j, c := range a.cells {
		if c != want[j] {
			t.Fatalf("cells %v", a.cells)
		}
	}
	for _, bad := range [][4]float64{{0, 0, .5, 1}, {0, 1, 1.5, 1}, {0, 1, .5, 0}, {0, 1, .5, math.NaN()}} {
		if _, err := NewQuantile(bad[0], bad[1], bad[2], bad[3], 10); err == nil {
			t.Fatalf("NewQuantile(%v) accepted", bad)
		}
	}
	if _, err := NewQuantile(0, 1, .5, 1, 1); err == nil {
		t.Fatal("grid of 1 accepted")
	}
}

// TestQuantileSensitivity: replacing one row (lowest ↔ highest, value ↔
// NULL, out of bounds) moves every utility by at most 1.
func TestQuantileSensitivity(t *testing.T) {
	m, _ := NewQuantile(-1, 1, 0.3, 1, 101)
	base := make([]float64, 500)
	for i := range base {
		base[i] = math.Sin(float64(i))
	}
	for _, c := range [][2]float64{{-1, 1}, {-1e9, 1e9}, {0.37, math.NaN()}, {1, -1}, {0, 0.01}} {
		a, b := m.Accumulator(), m.Accumulator()
		for _, v := range base {
			a.Add(v)
			b.Add(v)
		}
		a.Add(c[0])
		b.Add(c[1])
		ua, ub := a.utilities(), b.utilities()
		for j := range ua {
			if d := math.Abs(ua[j] - ub[j]); d > 1 {
				t.Fatalf("%v: utility %d moved by %v", c, j, d)
			}
		}
	}
}

func TestQuantileUtility(t *testing.T) {
	m, _ := NewQuantile(0, 100, 0.5, 1, 1001)
	a := m.Accumulator()
	for i := 0; i < 10000; i++ {
		a.Add(float64(i % 80)) // median ≈ 39.5
	}
	med, err := a.Release()
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(med-39.5) > 1.5 {
		t.Fatalf("median %v", med)
	}
}

// quantileSampler: grid {0, 1}, q = 1, one row: 0 on D (u = (0, 0)) or 1 on
// D′ (u = (−1, 0)). The released point is the test statistic.
func quantileSampler(t *testing.T, eps float64) audit.Sampler {
	m, err := NewQuantile(0, 1, 1, eps, 2)
	if err != nil {
		t.Fatal(err)
	}
	return func(side int) float64 {
		a := m.Accumulator()
		a.Add(float64(side))
		x, err := a.Release()
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
}

// TestQuantileAudit: pass at ε; must-fail with noise for 8ε.
func TestQuantileAudit(t *testing.T) {
	t.Parallel() // pure computation; halves the wall time under -race
	cfg := audit.Config{N: 10000}
	audit.RequirePass(t, quantileSampler(t, 1), 1, cfg)
	audit.RequireCatch(t, quantileSampler(t, 8), 1, cfg)
}
