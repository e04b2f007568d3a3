package gauss

import (
	"math"
	"math/rand/v2"
	"testing"
)

// weightedDistance returns the ℓ₁ and ℓ₂ distances between the weighted
// statistic vectors (what the noise is calibrated to) of two data sets.
func weightedDistance(tb testing.TB, p *Trainer, x1 [][]float64, y1 []int, x2 [][]float64, y2 []int) (l1, l2 float64) {
	tb.Helper()
	a, err := p.statistics(x1, y1)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := p.statistics(x2, y2)
	if err != nil {
		tb.Fatal(err)
	}
	w := p.lay.weights(p.cal.w)
	for i := range a {
		diff := math.Abs(a[i]-b[i]) * w[i]
		l1 += diff
		l2 += diff * diff
	}
	return l1, math.Sqrt(l2)
}

// pairDistance is weightedDistance for one-row neighbours (x, y) → (x′, y′)
// next to a shared background of rows (the statistics are sums, so the
// background cancels up to rounding).
func pairDistance(tb testing.TB, p *Trainer, bg [][]float64, by []int, x []float64, y int, x2 []float64, y2 int) float64 {
	X1 := append(append([][]float64(nil), bg...), x)
	X2 := append(append([][]float64(nil), bg...), x2)
	Y1 := append(append([]int(nil), by...), y)
	Y2 := append(append([]int(nil), by...), y2)
	l1, l2 := weightedDistance(tb, p, X1, Y1, X2, Y2)
	if p.cfg.Delta > 0 {
		return l2
	}
	return l1
}

// rawValues are raw feature values covering every case of the [0, 10]
// bounds of testConfig: below, at and above the bounds (clipped), the
// midpoint and NULL (both ↦ 0), and two interior points.
var rawValues = []float64{-5, 0, 2.5, 5, math.NaN(), 7.5, 10, 15}

// TestSensitivityExhaustive enumerates every pair of rows on the grid
// rawValues^d (d = 2 and 3) and every pair of labels (same class and class
// change), for each kind and both noise families, and checks that the
// weighted distance never exceeds the plan's joint sensitivity and that the
// supremum is attained where the derivation says it is (§3): always for
// δ > 0 with d even and for δ = 0 with qda and gnb; for lda at δ = 0 when
// vs ≥ vm and d even.
func TestSensitivityExhaustive(t *testing.T) {
	for _, delta := range []float64{0, 1e-5} {
		for _, kind := range []string{KindLDA, KindQDA, KindGNB} {
			for _, d := range []int{2, 3} {
				p := mustPlan(t, testConfig(kind, d, 3, 1, 1, delta))
				var pts [][]float64
				var rec func(prefix []float64)
				rec = func(prefix []float64) {
					if len(prefix) == d {
						pts = append(pts, append([]float64(nil), prefix...))
						return
					}
					for _, v := range rawValues {
						rec(append(prefix, v))
					}
				}
				rec(nil)
				// One-row statistics per (point, label): the statistics are
				// sums over rows, so a neighbour pair's distance is the
				// distance of its two one-row vectors.
				w := p.lay.weights(p.cal.w)
				stats := make([][2][]float64, len(pts))
				for i, a := range pts {
					for lab := 0; lab < 2; lab++ {
						v, err := p.statistics([][]float64{a}, []int{lab})
						if err != nil {
							t.Fatal(err)
						}
						for c := range v {
							v[c] *= w[c]
						}
						stats[i][lab] = v
					}
				}
				var worst float64
				for i := range pts {
					for j := range pts {
						for lab := 0; lab < 2; lab++ {
							a, b := stats[i][0], stats[j][lab]
							var l1, l2 float64
							for c := range a {
								diff := math.Abs(a[c] - b[c])
								l1, l2 = l1+diff, l2+diff*diff
							}
							dist := l1
							if delta > 0 {
								dist = math.Sqrt(l2)
							}
							if dist > p.cal.sens*(1+1e-12) {
								t.Fatalf("%s δ=%v d=%d: neighbours %v/0 → %v/%d move the weighted statistics by %.15g > sensitivity %.15g",
									kind, delta, d, pts[i], pts[j], lab, dist, p.cal.sens)
							}
							worst = math.Max(worst, dist)
						}
					}
				}
				exact := d%2 == 0 || (delta == 0 && kind != KindLDA)
				if delta == 0 && kind == KindLDA {
					exact = d%2 == 0 && p.cal.w.ws >= p.cal.w.wm
				}
				t.Logf("%s δ=%v d=%d: worst %.6g of sensitivity %.6g", kind, delta, d, worst, p.cal.sens)
				if exact && worst < p.cal.sens*(1-1e-12) {
					t.Errorf("%s δ=%v d=%d: the supremum %.15g is not attained (worst pair %.15g)", kind, delta, d, p.cal.sens, worst)
				}
			}
		}
	}
}

