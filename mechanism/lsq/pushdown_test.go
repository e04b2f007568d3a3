package lsq

import (
	"errors"
	"math"
	"testing"

	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

func pushCfg(n int) Config {
	return Config{Epsilon: 1, Delta: 1e-6, N: n, Features: []string{"a", "b"}, Lo: []float64{-1, 0}, Hi: []float64{1, 4},
		Label: "y", LabelLo: -1, LabelHi: 1}
}

// PlanPush: any-order sums while their allowance costs ≤ 2 % noise, the
// exact statement beyond, rows for RFF kernels. Output and input: the
// any-order plan never has less noise or a smaller rounding allowance than
// the embedded one. Objective (and the default call, objective at these n)
// absorbs the backend's rounding into the ideal mechanism (§6 "Backend
// sums"): its β is never below the embedded β, while its output step, which
// no longer covers the accumulation, may be smaller than the embedded one's
// (so its noise proxy may be below the embedded plan's); it stays on the
// fast statement up to n = 10⁷.
func TestPlanPush(t *testing.T) {
	for _, method := range []string{"", MethodOutput, MethodObjective, MethodInput} {
		for _, n := range []int{1000, 1_000_000, 10_000_000} {
			cfg := pushCfg(n)
			cfg.Method = method
			tr, exact, err := PlanPush(cfg)
			if err != nil {
				t.Fatalf("%q n=%d: %v", method, n, err)
			}
			emb, err := Plan(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if exact == tr.Config().AnyOrderSums {
				t.Fatalf("%q n=%d: exact=%v with AnyOrderSums=%v", method, n, exact, tr.Config().AnyOrderSums)
			}
			objective := emb.Config().Method == MethodObjective
			ratio := noiseScale(tr.Params()) / noiseScale(emb.Params())
			if !(ratio >= 1 || objective && exact == false) || !(ratio <= 1+MaxAnyOrderInflation) {
				t.Fatalf("%q n=%d: noise ratio %v", method, n, ratio)
			}
			if objective && exact {
				t.Fatalf("%q n=%d: objective perturbation on the exact statement", method, n)
			}
			// The default call centres: on the fast statement its backend may
			// shift the labels through the sums (algebraicShiftFactor = 3 for
			// bounds [−1, 1]).
			if want := method == "" && objective && !exact; tr.ShiftAlgebraic() != want {
				t.Fatalf("%q n=%d: ShiftAlgebraic %v", method, n, tr.ShiftAlgebraic())
			}
			if f := algebraicShiftFactor(tr.Config()); method == "" && math.Abs(f-3) > 1e-6 || method != "" && f != 1 {
				t.Fatalf("%q n=%d: shift factor %v", method, n, f)
			}
			fast := cfg
			fast.AnyOrderSums = true
			if f, err := Plan(fast); err == nil {
				if r := noiseScale(f.Params()) / noiseScale(emb.Params()); r < 1 && !objective {
					t.Fatalf("%q n=%d: any-order plan has less noise (%v)", method, n, r)
				}
				if objective {
					// At every split of (ε, δ): β above the embedded β.
					fc, ec := f.Config(), emb.Config()
					for _, rho := range outputShares {
						sh, err := newShare(cfg.Epsilon, cfg.Delta, rho, 3*noise.CoupledNormalRatio, 3*noise.CoupledNormalTail)
						if err != nil {
							t.Fatal(err)
						}
						pf, _, err1 := objectiveCandidate(fc, 3, math.Sqrt(3), sh)
						pe, _, err2 := objectiveCandidate(ec, 3, math.Sqrt(3), sh)
						if err1 != nil || err2 != nil {
							t.Fatalf("%q n=%d ρ=%v: %v, %v", method, n, rho, err1, err2)
						}
						if !(pf.beta > pe.beta) || !(pf.ridge >= pe.ridge) {
							t.Fatalf("%q n=%d ρ=%v: any-order β %v, ridge %v against embedded %v, %v", method, n, rho, pf.beta, pf.ridge, pe.beta, pe.ridge)
						}
					}
				}
				if method == MethodOutput && !(f.Params()["tolerance"] > emb.Params()["tolerance"]) {
					t.Fatalf("n=%d: any-order tolerance %v not above embedded %v", n, f.Params()["tolerance"], emb.Params()["tolerance"])
				}
			}
			t.Logf("%q n=%d: exact=%v noise ratio %.6f", method, n, exact, ratio)
		}
	}
	// n large enough that γ_n·n dominates: the exact statement.
	cfg := pushCfg(1 << 40)
	cfg.Method, cfg.Lambda = MethodOutput, 1e-4
	if _, exact, err := PlanPush(cfg); err != nil || !exact {
		t.Fatalf("n=2⁴⁰: exact=%v err=%v, want the exact statement", exact, err)
	}
	rbf := pushCfg(1000)
	rbf.Kernel, rbf.Method = KernelRBF, MethodOutput
	tr, exact, err := PlanPush(rbf)
	if err != nil || exact || tr.Config().AnyOrderSums || Pushable(rbf) {
		t.Fatalf("rbf: exact=%v anyOrder=%v err=%v", exact, tr != nil && tr.Config().AnyOrderSums, err)
	}
	if _, err := tr.TrainSums(nil, nil, 1000, 0); err == nil {
		t.Fatal("rbf: TrainSums accepted linear statistics")
	}
}

// TrainSums: wrong shapes are refused, another n asks for a re-plan, and
// the release from the embedded statistics is a model of the plan's shape.
func TestTrainSums(t *testing.T) {
	const n = 500
	tr, err := Plan(pushCfg(n))
	if err != nil {
		t.Fatal(err)
	}
	X := make([][]float64, n)
	y := make([]float64, n)
	for i := range X {
		X[i] = []float64{math.Sin(float64(i)), float64(i % 5)}
		y[i] = 0.3*X[i][0] - 0.1
	}
	if tr.Config().Center == 0 {
		t.Fatal("the default call at n = 500 was expected to centre")
	}
	mu := 0.2
	a, c, err := tr.ExactStats(X, y, tr.LabelShift(mu))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.TrainSums(a[:4], c, n, mu); err == nil {
		t.Fatal("wrong shape accepted")
	}
	if _, err := tr.TrainSums(a, c, n+1, mu); !errors.Is(err, ErrRowCountChanged) {
		t.Fatalf("n+1: %v", err)
	}
	m, err := tr.TrainSums(a, c, n, mu)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Weights) != 1 || len(m.Weights[0]) != 3 || m.Params["label_mean"] != mu {
		t.Fatalf("model %+v", m)
	}
}

// MeanAnyOrder: the default call's centring mean takes the DOUBLE sum at
// every n the fast statistics serve and beyond (its added noise is ≤ 2 % of
// the model's: measured ≈ 2·10⁻⁴ of it at 10⁷ rows), although past
// ≈ 9·10⁶ rows it raises the mean's own noise by more than 2 %; never
// without centring or beyond MaxSumRows.
func TestMeanAnyOrder(t *testing.T) {
	for _, n := range []int{1000, 1_000_000, 9_000_000, 10_000_000, 100_000_000} {
		tr, _, err := PlanPush(pushCfg(n))
		if err != nil {
			t.Fatal(err)
		}
		m := tr.LabelMean()
		if m == nil {
			t.Fatalf("n=%d: the default call does not centre", n)
		}
		slack, any := mechanism.SumSlack(m.N), mechanism.AnyOrderSumSlack(m.N)
		extra := math.Sqrt2 * 2 * (any - slack) / (float64(m.N) * m.Epsilon)
		ratio := extra / noiseScale(tr.Params())
		if !tr.MeanAnyOrder() || ratio > MaxAnyOrderInflation {
			t.Fatalf("n=%d: MeanAnyOrder %v, added std / model noise %v", n, tr.MeanAnyOrder(), ratio)
		}
		if own := any / slack; (own > 1+MaxAnyOrderInflation) != (n >= 10_000_000) {
			t.Fatalf("n=%d: the mean's own inflation %v", n, own)
		}
		t.Logf("n=%d: mean's own inflation ×%.4f, its added std %.3g of the model's noise", n, any/slack, ratio)
	}
	cfg := pushCfg(1_000_000)
	cfg.Center = CenterOff
	if tr, _, err := PlanPush(cfg); err != nil || tr.MeanAnyOrder() {
		t.Fatalf("without centring: %v", err)
	}
}
