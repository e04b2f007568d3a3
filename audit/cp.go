package audit

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// cpLower is the one-sided Clopper–Pearson lower confidence bound at level a
// for a binomial proportion with k successes in n trials: the a-quantile of
// Beta(k, n−k+1), and 0 when k = 0.
func cpLower(k, n int, a float64) float64 {
	if k <= 0 {
		return 0
	}
	if k >= n {
		// Closed form of the Beta(n, 1) quantile.
		return math.Exp(math.Log(a) / float64(n))
	}
	return mathext.InvRegIncBeta(float64(k), float64(n-k+1), a)
}

// cpUpper is the one-sided Clopper–Pearson upper confidence bound at level a:
// the (1−a)-quantile of Beta(k+1, n−k), and 1 when k = n. It is computed as
// 1 − cpLower(n−k, n, a) so that small a keeps full precision.
func cpUpper(k, n int, a float64) float64 {
	if k >= n {
		return 1
	}
	if k <= 0 {
		return -math.Expm1(math.Log(a) / float64(n))
	}
	return 1 - cpLower(n-k, n, a)
}
