package auto

import "fmt"

// KindAuto is the kind name that asks for this package's choice.
const KindAuto = "auto"

// DeltaShare is the share of a table's δ budget that one training release
// uses by default: ten default releases fit in the budget.
const DeltaShare = 0.1

// DefaultDelta is the δ of a training release when the analyst gives none:
// DeltaShare of the table's δ budget, or 0 (pure ε) when it has none.
func DefaultDelta(deltaTotal float64) float64 {
	if !(deltaTotal > 0) {
		return 0
	}
	return deltaTotal * DeltaShare
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
