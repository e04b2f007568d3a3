package lmgc

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/mechanism"
)

func predictor(m *mechanism.Model) func([]float64) (string, error) {
	return func(x []float64) (string, error) {
		p, err := m.Predict(x)
		return p.Class, err
	}
}

// requirePSD fails unless every released Φ_c is symmetric with eigenvalues
// ≥ −1e-12·‖Φ_c‖ (rounding of the final B·Bᵀ reconstruction).
func requirePSD(t *testing.T, m *mechanism.Model) {
	t.Helper()
	D := m.Scaler.Dim()
	for c, phi := range m.Phi {
		if len(phi) != D*D {
			t.Fatalf("Φ_%d has %d entries, want %d", c, len(phi), D*D)
		}
		norm := diffNorm(phi, make([]float64, D*D))
		for _, v := range blockEigen(t, phi, 0, D) {
			if v < -1e-12*(1+norm) {
				t.Fatalf("released Φ_%d has eigenvalue %v (norm %v)", c, v, norm)
			}
		}
	}
}

// TestTrainReleasesPSD: every released Φ_c of private releases on iris and
// wine is PSD, and the model carries the public configuration only.
func TestTrainReleasesPSD(t *testing.T) {
	for _, name := range []string{"iris", "wine"} {
		ds := loadDataset(t, name)
		for _, eps := range []float64{0.5, 5, 50} {
			p, err := Plan(ds.config(eps, len(ds.x)))
			if err != nil {
				t.Fatal(err)
			}
			m, err := p.Train(ds.x, ds.y)
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind != mechanism.KindLMGC || !slices.Equal(m.Classes, ds.classes) || !slices.Equal(m.Features, ds.features) {
				t.Fatalf("model header %q %v %v", m.Kind, m.Classes, m.Features)
			}
			if len(m.Phi) != len(ds.classes) {
				t.Fatalf("%d matrices for %d classes", len(m.Phi), len(ds.classes))
			}
			requirePSD(t, m)
			if m.Params["epsilon"] != eps || m.Params["epsilon_charged"] != p.ChargedEpsilon() {
				t.Errorf("params %v", m.Params)
			}
			for k := range m.Params {
				if k == "iterations" && m.Params[k] == float64(p.Calibration().Iterations) {
					continue // the a-priori count: public, the same for every table
				}
				if strings.Contains(k, "iter") || strings.Contains(k, "bound") {
					t.Errorf("model exposes the data-dependent quantity %q", k)
				}
			}
			if _, err := m.Predict(ds.x[0]); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestNoiseOffLearns: the unexported noise-off path (never reachable from
// SQL) learns iris, so the objective and the solver are meaningful.
func TestNoiseOffLearns(t *testing.T) {
	ds := loadDataset(t, "iris")
	xtr, ytr, xte, yte := ds.split()
	p, err := Plan(ds.config(10, len(xtr)))
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := p.train(xtr, ytr, trainOptions{noiseOff: true})
	if err != nil {
		t.Fatal(err)
	}
	requirePSD(t, m)
	if acc := accuracy(t, predictor(m), ds.classes, xte, yte); acc < 0.9 {
		t.Errorf("noise-off test accuracy %v on iris, want ≥ 0.9", acc)
	}
}

// TestTrainOnce: a plan releases at most once.
func TestTrainOnce(t *testing.T) {
	ds := loadDataset(t, "iris")
	p, err := Plan(ds.config(1, len(ds.x)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Train(ds.x, ds.y); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Train(ds.x, ds.y); err == nil || !strings.Contains(err.Error(), "already been used") {
		t.Fatalf("second Train: %v", err)
	}
}

// TestTrainShapeErrors: shape errors (public) are reported.
func TestTrainShapeErrors(t *testing.T) {
	ds := loadDataset(t, "iris")
	for _, tc := range []struct {
		name string
		x    [][]float64
		y    []int
		want string
	}{
		{"fewer rows than n", ds.x[1:], ds.y[1:], "plan is for n"},
		{"label count", ds.x, ds.y[1:], "plan is for n"},
		{"row width", append([][]float64{{1, 2}}, ds.x[1:]...), ds.y, "want 4 features"},
	} {
		p, err := Plan(ds.config(1, len(ds.x)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Train(tc.x, tc.y); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestUnknownLabelsAreClassZero: out-of-range label indices are treated as
// class 0 (the caller's data-independent rule), so Train has no
// data-dependent error path; NULL features map to the midpoint.
func TestUnknownLabelsAreClassZero(t *testing.T) {
	ds := loadDataset(t, "iris")
	p, err := Plan(ds.config(3, len(ds.x)))
	if err != nil {
		t.Fatal(err)
	}
	y2 := slices.Clone(ds.y)
	for i := range y2 {
		if y2[i] == 0 {
			y2[i] = -1 - i%2*100
		}
	}
	x2 := slices.Clone(ds.x)
	x2[0] = []float64{math.NaN(), 3, math.NaN(), 1}
	x3 := slices.Clone(ds.x)
	x3[0] = []float64{6, 3, 4, 1} // the midpoints of the public bounds
	m1, _, err := p.train(x3, ds.y, trainOptions{noiseOff: true})
	if err != nil {
		t.Fatal(err)
	}
	m2, _, err := p.train(x2, y2, trainOptions{noiseOff: true})
	if err != nil {
		t.Fatal(err)
	}
	for c := range m1.Phi {
		if d := diffNorm(m1.Phi[c], m2.Phi[c]); d != 0 {
			t.Errorf("class %d differs by %v", c, d)
		}
	}
}
