package logreg

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/noise"
)

// gramOf returns the computed v(XᵀX) of a table (the preconditioned rule's
// first release, before noise).
func gramOf(tr *Trainer, X [][]float64) []float64 {
	return newProblem(X, make([]int, len(X)), tr.prep, tr.kp, tr.binary, 2, tr.p.clip).gram()
}

// gramOfRows is v(Σ xxᵀ) on rows given directly in the scaled space
// (bypassing the scaler: any x with ‖x‖ ≤ κ̂).
func gramOfRows(rows [][]float64) []float64 {
	f := len(rows[0])
	p := &problem{n: len(rows), f: f, workers: 1}
	for _, r := range rows {
		p.x = append(p.x, r...)
	}
	return p.gram()
}

// TestGramPacking: the released vector is the upper triangle by rows with
// off-diagonals times √2, so ‖v(A)‖₂ = ‖A‖_F; the preconditioner unpacks
// it back to XᵀX.
func TestGramPacking(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, f = 9003, 4 // two blocks, the second with a tail of 3 single rows
	rows := make([][]float64, n)
	full := make([]float64, f*f)
	for i := range rows {
		rows[i] = make([]float64, f)
		for j := range rows[i] {
			rows[i][j] = rng.Float64()*2 - 1
		}
		for a := 0; a < f; a++ {
			for b := 0; b < f; b++ {
				full[a*f+b] += rows[i][a] * rows[i][b]
			}
		}
	}
	v := gramOfRows(rows)
	if len(v) != gramSize(f) {
		t.Fatalf("%d coordinates, want %d", len(v), gramSize(f))
	}
	idx := 0
	var fro, vn float64
	for a := 0; a < f; a++ {
		for b := a; b < f; b++ {
			w := 1.0
			if b > a {
				w = math.Sqrt2
			}
			if !near(v[idx], w*full[a*f+b], 1e-12) {
				t.Fatalf("entry (%d,%d): %v, want %v", a, b, v[idx], w*full[a*f+b])
			}
			idx++
		}
	}
	for _, x := range full {
		fro += x * x
	}
	for _, x := range v {
		vn += x * x
	}
	if !near(math.Sqrt(vn), math.Sqrt(fro), 1e-12) {
		t.Fatalf("‖v‖ = %v, ‖XᵀX‖_F = %v", math.Sqrt(vn), math.Sqrt(fro))
	}
}

// TestGramSensitivity: ‖v(S_D) − v(S_D′)‖₂ ≤ Δ_H on adversarial
// replace-one pairs through the real scaling and summation (n = 5000 rows
// behind the replaced one): orthogonal opposite corners (‖x‖ = 1,
// x·x′ = 0: d odd, Hamming distance (d+1)/2) reach Δ_H = √2·κ̂² to
// rounding; corner vs a NULL row, corner vs its mirror image, corner vs
// itself, random rows stay below. On the ball itself (rows given in the
// scaled space) κ̂e₁ vs κ̂e₂ reaches the bound as well.
func TestGramSensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, d := range []int{1, 3, 9} {
		const n = 5000
		cfg := testConfig(d, 2, n, 1, 1e-6)
		cfg.StepRule = StepPreconditioned
		tr := mustPlan(t, cfg)
		base := make([][]float64, n)
		for i := range base {
			base[i] = make([]float64, d)
			for j := range base[i] {
				base[i][j] = rng.Float64()*2 - 1
			}
		}
		with := func(r []float64) []float64 {
			X := append([][]float64{r}, base[1:]...)
			return gramOf(tr, X)
		}
		ones := corner(d, 1<<d-1)
		orth := corner(d, 1<<d-1)
		for j := 0; j < (d+1)/2; j++ {
			orth[j] = -1
		}
		mirror := corner(d, 0)
		nulls := make([]float64, d)
		for j := range nulls {
			nulls[j] = math.NaN()
		}
		worst := 0.0
		for name, pair := range map[string][2][]float64{
			"orthogonal corners": {ones, orth}, "corner vs NULL": {ones, nulls}, "corner vs mirror": {ones, mirror},
			"same corner": {ones, ones}, "random": {base[2], base[3]}, "outside bounds": {{math.Inf(1)}, {-1e300}},
		} {
			a, b := pair[0], pair[1]
			if len(a) != d {
				a, b = append(make([]float64, d-1), a...), append(make([]float64, d-1), b...)
			}
			dist := dist2(with(a), with(b))
			if dist > tr.p.gramL2 {
				t.Fatalf("d=%d %s: ‖Δv‖ = %v > Δ_H = %v", d, name, dist, tr.p.gramL2)
			}
			worst = max(worst, dist)
			t.Logf("d=%d %s: ‖Δv‖ = %.6f of Δ_H = %.6f", d, name, dist, tr.p.gramL2)
		}
		if worst < tr.p.gramL2*(1-1e-6) { // the bound less its rounding slack (≈ 10⁻⁸ here)
			t.Fatalf("d=%d: worst pair %v does not reach Δ_H = %v", d, worst, tr.p.gramL2)
		}
	}
	// The bound on the whole ball: κ̂e₁ vs κ̂e₂ (D = κ̂²·diag(1, −1)).
	e1, e2 := []float64{kappaHat, 0, 0}, []float64{0, kappaHat, 0}
	if dist, want := dist2(gramOfRows([][]float64{e1}), gramOfRows([][]float64{e2})), gramSensitivity(1, 3); dist > want || dist < want*(1-1e-12) {
		t.Fatalf("κ̂e₁ vs κ̂e₂: %v, Δ_H %v", dist, want)
	}
	// The rounding slack grows with n and stays tiny.
	small, big := gramSensitivity(1000, 21), gramSensitivity(100_000_000, 21)
	if !(small < big) || small/math.Sqrt2-1 > 1e-9 || big/math.Sqrt2-1 > 1e-3 {
		t.Fatalf("Δ_H(n=1e3) = %v, Δ_H(n=1e8) = %v", small, big)
	}
}

