package selection

import (
	"errors"
	"math"
	"testing"
)

// The public split: ε₁ = ε/3, ε_score = 0.2·ε₁, the cap T is the smallest
// with (1 + e^ε)(1 − γ)^T ≤ δ, and the event is the total.
func TestPlanExact(t *testing.T) {
	p, err := NewPlan(Config{Candidates: 5, Epsilon: 1.5, Delta: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(p.EpsTrial()-0.5) > 1e-15 || p.Epsilon() > 1.5 || math.Abs(p.EpsScore()-0.1) > 1e-15 || math.Abs(p.EpsTrain()-0.4) > 1e-15 {
		t.Fatalf("split ε₁=%v train=%v score=%v total=%v", p.EpsTrial(), p.EpsTrain(), p.EpsScore(), p.Epsilon())
	}
	if p.EpsTrain()+p.EpsScore() > p.EpsTrial() {
		t.Fatal("train + score exceeds ε₁")
	}
	if p.Gamma() != 0.1 {
		t.Fatalf("γ = %v, want 1/(2·5)", p.Gamma())
	}
	// (1 + e^1.5)·0.9^T ≤ 1e-6 ⇔ T ≥ ln(1e-6/5.4817)/ln 0.9 = 147.27…
	if p.MaxTrials() != 148 {
		t.Fatalf("T = %d, want 148", p.MaxTrials())
	}
	want := (1 + math.Exp(1.5)) * math.Pow(0.9, 148)
	if math.Abs(p.Delta()-want) > 1e-12*want || p.Delta() > 1e-6 {
		t.Fatalf("δ_trunc = %v, want %v ≤ 1e-6", p.Delta(), want)
	}
	ev := p.Event()
	if ev.Epsilon != p.Epsilon() || ev.Delta != p.Delta() || ev.Validate() != nil {
		t.Fatalf("event %+v", ev)
	}
	// γ = 1: one trial, no δ needed.
	one, err := NewPlan(Config{Candidates: 3, Epsilon: 1, Gamma: 1})
	if err != nil || one.MaxTrials() != 1 || one.Delta() != 0 {
		t.Fatalf("γ=1: %v %+v", err, one)
	}
	// Public refusals.
	for _, c := range []Config{{Candidates: 0, Epsilon: 1, Delta: 1e-6}, {Candidates: 3, Epsilon: 0, Delta: 1e-6},
		{Candidates: 3, Epsilon: 1}, {Candidates: 3, Epsilon: 1, Delta: 1e-6, Gamma: 1e-6}, {Candidates: 3, Epsilon: 1, Delta: 1e-6, ScoreShare: 1}} {
		if _, err := NewPlan(c); err == nil {
			t.Fatalf("config %+v accepted", c)
		}
	}
}

// The trial count is geometric(γ) truncated at T, and independent of the
// trial's outputs; every candidate is drawn uniformly.
func TestRunTrialsAndChoice(t *testing.T) {
	p, err := NewPlan(Config{Candidates: 4, Epsilon: 1, Delta: 1e-3, Gamma: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	const runs = 20000
	var sum float64
	hits := make([]int, 4)
	for range runs {
		r, k, err := run(p, func(c int, _, _ float64) (int, float64, error) {
			hits[c]++
			return c, float64(c), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if k < 1 || k > p.MaxTrials() {
			t.Fatalf("trials %d outside [1, %d]", k, p.MaxTrials())
		}
		sum += float64(k)
		if r.Model != r.Candidate || r.Score != float64(r.Candidate) {
			t.Fatalf("result %+v is not one trial's output", r)
		}
	}
	want := p.Params()["expected_trials"]
	// sd of the geometric ≈ √(1−γ)/γ ≈ 3.46, mean over 20000 runs: sd 0.024.
	if m := sum / runs; math.Abs(m-want) > 0.15 {
		t.Fatalf("mean trials %v, want %v", m, want)
	}
	total := 0
	for _, h := range hits {
		total += h
	}
	for c, h := range hits {
		if f := float64(h) / float64(total); math.Abs(f-0.25) > 0.01 {
			t.Fatalf("candidate %d drawn with frequency %v", c, f)
		}
	}
}

// The best (first on ties) of the trials run is kept.
func TestRunKeepsBest(t *testing.T) {
	p, err := NewPlan(Config{Candidates: 3, Epsilon: 1, Delta: 1e-6, Gamma: 1e-2})
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		seen := []float64{}
		r, _, err := run(p, func(c int, _, _ float64) (int, float64, error) {
			s := float64(c) + 0.001*float64(len(seen))
			seen = append(seen, s)
			return len(seen) - 1, s, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range seen {
			if s > r.Score {
				t.Fatalf("kept %v, but %v was seen", r.Score, s)
			}
		}
		if seen[r.Model] != r.Score {
			t.Fatal("model and score from different trials")
		}
	}
}

// A trial error aborts the selection (it must come from public inputs).
func TestRunError(t *testing.T) {
	p, _ := NewPlan(Config{Candidates: 2, Epsilon: 1, Delta: 1e-6})
	boom := errors.New("boom")
	if _, err := Run(p, func(int, float64, float64) (int, float64, error) { return 0, 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
}

// Exact scale of the score: (correct + Lap(1/ε))/n has mean correct/n and
// mean absolute deviation 1/(ε·n).
func TestNoisyAccuracyScale(t *testing.T) {
	const draws, n, correct, eps = 40000, 50, 30, 0.5
	var sum, abs float64
	for range draws {
		v, err := NoisyAccuracy(correct, n, eps)
		if err != nil {
			t.Fatal(err)
		}
		sum += v
		abs += math.Abs(v - float64(correct)/n)
	}
	b := 1 / (eps * n)
	// sd of one |Lap| is b; of the mean over 40000: b/200.
	if m := abs / draws; math.Abs(m-b) > 5*b/200 {
		t.Fatalf("mean |noise| %v, want %v", m, b)
	}
	if m := sum / draws; math.Abs(m-float64(correct)/n) > 5*math.Sqrt2*b/200 {
		t.Fatalf("mean %v, want %v", m, float64(correct)/n)
	}
	if _, err := NoisyAccuracy(0, 0, 1); err == nil {
		t.Fatal("empty score accepted")
	}
}

// Sensitivity of the score: for a fixed classifier, replacing any one row by
// an adversarial one (every label, every row position) moves the number of
// correct predictions by at most 1.
func TestScoreSensitivity(t *testing.T) {
	predict := func(x float64) int {
		if x > 0 {
			return 1
		}
		return 0
	}
	count := func(X []float64, y []int) int {
		c := 0
		for i := range X {
			if predict(X[i]) == y[i] {
				c++
			}
		}
		return c
	}
	X := []float64{-2, -1, 0.5, 1, 3, -0.1}
	y := []int{0, 1, 1, 1, 0, 0}
	base := count(X, y)
	for i := range X {
		for _, xr := range []float64{-5, 0, 5} {
			for _, yr := range []int{0, 1} {
				X2, y2 := append([]float64(nil), X...), append([]int(nil), y...)
				X2[i], y2[i] = xr, yr
				if d := count(X2, y2) - base; d > 1 || d < -1 {
					t.Fatalf("replacing row %d by (%v,%d) moved the count by %d", i, xr, yr, d)
				}
			}
		}
	}
}
