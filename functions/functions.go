package functions

import "github.com/dolthub/go-mysql-server/sql"

// Functions returns the DP_* SQL functions. withLimits (limits.go) adds the
// memory limit and per-call cleanup to every budget-spending one.
func (e *Env) Functions() []sql.Function {
	return e.withLimits([]sql.Function{
		function("DP_MEAN", 3, 4, true, doubleType, e.dpMean),
		function("DP_HISTOGRAM", 3, 4, true, textType, e.dpHistogram),
		function("DP_QUANTILE", 4, 5, true, doubleType, e.dpQuantile),
		function("DP_EVALUATE", 3, 4, true, doubleType, e.personLevel("DP_EVALUATE", 1, 2, e.dpEvaluate)),
		function("DP_SVM_TRAIN", 3, 4, true, textType, e.personLevel("DP_SVM_TRAIN", 0, 1, e.dpSVMTrain)),
		function("DP_LSQ", 3, 4, true, textType, e.personLevel("DP_LSQ", 0, 1, e.dpLSQ)),
		function("DP_LSQ_PREDICT", 5, -1, true, doubleType, e.personLevel("DP_LSQ_PREDICT", 0, 1, e.dpLSQPredict)),
		function("DP_LMGC_TRAIN", 2, 3, true, textType, e.personLevel("DP_LMGC_TRAIN", 0, 1, e.dpLMGCTrain)),
		function("DP_TRAIN", 2, 4, true, textType, e.personLevel("DP_TRAIN", 0, 1, e.dpTrain)),
		function("DP_PREDICT", 2, -1, false, textType, e.dpPredict),
		function("DP_MODEL_JSON", 1, 1, false, textType, e.dpModelJSON),
	})
}