// TestSensitivityAttainedAtCorners builds the extremal pair of §3 for d = 6
// and K = 3 next to a background of random rows — a row at the upper
// corner in class 0 replaced by an orthogonal corner row (half the
// coordinates flipped) in class 2 — and checks the distance equals the
// sensitivity (all kinds, δ > 0; qda and gnb at δ = 0, where any two corners
// in different classes are extremal).
func TestSensitivityAttainedAtCorners(t *testing.T) {
	const d = 6
	rng := rand.New(rand.NewPCG(1, 2))
	var bg [][]float64
	var by []int
	for i := 0; i < 40; i++ {
		row := make([]float64, d)
		for j := range row {
			row[j] = 10 * rng.Float64()
		}
		bg, by = append(bg, row), append(by, rng.IntN(3))
	}
	up := []float64{10, 10, 10, 10, 10, 10}
	orth := []float64{10, 0, 10, 0, 10, 0}
	for _, delta := range []float64{0, 1e-5} {
		for _, kind := range []string{KindLDA, KindQDA, KindGNB} {
			p := mustPlan(t, testConfig(kind, d, 3, len(bg)+1, 1, delta))
			dist := pairDistance(t, p, bg, by, up, 0, orth, 2)
			if dist > p.cal.sens*(1+1e-9) {
				t.Errorf("%s δ=%v: extremal pair moves %.12g > sensitivity %.12g", kind, delta, dist, p.cal.sens)
			}
			if !near(dist, p.cal.sens, 1e-9) {
				t.Errorf("%s δ=%v: extremal pair moves %.12g, want the sensitivity %.12g", kind, delta, dist, p.cal.sens)
			}
		}
	}
}

// TestSensitivityAdversarialSearch runs a randomised hill climb over pairs
// of rows (coordinates on a fine grid of the box, labels free) maximising
// the weighted distance, for d = 5 (odd, where the Gaussian bound is not
// attained) and d = 8, and checks it never exceeds the sensitivity. It is
// the check for the relaxed (not attained) bounds: lda at δ = 0 with
// vs < vm (moment share 0.9) and the class-keeping bounds.
func TestSensitivityAdversarialSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, delta := range []float64{0, 1e-5} {
		for _, kind := range []string{KindLDA, KindQDA, KindGNB} {
			for _, pm := range []float64{0.1, 0.35, 0.9} {
				for _, d := range []int{5, 8} {
					cfg := testConfig(kind, d, 2, 1, 1, delta)
					cfg.MomentShare = pm
					p := mustPlan(t, cfg)
					var best float64
					for restart := 0; restart < 4; restart++ {
						a, b := make([]float64, d), make([]float64, d)
						for j := range a {
							a[j], b[j] = 10*rng.Float64(), 10*rng.Float64()
						}
						la, lb := 0, rng.IntN(2)
						cur := pairDistance(t, p, nil, nil, a, la, b, lb)
						for step := 0; step < 300; step++ {
							row, j := a, rng.IntN(d)
							if rng.IntN(2) == 1 {
								row = b
							}
							old := row[j]
							row[j] = float64(rng.IntN(21)) / 2 // 0, 0.5, …, 10
							nlb := lb
							if rng.IntN(10) == 0 {
								nlb = 1 - lb
							}
							if v := pairDistance(t, p, nil, nil, a, la, b, nlb); v >= cur {
								cur, lb = v, nlb
							} else {
								row[j] = old
							}
						}
						if cur > p.cal.sens*(1+1e-12) {
							t.Fatalf("%s δ=%v pm=%v d=%d: search found %v/%d → %v/%d moving %.15g > sensitivity %.15g",
								kind, delta, pm, d, a, la, b, lb, cur, p.cal.sens)
						}
						best = math.Max(best, cur)
					}
					t.Logf("%s δ=%v pm=%v d=%d: best found %.6g of %.6g", kind, delta, pm, d, best, p.cal.sens)
				}
			}
		}
	}
}

// TestClassChangeMovesTwoCells: a row that only changes class (same
// features) moves the counts by 1 in two cells and the sums by u in two
// blocks; a calibration that counts it as one cell is too small by √2 (ℓ₂)
// or 2 (ℓ₁) on those blocks. The test pins the per-block moves.
func TestClassChangeMovesTwoCells(t *testing.T) {
	const d = 4
	p := mustPlan(t, testConfig(KindLDA, d, 3, 1, 1, 1e-5))
	row := []float64{10, 0, 10, 0} // u = (1, −1, 1, −1)
	a, _ := p.statistics([][]float64{row}, []int{0})
	b, _ := p.statistics([][]float64{row}, []int{2})
	var cnt, sum, mom float64
	for i := range a {
		diff := math.Abs(a[i] - b[i])
		switch {
		case i < p.lay.sums:
			cnt += diff
		case i < p.lay.moments:
			sum += diff
		default:
			mom += diff
		}
	}
	if cnt != 2 || sum != 2*d || mom != 0 {
		t.Fatalf("class change moved counts by %v (want 2), sums by %v (want %d), shared moments by %v (want 0)", cnt, sum, 2*d, mom)
	}
}
