package auto_test

// The measurement harness behind the `auto` rule (docs/mechanisms/auto.md):
// it trains each candidate with DP_TRAIN's defaults on synthetic problems
// and on shared/ TRAINING splits (k-fold inside the training split; the
// held-out 20 % of gauss's public-seed split is never read). It is a
// benchmark, not a test: it runs only when AUTO_HARNESS=1.
//
//	AUTO_HARNESS=1 nice -n 10 go test -run TestAutoHarness -v -timeout 3h ./mechanism/auto/
//
// Environment: AUTO_CANDS (comma list, default "lda,logreg"; a candidate is
// a kind with optional /key=value overrides: logreg/T=300/c=0.5/hs=30,
// lda/ms=0.5), AUTO_EPS (default 1), AUTO_DELTA (comma list, default
// "1e-6,0"), AUTO_N (default "1000,10000,100000"), AUTO_D ("10,40"),
// AUTO_K ("2,5,20"), AUTO_RUNS (default 3), AUTO_SETS ("synthetic,shared"),
// AUTO_OUT (CSV path, default stdout only), AUTO_MAJOR (comma list of
// class-0 shares for imbalanced synthetic sets, default "0" = balanced; the
// other classes share the rest equally). A candidate with /guard=1 runs
// DP_TRAIN's prior rule around the kind (docs/mechanisms/prior.md §2: the
// DP class prior alone, or the kind at 90 % of ε with a private selection
// against the prior); /guard=2 the rule before the resolution condition
// (n·ε/(F·K′) < 0.5 only).

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/gauss"
	"github.com/dpsql/dpsql/mechanism/logreg"
)

func envList(key, def string) []string {
	v := os.Getenv(key)
	if v == "" {
		v = def
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func envFloats(tb testing.TB, key, def string) []float64 {
	var out []float64
	for _, s := range envList(key, def) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			tb.Fatalf("%s: %v", key, err)
		}
		out = append(out, f)
	}
	return out
}

// candidate parses "kind/key=value/…" into a trainer.
type candidate struct {
	name string
	kind string
	opt  map[string]float64
}

func parseCandidate(tb testing.TB, s string) candidate {
	parts := strings.Split(s, "/")
	c := candidate{name: s, kind: parts[0], opt: map[string]float64{}}
	for _, p := range parts[1:] {
		kv := strings.SplitN(p, "=", 2)
		if len(kv) != 2 {
			tb.Fatalf("candidate %q: bad option %q", s, p)
		}
		f, err := strconv.ParseFloat(kv[1], 64)
		if err != nil {
			tb.Fatalf("candidate %q: %v", s, err)
		}
		c.opt[kv[0]] = f
	}
	return c
}

