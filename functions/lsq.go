package functions

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/lsq"
)

// lsqConfig parses the options shared by DP_LSQ and DP_LSQ_PREDICT.
func lsqConfig(o options, eps float64, kernel string) (lsq.Config, error) {
	cfg := lsq.Config{Kernel: strings.ToLower(kernel), Epsilon: eps}
	var err error
	if v, ok := o.take("lambda"); ok && !strings.EqualFold(v, "auto") {
		o["lambda"] = v
		if cfg.Lambda, err = o.float("lambda", 0); err != nil {
			return cfg, err
		}
		if !(cfg.Lambda > 0) {
			return cfg, fmt.Errorf("option lambda must be > 0 or 'auto', got %v", cfg.Lambda)
		}
	}
	if cfg.Delta, err = o.float("delta", 0); err != nil {
		return cfg, err
	}
	if cfg.Dim, err = o.positiveInt("dim"); err != nil {
		return cfg, err
	}
	if cfg.Gamma, err = o.positive("gamma"); err != nil {
		return cfg, err
	}
	if cfg.Eta, err = o.positive("eta"); err != nil {
		return cfg, err
	}
	if v, ok := o.take("center"); ok {
		switch v = strings.ToLower(strings.TrimSpace(v)); v {
		case "auto":
		case "0", "off":
			cfg.Center = lsq.CenterOff
		default:
			o["center"] = v
			if cfg.Center, err = o.float("center", 0); err != nil {
				return cfg, err
			}
			if !(cfg.Center > 0 && cfg.Center < 1) {
				return cfg, fmt.Errorf("option center must be in (0, 1), 0, off or auto, got %v", v)
			}
		}
	}
	cfg.Method, _ = o.take("method")
	cfg.Method = strings.ToLower(cfg.Method)
	return cfg, nil
}

// dpLSQ implements DP_LSQ('<table>', ε, '<kernel>' [, '<options>']);
// dry_run=1 answers the plan instead.
func (e *Env) dpLSQ(ctx *sql.Context, args []any) (any, error) {
	a, err := e.parseTrainArgs(ctx, args, true)
	if err != nil {
		return nil, err
	}
	dry, err := dryRunOption(a.opts)
	if err != nil {
		return nil, err
	}
	p, err := e.planLSQTrain(ctx, a)
	if err != nil {
		return nil, err
	}
	return e.runPlan(ctx, p, dry)
}

// planLSQTrain plans DP_LSQ (also DP_TRAIN kind lsq) from public inputs
// only. δ defaults to DP_TRAIN's public default (a share of the table's δ
// budget, 0 without one); with method, λ and η unset the mechanism picks
// method and λ by the rule of mechanism/lsq/defaults.go.
func (e *Env) planLSQTrain(ctx *sql.Context, a trainArgs) (*trainPlan, error) {
	ref, eps, o := a.ref, a.eps, a.opts
	_, explicitDelta := o["delta"]
	cfg, err := lsqConfig(o, eps, a.kernel)
	if err != nil {
		return nil, err
	}
	if !explicitDelta {
		if cfg.Delta, err = e.trainDelta(a); err != nil {
			return nil, err
		}
	}
	s, err := e.spec(ref, o, false)
	if err != nil {
		return nil, err
	}
	if s.model, err = e.modelName(o, "lsq", ref); err != nil {
		return nil, err
	}
	if err := o.unknown(); err != nil {
		return nil, err
	}
	cfg.N, cfg.Features, cfg.Lo, cfg.Hi = int(s.n), s.features, s.lo, s.hi
	cfg.Label, cfg.LabelLo, cfg.LabelHi = s.label, s.labelLo, s.labelHi
	var tr *lsq.Trainer
	exact := false
	if lsq.Pushable(cfg) && e.linearPushable(&s) {
		// Pushed-down statistics: planned for the backend's sums before
		// the charge (public: where the table lives, the kernel).
		tr, exact, err = lsq.PlanPush(cfg)
	} else {
		tr, err = lsq.Plan(cfg)
	}
	if err != nil {
		return nil, err
	}
	c := tr.Config()
	params := paramString("method", c.Method, "lambda", tr.Lambda(), "delta", c.Delta, "dim", c.Dim, "gamma", c.Gamma,
		"eta", c.Eta, "label", s.label, "features", s.features)
	hyper := map[string]any{"method": c.Method, "kernel": c.Kernel, "lambda": tr.Lambda(), "delta": c.Delta}
	if c.Kernel != lsq.KernelLinear {
		hyper["dim"], hyper["gamma"] = c.Dim, c.Gamma
	}
	if v, ok := tr.Params()["eta"]; ok {
		hyper["eta"] = v
	}
	p := &trainPlan{fn: "DP_LSQ", kind: mechanism.KindLSQ, spec: s, reqEps: eps, reqDelta: cfg.Delta, events: tr.Events(),
		params: params, scales: tr.Params(), hyper: hyper, mechanism: lsqMechanism(c.Method)}
	p.train = func() (*mechanism.Model, error) {
		if m, pushed, err := e.pushLSQ(&p.spec, tr, exact); pushed {
			return m, err
		}
		// One streaming pass over storage: sufficient statistics are
		// accumulated while the scan runs, no copy of the table is kept.
		cols := append(append([]string(nil), p.spec.features...), p.spec.label)
		scan := func(emit func([]float64) error) error {
			_, err := e.scanDP(ref, cols, emit)
			return err
		}
		var m *mechanism.Model
		err := lsq.ErrRowCountChanged
		if p.spec.enc == nil { // encoded features are read in memory below
			m, err = tr.TrainStream(scan)
		}
		if errors.Is(err, lsq.ErrRowCountChanged) {
			// Owners wrote meanwhile: recalibrate on the n now in the
			// table (public; ε, δ, the method and λ rule unchanged) and
			// read it in memory once.
			X, y, lerr := e.loadRegression(p.spec)
			if lerr != nil {
				return nil, fmt.Errorf("read %s: %w", ref.key, lerr)
			}
			again := tr.Config()
			if len(X) != again.N {
				again.N, p.spec.n = len(X), int64(len(X))
				if tr, err = lsq.Plan(again); err != nil {
					return nil, err
				}
			}
			m, err = tr.Train(X, y)
		}
		return m, err
	}
	return p, nil
}

