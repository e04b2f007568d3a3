package functions

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/mechanism/svm"
)

// dpSVMTrain implements DP_SVM_TRAIN('<table>', ε, '<kernel>' [, '<options>']).
//
// Every option is checked by svm.Plan before the budget is reserved. Once
// the rows are read, Train runs a number of gradient steps fixed by the
// plan and has no error that depends on them (docs/mechanisms/svm.md §9).
func (e *Env) dpSVMTrain(ctx *sql.Context, args []any) (any, error) {
	a, err := e.parseTrainArgs(ctx, args, true)
	if err != nil {
		return nil, err
	}
	ref, eps, o := a.ref, a.eps, a.opts
	cfg := svm.Config{Kernel: a.kernel, Epsilon: eps, Stop: stopOf(ctx)}
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
	if cfg.Delta, err = o.float("delta", 0); err != nil {
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
	return e.release(ctx, ref, "DP_SVM_TRAIN", eps, cfg.Delta, tr.Events(), func() (any, error) {
		X, y, err := e.loadClassification(s)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", ref.key, err)
		}
		if len(X) != cfg.N {
			// Owners wrote meanwhile: recalibrate on the n actually read
			// (n is public; ε, δ, C, d̂ and T are kept as announced).
			again := tr.Config()
			again.N, again.Iterations = len(X), tr.Iterations()
			if tr, err = svm.Plan(again); err != nil {
				return nil, err
			}
			s.n = int64(len(X))
		}
		m, err := tr.Train(X, y)
		if err != nil {
			return nil, err
		}
		charged, chargedDelta := eventsCost(tr.Events())
		return e.saveModel(ctx, s, m, svmParams(tr, s.label, s.features), charged, chargedDelta, eps)
	})
}

// svmParams is the dp_models description of a release: the public
// configuration with defaults filled in, and the noise calibration.
func svmParams(tr *svm.Trainer, label string, features []string) string {
	c := tr.Config()
	noise := "laplace"
	if tr.Gaussian() {
		noise = "gaussian"
	}
	kv := []any{"C", c.C, "loss", c.Loss}
	if c.Loss == svm.LossHuber {
		kv = append(kv, "h", c.HuberH)
	}
	if c.Dim > 0 {
		kv = append(kv, "dim", c.Dim, "gamma", c.Gamma)
	}
	kv = append(kv, "delta", c.Delta, "iterations", tr.Iterations(), "sensitivity", tr.Sensitivity(),
		"noise", noise, "scale", tr.Scale(), "label", label, "features", features)
	return paramString(kv...)
}
