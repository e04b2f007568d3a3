package functions

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/auto"
)

// trainPlan is a training release planned from public inputs only: what it
// will charge, its public calibration, and the one function that reads the
// rows once the budget is reserved.
type trainPlan struct {
	fn        string // ledger function name
	kind      string // model kind
	spec      trainSpec
	reqEps    float64
	reqDelta  float64
	events    []budget.Event
	params    string             // dp_models params
	scales    map[string]float64 // public calibration, shown by dry_run
	hyper     map[string]any     // hyperparameters with defaults filled in, shown by dry_run
	mechanism string             // the mechanism in words (default: the kind)
	choice    string             // how auto chose the kind, if it did
	// train reads the rows and trains; it may update spec.n and params
	// when owners wrote since planning (re-planned on the public n read).
	train func() (*mechanism.Model, error)
	// correct, if set by the kind, counts the training rows m predicts as
	// their label on the kind's own copy of the rows (the prior
	// selection's score, equal to mechanism.Correct's); ok = false: not
	// available for this m.
	correct func(m *mechanism.Model) (n int64, ok bool)
}

// planner plans one kind of DP_TRAIN.
type planner func(e *Env, a trainArgs, delta float64) (*trainPlan, error)

// trainKinds are the kinds DP_TRAIN plans itself; svm, lmgc and lsq are
// delegated to the papers' functions (dpTrainDelegate).
var trainKinds = map[string]planner{}

// dpTrain implements DP_TRAIN('<table>', ε [, '<kind>' [, '<options>']]).
// The kind defaults to auto. Options common to every kind: label=,
// features=, model=, delta= (default: auto.DefaultDelta of the table's δ
// budget) and dry_run=1, which answers the plan as JSON without reading a
// row or charging anything.
func (e *Env) dpTrain(ctx *sql.Context, args []any) (any, error) {
	kind := auto.KindAuto
	if len(args) > 2 && args[2] != nil {
		k, err := argString(args, 2, "kind")
		if err != nil {
			return nil, err
		}
		if k = strings.ToLower(strings.TrimSpace(k)); k != "" {
			kind = k
		}
	}
	a, err := e.parseTrainArgs(ctx, dropArg(args, 2), false)
	if err != nil {
		return nil, err
	}
	dry, err := takeBool(a.opts, "dry_run")
	if err != nil {
		return nil, err
	}
	tune, err := takeBool(a.opts, "tune") // [sel2] private selection, tune.go
	if err != nil {
		return nil, err
	}
	switch kind {
	case mechanism.KindSVM, mechanism.KindLMGC, mechanism.KindLSQ:
		if tune { // [sel2]
			return nil, fmt.Errorf("tune=1 supports kinds %s, not %q", tuneKinds, kind)
		}
		delegate := func(a trainArgs) (*trainPlan, error) { return e.planDelegate(ctx, kind, a) }
		var p *trainPlan
		if kind == mechanism.KindLSQ {
			p, err = delegate(a)
		} else {
			p, err = e.planClassifier(a, kind, delegate) // issue 28: the prior rule
		}
		if err != nil {
			return nil, err
		}
		return e.runPlan(ctx, p, dry)
	}
	delta, err := e.trainDelta(a)
	if err != nil {
		return nil, err
	}
	if tune { // [sel2] tune=1: held-out selection over a public grid (tune.go)
		p, err := e.planTune(a, kind, delta)
		if err != nil {
			return nil, err
		}
		if err := a.opts.unknown(); err != nil {
			return nil, err
		}
		return e.runPlan(ctx, p, dry)
	}
	choice := ""
	if kind == auto.KindAuto {
		if kind, choice, err = e.autoKind(a, delta); err != nil {
			return nil, err
		}
	}
	pl, ok := trainKinds[kind]
	if !ok {
		return nil, fmt.Errorf("unknown kind %q for DP_TRAIN (want %s)", kind, strings.Join(trainKindNames(), ", "))
	}
	var p *trainPlan
	if kind == mechanism.KindLinReg {
		p, err = pl(e, a, delta)
	} else {
		// Issue 28: the classification kinds release their model or the
		// DP class prior (prior.go).
		p, err = e.planClassifier(a, kind, func(a trainArgs) (*trainPlan, error) { return pl(e, a, delta) })
	}
	if err != nil {
		return nil, err
	}
	p.choice = choice
	if err := a.opts.unknown(); err != nil {
		return nil, err
	}
	return e.runPlan(ctx, p, dry)
}