// train runs the candidate's mechanism with DP_TRAIN defaults plus the
// overrides (all public constants).
func (c candidate) train(tr *dataset, eps, delta float64) (*mechanism.Model, error) {
	if g := c.opt["guard"]; g != 0 {
		return c.guarded(tr, eps, delta, g == 2)
	}
	switch c.kind {
	case "lda", "qda", "gnb":
		t, err := gauss.Plan(gauss.Config{Kind: c.kind, Epsilon: eps, Delta: delta, N: len(tr.x), Features: tr.features,
			Lo: tr.lo, Hi: tr.hi, Label: "label", Classes: tr.classes, MomentShare: c.opt["ms"]})
		if err != nil {
			return nil, err
		}
		return t.Train(tr.x, tr.y)
	case "logreg":
		cfg := logreg.Config{Epsilon: eps, Delta: delta, N: len(tr.x), Features: tr.features, Lo: tr.lo, Hi: tr.hi,
			Label: "label", Classes: tr.classes, Steps: int(c.opt["T"])}
		if c.opt["obj"] == 1 { // pure-ε objective perturbation; lam = λ override, rs = ridge scale multiplier
			cfg.Method, cfg.Lambda = logreg.MethodObjective, c.opt["lam"]
			t, err := logreg.Plan(cfg)
			if err != nil {
				return nil, err
			}
			return t.Train(tr.x, tr.y)
		}
		kp := len(tr.classes)
		lip := math.Sqrt2
		if kp == 2 {
			kp, lip = 1, 1
		}
		if c.opt["plain"] == 1 { // the plain averaged-GD rule (before issue 28 item 5)
			cfg.StepRule = logreg.StepPlain
		}
		if c.opt["nest"] == 1 { // the accelerated rule without preconditioning (before h/bohning)
			cfg.StepRule = logreg.StepNesterov
		}
		if c.opt["old"] == 1 && delta > 0 { // the default before h/bohning: ⌈2√T₀⌉ Nesterov steps of 200 where the cap binds
			pc := cfg
			pc.StepRule = logreg.StepPlain
			t0, err := logreg.Plan(pc)
			if err != nil {
				return nil, err
			}
			steps := float64(t0.Config().Steps)
			tau := uncappedHorizon(len(tr.x), len(tr.features)+1, kp, t0.Params()["row_bound"], eps, delta, logreg.HorizonScale, t0)
			cfg.StepRule = logreg.StepPlain
			if steps > logreg.DefaultSteps && tau > logreg.MaxStepSize*steps {
				cfg.StepRule, cfg.Steps = logreg.StepNesterov, int(math.Ceil(logreg.NesterovFactor*math.Sqrt(steps)))
				cfg.Horizon = logreg.MaxStepSize * float64(cfg.Steps)
			}
		}
		if c.opt["pc"] == 1 { // the preconditioned rule (h/bohning), also with T= given
			cfg.StepRule = logreg.StepPreconditioned
		}
		if v, ok := c.opt["c"]; ok { // clip as a fraction of L
			cfg.Clip = v * lip
		}
		if hs, ok := c.opt["hs"]; ok { // horizon scale: τ = hs·n·R/(L_C√(K′F)), capped at 200·T
			t0, err := logreg.Plan(cfg)
			if err != nil {
				return nil, err
			}
			steps := float64(t0.Config().Steps)
			cfg.Horizon = math.Min(logreg.MaxStepSize*steps, uncappedHorizon(len(tr.x), len(tr.features)+1, kp, t0.Params()["row_bound"], eps, delta, hs, t0))
		}
		if v, ok := c.opt["tau"]; ok {
			cfg.Horizon = v
		}
		t, err := logreg.Plan(cfg)
		if err != nil {
			return nil, err
		}
		return t.Train(tr.x, tr.y)
	}
	return nil, fmt.Errorf("unknown candidate kind %q", c.kind)
}

// guarded is functions/prior.go's planClassifier on the harness's data:
// the same public rule and shares, the same mechanism calls.
func (c candidate) guarded(tr *dataset, eps, delta float64, ratioOnly bool) (*mechanism.Model, error) {
	n, d, k := int64(len(tr.x)), len(tr.features), len(tr.classes)
	alone := mechanism.PriorAlone(n, d, k, eps)
	if ratioOnly {
		alone = mechanism.PriorRatio(n, d, k, eps) < mechanism.PriorMinRatio
	}
	if alone {
		class, err := mechanism.PriorClass(tr.y, k, eps)
		if err != nil {
			return nil, err
		}
		return mechanism.NewPriorModel(&mechanism.Model{Features: tr.features, Classes: tr.classes}, class), nil
	}
	inner := candidate{name: c.name, kind: c.kind, opt: map[string]float64{}}
	for key, v := range c.opt {
		if key != "guard" {
			inner.opt[key] = v
		}
	}
	epsShare := eps * mechanism.PriorShare
	m, err := inner.train(tr, eps-2*epsShare, delta)
	if err != nil {
		return nil, err
	}
	class, err := mechanism.PriorClass(tr.y, k, epsShare)
	if err != nil {
		return nil, err
	}
	prior := mechanism.NewPriorModel(m, class)
	cm, err := mechanism.Correct(m, tr.x, tr.y)
	if err != nil {
		return nil, err
	}
	cp, err := mechanism.Correct(prior, tr.x, tr.y)
	if err != nil {
		return nil, err
	}
	useModel, err := mechanism.SelectModel(cm, cp, epsShare)
	if err != nil || !useModel {
		return prior, err
	}
	return m, nil
}

// uncappedHorizon evaluates τ = hs·n·R/(L_C√(K′F)) with R from the plan's
// noise (δ > 0: the unit Gaussian ratio).
func uncappedHorizon(n, f, kp int, lipC, eps, delta, hs float64, t0 *logreg.Trainer) float64 {
	var snr float64
	if delta > 0 {
		unit, err := mechanism.GaussianSigma(1, eps, delta)
		if err != nil {
			return 1
		}
		snr = 1 / unit
	} else {
		b := t0.Params()["laplace_scale"]
		snr = 2 * lipC * math.Sqrt(float64(t0.Config().Steps)) / (math.Sqrt2 * b)
	}
	return math.Max(1, hs*float64(n)*snr/(lipC*math.Sqrt(float64(kp*f))))
}

