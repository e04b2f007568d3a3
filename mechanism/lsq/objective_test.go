package lsq

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism/amp"
)

// TestObjectiveScales checks Obj-Gauss's constants by hand: F = 2, η = √2
// (default √F), ε = 1, δ = 0.01. The ideal mechanism is calibrated at the
// (ε₁, δ₁) left after the output step's share: ζ_D = κ̂²η + 2κ̂,
// t² = 2 ln(1/δ₁) (χ²₂), β = ζ_D(√(t² + ε₁) + t)/ε₁, Kifer's Δ = 2κ̂²/ε₁,
// auto Δ_r = √F·β/η = β. The two events add up to exactly (ε, δ).
func TestObjectiveScales(t *testing.T) {
	cfg := synthConfig(1, 100, 1, 0.01)
	cfg.Method = MethodObjective
	tr := mustPlan(t, cfg)
	prm := tr.Params()
	e1, d1 := prm["epsilon_objective"], prm["delta_objective"]
	if !(e1 < 1 && e1 > 0.7) || !(d1 < 0.01 && d1 > 0.007) {
		t.Fatalf("ideal share (%v, %v)", e1, d1)
	}
	zeta := kappaHat*kappaHat*math.Sqrt2 + 2*kappaHat
	t2 := 2 * math.Log(1/d1)
	beta := zeta * (math.Sqrt(t2+e1) + math.Sqrt(t2)) / e1
	p := tr.obj
	if !near(p.eta, math.Sqrt2, 1e-15) || !near(p.kifer, 2/e1, 1e-14) || !near(p.beta, beta, 1e-8) || !near(p.ridge, beta, 1e-8) {
		t.Fatalf("η=%v Δ=%v β=%v Δ_r=%v; want √2, %v, %v, %v", p.eta, p.kifer, p.beta, p.ridge, 2/e1, beta, beta)
	}
	if !near(tr.Lambda(), beta/100, 1e-8) {
		t.Fatalf("λ = %v, want Δ_r/n = %v", tr.Lambda(), beta/100)
	}
	// Never above Kifer et al.'s formula with the same gradient bound.
	if kifer := zeta * math.Sqrt(8*math.Log(2/d1)+4*e1) / e1; p.beta > kifer {
		t.Fatalf("β = %v exceeds Kifer's %v", p.beta, kifer)
	}
	requireTwoEvents(t, tr, 1, 0.01)
	// The output step's σ covers 2r at its share.
	st := p.step
	if want, _ := amp.GaussianSigma(2*st.Radius, st.Epsilon, st.Delta); st.Scale != want || !(st.Radius > 0 && st.Radius < 1e-9) {
		t.Fatalf("output step %+v", st)
	}
	// Explicit λ and η: Δ_r = nλ, ζ_D = κ̂²η + 2κ̂.
	cfg.Lambda, cfg.Eta, cfg.Epsilon = 0.1, 3, 0.5
	tr = mustPlan(t, cfg)
	e1, d1 = tr.Params()["epsilon_objective"], tr.Params()["delta_objective"]
	t2 = 2 * math.Log(1/d1)
	beta = (kappaHat*kappaHat*3 + 2*kappaHat) * (math.Sqrt(t2+e1) + math.Sqrt(t2)) / e1
	if !near(tr.obj.ridge, 10, 1e-12) || !near(tr.obj.kifer, 2/e1, 1e-12) || !near(tr.obj.beta, beta, 1e-8) {
		t.Fatalf("Δ_r=%v Δ=%v β=%v", tr.obj.ridge, tr.obj.kifer, tr.obj.beta)
	}
}

// requireTwoEvents checks the events of objective/input perturbation: a
// Generic event for the ideal mechanism and a valid Gaussian output-step
// event, adding up to (ε, δ) exactly up to float rounding.
func requireTwoEvents(t *testing.T, tr *Trainer, eps, delta float64) {
	t.Helper()
	ev := tr.Events()
	if len(ev) != 2 || ev[0].Kind != budget.Generic || ev[1].Kind != budget.Gaussian {
		t.Fatalf("events %+v", ev)
	}
	for _, e := range ev {
		if err := e.Validate(); err != nil {
			t.Fatalf("event %+v: %v", e, err)
		}
	}
	if se, sd := ev[0].Epsilon+ev[1].Epsilon, ev[0].Delta+ev[1].Delta; !near(se, eps, 1e-14) || !near(sd, delta, 1e-14) || se > eps*(1+1e-15) || sd > delta*(1+1e-15) {
		t.Fatalf("events add up to (%v, %v), want (%v, %v)", se, sd, eps, delta)
	}
}

