package gauss

import (
	"math"
	"math/rand"
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/mechanism"
	"gonum.org/v1/gonum/mat"
)

// TestQuadraticSameDecisions: Config.Quadratic writes the lda discriminant
// as one PSD Φ_k per class (kind lmgc) with exactly lda's decisions, for
// the same released statistics (post-processing of one release).
func TestQuadraticSameDecisions(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, c := range []struct {
		d, k  int
		eps   float64
		delta float64
	}{{3, 2, 1, 1e-6}, {5, 6, 1, 0}, {4, 6, 0.05, 1e-6}, {10, 3, 10, 1e-5}} {
		n := 300
		lin := mustPlan(t, testConfig(KindLDA, c.d, c.k, n, c.eps, c.delta))
		qc := testConfig(KindLDA, c.d, c.k, n, c.eps, c.delta)
		qc.Quadratic = true
		quad := mustPlan(t, qc)
		X, y := make([][]float64, n), make([]int, n)
		for i := range X {
			y[i] = r.Intn(c.k)
			X[i] = make([]float64, c.d)
			for j := range X[i] {
				X[i][j] = 10*r.Float64()*0.5 + float64(y[i]*(j%2))
			}
		}
		v, err := lin.releaseOnce(X, y)
		if err != nil {
			t.Fatal(err)
		}
		ml, mq := lin.model(v), quad.model(v)
		if mq.Kind != mechanism.KindLMGC || len(mq.Phi) != c.k || mq.Weights != nil {
			t.Fatalf("quadratic model: kind %q, %d matrices, weights %v", mq.Kind, len(mq.Phi), mq.Weights != nil)
		}
		D := c.d + 1
		for k, phi := range mq.Phi {
			var eig mat.EigenSym
			if !eig.Factorize(mat.NewSymDense(D, append([]float64(nil), phi...)), false) {
				t.Fatal("eigendecomposition failed")
			}
			vals := eig.Values(nil)
			if vals[0] < -1e-9*math.Abs(vals[D-1]) {
				t.Fatalf("Φ_%d is not PSD: smallest eigenvalue %v (largest %v)", k, vals[0], vals[D-1])
			}
		}
		agree := 0
		const probes = 2000
		for i := 0; i < probes; i++ {
			x := make([]float64, c.d)
			for j := range x {
				x[j] = -2 + 14*r.Float64() // inside and outside the bounds (clipped)
			}
			pl, err := ml.Predict(x)
			if err != nil {
				t.Fatal(err)
			}
			pq, err := mq.Predict(x)
			if err != nil {
				t.Fatal(err)
			}
			if pl.Class == pq.Class {
				agree++
			}
		}
		// Equal up to floating-point ties: the two scorers differ only by
		// the common term uᵀPu and rounding.
		if agree < probes-2 {
			t.Fatalf("d=%d K=%d ε=%v: quadratic and linear lda agree on %d of %d points", c.d, c.k, c.eps, agree, probes)
		}
	}
}

// quadMarginSampler is marginSampler for the quadratic (lmgc-kind) model:
// x̃ᵀ(Φ₀ − Φ₁)x̃ on 𝒟′'s row (positive when the row looks like class 1).
func quadMarginSampler(t testing.TB, cfg Config, broken float64) audit.Sampler {
	cfg.Quadratic = true
	return modelSampler(t, cfg, broken, func(m *mechanism.Model) float64 {
		return m.QuadraticForm(0, auditX[1][0]) - m.QuadraticForm(1, auditX[1][0])
	})
}

// TestAuditTrainPathQuadratic audits the quadratic-form release end to end
// (DP_LMGC_TRAIN method=stats) at the charged (ε, δ) on the extremal pair,
// and checks that σ ten times too small is caught by the same statistic.
func TestAuditTrainPathQuadratic(t *testing.T) {
	cfg := testConfig(KindLDA, 2, 2, 1, auditEps, auditDelta)
	cfgA := audit.Config{N: 20000, Delta: auditDelta}
	audit.RequirePass(t, quadMarginSampler(t, cfg, 1), auditEps, cfgA)
	audit.RequireCatch(t, quadMarginSampler(t, cfg, 10), auditEps, cfgA)
}
