package functions

import (
	"encoding/json"
	"fmt"
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

func (e *Env) model(name string) (catalog.ModelRecord, *mechanism.Model, error) {
	rec, err := e.Catalog.Model(name)
	if err != nil {
		return rec, nil, fmt.Errorf("model %q does not exist", name)
	}
	key := strings.ToLower(name)
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if c, ok := cache.m[key]; ok && c.created.Equal(rec.CreatedAt) {
		return c.rec, c.model, nil
	}
	var m mechanism.Model
	if err := json.Unmarshal(rec.Model, &m); err != nil {
		return rec, nil, fmt.Errorf("model %q is corrupt: %w", name, err)
	}
	cache.m[key] = cachedModel{created: rec.CreatedAt, rec: rec, model: &m}
	return rec, &m, nil
}

// visibleModel is model for a caller: a model trained on a table the
// account may not read is reported exactly like a missing one.
func (e *Env) visibleModel(ctx *sql.Context, name string) (catalog.ModelRecord, *mechanism.Model, error) {
	rec, m, err := e.model(name)
	if err == nil && !e.canReadKey(ctx, rec.Table) {
		return catalog.ModelRecord{}, nil, fmt.Errorf("model %q does not exist", name)
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
	if len(args)-1 != len(m.Features) {
		return nil, fmt.Errorf("model %s expects %d feature arguments (%s), got %d", name, len(m.Features), strings.Join(m.Features, ", "), len(args)-1)
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
	if p.IsClass {
		return p.Class, nil
	}
	return fmt.Sprintf("%v", p.Value), nil
}

// dpModelJSON implements DP_MODEL_JSON('<model>'): the released weights and
// public parameters.
func (e *Env) dpModelJSON(ctx *sql.Context, args []any) (any, error) {
	name, err := argString(args, 0, "model")
	if err != nil {
		return nil, err
	}
	rec, _, err := e.visibleModel(ctx, name)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(map[string]any{
		"name": rec.Name, "kind": rec.Kind, "kernel": rec.Kernel, "params": rec.Params,
		"epsilon": rec.Epsilon, "delta": rec.Delta, "epsilon_requested": rec.RequestedEpsilon,
		"n": rec.N, "table": rec.Table, "created_at": rec.CreatedAt.UTC(), "model": rec.Model,
	})
	if err != nil {
		return nil, fmt.Errorf("encode model: %w", err)
	}
	return string(out), nil
}

// dpEvaluate implements DP_EVALUATE('<model>', '<table>', ε [, '<options>']);
// the only option is dry_run=1.
func (e *Env) dpEvaluate(ctx *sql.Context, args []any) (any, error) {
	return e.executeDryRunOnly(ctx, args, 3, e.planEvaluate)
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
	ref, err := e.protectedTable(ctx, tname)
	if err != nil {
		return nil, err
	}
	cols := make([]string, 0, len(m.Features)+1)
	for _, f := range m.Features {
		c, err := ref.column(f)
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
	n, err := e.Store.RowCount(ref.db, ref.table)
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
		d := len(m.Features)
		x := make([]float64, d)
		stop := scanCheck(ctx)
		_, err := e.Store.ScanValues(ref.db, ref.table, cols, func(row []any) error {
			if err := stop(); err != nil {
				return err
			}
			for j := 0; j < d; j++ {
				f, ok := floatOf(row[j])
				if !ok {
					f = nanValue
				}
				x[j] = f
			}
			p, err := m.Predict(x)
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
