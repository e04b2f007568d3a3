package lsq

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpsql/dpsql/internal/syntest"
)

// dataset is a raw regression table: rows of feature values and labels.
type dataset struct {
	names []string
	x     [][]float64
	y     []float64
}

// synthConfig returns a Config for d features with public bounds [−1, 1]
// and label bounds [−1, 1] (the synthetic model's declared domain).
func synthConfig(d, n int, eps, delta float64) Config {
	names := make([]string, d)
	lo, hi := make([]float64, d), make([]float64, d)
	for j := range names {
		names[j] = fmt.Sprintf("x%d", j+1)
		lo[j], hi[j] = -1, 1
	}
	return Config{Epsilon: eps, Delta: delta, N: n, Features: names, Lo: lo, Hi: hi,
		Label: "y", LabelLo: -1, LabelHi: 1}
}

// synthLinear draws n rows of the synthetic linear model used in the tests
// and results: z ~ U[−1, 1]^d, y = βᵀz + β₀ + N(0, noise²), clipped to
// [−1, 1] by the mechanism's label map. β is fixed by the seed with
// ‖β‖₁ + |β₀| = 0.8, so the noise-free model maps the whole box into
// [−0.8, 0.8] and ‖w‖ ≤ 0.8·√F < η = √F.
func synthLinear(rng *rand.Rand, beta []float64, n int, noise float64) dataset {
	d := len(beta) - 1
	ds := dataset{x: make([][]float64, n), y: make([]float64, n)}
	for i := range ds.x {
		row := make([]float64, d)
		v := beta[d]
		for j := range row {
			row[j] = 2*rng.Float64() - 1
			v += beta[j] * row[j]
		}
		ds.x[i] = row
		ds.y[i] = v + noise*rng.NormFloat64()
	}
	return ds
}

// synthBeta returns d coefficients plus an intercept with ‖β‖₁ + |β₀| = 0.8.
func synthBeta(rng *rand.Rand, d int) []float64 {
	b := make([]float64, d+1)
	var s float64
	for j := range b {
		b[j] = rng.NormFloat64()
		s += math.Abs(b[j])
	}
	for j := range b {
		b[j] *= 0.8 / s
	}
	return b
}

// loadCSV reads a testdata CSV (header row, last column the target).
func loadCSV(t testing.TB, name string) dataset {
	t.Helper()
	names, x, y := syntest.ReadNumeric(t, "../../testdata/"+name)
	return dataset{names: names, x: x, y: y}
}

// diabetesConfig states the public bounds ASSUMED for diabetes.csv: the
// documented domains of testdata/demo_catalog.json (age 0–100, sex 1–2,
// bmi 10–50, bp 40–140, s1 50–350, s2 20–300, s3 10–110, s4 1–10,
// s5 3–7, s6 40–140; progression 25–346, the documented target range).
// They are never computed from the rows.
func diabetesConfig(n int, eps, delta float64) Config {
	return Config{
		Epsilon: eps, Delta: delta, N: n,
		Features: []string{"age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"},
		Lo:       []float64{0, 1, 10, 40, 50, 20, 10, 1, 3, 40},
		Hi:       []float64{100, 2, 50, 140, 350, 300, 110, 10, 7, 140},
		Label:    "progression", LabelLo: 25, LabelHi: 346,
	}
}