type harnessOut struct {
	f *os.File
}

func (h *harnessOut) row(tb testing.TB, fields ...any) {
	s := make([]string, len(fields))
	for i, v := range fields {
		switch x := v.(type) {
		case float64:
			s[i] = strconv.FormatFloat(x, 'g', 6, 64)
		default:
			s[i] = fmt.Sprint(x)
		}
	}
	line := strings.Join(s, ",")
	tb.Log(line)
	if h.f != nil {
		fmt.Fprintln(h.f, line)
	}
}

func TestAutoHarness(t *testing.T) {
	if os.Getenv("AUTO_HARNESS") != "1" {
		t.Skip("benchmark harness: set AUTO_HARNESS=1 (docs/mechanisms/auto.md)")
	}
	var cands []candidate
	for _, s := range envList("AUTO_CANDS", "lda,logreg") {
		cands = append(cands, parseCandidate(t, s))
	}
	eps := envFloats(t, "AUTO_EPS", "1")
	deltas := envFloats(t, "AUTO_DELTA", "1e-6,0")
	runs, _ := strconv.Atoi(os.Getenv("AUTO_RUNS"))
	if runs <= 0 {
		runs = 3
	}
	out := &harnessOut{}
	if p := os.Getenv("AUTO_OUT"); p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out.f = f
	}
	sets := map[string]bool{}
	for _, s := range envList("AUTO_SETS", "synthetic,shared") {
		sets[s] = true
	}
	eval := func(set string, n, d, k int, tr, te *dataset) {
		out.row(t, set, n, d, k, 0, 0, "np_lda", 0, fitLDA(tr).accuracy(te))
		out.row(t, set, n, d, k, 0, 0, "majority", 0, majority(tr, te))
		for _, e := range eps {
			for _, dl := range deltas {
				for _, c := range cands {
					for r := 0; r < runs; r++ {
						m, err := c.train(tr, e, dl)
						if err != nil {
							t.Logf("%s %s ε=%v δ=%v: %v", set, c.name, e, dl, err)
							break
						}
						out.row(t, set, n, d, k, e, dl, c.name, r, accuracy(t, m, te))
					}
				}
			}
		}
	}
	if sets["synthetic"] {
		ns := envFloats(t, "AUTO_N", "1000,10000,100000")
		ds := envFloats(t, "AUTO_D", "10,40")
		ks := envFloats(t, "AUTO_K", "2,5,20")
		for _, major := range envFloats(t, "AUTO_MAJOR", "0") {
			for _, df := range ds {
				for _, kf := range ks {
					d, k := int(df), int(kf)
					seed := uint64(1 + 100*d + 10000*k)
					sep := calibrateSep(d, k, seed, 0.9) // calibrated on balanced classes
					g := newSynth(synthSpec{d: d, k: k, sep: sep, noise: 0.05, seed: seed, major: major})
					te := g.draw(10000, seed+7, true)
					t.Logf("d=%d K=%d sep=%.4f major=%v", d, k, sep, major)
					name := fmt.Sprintf("syn_d%d_K%d", d, k)
					if major > 0 {
						name += fmt.Sprintf("_maj%g", major)
					}
					for _, nf := range ns {
						n := int(nf)
						tr := g.draw(n, seed+uint64(n), true)
						eval(name, n, d, k, tr, te)
					}
				}
			}
		}
	}
	if sets["shared"] {
		for _, name := range envList("AUTO_SHARED", "breast_cancer,digits,dna,ticdata,vehicle,vowel,iris,wine") {
			full := loadDataset(t, name)
			trIdx, _ := splitIdx(len(full.x), 12345, 0.8) // the 20 % test part is never used
			train := full.subset(trIdx)
			// 4-fold cross-validation inside the training split.
			const folds = 4
			perm, _ := splitIdx(len(train.x), 777, 1)
			for f := 0; f < folds; f++ {
				var a, b []int
				for i, p := range perm {
					if i%folds == f {
						b = append(b, p)
					} else {
						a = append(a, p)
					}
				}
				tr, te := train.subset(a), train.subset(b)
				eval(name+"_cv"+strconv.Itoa(f), len(tr.x), len(tr.features), len(tr.classes), tr, te)
			}
		}
	}
}
