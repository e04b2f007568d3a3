package auto

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dpsql/dpsql/mechanism/gauss"
	"github.com/dpsql/dpsql/mechanism/logreg"
)

// KindAuto is the kind name that asks for this package's choice.
const KindAuto = "auto"

// DeltaReleases is how many default training releases fit in a table's δ
// budget: each uses δ_total/DeltaReleases.
const DeltaReleases = 10

// LDAEdge is the largest public noise edge E of lda's pooled covariance (on
// the [−1, 1] feature scale, see LDANoiseEdge) at which kind=auto prefers
// lda to logreg when δ > 0: below it lda's noise is negligible and its
// closed form beats the finite number of gradient steps; above it noisy
// gradient descent is ahead (docs/mechanisms/auto.md, evidence table).
const LDAEdge = 0.01

// DefaultDelta is the δ of a training release when the analyst gives none:
// δ_total/DeltaReleases, or 0 (pure ε) when the table has no δ budget.
func DefaultDelta(deltaTotal float64) float64 {
	if !(deltaTotal > 0) {
		return 0
	}
	// Rounded down so that DeltaReleases default releases never sum to
	// more than the budget.
	d := deltaTotal / DeltaReleases
	for d*DeltaReleases > deltaTotal {
		d = math.Nextafter(d, 0)
	}
	return d
}

// Inputs are the public quantities the choice may use.
type Inputs struct {
	Classification bool
	N, D, K        int // rows, feature columns, classes (0 for regression)
	Epsilon, Delta float64
}

// LDANoiseEdge is E = 2√d·sd_off/max(n − K, 1): the edge of the noise
// spectrum of lda's pooled covariance estimate on the [−1, 1] feature
// scale, from gauss's own calibration at its default shares (a function of
// n, d, K, ε, δ only; bounds do not enter because lda works on the scaled
// box). ok is false when lda cannot be planned for these inputs.
func LDANoiseEdge(in Inputs) (e float64, ok bool) {
	if in.D < 1 || in.K < 2 || in.N < 1 {
		return 0, false
	}
	feats, lo, hi := make([]string, in.D), make([]float64, in.D), make([]float64, in.D)
	for j := range feats {
		feats[j], lo[j], hi[j] = "x"+strconv.Itoa(j), -1, 1
	}
	classes := make([]string, in.K)
	for c := range classes {
		classes[c] = "c" + strconv.Itoa(c)
	}
	tr, err := gauss.Plan(gauss.Config{Kind: gauss.KindLDA, Epsilon: in.Epsilon, Delta: in.Delta, N: in.N,
		Features: feats, Lo: lo, Hi: hi, Label: "y", Classes: classes})
	if err != nil {
		return 0, false
	}
	_, _, _, off := tr.NoiseSD()
	return 2 * math.Sqrt(float64(in.D)) * off / math.Max(float64(in.N-in.K), 1), true
}