// TestLossGradDiff checks the replace-one gradient-difference bound η + 2
// for ℓ = ½(xᵀθ − y)² on random points of the domain and on the analytic
// worst case: unit x, x′ at angle φ in the plane of θ, which attains
// max_φ η·sin φ + √(2 + 2|cos φ|) (close to η + 2 for large η).
func TestLossGradDiff(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	grad := func(th, x []float64, y float64) []float64 {
		g := make([]float64, len(x))
		floats.ScaleTo(g, floats.Dot(x, th)-y, x)
		return g
	}
	ball := func(d int, r float64) []float64 {
		v := randomVec(rng, d, 1)
		floats.Scale(r*math.Pow(rng.Float64(), 1/float64(d))/floats.Norm(v, 2), v)
		return v
	}
	for _, eta := range []float64{0.1, 1, 3.87, 20} {
		bound := lossGradDiff(eta)
		worst := 0.0
		for k := 0; k < 20000; k++ {
			d := 1 + rng.IntN(5)
			th, x, x2 := ball(d, eta), ball(d, 1), ball(d, 1)
			y, y2 := 2*rng.Float64()-1, 2*rng.Float64()-1
			diff := grad(th, x, y)
			floats.Sub(diff, grad(th, x2, y2))
			worst = max(worst, floats.Norm(diff, 2)/bound)
		}
		for phi := 0.0; phi <= math.Pi; phi += 1e-3 {
			th := []float64{eta, 0}
			x := []float64{1, 0}
			x2 := []float64{math.Cos(phi), math.Sin(phi)}
			for _, ys := range [][2]float64{{-1, -1}, {-1, 1}, {1, -1}, {1, 1}} {
				diff := grad(th, x, ys[0])
				floats.Sub(diff, grad(th, x2, ys[1]))
				worst = max(worst, floats.Norm(diff, 2)/bound)
			}
		}
		if worst > 1 {
			t.Fatalf("η=%v: gradient difference exceeds η + 2 (ratio %v)", eta, worst)
		}
		t.Logf("η=%v: worst ‖∇ℓ − ∇ℓ′‖/(η + 2) = %.4f", eta, worst)
	}
}

// TestObjectiveNoiseMatchesPlan recovers b = c − Hθ from releases whose
// constraint is inactive and checks its standard deviation against the
// planned β (discrete Gaussian: σ·(1 + 2⁻¹⁰)).
func TestObjectiveNoiseMatchesPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	ds := synthLinear(rng, synthBeta(rng, 2), 30, 0.1)
	cfg := synthConfig(2, 30, 1, 0.05)
	cfg.Method, cfg.Lambda, cfg.Eta = MethodObjective, 1e3, 50
	tr := mustPlan(t, cfg)
	st := sufficientStats(ds.x, ds.y, tr.fm, tr.lm)
	f := tr.fm.f
	h := mat.NewSymDense(f, nil)
	h.CopySym(st.s)
	for i := 0; i < f; i++ {
		h.SetSym(i, i, h.At(i, i)+tr.obj.kifer+tr.obj.ridge)
	}
	var sq float64
	const draws = 4000
	for k := 0; k < draws; k++ {
		m, err := tr.Train(ds.x, ds.y)
		if err != nil {
			t.Fatal(err)
		}
		th := m.Weights[0]
		if floats.Norm(th, 2) >= cfg.Eta*(1-1e-9) {
			t.Fatalf("constraint active; the test needs an interior solution")
		}
		hb := mat.NewVecDense(f, nil)
		hb.MulVec(h, mat.NewVecDense(f, th))
		for j := 0; j < f; j++ {
			b := st.c[j] - hb.AtVec(j)
			sq += b * b
		}
	}
	if sd := math.Sqrt(sq / float64(draws*f)); !near(sd, tr.obj.beta*(1+0x1p-10), 0.05) {
		t.Fatalf("recovered b has sd %v, planned β %v", sd, tr.obj.beta)
	}
}

// flipAtCorner is the objective/input audit pair: n rows at the corner
// x = 1 (F = 2, ‖φ(x)‖ = 1) with label 0, the last with label −1 (D) or
// +1 (D′). The Hessians of D and D′ coincide and the gradient difference
// is exactly (y′ − y)·φ(x), so on this pair the release is a Gaussian
// mechanism of ℓ₂ sensitivity 2 on Σy′φ, observed through H·θ.
func flipAtCorner(n int) (x [][]float64, y []float64, x2 [][]float64, y2 []float64) {
	x = make([][]float64, n)
	y = make([]float64, n)
	for i := range x {
		x[i] = []float64{1}
	}
	y[n-1] = -1
	x2, y2 = replaceLast(x, y, []float64{1}, 1)
	return x, y, x2, y2
}

// TestObjectiveAudit audits Obj-Gauss on the flip pair with the statistic
// φ(x)ᵀHθ (H the common Hessian), which recovers φ(x)ᵀ(c − b). The pass
// uses the planned β (calibrated for the worst gradient difference
// η + 2 = 12 and both halves of ε); the expected failure uses half of the
// σ that this pair's own sensitivity 2 needs at (ε, δ).
func TestObjectiveAudit(t *testing.T) {
	const eps, delta, n = 1, 0.01, 20
	cfg := synthConfig(1, n, eps, delta)
	cfg.Method, cfg.Lambda, cfg.Eta = MethodObjective, 10, 10
	x, y, x2, y2 := flipAtCorner(n)
	sampler := func(tr *Trainer) audit.Sampler {
		st := sufficientStats(x, y, tr.fm, tr.lm)
		phi := tr.fm.scaler.Transform(nil, []float64{1})
		h := mat.NewSymDense(2, nil)
		h.CopySym(st.s)
		for i := 0; i < 2; i++ {
			h.SetSym(i, i, h.At(i, i)+tr.obj.kifer+tr.obj.ridge)
		}
		sts := [2]stats{st, sufficientStats(x2, y2, tr.fm, tr.lm)}
		return func(nb int) float64 {
			w := releaseStats(t, tr, sts[nb])
			hb := mat.NewVecDense(2, nil)
			hb.MulVec(h, mat.NewVecDense(2, w))
			return floats.Dot(phi, hb.RawVector().Data)
		}
	}
	cfgA := audit.Config{N: 30000, Delta: delta}
	audit.RequirePass(t, sampler(mustPlan(t, cfg)), eps, cfgA)
	pairSigma, err := gaussianSigma(2, eps, delta)
	if err != nil {
		t.Fatal(err)
	}
	broken := mustPlan(t, cfg)
	broken.obj.beta = pairSigma / 2
	audit.RequireCatch(t, sampler(broken), eps, cfgA)
}
