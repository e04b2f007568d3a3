package functions

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/mechanism"
)

// modelCache keeps decoded models; entries are checked against the
// catalog's creation time so a dropped and re-created name is reloaded.
type modelCache struct {
	mu sync.Mutex
	m  map[string]cachedModel
}

type cachedModel struct {
	created time.Time
	rec     catalog.ModelRecord
	model   *mechanism.Model
}

var cache = &modelCache{m: map[string]cachedModel{}}

// modelRef is a model argument resolved like a table name: 'm' in the
// session's current database or 'db.m'.
type modelRef struct {
	db, name string
}

func (r modelRef) String() string { return r.db + "." + r.name }

// resolveModel resolves a model argument. A bare name needs a current
// database, as a bare table name does (docs/sql.md, "Model names").
func resolveModel(ctx *sql.Context, name string) (modelRef, error) {
	// No pattern check here: DP_PREDICT resolves once per row, and a
	// name no model can have is simply not found.
	db, bare, err := qualify(ctx, name, "model")
	if err != nil {
		return modelRef{}, err
	}
	return modelRef{db: strings.ToLower(db), name: bare}, nil
}

func (e *Env) model(ref modelRef) (catalog.ModelRecord, *mechanism.Model, error) {
	rec, err := e.Catalog.Model(ref.db, ref.name)
	if err != nil {
		return rec, nil, noSuchModel(ref)
	}
	key := catalog.ModelKey(ref.db, ref.name)
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if c, ok := cache.m[key]; ok && c.created.Equal(rec.CreatedAt) {
		return c.rec, c.model, nil
	}
	var m mechanism.Model
	if err := json.Unmarshal(rec.Model, &m); err != nil {
		return rec, nil, fmt.Errorf("model %s is corrupt: %w", ref, err)
	}
	cache.m[key] = cachedModel{created: rec.CreatedAt, rec: rec, model: &m}
	return rec, &m, nil
}

func noSuchModel(ref modelRef) error {
	return fmt.Errorf("model %q does not exist", ref.String())
}

// visibleModel is model for a caller, the name resolved in the session's
// database unless qualified: a model trained on a table the account may
// not read is reported exactly like a missing one, in any database.
func (e *Env) visibleModel(ctx *sql.Context, name string) (catalog.ModelRecord, *mechanism.Model, error) {
	ref, err := resolveModel(ctx, name)
	if err != nil {
		return catalog.ModelRecord{}, nil, err
	}
	rec, m, err := e.model(ref)
	if err == nil && !e.canReadKey(ctx, rec.Table) {
		return catalog.ModelRecord{}, nil, noSuchModel(ref)
	}
	return rec, m, err
}

// dpPredict implements DP_PREDICT('<model>', x1, …, xd): post-processing of
// a released model on public rows (the guard refuses protected tables).
func (e *Env) dpPredict(ctx *sql.Context, args []any) (any, error) {
	name, err := argString(args, 0, "model")
	if err != nil {
		return nil, err
	}
	_, m, err := e.visibleModel(ctx, name)
	if err != nil {
		return nil, err
	}
	enc, err := m.Encoder()
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", name, err)
	}
	inputs := m.RawInputs()
	if len(args)-1 != len(inputs) {
		cols := make([]string, len(inputs))
		for i, in := range inputs {
			cols[i] = in.Column
		}
		return nil, fmt.Errorf("model %s expects %d input arguments (%s), got %d", name, len(inputs), strings.Join(cols, ", "), len(args)-1)
	}
	if enc != nil {
		// Raw values, NULL included: the model's public encoding applies
		// its missing-value rule (docs/sql.md, "DP_TRAIN features").
		p, err := m.PredictRaw(enc, args[1:])
		if err != nil {
			return nil, err
		}
		return predictionValue(p), nil
	}
	x := make([]float64, len(m.Features))
	for i := range x {
		if args[i+1] == nil {
			return nil, nil // NULL in, NULL out, as SQL functions do
		}
		if x[i], err = argFloat(args, i+1, m.Features[i]); err != nil {
			return nil, err
		}
	}
	p, err := m.Predict(x)
	if err != nil {
		return nil, err
	}
	return predictionValue(p), nil
}

// predictionValue is DP_PREDICT's answer: the class, or the value as text.
func predictionValue(p mechanism.Prediction) any {
	if p.IsClass {
		return p.Class
	}
	return fmt.Sprintf("%v", p.Value)
}

// dpModelJSON implements DP_MODEL_JSON('<model>'): the released weights and
// public parameters.
func (e *Env) dpModelJSON(ctx *sql.Context, args []any) (any, error) {
	name, err := argString(args, 0, "model")
	if err != nil {
		return nil, err
	}
	rec, m, err := e.visibleModel(ctx, name)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(map[string]any{
		"name": rec.Name, "db": rec.DB(), "kind": rec.Kind, "kernel": rec.Kernel, "params": rec.Params,
		"epsilon": rec.Epsilon, "delta": rec.Delta, "epsilon_requested": rec.RequestedEpsilon,
		"n": rec.N, "table": rec.Table, "created_at": rec.CreatedAt.UTC(), "model": rec.Model,
		"inputs": m.RawInputs(), // DP_PREDICT's arguments, in order, with their encoding
	})
	if err != nil {
		return nil, fmt.Errorf("encode model: %w", err)
	}
	return string(out), nil
}