// trainKindNames lists every kind DP_TRAIN accepts.
func trainKindNames() []string {
	names := []string{auto.KindAuto, mechanism.KindSVM, mechanism.KindLMGC, mechanism.KindLSQ}
	for k := range trainKinds {
		names = append(names, k)
	}
	sort.Strings(names[4:])
	return names
}

// releasePlan is the training plan as a ★ release: compute trains and saves
// the model; the dry run shows the model's public description as well.
func (p *trainPlan) releasePlan(ctx *sql.Context, e *Env) *releasePlan {
	charged, chargedDelta := eventsCost(p.events)
	info := map[string]any{
		"kind": p.kind, "model": p.spec.model, "n": p.spec.n,
		"label": p.spec.label, "features": p.spec.features, "params": p.params,
		"inputs": p.spec.inputs(), "unused": p.spec.unusedList(),
	}
	if p.choice != "" {
		info["auto"] = p.choice
	}
	mech := p.mechanism
	if mech == "" {
		mech = p.kind
	}
	return &releasePlan{
		fn: p.fn, ref: p.spec.ref, reqEps: p.reqEps, reqDelta: p.reqDelta, events: p.events,
		mechanism: mech, calibration: p.scales, hyper: p.hyper, info: info,
		compute: func() (any, error) {
			m, err := p.train()
			// Every reader of the rows (box, kind, prior selection) has
			// returned: the buffers go back to the pool, zeroed.
			if p.spec.free != nil {
				p.spec.free()
				p.spec.free = nil
			}
			if err != nil {
				return nil, err
			}
			return e.saveModel(ctx, p.spec, m, p.params, charged, chargedDelta, p.reqEps)
		},
	}
}

// runPlan reserves the plan's cost, trains and saves the model; dry answers
// the plan instead.
func (e *Env) runPlan(ctx *sql.Context, p *trainPlan, dry bool) (any, error) {
	out, err := e.execute(ctx, p.releasePlan(ctx, e), dry)
	if err == nil && !dry {
		// No silent drops: every column the model does not use is named
		// (the dry run lists them under "unused").
		for _, u := range p.spec.unused {
			ctx.Warn(1105, "dp: %s: column %s of %s is not used: %s", p.fn, u.Column, p.spec.ref.key, u.Reason)
		}
	}
	return out, err
}

func eventList(evs []budget.Event) []map[string]any {
	out := make([]map[string]any, len(evs))
	for i, ev := range evs {
		m := map[string]any{"kind": ev.Kind.String(), "epsilon": ev.Epsilon, "delta": ev.Delta}
		if ev.Kind == budget.Gaussian {
			m["ratio"] = ev.Ratio
		}
		out[i] = m
	}
	return out
}

// trainDelta resolves delta=: an explicit value, or the public default from
// the table's δ budget (0, i.e. pure ε, when the table has no δ budget).
func (e *Env) trainDelta(a trainArgs) (float64, error) {
	if v, ok := a.opts.take("delta"); ok {
		d, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(d >= 0 && d < 1) {
			return 0, fmt.Errorf("delta must be a number in [0, 1), got %q", v)
		}
		return d, nil
	}
	d, left, err := e.defaultDelta(a.ref.ctx, a.ref.key)
	if err != nil {
		return 0, err
	}
	if d > 0 && left < d {
		// The budget no longer holds a default δ for this account: the
		// call runs with δ = 0 (pure ε) instead of being refused.
		if a.ref.ctx != nil {
			a.ref.ctx.Warn(1105, "dp: the δ left to you on %s (%g) is below the default δ = %g (δ_total/%d): this call runs with δ = 0 (pure ε); pass delta= to spend the rest", a.ref.key, left, d, auto.DeltaReleases)
		}
		return 0, nil
	}
	return d, nil
}

