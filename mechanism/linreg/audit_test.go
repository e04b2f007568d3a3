package linreg

import (
	"math"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/noise"
)

// The audits claim (ε, δ) = (2, 10⁻²) for the Gaussian path: a δ large
// enough for the audit to measure. At that claim the exact privacy profile
// of a pair at ratio R is ε ≈ 1.67 (the zCDP conversion is conservative),
// and the broken variants reach ≈ 3.6 (σ_c halved, ratio 1.84R on the
// label-flip pair) and ≈ 4.3 (all σ halved, 2R).
const auditEps, auditDelta = 2.0, 1e-2

// auditN is the number of samples per side of the Gaussian audits.
const auditN = 50000

// tablePair returns two one-row tables (n = 1, d = 3) that differ in their
// only row: corners z, z′ with labels y, y′.
func tablePair(z, zp []float64, y, yp float64) (dataset, dataset) {
	return dataset{x: [][]float64{z}, y: []float64{y}}, dataset{x: [][]float64{zp}, y: []float64{yp}}
}

// gaussLLR runs the real release (Scaler, pass, the three discrete
// Gaussian releases with the adaptive λ-statistic) on D or D′ and returns
// the Gaussian log-likelihood ratio log p_D′(o)/p_D(o) of the output: the
// most powerful statistic. The λ-statistic's means are recomputed along
// the directions of the released XᵀX̂, as the mechanism does.
func gaussLLR(t testing.TB, tr *Trainer, d0, d1 dataset) audit.Sampler {
	s0, s1 := tr.stats(d0.x, d0.y), tr.stats(d1.x, d1.y)
	return func(side int) float64 { return releaseLLR(t, tr, side, s0, s1) }
}

// releaseLLR releases the three statistics of D (side 0, exact statistics
// s0) or D′ (side 1, s1) and returns the Gaussian log-likelihood ratio
// log p_D′(r)/p_D(r) of the release r; the λ-statistic's means are taken
// along r's directions, as the mechanism does.
func releaseLLR(t testing.TB, tr *Trainer, side int, s0, s1 stats) float64 {
	l, _ := releaseLLRNoisy(t, tr, side, s0, s1)
	return l
}

// releaseLLRNoisy is releaseLLR that also returns the release (for stages
// that post-process it, §15).
func releaseLLRNoisy(t testing.TB, tr *Trainer, side int, s0, s1 stats) (float64, noisy) {
	t.Helper()
	st := s0
	if side == 1 {
		st = s1
	}
	r, err := tr.addNoise(st)
	if err != nil {
		t.Fatal(err)
	}
	g := tr.gauss
	a0, a1 := packA(s0.a, tr.f, true), packA(s1.a, tr.f, true)
	q0, q1 := rayleighMin(s0.a, tr.f, r.dirs), rayleighMin(s1.a, tr.f, r.dirs)
	return gaussLoss(r.va, a0, a1, g.sigmaA) + gaussLoss(r.c, s0.c, s1.c, g.sigmaC) + gaussLoss([]float64{r.q}, []float64{q0}, []float64{q1}, g.sigmaL), r
}

// gaussLoss is the Gaussian log-likelihood ratio log p₁(o)/p₀(o) of an
// output o with means m0, m1 and noise σ.
func gaussLoss(o, m0, m1 []float64, sigma float64) float64 {
	return (sqDist(o, m0) - sqDist(o, m1)) / (2 * sigma * sigma)
}

// jointPair is the corner pair that attains J for d = 3 and Kappa = 1:
// z·z′ = 1, so x·x′ = (1 + 1)/4 = ½ = Kappa/2, labels +1 and −1.
func jointPair() (dataset, dataset) {
	return tablePair([]float64{1, 1, 1}, []float64{1, 1, -1}, 1, -1)
}

// xyPair moves only Xᵀy, by the full 2x: the same corner row, label
// flipped. XᵀX and the λ-statistic do not move.
func xyPair() (dataset, dataset) {
	return tablePair([]float64{1, 1, 1}, []float64{1, 1, 1}, 1, -1)
}