// dpEvaluate implements DP_EVALUATE('<model>', '<table>', ε [, '<options>']);
// the only option is dry_run=1. On a table that is not protected (a public
// test table the account may read) the metric is exact and nothing is
// charged: scoring a released model on public rows is post-processing.
func (e *Env) dpEvaluate(ctx *sql.Context, args []any) (any, error) {
	if len(args) > 1 {
		if tname, err := argString(args, 1, "table"); err == nil {
			if ref, err := e.resolveTable(ctx, tname); err == nil && !e.isProtected(ref) {
				return e.evaluatePublic(ctx, args)
			}
		}
	}
	return e.executeDryRunOnly(ctx, args, 3, e.planEvaluate)
}

// evaluatePublic is DP_EVALUATE on an unprotected table: the exact metric,
// no charge, no ledger entry (dry_run=1 says so).
func (e *Env) evaluatePublic(ctx *sql.Context, args []any) (any, error) {
	dry, err := dryRunOnly(args, 3)
	if err != nil {
		return nil, err
	}
	p, err := e.planEvaluate(ctx, args)
	if err != nil {
		return nil, err
	}
	if dry {
		out := map[string]any{"dry_run": true, "charged": false, "function": p.fn, "table": p.ref.key,
			"epsilon": 0.0, "delta": 0.0, "public_table": true,
			"mechanism": "none: the test table is not protected, the metric is exact (post-processing of the released model)"}
		maps.Copy(out, p.info)
		js, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("encode dry run: %w", err)
		}
		return string(js), nil
	}
	return p.compute()
}

// planEvaluate plans DP_EVALUATE from public inputs: the model (its
// label bounds) and the test table's schema and row count.
func (e *Env) planEvaluate(ctx *sql.Context, args []any) (*releasePlan, error) {
	name, err := argString(args, 0, "model")
	if err != nil {
		return nil, err
	}
	tname, err := argString(args, 1, "table")
	if err != nil {
		return nil, err
	}
	eps, err := argEpsilon(args, 2)
	if err != nil {
		return nil, err
	}
	_, m, err := e.visibleModel(ctx, name)
	if err != nil {
		return nil, err
	}
	ref, err := e.resolveTable(ctx, tname)
	if err != nil {
		return nil, err
	}
	public := !e.isProtected(ref)
	if m, ok := e.Catalog.UnitOf(ref.key); ok && !public && ref.sample == nil {
		return nil, errRowLevelOnUnit(ref.key, m, "DP_EVALUATE")
	}
	enc, err := m.Encoder()
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", name, err)
	}
	inputs := m.RawInputs()
	cols := make([]string, 0, len(inputs)+1)
	for _, in := range inputs {
		c, err := ref.column(in.Column)
		if err != nil {
			return nil, fmt.Errorf("test table must have the model's feature columns: %w", err)
		}
		cols = append(cols, c)
	}
	labelCol, err := ref.column(m.Label)
	if err != nil {
		return nil, fmt.Errorf("test table must have the model's label column: %w", err)
	}
	cols = append(cols, labelCol)
	regression := mechanism.IsRegression(m.Kind)
	ev, err := mechanism.NewEvaluation(eps, regression, m.LabelLo, m.LabelHi)
	if err != nil {
		return nil, err
	}
	n, err := e.rows(ref).RowCount(ref.db, ref.table)
	if err != nil {
		return nil, fmt.Errorf("row count of %s: %w", ref.key, err)
	}
	metric := "accuracy: (correct + Laplace)/n"
	if regression {
		metric = "RMSE: sqrt(max(0, SSE + Laplace)/n), predictions and labels clipped to the label bounds"
	}
	p := &releasePlan{
		fn: "DP_EVALUATE:" + name, ref: ref, reqEps: eps, events: []budget.Event{ev.Event()},
		mechanism:   metric,
		calibration: map[string]float64{"sensitivity": ev.Sensitivity(max(n, 1)), "laplace_scale": ev.Scale(max(n, 1))},
		hyper:       map[string]any{"model": name, "model_kind": m.Kind},
		info:        map[string]any{"n": n},
	}
	p.compute = func() (any, error) {
		score := ev.Score()
		d := len(inputs)
		x := make([]float64, d)
		var xe []float64
		stop := scanCheck(ctx)
		_, err := e.rows(ref).ScanValues(ref.db, ref.table, cols, func(row []any) error {
			if err := stop(); err != nil {
				return err
			}
			var p mechanism.Prediction
			var err error
			if enc != nil {
				xe = enc.Encode(xe, row[:d])
				p, err = m.Predict(xe)
			} else {
				for j := 0; j < d; j++ {
					f, ok := floatOf(row[j])
					if !ok {
						f = nanValue
					}
					x[j] = f
				}
				p, err = m.Predict(x)
			}
			if err != nil {
				return err
			}
			if regression {
				y, ok := floatOf(row[d])
				if !ok {
					y = nanValue
				}
				// Residuals on the scale the label bounds are declared on.
				lt := m.LabelTransform
				score.AddResidual(mechanism.ApplyTransform(lt, p.Value), mechanism.ApplyTransform(lt, y))
			} else {
				score.AddCorrect(row[d] != nil && LabelString(row[d]) == p.Class)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", ref.key, err)
		}
		if public {
			return score.Exact()
		}
		return score.Release()
	}
	return p, nil
}

var nanValue = math.NaN()

// floatOf converts a stored value to float64; NULL and non-numbers fail.
func floatOf(v any) (float64, bool) {
	if v == nil {
		return 0, false
	}
	f, err := argFloat([]any{v}, 0, "")
	return f, err == nil
}
