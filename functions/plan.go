package functions

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strconv"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/budget"
)

// releasePlan is one ★ call planned from public inputs only: the ledger
// name, what it will charge, the mechanism, its calibration and
// hyperparameters, and the one function that reads the rows once the
// budget is reserved. Every adapter builds one (every check that needs only
// public inputs runs while planning, before any charge); dry_run=1 answers
// it as JSON and the real call executes it, so the two cannot differ.
type releasePlan struct {
	fn          string // ledger function name
	ref         tableRef
	account     string // budget account charged; "": the table's own (row level)
	reqEps      float64
	reqDelta    float64
	events      []budget.Event
	mechanism   string             // what will run, in words
	calibration map[string]float64 // noise scales and sensitivities
	hyper       map[string]any     // hyperparameters, defaults filled in
	info        map[string]any     // other public facts for the dry run (n, column, model, …)
	compute     func() (any, error)
	// admit, if set, runs before the charge (memory admission of
	// person-level releases); its done func is called when the call ends.
	admit func(ctx *sql.Context) (done func(), err error)
}

// execute runs the plan: dry answers it without reading a row or charging
// anything; otherwise the budget is reserved and compute runs (release).
func (e *Env) execute(ctx *sql.Context, p *releasePlan, dry bool) (any, error) {
	if uc := e.rt().unitCallOf(ctx); uc != nil {
		uc.plan, uc.dry = p, dry // a planning pass of unittrain.go
		return nil, errCaptured
	}
	if dry {
		return e.dryRun(ctx, p)
	}
	if p.admit != nil {
		done, err := p.admit(ctx)
		if err != nil {
			return nil, err
		}
		defer done()
	}
	return e.releaseAccount(ctx, p.ref, p.accountKey(), p.fn, p.reqEps, p.reqDelta, p.events, p.compute)
}

// accountKey is the budget account the plan charges.
func (p *releasePlan) accountKey() string {
	if p.account != "" {
		return p.account
	}
	return p.ref.key
}

// dryRun describes the plan as JSON: the charge after accounting (the
// accountant's read-only Quote: basic or Rényi composition with what the
// table has spent), whether the budget and the account's quota admit it
// now, the events, the mechanism, its calibration and hyperparameters.
// Nothing is read, charged or written to dp_ledger. Everything in it is
// public (options, catalog, row count, dp_budget, the account's own quota).
func (e *Env) dryRun(ctx *sql.Context, p *releasePlan) (string, error) {
	q, err := e.QuoteRelease(ctx, p.accountKey(), p.fn, p.reqEps, p.reqDelta, p.events)
	if err != nil {
		return "", err
	}
	out := map[string]any{}
	maps.Copy(out, p.info)
	maps.Copy(out, map[string]any{
		"dry_run": true, "charged": false, "function": p.fn, "table": p.ref.key, "mechanism": p.mechanism,
		"epsilon": q.Epsilon, "delta": q.Delta, "events_epsilon": q.EventsEpsilon, "events_delta": q.EventsDelta,
		"requested_epsilon": p.reqEps, "requested_delta": p.reqDelta, "admitted": q.Admitted,
		"events": eventList(p.events), "calibration": jsonFloats(p.calibration), "hyperparameters": jsonAny(p.hyper),
	})
	if p.account != "" {
		out["account"] = p.account
	}
	if !q.Admitted {
		out["refusal"] = q.Refusal
	}
	js, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("encode dry run: %w", err)
	}
	return string(js), nil
}

// jsonFloats makes a calibration map encodable: JSON has no NaN or ±Inf,
// which are written as strings.
func jsonFloats(m map[string]float64) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = jsonFloat(v)
	}
	return out
}

func jsonAny(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if f, ok := v.(float64); ok {
			out[k] = jsonFloat(f)
		} else {
			out[k] = v
		}
	}
	return out
}

func jsonFloat(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return v
}

// dryRunOption removes dry_run from the options and reports it.
func dryRunOption(o options) (bool, error) { return takeBool(o, "dry_run") }

// executeDryRunOnly runs a ★ function whose only option (argument idx) is
// dry_run=1: the options are checked, then the plan, before anything runs.
func (e *Env) executeDryRunOnly(ctx *sql.Context, args []any, idx int, plan func(*sql.Context, []any) (*releasePlan, error)) (any, error) {
	dry, err := dryRunOnly(args, idx)
	if err != nil {
		return nil, err
	}
	p, err := plan(ctx, args)
	if err != nil {
		return nil, err
	}
	return e.execute(ctx, p, dry)
}

// optionsArgIndex is the position of the options argument of ★ functions
// whose result is a number: a dry run answers text there, so their SQL
// type is text when that argument is a literal asking for a dry run
// (call.Type).
var optionsArgIndex = map[string]int{
	"DP_MEAN": 3, "DP_QUANTILE": 4, "DP_EVALUATE": 3, "DP_LSQ_PREDICT": 3,
}

// dryRunOnly parses an options argument whose only option is dry_run=1.
func dryRunOnly(args []any, idx int) (bool, error) {
	o, err := optionsArg(args, idx)
	if err != nil {
		return false, err
	}
	dry, err := dryRunOption(o)
	if err != nil {
		return false, err
	}
	return dry, o.unknown()
}

// QuoteRelease is what a release would charge now on account (a table's
// catalog key, or catalog.UnitPrefix + a unit) for ctx's account, and
// whether its budget and quota admit it: the dry run's accounting
// (budget.Accountant.Quote), read-only — nothing charged, no ledger row.
// The EXPLAIN of a DP query shows it (dpquery).
func (e *Env) QuoteRelease(ctx *sql.Context, account, function string, reqEps, reqDelta float64, events []budget.Event) (budget.Quote, error) {
	return e.Budget.Quote(budget.Request{
		Table: account, User: UserOf(ctx), Function: function,
		Requested: [2]float64{reqEps, reqDelta}, Events: events,
	})
}
