package svm

import (
	"math"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/mechanism"
)

// laplaceLoss returns Σⱼ (|oⱼ − aⱼ| − |oⱼ − bⱼ|) over the concatenated
// vectors: up to the factor 1/λ this is the Laplace privacy loss of output o
// between means a and b, the most powerful test statistic.
func laplaceLoss(o, a, b [][]float64) float64 {
	var s float64
	for k := range o {
		for j := range o[k] {
			s += math.Abs(o[k][j]-a[k][j]) - math.Abs(o[k][j]-b[k][j])
		}
	}
	return s
}

// gaussianLoss returns ⟨o − a, b − a⟩ over the concatenated vectors: up to
// an affine map, the Gaussian privacy loss of o between means a and b.
func gaussianLoss(o, a, b [][]float64) float64 {
	var s float64
	for k := range o {
		for j := range o[k] {
			s += (o[k][j] - a[k][j]) * (b[k][j] - a[k][j])
		}
	}
	return s
}

// boundaryPair returns K weight vectors w(D) = 0 and w(D′) at ℓ₂ distance
// exactly Δ₂ per model, spread evenly over the F coordinates so that the ℓ₁
// distance √F·Δ₂ is the largest the ℓ₂ bound allows: the worst case the
// Laplace scale λ = √F·Δ₂·K/ε must cover, and for the stacked Gaussian
// release a stacked distance of exactly √K·Δ₂.
func boundaryPair(tr *Trainer) (w0, w1 [][]float64) {
	v := tr.Sensitivity() / math.Sqrt(float64(tr.Dim()))
	for k := 0; k < tr.Models(); k++ {
		a := make([]float64, tr.Dim())
		b := make([]float64, tr.Dim())
		for j := range b {
			b[j] = v
		}
		w0, w1 = append(w0, a), append(w1, b)
	}
	return w0, w1
}

// releaseSampler runs the release step (the noise of Train) on the boundary
// pair and reduces the output to the privacy-loss statistic.
func releaseSampler(t *testing.T, tr *Trainer) audit.Sampler {
	w0, w1 := boundaryPair(tr)
	stat := laplaceLoss
	if tr.Gaussian() {
		stat = gaussianLoss
	}
	return func(side int) float64 {
		src := w0
		if side == 1 {
			src = w1
		}
		out := make([][]float64, len(src))
		for k := range src {
			out[k] = append([]float64(nil), src[k]...)
		}
		if err := tr.release(out); err != nil {
			t.Fatal(err)
		}
		return stat(out, w0, w1)
	}
}

// auditTrainer is a small linear plan with d features (F = d + 1). The
// audit's most telling event for Laplace, every coordinate beyond the
// shifted mean, has probability 2^(−F·K) under D′, so F·K stays small.
func auditTrainer(t *testing.T, d int, delta float64, classes ...string) *Trainer {
	cfg := cfgD(d, 100, 1, KernelLinear, classes...)
	cfg.C, cfg.Delta = 100, delta
	return mustPlan(t, cfg)
}

// TestAuditRelease audits the release path (F = 4) on neighbours that meet
// the sensitivity bound with equality: the audit must not find ε > 1.
func TestAuditRelease(t *testing.T) {
	tr := auditTrainer(t, 3, 0)
	audit.RequirePass(t, releaseSampler(t, tr), tr.cfg.Epsilon, audit.Config{N: 10000})
}

// TestAuditCatchesHalvedScale is an expected failure: with λ/2 the release
// (F = 2) is only 2ε-DP and the audit must say so.
func TestAuditCatchesHalvedScale(t *testing.T) {
	tr := auditTrainer(t, 1, 0)
	tr.lambda /= 2
	audit.RequireCatch(t, releaseSampler(t, tr), tr.cfg.Epsilon, audit.Config{N: 20000})
}

// TestAuditCatchesMissingSqrtF is an expected failure: calibrating the
// Laplace scale to the ℓ₂ sensitivity (dropping the √F of ‖v‖₁ ≤ √F‖v‖₂)
// gives 2ε for F = 4.
func TestAuditCatchesMissingSqrtF(t *testing.T) {
	tr := auditTrainer(t, 3, 0)
	tr.lambda /= math.Sqrt(float64(tr.Dim()))
	audit.RequireCatch(t, releaseSampler(t, tr), tr.cfg.Epsilon, audit.Config{N: 20000})
}

// TestAuditOneVsRest audits the three noisy vectors (F = 2 each) of a
// one-vs-rest model together: one row enters every binary problem, so the
// losses add up to ε.
func TestAuditOneVsRest(t *testing.T) {
	tr := auditTrainer(t, 1, 0, "a", "b", "c")
	audit.RequirePass(t, releaseSampler(t, tr), tr.cfg.Epsilon, audit.Config{N: 10000})
}