// lsqMechanism names the release of each method.
func lsqMechanism(method string) string {
	switch method {
	case lsq.MethodObjective:
		return "Kifer et al. objective perturbation (Obj-Gauss), released through the grid-safe output step"
	case lsq.MethodInput:
		return "Fukuchi et al. input perturbation, released through the grid-safe output step"
	}
	return "Nie & Wang output perturbation of the ridge minimiser (Lemma 2 sensitivity)"
}

// dpLSQPredict implements DP_LSQ_PREDICT('<table>', ε, '<kernel>',
// '<options>', x1, …, xd): one private Nie–Wang prediction at x.
// dry_run=1 answers the plan instead.
func (e *Env) dpLSQPredict(ctx *sql.Context, args []any) (any, error) {
	a, err := e.parseTrainArgs(ctx, args, true)
	if err != nil {
		return nil, err
	}
	dry, err := dryRunOption(a.opts)
	if err != nil {
		return nil, err
	}
	cfg, err := lsqConfig(a.opts, a.eps, a.kernel)
	if err != nil {
		return nil, err
	}
	ref, eps, o := a.ref, a.eps, a.opts
	if cfg.Method != "" || cfg.Center != 0 {
		return nil, fmt.Errorf("DP_LSQ_PREDICT takes no method or center option (it is the Nie–Wang private prediction)")
	}
	s, err := e.spec(ref, o, false)
	if err != nil {
		return nil, err
	}
	if err := o.unknown(); err != nil {
		return nil, err
	}
	xq := make([]float64, len(s.features))
	cols := s.inputColumns()
	if len(args)-4 != len(cols) {
		return nil, fmt.Errorf("DP_LSQ_PREDICT expects %d feature values (%s) after the options, got %d", len(cols), strings.Join(cols, ", "), len(args)-4)
	}
	if s.enc != nil {
		xq = s.enc.Encode(xq, args[4:])
	}
	for i := range xq {
		if s.enc != nil {
			break
		}
		if xq[i], err = argFloat(args, 4+i, s.features[i]); err != nil {
			return nil, err
		}
		// x is raw; the model is fitted on the transformed scale.
		if i < len(s.reads) {
			xq[i] = mechanism.ApplyTransform(s.reads[i].Transform, xq[i])
		}
	}
	cfg.N, cfg.Features, cfg.Lo, cfg.Hi = int(s.n), s.features, s.lo, s.hi
	cfg.Label, cfg.LabelLo, cfg.LabelHi = s.label, s.labelLo, s.labelHi
	pp, err := lsq.PlanPredict(cfg)
	if err != nil {
		return nil, err
	}
	c := pp.Config()
	hyper := map[string]any{"kernel": c.Kernel, "lambda": pp.Lambda(), "x": xq}
	if c.Kernel != lsq.KernelLinear {
		hyper["dim"], hyper["gamma"] = c.Dim, c.Gamma
	}
	p := &releasePlan{fn: "DP_LSQ_PREDICT", ref: ref, reqEps: eps, events: pp.Events(),
		mechanism:   "Nie & Wang private prediction: one clipped kernel-ridge prediction + Laplace noise",
		calibration: pp.Params(), hyper: hyper,
		info: map[string]any{"n": s.n, "label": s.label, "features": s.features}}
	p.compute = func() (any, error) {
		X, y, err := e.loadRegression(s)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", ref.key, err)
		}
		if len(X) != cfg.N {
			cfg.N = len(X)
			if pp, err = lsq.PlanPredict(cfg); err != nil {
				return nil, err
			}
		}
		v, err := pp.Predict(X, y, xq)
		if err != nil {
			return nil, err
		}
		if len(s.reads) > len(s.features) {
			v = mechanism.InverseTransform(s.reads[len(s.features)].Transform, v)
		}
		return v, nil
	}
	return e.execute(ctx, p, dry)
}