// TestPreconditionerPositive: whatever the Gram release drew (here noise
// far above the signal, or a matrix with negative eigenvalues), the
// preconditioner is finite and positive definite and maps a gradient to a
// descent direction (gᵀPg > 0); softmax removes the class mean.
func TestPreconditionerPositive(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const f = 5
	for trial := 0; trial < 50; trial++ {
		v := make([]float64, gramSize(f))
		for i := range v {
			v[i] = rng.NormFloat64() * 1e6
		}
		for _, kp := range []int{1, 4} {
			pre := preconditioner(v, f, kp, 100, kp == 1, 1e-3, 1e-4)
			g := make([]float64, kp*f)
			for i := range g {
				g[i] = rng.NormFloat64()
			}
			if kp > 1 { // centre, as the softmax gradient is (Σ_k r_k = 0)
				for j := 0; j < f; j++ {
					var m float64
					for k := 0; k < kp; k++ {
						m += g[k*f+j]
					}
					for k := 0; k < kp; k++ {
						g[k*f+j] -= m / float64(kp)
					}
				}
			}
			d := append([]float64(nil), g...)
			pre(d, nil)
			var gpg float64
			for i := range g {
				gpg += g[i] * d[i]
			}
			if !finite(d) || !(gpg > 0) {
				t.Fatalf("trial %d K′=%d: gᵀPg = %v, Pg = %v", trial, kp, gpg, d)
			}
			if kp > 1 {
				for j := 0; j < f; j++ {
					var m float64
					for k := 0; k < kp; k++ {
						m += d[k*f+j]
					}
					if math.Abs(m) > 1e-9*(1+math.Abs(d[j])) {
						t.Fatalf("class mean %v left in the direction", m)
					}
				}
			}
		}
	}
}

// gramClaim is the ε at which the Gram release alone (ratio √ρ_H·R of
// the plan) meets the audit's δ: the smallest ε with
// GaussianDelta(ε, Δ_H/σ_H) ≤ auditDelta.
func gramClaim(tr *Trainer) float64 {
	r := tr.p.gramL2 / tr.p.gramSigma
	lo, hi := 0.0, 50.0
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		if budget.GaussianDelta(mid, r) <= auditDelta {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// gramSampler releases v(XᵀX) of the extremal real pair (n = 1,
// orthogonal corners at d = 3: ‖Δv‖ = Δ_H to rounding) with the plan's
// noise σ_H and returns the Gaussian log-likelihood ratio.
func gramSampler(t testing.TB, tr *Trainer, sigmaH float64) audit.Sampler {
	v0 := gramOf(tr, [][]float64{{1, 1, 1}})
	v1 := gramOf(tr, [][]float64{{-1, -1, 1}})
	t.Logf("pair: ‖Δv‖ = %.6f of Δ_H = %.6f; σ_H = %.4f (audited %.4f)", dist2(v0, v1), tr.p.gramL2, tr.p.gramSigma, sigmaH)
	return func(side int) float64 {
		o := append([]float64(nil), v0...)
		if side == 1 {
			copy(o, v1)
		}
		if err := noise.AddGaussianVec(o, sigmaH); err != nil {
			t.Fatal(err)
		}
		var s float64
		for i := range o {
			s += (o[i]-v0[i])*(o[i]-v0[i]) - (o[i]-v1[i])*(o[i]-v1[i])
		}
		return s / (2 * tr.p.gramSigma * tr.p.gramSigma)
	}
}

// gramTrainer plans the preconditioned rule at the audit claim (2, 10⁻²),
// d = 3, n = 1, T = 1.
func gramTrainer(t testing.TB) *Trainer {
	cfg := testConfig(3, 2, 1, auditEps, auditDelta)
	cfg.Steps, cfg.StepRule = 1, StepPreconditioned
	return mustPlan(t, cfg)
}

// TestAuditGram: the XᵀX release passes at the ε its share of the event
// carries (ratio √ρ_H·R at δ = 10⁻²) on the pair at its bound.
func TestAuditGram(t *testing.T) {
	tr := gramTrainer(t)
	eps := gramClaim(tr)
	t.Logf("claim for the Gram share: ε = %.3f", eps)
	audit.RequirePass(t, gramSampler(t, tr, tr.p.gramSigma), eps, audit.Config{N: 100000, Delta: auditDelta})
}

// TestAuditGramQuarterSigmaCaught is an expected failure: σ_H/4.
func TestAuditGramQuarterSigmaCaught(t *testing.T) {
	tr := gramTrainer(t)
	tr.p.gramSigma /= 4
	eps := gramClaim(&Trainer{p: plan{gramL2: tr.p.gramL2, gramSigma: 4 * tr.p.gramSigma}})
	audit.RequireCatch(t, gramSampler(t, tr, tr.p.gramSigma), eps, audit.Config{N: 100000, Delta: auditDelta})
}
