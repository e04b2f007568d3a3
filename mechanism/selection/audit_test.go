package selection

import (
	"testing"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/noise"
)

// The audit instance: m = 3 candidates; candidate c's score on neighbour b
// is b·s_c + Lap(1/ε_score) with s_c = 1 (a sensitivity-1 count moved up by
// the replaced row, the direction that stresses the max's lower tail) and
// a trivial model; the released statistic is the best noisy score. Each
// trial is ε_score-DP, so the selection claims 3ε_score (+ δ_trunc).
var auditShift = [3]float64{1, 1, 1}

func auditTrial(b int) Trial[int] {
	return func(c int, _, epsScore float64) (int, float64, error) {
		v, err := noise.AddLaplace(float64(b)*auditShift[c], 1/epsScore)
		return c, v, err
	}
}

func auditPlan(t *testing.T) *Plan {
	t.Helper()
	// ScoreShare close to 1: the trial's ε₁ is (almost) all score.
	p, err := NewPlan(Config{Candidates: 3, Epsilon: 1.5, Delta: 1e-6, ScoreShare: 0.999999})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAuditSelection: random stopping passes at ε = 3ε₁.
func TestAuditSelection(t *testing.T) {
	p := auditPlan(t)
	s := func(b int) float64 {
		r, err := Run(p, auditTrial(b))
		if err != nil {
			t.Fatal(err)
		}
		return r.Score
	}
	audit.RequirePass(t, s, p.Epsilon(), audit.Config{N: 20000, Delta: p.Delta()})
}

// TestAuditFixedTrialsCaught (must fail): the same trials without random
// stopping — always T trials, report the noisy max — leak up to T·ε₁ in the
// lower tail of the max (P[max < t] = F(t)^T): about 3.0 at T = 8, ε₁ = 0.5
// (computed from the Laplace CDF), above the claimed 3ε₁ = 1.5.
func TestAuditFixedTrialsCaught(t *testing.T) {
	p := auditPlan(t)
	const fixed = 8
	s := func(b int) float64 {
		best := 0.0
		for i := range fixed {
			_, v, err := auditTrial(b)(i%3, p.EpsTrain(), p.EpsScore())
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 || v > best {
				best = v
			}
		}
		return best
	}
	audit.RequireCatch(t, s, p.Epsilon(), audit.Config{N: 50000, Delta: p.Delta()})
}

// TestAuditExactScoresCaught (must fail): random stopping over non-private
// scores (no noise on the score) is caught.
func TestAuditExactScoresCaught(t *testing.T) {
	p := auditPlan(t)
	s := func(b int) float64 {
		r, err := Run(p, func(c int, _, _ float64) (int, float64, error) {
			return c, float64(b) * auditShift[c], nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return r.Score
	}
	audit.RequireCatch(t, s, p.Epsilon(), audit.Config{N: 2000, Delta: p.Delta()})
}
