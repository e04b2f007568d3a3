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
	cfg.Method, _ = o.take("method")
	cfg.Method = strings.ToLower(cfg.Method)
	return cfg, nil
}

// lsqArgs parses the arguments DP_LSQ and DP_LSQ_PREDICT share.
func (e *Env) lsqArgs(ctx *sql.Context, args []any) (trainArgs, lsq.Config, error) {
	a, err := e.parseTrainArgs(ctx, args, true)
	if err != nil {
		return a, lsq.Config{}, err
	}
	cfg, err := lsqConfig(a.opts, a.eps, a.kernel)
	return a, cfg, err
}

// dpLSQ implements DP_LSQ('<table>', ε, '<kernel>' [, '<options>']).
func (e *Env) dpLSQ(ctx *sql.Context, args []any) (any, error) {
	a, cfg, err := e.lsqArgs(ctx, args)
	if err != nil {
		return nil, err
	}
	ref, eps, o := a.ref, a.eps, a.opts
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
	tr, err := lsq.Plan(cfg)
	if err != nil {
		return nil, err
	}
	c := tr.Config()
	params := paramString("method", c.Method, "lambda", tr.Lambda(), "delta", c.Delta, "dim", c.Dim, "gamma", c.Gamma,
		"eta", c.Eta, "label", s.label, "features", s.features)
	charged, chargedDelta := eventsCost(tr.Events())
	return e.release(ctx, ref, "DP_LSQ", eps, cfg.Delta, tr.Events(), func() (any, error) {
		// One streaming pass over storage: sufficient statistics are
		// accumulated while the scan runs, no copy of the table is kept.
		cols := append(append([]string(nil), s.features...), s.label)
		scan := func(emit func([]float64) error) error {
			_, err := e.scanDP(ref, cols, emit)
			return err
		}
		m, err := tr.TrainStream(scan)
		if errors.Is(err, lsq.ErrRowCountChanged) {
			// Owners wrote meanwhile: recalibrate on the n now in the
			// table (public; ε unchanged) and read it in memory once.
			X, y, lerr := e.loadRegression(s)
			if lerr != nil {
				return nil, fmt.Errorf("read %s: %w", ref.key, lerr)
			}
			cfg.N, s.n = len(X), int64(len(X))
			if tr, err = lsq.Plan(cfg); err != nil {
				return nil, err
			}
			m, err = tr.Train(X, y)
		}
		if err != nil {
			return nil, err
		}
		return e.saveModel(ctx, s, m, params, charged, chargedDelta, eps)
	})
}

// dpLSQPredict implements DP_LSQ_PREDICT('<table>', ε, '<kernel>',
// '<options>', x1, …, xd): one private Nie–Wang prediction at x.
func (e *Env) dpLSQPredict(ctx *sql.Context, args []any) (any, error) {
	a, cfg, err := e.lsqArgs(ctx, args)
	if err != nil {
		return nil, err
	}
	ref, eps, o := a.ref, a.eps, a.opts
	if cfg.Method != "" {
		return nil, fmt.Errorf("DP_LSQ_PREDICT takes no method option (it is the Nie–Wang private prediction)")
	}
	s, err := e.spec(ref, o, false)
	if err != nil {
		return nil, err
	}
	if err := o.unknown(); err != nil {
		return nil, err
	}
	xq := make([]float64, len(s.features))
	if len(args)-4 != len(xq) {
		return nil, fmt.Errorf("DP_LSQ_PREDICT expects %d feature values (%s) after the options, got %d", len(xq), strings.Join(s.features, ", "), len(args)-4)
	}
	for i := range xq {
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
	return e.release(ctx, ref, "DP_LSQ_PREDICT", eps, 0, pp.Events(), func() (any, error) {
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
	})
}
