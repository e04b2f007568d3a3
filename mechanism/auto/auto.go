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
// lda. Pure ε (δ = 0): lda; logreg's pure-ε variant (one Laplace step) is
// weaker on every set measured (docs/mechanisms/auto.md).
func Choose(in Inputs) (kind, why string) {
	if !in.Classification {
		return "linreg", fmt.Sprintf("regression (n=%d, d=%d): AdaSSP sufficient statistics", in.N, in.D)
	}
	if in.Delta == 0 {
		return "lda", fmt.Sprintf("classification, pure ε (n=%d, d=%d, K=%d): noisy sufficient statistics, shared covariance", in.N, in.D, in.K)
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

// logregFits plans logreg's default release for the public inputs (size
// limits, noise range), so that auto never picks a kind DP_TRAIN would
// refuse where lda would run.
func logregFits(in Inputs) error {
	feats, lo, hi := make([]string, in.D), make([]float64, in.D), make([]float64, in.D)
	for j := range feats {
		feats[j], lo[j], hi[j] = "x"+strconv.Itoa(j), -1, 1
	}
	classes := make([]string, in.K)
	for c := range classes {
		classes[c] = "c" + strconv.Itoa(c)
	}
	_, err := logreg.Plan(logreg.Config{Epsilon: in.Epsilon, Delta: in.Delta, N: in.N, Features: feats, Lo: lo, Hi: hi,
		Label: "y", Classes: classes})
	return err
}