// Choose returns the kind DP_TRAIN trains for kind=auto and a one-line
// reason (shown by dry_run and recorded in dp_models). It reads no row.
//
// Regression: linreg (AdaSSP), which reached the non-private RMSE on every
// shared/ and synthetic set at n ≥ 10⁴ and is never worse than the mean
// predictor by more than noise (docs/results/linreg.md).
//
// Classification with δ > 0: logreg (noisy gradient descent, one Gaussian
// release), ahead of lda on every synthetic and shared/ cell measured
// except where lda's covariance noise is negligible, E ≤ LDAEdge — then
// lda. Pure ε (δ = 0): logreg with method=objective (objective
// perturbation, docs/mechanisms/logreg.md §12) for K ≤ PureMaxClasses
// while the solver's work cap raises its ridge at most PureMaxCapRatio×
// (ahead of lda or tied on those synthetic cells, docs/mechanisms/auto.md
// Table 3b); lda otherwise. The caller passes method=objective
// (PureMethod) to logreg when δ = 0.
func Choose(in Inputs) (kind, why string) {
	if !in.Classification {
		return "linreg", fmt.Sprintf("regression (n=%d, d=%d): AdaSSP sufficient statistics", in.N, in.D)
	}
	if in.Delta == 0 {
		if in.K > PureMaxClasses {
			return "lda", fmt.Sprintf("classification, pure ε (n=%d, d=%d, K=%d > %d): noisy sufficient statistics, shared covariance", in.N, in.D, in.K, PureMaxClasses)
		}
		ratio, err := objectiveCap(in)
		if err != nil || ratio > PureMaxCapRatio {
			return "lda", fmt.Sprintf("classification, pure ε (n=%d, d=%d, K=%d): noisy sufficient statistics, shared covariance (logreg objective: cap ratio %.3g, %v)", in.N, in.D, in.K, ratio, err)
		}
		return "logreg", fmt.Sprintf("classification, pure ε (n=%d, d=%d, K=%d): logreg objective perturbation (method=%s, ridge cap ratio %.3g ≤ %g)", in.N, in.D, in.K, logreg.MethodObjective, ratio, PureMaxCapRatio)
	}
	e, ok := LDANoiseEdge(in)
	if ok && e <= LDAEdge {
		return "lda", fmt.Sprintf("classification, δ>0 (n=%d, d=%d, K=%d): lda covariance noise edge %.3g ≤ %g", in.N, in.D, in.K, e, LDAEdge)
	}
	if err := logregFits(in); err != nil {
		return "lda", fmt.Sprintf("classification, δ>0 (n=%d, d=%d, K=%d): logreg cannot be planned (%v)", in.N, in.D, in.K, err)
	}
	return "logreg", fmt.Sprintf("classification, δ>0 (n=%d, d=%d, K=%d): noisy gradient descent (lda covariance noise edge %.3g > %g)", in.N, in.D, in.K, e, LDAEdge)
}

// PureMethod is the logreg method auto uses when δ = 0.
const PureMethod = logreg.MethodObjective

// PureMaxClasses and PureMaxCapRatio delimit where auto uses the
// objective method at δ = 0 (docs/mechanisms/auto.md, Table 3b): K ≤ 5
// (K = 20 lost to lda at d = 10, n = 5000 and 10⁴) and a default ridge
// raised by the solver's work cap at most 4× (n = 10⁵, d = 10: 35×, lost
// to lda 0.823 vs 0.850).
const (
	PureMaxClasses  = 5
	PureMaxCapRatio = 4.0
)

// objectiveCap plans logreg's pure-ε objective release for the public
// inputs and returns how far the work cap raised its ridge.
func objectiveCap(in Inputs) (float64, error) {
	cfg := planConfig(in)
	cfg.Method = logreg.MethodObjective
	t, err := logreg.Plan(cfg)
	if err != nil {
		return 0, err
	}
	return t.Params()["work_cap_ratio"], nil
}

// planConfig is the logreg configuration of the public inputs (bounds
// [−1, 1]: the plan does not depend on them).
func planConfig(in Inputs) logreg.Config {
	feats, lo, hi := make([]string, in.D), make([]float64, in.D), make([]float64, in.D)
	for j := range feats {
		feats[j], lo[j], hi[j] = "x"+strconv.Itoa(j), -1, 1
	}
	classes := make([]string, in.K)
	for c := range classes {
		classes[c] = "c" + strconv.Itoa(c)
	}
	return logreg.Config{Epsilon: in.Epsilon, Delta: in.Delta, N: in.N, Features: feats, Lo: lo, Hi: hi, Label: "y", Classes: classes}
}

// logregFits plans logreg's default release for the public inputs (size
// limits, noise range), so that auto never picks a kind DP_TRAIN would
// refuse where lda would run.
func logregFits(in Inputs) error {
	_, err := logreg.Plan(planConfig(in))
	return err
}
