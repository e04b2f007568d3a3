package functions

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/mechanism/lmgc"
)

// dpLMGCTrain implements DP_LMGC_TRAIN('<table>', ε [, '<options>']).
func (e *Env) dpLMGCTrain(ctx *sql.Context, args []any) (any, error) {
	a, err := e.parseTrainArgs(ctx, args, false)
	if err != nil {
		return nil, err
	}
	ref, eps, o := a.ref, a.eps, a.opts
	cfg := lmgc.Config{Epsilon: eps, Stop: stopOf(ctx)}
	if cfg.Lambda, err = o.positive("lambda"); err != nil {
		return nil, err
	}
	if cfg.H, err = o.positive("h"); err != nil {
		return nil, err
	}
	s, err := e.spec(ref, o, true)
	if err != nil {
		return nil, err
	}
	if s.model, err = e.modelName(o, "lmgc", ref); err != nil {
		return nil, err
	}
	if err := o.unknown(); err != nil {
		return nil, err
	}
	cfg.N, cfg.Features, cfg.Lo, cfg.Hi, cfg.Label, cfg.Classes = int(s.n), s.features, s.lo, s.hi, s.label, s.classes
	tr, err := lmgc.Plan(cfg)
	if err != nil {
		return nil, err
	}
	charged, chargedDelta := eventsCost(tr.Events())
	params := paramString("lambda", cfg.Lambda, "h", cfg.H, "label", s.label, "features", s.features)
	return e.release(ctx, ref, "DP_LMGC_TRAIN", eps, 0, tr.Events(), func() (any, error) {
		X, y, err := e.loadClassification(s)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", ref.key, err)
		}
		if len(X) != cfg.N {
			cfg.N = len(X)
			if tr, err = lmgc.Plan(cfg); err != nil {
				return nil, err
			}
			s.n = int64(len(X))
		}
		m, err := tr.Train(X, y)
		if err != nil {
			return nil, err
		}
		return e.saveModel(ctx, s, m, params, charged, chargedDelta, eps)
	})
}
