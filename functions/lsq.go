package functions

import (
	"errors"

	"github.com/dolthub/go-mysql-server/sql"
)

// dpLSQ implements DP_LSQ (wired when the lsq mechanism lands).
func (e *Env) dpLSQ(ctx *sql.Context, args []any) (any, error) {
	return nil, errors.New("DP_LSQ is not available yet")
}

// dpLSQPredict implements DP_LSQ_PREDICT.
func (e *Env) dpLSQPredict(ctx *sql.Context, args []any) (any, error) {
	return nil, errors.New("DP_LSQ_PREDICT is not available yet")
}
