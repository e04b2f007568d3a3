package lsq

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/noise"
)

// The lattice audits (issue 9, item 1). Before the output step, objective
// perturbation released θ = argmin ½θᵀHθ − (c − b)ᵀθ with b from the exact
// discrete Gaussian on the public grid g·ℤ^F, so whoever knows a candidate
// table D recovers b̂ = c_D − H_Dθ and sees b̂/g ∈ ℤ^F (up to 10⁻⁵) under D
// and not under a neighbour. The statistic below is that test as a scalar:
// the Euclidean distance of b̂/g to ℤ^F. The audits check that every release
// path now passes it (ε_lower ≤ ε claimed) for the grid of the old sampler
// and for the grid of the coupled normals, and that the old release (no
// output step) is caught.

// latticeStat returns the distance of b̂/g to ℤ^F with
// b̂ = c_D − (S_D + reg·I)θ, the attacker's reconstruction of the linear
// noise from a released θ and the candidate table's statistics.
func latticeStat(st stats, reg float64, theta []float64, g float64) float64 {
	f := len(theta)
	h := shifted(st.s, reg)
	hb := mat.NewVecDense(f, nil)
	hb.MulVec(h, mat.NewVecDense(f, theta))
	var d2 float64
	for i := 0; i < f; i++ {
		v := (st.c[i] - hb.AtVec(i)) / g
		d := v - math.Round(v)
		d2 += d * d
	}
	return math.Sqrt(d2)
}

// oldGaussianGrid is the grid of noise.AddGaussianVec for σ on F
// coordinates (package noise, gaussianParams): the largest power of two
// with g ≤ σ·2⁻³⁰/√F·(1 − 2⁻⁴⁰).
func oldGaussianGrid(sigma float64, f int) float64 {
	bound := sigma / math.Ldexp(math.Sqrt(float64(f)), 30) * (1 - 0x1p-40)
	_, exp := math.Frexp(bound)
	return math.Ldexp(1, exp-1)
}

// oldObjectiveRelease is the release before this change, kept here as the
// deliberately gridded variant: b from noise.AddGaussianVec (the discrete
// Gaussian on the grid g·ℤ^F), the exact constrained minimiser, and no
// output step.
func oldObjectiveRelease(t testing.TB, p *objectivePlan, st stats) []float64 {
	t.Helper()
	b := make([]float64, len(st.c))
	if err := noise.AddGaussianVec(b, p.beta); err != nil {
		t.Fatal(err)
	}
	c := make([]float64, len(b))
	for i := range c {
		c[i] = st.c[i] - b[i]
	}
	w, _ := ballSolve(shifted(st.s, p.kifer+p.ridge), c, p.eta, p.muMax)
	return w
}

// oldInputRelease is the gridded input-perturbation variant: the same old
// release with the Hessian noise switched off (U = 0, so the Hessian is the
// public function S_D + Δ_in·I of the table), b on the grid and no output
// step. With U on, the attacker does not know the Hessian and this
// statistic cannot see the grid; the variant isolates what the output step
// protects.
func oldInputRelease(t testing.TB, p *inputPlan, st stats) []float64 {
	t.Helper()
	b := make([]float64, len(st.c))
	if err := noise.AddGaussianVec(b, p.sigmaB); err != nil {
		t.Fatal(err)
	}
	c := make([]float64, len(b))
	for i := range c {
		c[i] = st.c[i] - b[i]
	}
	w, _ := ballSolve(shifted(st.s, p.ridge), c, p.eta, p.muMax)
	return w
}

// latticePair is one audited configuration: a plan and the statistics of
// two neighbouring tables (computed once; the release after the pass over
// the rows is what is audited).
type latticePair struct {
	name     string
	cfg      Config
	st       [2]stats
	samples  int
	inputToo bool
}

