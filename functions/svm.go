package functions

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/mechanism/svm"
)

// dpSVMTrain implements DP_SVM_TRAIN('<table>', ε, '<kernel>' [, '<options>']).
func (e *Env) dpSVMTrain(ctx *sql.Context, args []any) (any, error) {
	a, err := e.parseTrainArgs(ctx, args, true)
	if err != nil {
		return nil, err
	}
	ref, eps, o := a.ref, a.eps, a.opts
	cfg := svm.Config{Kernel: a.kernel, Epsilon: eps}
	if cfg.C, err = o.positive("c"); err != nil {
		return nil, err
	}
	if cfg.Dim, err = o.positiveInt("dim"); err != nil {
		return nil, err
	}
	if cfg.Gamma, err = o.positive("gamma"); err != nil {
		return nil, err
	}
	if cfg.HuberH, err = o.positive("h"); err != nil {
		return nil, err
	}
	cfg.Loss, _ = o.take("loss")
	s, err := e.spec(ref, o, true)
	if err != nil {
		return nil, err
	}
	if s.model, err = e.modelName(o, "svm", ref); err != nil {
		return nil, err
	}
	if err := o.unknown(); err != nil {
		return nil, err
	}
	cfg.N, cfg.Features, cfg.Lo, cfg.Hi, cfg.Label, cfg.Classes = int(s.n), s.features, s.lo, s.hi, s.label, s.classes
	tr, err := svm.Plan(cfg)
	if err != nil {
		return nil, err
	}
	c := tr.Config()
	params := paramString("C", c.C, "loss", c.Loss, "dim", c.Dim, "gamma", c.Gamma, "label", s.label, "features", s.features,
		"scale", tr.Scale(), "tau", tr.Tolerance())
	return e.release(ctx, ref, "DP_SVM_TRAIN", eps, 0, tr.Events(), func() (any, error) {
		X, y, err := e.loadClassification(s)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", ref.key, err)
		}
		if len(X) != cfg.N {
			// Owners wrote meanwhile: recalibrate on the n actually read
			// (n is public; ε is unchanged).
			cfg.N = len(X)
			if tr, err = svm.Plan(cfg); err != nil {
				return nil, err
			}
			s.n = int64(len(X))
		}
		m, err := tr.Train(X, y)
		if err != nil {
			return nil, err
		}
		charged, chargedDelta := eventsCost(tr.Events())
		return e.saveModel(ctx, s, m, params, charged, chargedDelta, eps)
	})
}