func gaussTrainer(t testing.TB) *Trainer {
	return mustPlan(t, synthConfig(3, 1, auditEps, auditDelta))
}

// TestAuditGaussianRelease: the whole δ > 0 release on the near-extremal
// pair must not show ε > 2 at δ = 10⁻².
func TestAuditGaussianRelease(t *testing.T) {
	tr := gaussTrainer(t)
	d0, d1 := jointPair()
	audit.RequirePass(t, gaussLLR(t, tr, d0, d1), auditEps, audit.Config{N: auditN, Delta: auditDelta})
}

// TestAuditGaussianHalvedSigmaCaught is an expected failure: every σ
// halved doubles the ratio.
func TestAuditGaussianHalvedSigmaCaught(t *testing.T) {
	tr := gaussTrainer(t)
	tr.gauss.sigmaA /= 2
	tr.gauss.sigmaC /= 2
	tr.gauss.sigmaL /= 2
	d0, d1 := jointPair()
	audit.RequireCatch(t, gaussLLR(t, tr, d0, d1), auditEps, audit.Config{N: auditN, Delta: auditDelta})
}

// xySampler releases Xᵀy of the label-flip pair with the plan's
// Gaussian σ_c and returns the log-likelihood ratio. For this pair XᵀX and
// the λ-statistic have identical inputs on both sides, so their outputs
// have the same law and the LLR of the whole release is this term alone:
// auditing the Xᵀy step is auditing the release.
func xySampler(t testing.TB, tr *Trainer) audit.Sampler {
	d0, d1 := xyPair()
	s0, s1 := tr.stats(d0.x, d0.y), tr.stats(d1.x, d1.y)
	if sqDist(s0.a, s1.a) != 0 || !near(math.Sqrt(sqDist(s0.c, s1.c)), 2, 1e-12) {
		t.Fatal("the label-flip pair must move only Xᵀy, by 2")
	}
	sigma := tr.gauss.sigmaC
	return func(side int) float64 {
		o := append([]float64(nil), s0.c...)
		if side == 1 {
			copy(o, s1.c)
		}
		if err := noise.AddGaussianVec(o, sigma); err != nil {
			t.Fatal(err)
		}
		return (sqDist(o, s0.c) - sqDist(o, s1.c)) / (2 * sigma * sigma)
	}
}

// TestAuditGaussianXyPass: the label flip moves Xᵀy by 2x; the release
// passes.
func TestAuditGaussianXyPass(t *testing.T) {
	tr := gaussTrainer(t)
	audit.RequirePass(t, xySampler(t, tr), auditEps, audit.Config{N: 60000, Delta: auditDelta})
}

// TestAuditGaussianXySensitivityHalvedCaught is an expected failure: a
// calibration that takes Δ(Xᵀy) = ‖x‖ instead of 2‖x‖ (σ_c halved) is
// caught on the label-flip pair (ratio 1.84R instead of 0.92R; with Kappa
// = 1 the pair's share of R² is 4b/(J + e) = 4/4.74).
func TestAuditGaussianXySensitivityHalvedCaught(t *testing.T) {
	tr := gaussTrainer(t)
	tr.gauss.sigmaC /= 2
	audit.RequireCatch(t, xySampler(t, tr), auditEps, audit.Config{N: 60000, Delta: auditDelta})
}

// laplaceLoss returns Σ(|o − m₀| − |o − m₁|)/b, the Laplace privacy loss.
func laplaceLoss(o, m0, m1 []float64, b float64) float64 {
	var s float64
	for i := range o {
		s += math.Abs(o[i]-m0[i]) - math.Abs(o[i]-m1[i])
	}
	return s / b
}

