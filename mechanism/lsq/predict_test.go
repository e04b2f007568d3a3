package lsq

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/budget"
)

func mustPlanPredict(t testing.TB, cfg Config) *PredictPlan {
	t.Helper()
	p, err := PlanPredict(cfg)
	if err != nil {
		t.Fatalf("PlanPredict: %v", err)
	}
	return p
}

// noiseFree returns the fitted function's clipped value in y′ units.
func noiseFree(t testing.TB, p *PredictPlan, x [][]float64, y []float64, xq []float64) float64 {
	t.Helper()
	pr, err := p.Fit(x, y)
	if err != nil {
		t.Fatal(err)
	}
	return max(-1, min(1, pr.f(xq)))
}

// TestPredictScales checks Δ = min(2M, 2κ²(κR + M)/(λm)) by hand and
// compares with the paper's 2Rκ²(κ+1)/(λm).
func TestPredictScales(t *testing.T) {
	// m = 200, λ = ¼ (R = 2), ε = ½: Δ = 2(2 + 1)/(0.25·200) = 0.12 (the
	// paper's Proposition 1: 2·2·2/(0.25·200) = 0.16), b = Δ/ε = 0.24.
	for _, kernel := range []string{KernelLinear, KernelRBF, KernelLaplacian, KernelCauchy} {
		cfg := synthConfig(2, 200, 0.5, 0)
		cfg.Kernel, cfg.Lambda = kernel, 0.25
		p := mustPlanPredict(t, cfg)
		if !near(p.sens, 0.12, 1e-8) || !near(p.scale, 0.24, 1e-8) || p.tau > 1e-9 {
			t.Fatalf("%s: Δ = %v, b = %v; want 0.12, 0.24", kernel, p.sens, p.scale)
		}
		if paper := 2 * 2 * 2 / (0.25 * 200); p.sens > paper {
			t.Fatalf("Δ = %v exceeds the paper's %v", p.sens, paper)
		}
		if p.exact != (kernel != KernelLinear) {
			t.Fatalf("%s: exact = %v", kernel, p.exact)
		}
	}
	// m = 1, λ = 0.01: the RKHS bound is 2(10 + 1)/0.01 = 2200, so the clip
	// caps Δ at 2M = 2.
	cfg := synthConfig(1, 1, 1, 0)
	cfg.Lambda = 0.01
	if p := mustPlanPredict(t, cfg); p.sens != 2 || p.scale != 2 {
		t.Fatalf("capped Δ = %v, b = %v; want 2, 2", p.sens, p.scale)
	}
	// Auto λ = (mε)^(−1/2) ≤ 1.
	cfg = synthConfig(1, 400, 1, 0)
	if p := mustPlanPredict(t, cfg); !near(p.Lambda(), 0.05, 1e-12) {
		t.Fatalf("auto λ = %v, want 0.05", p.Lambda())
	}
	if ev := mustPlanPredict(t, cfg).Events(); len(ev) != 1 || ev[0] != (budget.Event{Kind: budget.Laplace, Epsilon: 1}) {
		t.Fatalf("events %+v", ev)
	}
	// Above ExactKernelMax the kernels switch to random Fourier features.
	cfg = synthConfig(1, ExactKernelMax+1, 1, 0)
	cfg.Kernel = KernelRBF
	if p := mustPlanPredict(t, cfg); p.exact || p.rff == nil || p.rff.Dim() != 2*DefaultDim {
		t.Fatalf("m > ExactKernelMax: exact=%v rff=%v", p.exact, p.rff != nil)
	}
}

// TestKernelRidgeExact checks the exact kernel solve against a dense
// reference: f(x) = k_xᵀ(K + λmI)⁻¹y′ computed with gonum's LU solve.
func TestKernelRidgeExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	const m = 60
	x, y := randomRows(rng, m, 3)
	for _, kernel := range []string{KernelRBF, KernelLaplacian, KernelCauchy} {
		cfg := synthConfig(3, m, 1, 0)
		cfg.Kernel, cfg.Lambda, cfg.Gamma = kernel, 0.02, 2
		p := mustPlanPredict(t, cfg)
		pr, err := p.Fit(x, y)
		if err != nil {
			t.Fatal(err)
		}
		k, _ := kernelFunc(kernel, 2)
		z := make([][]float64, m)
		for i := range x {
			z[i] = p.scaler.Transform(nil, x[i])
		}
		a := mat.NewDense(m, m, nil)
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				a.Set(i, j, k(z[i], z[j]))
			}
			a.Set(i, i, a.At(i, i)+0.02*m)
		}
		var alpha mat.VecDense
		if err := alpha.SolveVec(a, mat.NewVecDense(m, y)); err != nil {
			t.Fatal(err)
		}
		for q := 0; q < 10; q++ {
			xq, _ := randomRows(rng, 1, 3)
			zq := p.scaler.Transform(nil, xq[0])
			var want float64
			for i := range z {
				want += alpha.AtVec(i) * k(z[i], zq)
			}
			if got := pr.f(xq[0]); math.Abs(got-want) > 1e-9 {
				t.Fatalf("%s: f = %v, dense reference %v", kernel, got, want)
			}
		}
	}
}