// defaultDelta is the default δ of a training on table key (δ_total/10 of
// its budget, 0 without one) and the δ the account may still spend there.
func (e *Env) defaultDelta(ctx *sql.Context, key string) (d, left float64, err error) {
	if uc := e.rt().unitCallOf(ctx); uc != nil && uc.s.key == key {
		if uc.s.fixed {
			// The second planning pass of a person-level training: its δ
			// is the one charged (the charge itself lowered the δ left).
			return uc.s.delta, uc.s.delta, nil
		}
		key = catalog.UnitPrefix + uc.s.unit // a joined source has no catalog key
	}
	key = e.Catalog.AccountKey(key) // a unit's tables share one account
	st, err := e.Budget.Status(key)
	if err != nil {
		return 0, 0, fmt.Errorf("budget of %s: %w", key, err)
	}
	d = auto.DefaultDelta(st.DeltaTotal)
	if d == 0 {
		return 0, 0, nil
	}
	me, err := e.Budget.UserStatus(key, UserOf(ctx))
	if err != nil {
		return 0, 0, fmt.Errorf("budget of %s: %w", key, err)
	}
	return d, me.DeltaLeft, nil
}

// autoKind resolves kind=auto from public quantities: the label column's
// catalog entry (a declared domain means classification), n, d, K, ε, δ.
func (e *Env) autoKind(a trainArgs, delta float64) (string, string, error) {
	classification, n, d, k, err := e.shape(a)
	if err != nil {
		return "", "", err
	}
	in := auto.Inputs{Classification: classification, N: int(n), D: d, K: k, Epsilon: a.eps, Delta: delta}
	kind, why := auto.Choose(in)
	// [pure] with δ = 0 auto's logreg is the objective method.
	if kind == "logreg" && delta == 0 {
		if _, given := a.opts["method"]; !given {
			a.opts["method"] = auto.PureMethod
		}
	}
	return kind, why, nil
}

// shape is the public shape of a training on a's table: classification
// (the label has a declared domain), n, d (encoded features) and K (the
// label's domain size), from the catalog, the schema and the row count.
// Errors in label= or features= are left to the kind's planner (d, K = 0).
func (e *Env) shape(a trainArgs) (classification bool, n int64, d, k int, err error) {
	t := e.tableEntry(a.ref)
	if lbl, ok := a.opts["label"]; ok {
		c, err := a.ref.column(lbl)
		if err != nil {
			return false, 0, 0, 0, err
		}
		_, classification = t.Labels[strings.ToLower(c)]
	} else {
		for _, c := range a.ref.schema {
			classification = classification || t.IsLabel(c.Name)
		}
	}
	if n, err = e.rowCount(a.ref.ctx, a.ref); err != nil {
		return false, 0, 0, 0, fmt.Errorf("row count of %s: %w", a.ref.key, err)
	}
	if label, err := labelColumn(a.ref, t, a.opts, classification); err == nil {
		if classification {
			k = len(t.Labels[strings.ToLower(label)])
		}
		if fs, err := featureInputs(a.ref, t, label, a.opts); err == nil {
			for _, in := range fs.inputs {
				d += in.Width()
			}
		}
	}
	return classification, n, d, k, nil
}

// takeBool removes a 0/1/true/false option.
func takeBool(o options, k string) (bool, error) {
	v, ok := o.take(k)
	if !ok {
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off", "":
		return false, nil
	}
	return false, fmt.Errorf("option %s must be 0 or 1, got %q", k, v)
}

// dropArg returns args without argument i.
func dropArg(args []any, i int) []any {
	if len(args) <= i {
		return args
	}
	out := append([]any(nil), args[:i]...)
	return append(out, args[i+1:]...)
}

// planDelegate plans the papers' mechanisms exactly as their own functions
// do: DP_TRAIN(t, ε, 'svm', 'kernel=rbf; …') is DP_SVM_TRAIN(t, ε, 'rbf',
// '…'), DP_TRAIN(t, ε, 'lsq', 'kernel=…') is DP_LSQ(t, ε, '…', '…'), and
// DP_TRAIN(t, ε, 'lmgc', '…') is DP_LMGC_TRAIN(t, ε, '…') (same ledger
// names, same defaults).
func (e *Env) planDelegate(ctx *sql.Context, kind string, a trainArgs) (*trainPlan, error) {
	if kind == mechanism.KindLMGC {
		return e.planLMGCTrain(ctx, a)
	}
	k, _ := a.opts.take("kernel")
	if k == "" {
		k = "linear"
	}
	a.kernel = strings.ToLower(k)
	if kind == mechanism.KindSVM {
		return e.planSVMTrain(ctx, a)
	}
	return e.planLSQTrain(ctx, a)
}

// String renders options back as 'k=v; k=v' (sorted keys).
func (o options) String() string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + o[k]
	}
	return strings.Join(parts, "; ")
}
