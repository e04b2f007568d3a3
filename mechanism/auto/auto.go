package auto

import (
	"fmt"
	"math"
)

// KindAuto is the kind name that asks for this package's choice.
const KindAuto = "auto"

// DeltaReleases is how many default training releases fit in a table's δ
// budget: each uses δ_total/DeltaReleases.
const DeltaReleases = 10

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

// Choose returns the kind DP_TRAIN trains for kind=auto and a one-line
// reason (shown by dry_run and recorded in dp_models).
//
// Regression: linreg (AdaSSP), which reached the non-private RMSE on every
// shared/ and synthetic set at n ≥ 10⁴ and is never worse than the mean
// predictor by more than noise (docs/results/linreg.md). Classification:
// lda, the one-pass Gaussian classifier from noisy sufficient statistics
// (docs/results/gauss.md, docs/results/accuracy.md).
func Choose(in Inputs) (kind, why string) {
	if !in.Classification {
		return "linreg", fmt.Sprintf("regression (n=%d, d=%d): AdaSSP sufficient statistics", in.N, in.D)
	}
	return "lda", fmt.Sprintf("classification (n=%d, d=%d, K=%d): noisy sufficient statistics, shared covariance", in.N, in.D, in.K)
}