// TestAuditCatchesOneVsRestWithoutSplit is an expected failure: giving each
// of the K = 3 models the full ε costs 3ε in total.
func TestAuditCatchesOneVsRestWithoutSplit(t *testing.T) {
	tr := auditTrainer(t, 1, 0, "a", "b", "c")
	tr.lambda /= float64(tr.Models())
	audit.RequireCatch(t, releaseSampler(t, tr), tr.cfg.Epsilon, audit.Config{N: 15000})
}

// gaussianClasses is the label domain of the Gaussian audits: K = 16
// one-vs-rest models (F = 2 each), so that a σ calibrated to one vector's
// Δ₂ instead of the stacked √K·Δ₂ is off by a factor 4.
var gaussianClasses = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15"}

// TestAuditGaussian audits the δ > 0 release of 16 vectors at stacked
// distance √K·Δ₂: one discrete-Gaussian draw calibrated to (ε, δ).
func TestAuditGaussian(t *testing.T) {
	tr := auditTrainer(t, 1, 1e-5, gaussianClasses...)
	audit.RequirePass(t, releaseSampler(t, tr), tr.cfg.Epsilon, audit.Config{N: 12000, Delta: tr.cfg.Delta})
}

// TestAuditCatchesGaussianSingleVectorSigma is an expected failure: σ
// calibrated to one weight vector's Δ₂ and used on the stacked release of
// K = 16 vectors. (α = 10⁻³: a must-fail test only needs power; the
// release is about 2ε-DP at this δ.)
func TestAuditCatchesGaussianSingleVectorSigma(t *testing.T) {
	tr := auditTrainer(t, 1, 1e-5, gaussianClasses...)
	sigma, err := mechanism.GaussianSigma(tr.Sensitivity(), tr.cfg.Epsilon, tr.cfg.Delta)
	if err != nil {
		t.Fatal(err)
	}
	tr.sigma = sigma
	audit.RequireCatch(t, releaseSampler(t, tr), tr.cfg.Epsilon, audit.Config{N: 12000, Delta: tr.cfg.Delta, Alpha: 1e-3})
}

// endToEnd returns a sampler that runs the full Train path (preprocessing,
// T gradient steps, noise) on an adversarial pair of neighbouring tables —
// a corner point (‖x‖ = 1) whose label is flipped — and reduces the
// released weights to the privacy loss against the two noise-free fits.
func endToEnd(t *testing.T, tr *Trainer) audit.Sampler {
	n, d := tr.cfg.N, len(tr.cfg.Features)
	X := make([][]float64, n)
	y := make([]int, n)
	for i := range X {
		X[i] = make([]float64, d)
		for j := range X[i] {
			X[i][j] = 0.5 * math.Sin(float64(3*i+j))
		}
		y[i] = i % 2
	}
	for j := range X[0] {
		X[0][j] = 1
	}
	y0, y1 := append([]int(nil), y...), append([]int(nil), y...)
	y1[0] = 1 - y0[0]
	w0, err := tr.fit(X, y0)
	if err != nil {
		t.Fatal(err)
	}
	w1, err := tr.fit(X, y1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("‖w(D) − w(D′)‖₂ = %.6g, Δ₂ = %.6g", l2dist(w0[0], w1[0]), tr.Sensitivity())
	stat := laplaceLoss
	if tr.Gaussian() {
		stat = gaussianLoss
	}
	return func(side int) float64 {
		ys := y0
		if side == 1 {
			ys = y1
		}
		m, err := tr.Train(X, ys)
		if err != nil {
			t.Fatal(err)
		}
		return stat(m.Weights, w0, w1)
	}
}

// TestAuditTrainEndToEnd audits the whole Train path on real neighbouring
// tables (d = 3, F = 4, small C so that every margin is in the Huber
// loss's linear zone and the pair meets 2LCκ/n·(1 − q^T), i.e. Δ₂ up to
// the float32 shrink): Laplace and Gaussian releases must both pass.
func TestAuditTrainEndToEnd(t *testing.T) {
	for _, delta := range []float64{0, 1e-5} {
		cfg := cfgD(3, 20, 1, KernelLinear)
		cfg.C, cfg.Delta = 0.2, delta
		tr := mustPlan(t, cfg)
		audit.RequirePass(t, endToEnd(t, tr), tr.cfg.Epsilon, audit.Config{N: 5000, Delta: delta})
	}
}

// TestAuditTrainEndToEndCatchesHalvedScale is the expected failure of the
// whole Train path: the pair above attains Δ₂ in the direction that
// maximises ℓ₁ (a corner row: every coordinate of φ has the same
// magnitude), so halving λ makes the real release 2ε-DP and the audit must
// see it.
func TestAuditTrainEndToEndCatchesHalvedScale(t *testing.T) {
	cfg := cfgD(3, 20, 1, KernelLinear)
	cfg.C = 0.2
	tr := mustPlan(t, cfg)
	tr.lambda /= 2
	audit.RequireCatch(t, endToEnd(t, tr), tr.cfg.Epsilon, audit.Config{N: 20000})
}