// latticePairs returns the configurations: (ε, δ) = (1, 0.01) with
// F = 3 and n = 200; (2, 10⁻⁶) with F = 3 and n = 20 000 (a random table and
// its neighbour with the last row moved to a corner with the opposite
// label); and the pair and configuration of TestObjectiveAudit
// (flipAtCorner(20), λ = 10, η = 10, F = 2).
func latticePairs(t testing.TB) []latticePair {
	rng := rand.New(rand.NewPCG(91, 92))
	mk := func(name string, n int, eps, delta float64, samples int) latticePair {
		cfg := synthConfig(2, n, eps, delta)
		ds := synthLinear(rng, synthBeta(rng, 2), n, 0.1)
		x2, y2 := replaceLast(ds.x, ds.y, []float64{1, -1}, -math.Copysign(1, ds.y[n-1]))
		return latticePair{name: name, cfg: cfg, samples: samples, inputToo: true,
			st: [2]stats{sufficientStats(ds.x, ds.y, mustPlanLinear(t, cfg).fm, labelMap{-1, 1}),
				sufficientStats(x2, y2, mustPlanLinear(t, cfg).fm, labelMap{-1, 1})}}
	}
	out := []latticePair{
		mk("(1, 0.01) F=3 n=200", 200, 1, 0.01, 4000),
		mk("(2, 1e-6) F=3 n=20000", 20000, 2, 1e-6, 4000),
	}
	cfg := synthConfig(1, 20, 1, 0.01)
	cfg.Lambda, cfg.Eta = 10, 10
	x, y, x2, y2 := flipAtCorner(20)
	fm := mustPlanLinear(t, cfg).fm
	out = append(out, latticePair{name: "TestObjectiveAudit pair", cfg: cfg, samples: 4000,
		st: [2]stats{sufficientStats(x, y, fm, labelMap{-1, 1}), sufficientStats(x2, y2, fm, labelMap{-1, 1})}})
	return out
}

// mustPlanLinear plans the output method only to get the public feature
// map of cfg (identical for every linear method).
func mustPlanLinear(t testing.TB, cfg Config) *Trainer {
	cfg.Method, cfg.Eta = MethodOutput, 0
	cfg.Delta = 0
	cfg.Lambda = 1
	return mustPlan(t, cfg)
}

// releaseStats runs the release path after the pass over the rows.
func releaseStats(t testing.TB, tr *Trainer, st stats) []float64 {
	t.Helper()
	m, err := tr.release(st)
	if err != nil {
		t.Fatal(err)
	}
	return m.Weights[0]
}

// TestLatticeObjective: the lattice statistic against objective
// perturbation, for both grids, passes at every configuration; the old
// release is caught.
func TestLatticeObjective(t *testing.T) {
	for _, lp := range latticePairs(t) {
		cfg := lp.cfg
		cfg.Method = MethodObjective
		tr := mustPlan(t, cfg)
		p := tr.obj
		reg := p.kifer + p.ridge
		grids := map[string]float64{
			"old grid": oldGaussianGrid(p.beta, tr.fm.f),
			"new grid": p.beta * math.Ldexp(1, -noise.CoupledGridBits),
		}
		cfgA := audit.Config{N: lp.samples, Delta: cfg.Delta}
		for gname, g := range grids {
			t.Logf("%s, %s (g = %.3g):", lp.name, gname, g)
			audit.RequirePass(t, func(nb int) float64 {
				return latticeStat(lp.st[0], reg, releaseStats(t, tr, lp.st[nb]), g)
			}, cfg.Epsilon, cfgA)
		}
		g := grids["old grid"]
		t.Logf("%s, old release:", lp.name)
		audit.RequireCatch(t, func(nb int) float64 {
			return latticeStat(lp.st[0], reg, oldObjectiveRelease(t, p, lp.st[nb]), g)
		}, cfg.Epsilon, cfgA)
	}
}

// TestLatticeInput: the same for input perturbation (the configurations
// whose n admits it); the gridded variant is the old release with the
// Hessian noise off.
func TestLatticeInput(t *testing.T) {
	for _, lp := range latticePairs(t) {
		if !lp.inputToo {
			continue
		}
		cfg := lp.cfg
		cfg.Method = MethodInput
		tr := mustPlan(t, cfg)
		p := tr.in
		grids := map[string]float64{
			"old grid": oldGaussianGrid(p.sigmaB, tr.fm.f),
			"new grid": p.sigmaB * math.Ldexp(1, -noise.CoupledGridBits),
		}
		cfgA := audit.Config{N: lp.samples, Delta: cfg.Delta}
		for gname, g := range grids {
			t.Logf("%s, %s (g = %.3g):", lp.name, gname, g)
			audit.RequirePass(t, func(nb int) float64 {
				return latticeStat(lp.st[0], p.ridge, releaseStats(t, tr, lp.st[nb]), g)
			}, cfg.Epsilon, cfgA)
		}
		g := grids["old grid"]
		t.Logf("%s, old release with U off:", lp.name)
		audit.RequireCatch(t, func(nb int) float64 {
			return latticeStat(lp.st[0], p.ridge, oldInputRelease(t, p, lp.st[nb]), g)
		}, cfg.Epsilon, cfgA)
	}
}