// TestPredictSensitivity checks |π f_D(x) − π f_D′(x)| ≤ Δ for random
// replace-one pairs and query points, every kernel (exact and RFF), and
// for the label flip of a single row, where it is nearly tight.
func TestPredictSensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(91, 92))
	worst := 0.0
	for _, kernel := range []string{KernelLinear, KernelRBF, KernelLaplacian, KernelCauchy} {
		for _, lambda := range []float64{0.001, 0.1, 1} {
			for _, m := range []int{1, 4, 25} {
				cfg := synthConfig(2, m, 1, 0)
				cfg.Kernel, cfg.Lambda = kernel, lambda
				if kernel != KernelLinear {
					cfg.Dim = 16
				}
				plans := []*PredictPlan{mustPlanPredict(t, cfg)}
				if kernel != KernelLinear {
					// The RFF path, as used above ExactKernelMax.
					rp := mustPlanPredict(t, cfg)
					cm, _ := validate(rp.cfg)
					rp.exact = false
					rp.rff, _ = drawRFF(cm)
					plans = append(plans, rp)
				}
				for _, p := range plans {
					for k := 0; k < 15; k++ {
						x, y := randomRows(rng, m, 2)
						xr, yr := randomRows(rng, 1, 2)
						x2, y2 := replaceLast(x, y, xr[0], yr[0])
						xq, _ := randomRows(rng, 1, 2)
						for _, q := range [][]float64{xq[0], xr[0], x[m-1]} {
							d := math.Abs(noiseFree(t, p, x, y, q) - noiseFree(t, p, x2, y2, q))
							if d > p.sens {
								t.Fatalf("%s λ=%v m=%d: prediction moved %v > Δ = %v", kernel, lambda, m, d, p.sens)
							}
							worst = max(worst, d/p.sens)
						}
					}
				}
			}
		}
	}
	// Single row, λ = 0.01, label flip: f = ±1/(1 + λ) at the row, Δ = 2.
	cfg := synthConfig(1, 1, 1, 0)
	cfg.Lambda = 0.01
	p := mustPlanPredict(t, cfg)
	d := noiseFree(t, p, [][]float64{{1}}, []float64{1}, []float64{1}) - noiseFree(t, p, [][]float64{{1}}, []float64{-1}, []float64{1})
	if !near(d, 2/1.01, 1e-9) || d > p.sens {
		t.Fatalf("flip: difference %v, want 2/1.01 ≤ Δ = %v", d, p.sens)
	}
	t.Logf("largest |Δ prediction|/Δ observed on random pairs: %.4f; flip pair: %.4f", worst, d/p.sens)
}

// TestPredictAudit audits DP_LSQ_PREDICT on the single-row label flip,
// where the clip cap Δ = 2 is nearly attained (difference 2/1.01): the
// planned noise passes, and HALF the planned noise is caught.
func TestPredictAudit(t *testing.T) {
	const eps = 1
	cfg := synthConfig(1, 1, eps, 0)
	cfg.Lambda = 0.01
	sampler := func(p *PredictPlan) audit.Sampler {
		return func(nb int) float64 {
			y := []float64{-1}
			if nb == 1 {
				y[0] = 1
			}
			v, err := p.Predict([][]float64{{1}}, y, []float64{1})
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	cfgA := audit.Config{N: 30000}
	audit.RequirePass(t, sampler(mustPlanPredict(t, cfg)), eps, cfgA)
	broken := mustPlanPredict(t, cfg)
	broken.scale /= 2
	audit.RequireCatch(t, sampler(broken), eps, cfgA)
}

// TestPredictDiabetes is an end-to-end check on real data: with a large ε
// the private prediction is close to the noise-free kernel ridge
// prediction, in label units.
func TestPredictDiabetes(t *testing.T) {
	ds := loadCSV(t, "diabetes.csv")
	cfg := diabetesConfig(len(ds.x), 1000, 0)
	cfg.Kernel = KernelRBF
	p := mustPlanPredict(t, cfg)
	pr, err := p.Fit(ds.x, ds.y)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 100, 441} {
		v, err := pr.Predict(ds.x[i])
		if err != nil {
			t.Fatal(err)
		}
		want := p.lm.value(max(-1, min(1, pr.f(ds.x[i]))))
		if math.Abs(v-want) > 20*p.scale*(346-25)/2 {
			t.Fatalf("row %d: private %v far from noise-free %v (b = %v in y′ units)", i, v, want, p.scale)
		}
	}
}
