package functions

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/svm"
)

// dpSVMTrain implements DP_SVM_TRAIN('<table>', ε, '<kernel>' [, '<options>']).
//
// Every option is checked by svm.Plan before the budget is reserved. Once
// the rows are read, Train runs a number of gradient steps fixed by the
// plan and has no error that depends on them (docs/mechanisms/svm.md §9).
// dry_run=1 answers the plan instead.
func (e *Env) dpSVMTrain(ctx *sql.Context, args []any) (any, error) {
	a, err := e.parseTrainArgs(ctx, args, true)
	if err != nil {
		return nil, err
	}
	dry, err := dryRunOption(a.opts)
	if err != nil {
		return nil, err
	}
	p, err := e.planSVMTrain(ctx, a)
	if err != nil {
		return nil, err
	}
	return e.runPlan(ctx, p, dry)
}

// planSVMTrain plans DP_SVM_TRAIN (also DP_TRAIN kind svm) from public
// inputs only.
func (e *Env) planSVMTrain(ctx *sql.Context, a trainArgs) (*trainPlan, error) {
	ref, eps, o := a.ref, a.eps, a.opts
	cfg := svm.Config{Kernel: a.kernel, Epsilon: eps, Stop: stopOf(ctx)}
	var err error
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
	// δ defaults like DP_TRAIN's (a public share of the table's δ budget,
	// 0 without one): with δ > 0 the K one-vs-rest vectors are one Gaussian
	// release instead of K Laplace releases at ε/K each (svm.md).
	_, explicitDelta := o["delta"]
	if cfg.Delta, err = o.float("delta", 0); err != nil {
		return nil, err
	}
	if !explicitDelta {
		if cfg.Delta, err = e.trainDelta(a); err != nil {
			return nil, err
		}
	}
	cfg.Loss, _ = o.take("loss")
	s, err := e.spec(ref, o, true)
	if err != nil {
		return nil, err
	}
	if s.model, err = e.modelName(o, "svm", ref); err != nil {
		return nil, err
	}
	cfg.N, cfg.Features, cfg.Lo, cfg.Hi, cfg.Label, cfg.Classes = int(s.n), s.features, s.lo, s.hi, s.label, s.classes
	// box=private|public (default: box.UsePrivate, as DP_TRAIN's
	// classification kinds): the SVM's calibration does not depend on the
	// bounds (rows are scaled into the unit box), so it is planned at the
	// box split's ε and re-planned on the released box (svm.md §10).
	bmode, bst, err := boxMode(o, &s, eps, cfg.Delta)
	if err != nil {
		return nil, err
	}
	if err := o.unknown(); err != nil {
		return nil, err
	}
	cfg.Epsilon = bst.kindEps(eps)
	tr, err := svm.Plan(cfg)
	if err != nil {
		return nil, err
	}
	events, err := bst.planCharge(tr.Events(), cfg.N, cfg.Lo, cfg.Hi)
	if err != nil {
		return nil, err
	}
	hyper := svmHyper(tr)
	hyper["box"], hyper["box_rule"] = bmode, bst.describe(bmode)
	p := &trainPlan{fn: "DP_SVM_TRAIN", kind: mechanism.KindSVM, spec: s, reqEps: eps, reqDelta: cfg.Delta, events: events,
		params: svmParams(tr, bmode, s.label, s.features), scales: svmScales(tr), hyper: hyper,
		mechanism: "Rubinstein et al. private SVM: output perturbation of the regularised hinge/Huber minimiser"}
	p.train = func() (*mechanism.Model, error) {
		X, y, err := e.classificationData(&p.spec)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", ref.key, err)
		}
		again := tr.Config()
		if len(X) != cfg.N {
			// Owners wrote meanwhile: recalibrate on the n actually read
			// (n is public; ε, δ, C, d̂ and T are kept as announced).
			again.N, again.Iterations = len(X), tr.Iterations()
			p.spec.n = int64(len(X))
		}
		if bst != nil {
			// The released box is public: the SVM is re-planned on it
			// with everything else as announced.
			again.Iterations = tr.Iterations()
			if again.Lo, again.Hi, err = bst.release(X, cfg.Lo, cfg.Hi); err != nil {
				return nil, err
			}
		}
		if len(X) != cfg.N || bst != nil {
			if tr, err = svm.Plan(again); err != nil {
				return nil, err
			}
			p.params = svmParams(tr, bmode, p.spec.label, p.spec.features)
		}
		m, err := tr.Train(X, y)
		bst.params(m)
		return m, err
	}
	return p, nil
}

// svmScales is the public calibration shown by a dry run.
func svmScales(tr *svm.Trainer) map[string]float64 {
	return map[string]float64{"sensitivity": tr.Sensitivity(), "scale": tr.Scale(),
		"epsilon_per_model": tr.EpsilonPerModel(), "models": float64(tr.Models()), "features": float64(tr.Dim()),
		"iterations": float64(tr.Iterations()), "step": tr.Step()}
}

// svmHyper is the configuration with defaults filled in.
func svmHyper(tr *svm.Trainer) map[string]any {
	c := tr.Config()
	h := map[string]any{"kernel": c.Kernel, "C": c.C, "loss": c.Loss, "delta": c.Delta}
	if c.Loss == svm.LossHuber {
		h["h"] = c.HuberH
	}
	if c.Dim > 0 {
		h["dim"], h["gamma"] = c.Dim, c.Gamma
	}
	return h
}

// svmParams is the dp_models description of a release: the public
// configuration with defaults filled in, and the noise calibration.
func svmParams(tr *svm.Trainer, boxMode, label string, features []string) string {
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
		"noise", noise, "scale", tr.Scale(), "box", boxMode, "label", label, "features", features)
	return paramString(kv...)
}