// laplaceXySampler releases Xᵀy of the label-flip pair with the plan's
// Laplace scale: only Xᵀy differs (by exactly its ℓ₁ bound 2√F; XᵀX and
// the λ-statistic have identical inputs, hence identical laws), so the
// release costs ε_c and the statistic is the Laplace loss of Xᵀŷ.
func laplaceXySampler(t testing.TB, tr *Trainer) audit.Sampler {
	d0, d1 := xyPair()
	s0, s1 := tr.stats(d0.x, d0.y), tr.stats(d1.x, d1.y)
	if got := l1Dist(s0.c, s1.c); sqDist(s0.a, s1.a) != 0 || !near(got, 2*math.Sqrt(float64(tr.f)), 1e-12) {
		t.Fatalf("pair must move only Xᵀy, by 2√F in ℓ₁ (got %v)", got)
	}
	return func(side int) float64 {
		o := append([]float64(nil), s0.c...)
		if side == 1 {
			copy(o, s1.c)
		}
		if err := noise.AddLaplaceVec(o, tr.lap.scaleC); err != nil {
			t.Fatal(err)
		}
		return laplaceLoss(o, s0.c, s1.c, tr.lap.scaleC)
	}
}

func laplaceTrainer(t testing.TB) *Trainer {
	return mustPlan(t, synthConfig(3, 1, 2, 0))
}

// TestAuditLaplaceXy: the Xᵀy release passes at its share ε_c.
func TestAuditLaplaceXy(t *testing.T) {
	tr := laplaceTrainer(t)
	audit.RequirePass(t, laplaceXySampler(t, tr), tr.lap.epsC, audit.Config{N: 30000})
}

// TestAuditLaplaceXyL2SensitivityCaught is an expected failure: scaling
// Xᵀy's Laplace noise to its ℓ₂ sensitivity 2 instead of its ℓ₁
// sensitivity 2√F gives √F·ε_c = 2ε_c (F = 4).
func TestAuditLaplaceXyL2SensitivityCaught(t *testing.T) {
	tr := laplaceTrainer(t)
	tr.lap.scaleC /= math.Sqrt(float64(tr.f))
	audit.RequireCatch(t, laplaceXySampler(t, tr), tr.lap.epsC, audit.Config{N: 30000})
}

// laplaceBoundarySampler audits the XᵀX release step at its calibrated
// bound: two input vectors at ℓ₁ distance exactly Δ₁(XᵀX) (spread evenly,
// the worst case for a fixed ℓ₁ distance), released with the plan's scale
// b_A through the real sampler. (Corner rows reach only about 0.65 of the
// ball bound; TestComputedStatsSensitivity checks the bound itself.)
func laplaceBoundarySampler(t testing.TB, tr *Trainer) audit.Sampler {
	m := tr.f*(tr.f+1)/2 - 1
	v0, v1 := make([]float64, m), make([]float64, m)
	for i := range v1 {
		v1[i] = tr.lap.sensA / float64(m)
	}
	return func(side int) float64 {
		o := append([]float64(nil), v0...)
		if side == 1 {
			copy(o, v1)
		}
		if err := noise.AddLaplaceVec(o, tr.lap.scaleA); err != nil {
			t.Fatal(err)
		}
		return laplaceLoss(o, v0, v1, tr.lap.scaleA)
	}
}

// TestAuditLaplaceXX: the XᵀX step passes at its share ε_A (d = 1, F = 2:
// two coordinates).
func TestAuditLaplaceXX(t *testing.T) {
	tr := mustPlan(t, synthConfig(1, 1, 2, 0))
	audit.RequirePass(t, laplaceBoundarySampler(t, tr), tr.lap.epsA, audit.Config{N: 30000})
}

// TestAuditLaplaceXXHalvedScaleCaught is an expected failure (2ε_A).
func TestAuditLaplaceXXHalvedScaleCaught(t *testing.T) {
	tr := mustPlan(t, synthConfig(1, 1, 2, 0))
	tr.lap.scaleA /= 2
	audit.RequireCatch(t, laplaceBoundarySampler(t, tr), tr.lap.epsA, audit.Config{N: 30000})
}
