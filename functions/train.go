package functions

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/mechanism"
)

// trainSpec is the public description of a training set: which columns, and
// their declared bounds and label domain. Nothing here is read from rows.
type trainSpec struct {
	ref      tableRef
	features []string
	lo, hi   []float64
	label    string
	classes  []string // classification: declared label domain
	labelLo  float64  // regression: declared label bounds
	labelHi  float64
	// reads: how DP reads see the features (then, for regression, the
	// label): public transforms and clipping (dpread.go).
	reads []catalog.Read
	n     int64
	model string // name for the released model
}

// featureReads returns the reads of the feature columns (none if the spec
// was built without them: then values are read raw, already in bounds).
func (s *trainSpec) featureReads() []catalog.Read {
	return s.reads[:min(len(s.reads), len(s.features))]
}

// spec resolves label= and features= from the catalog.
func (e *Env) spec(ref tableRef, o options, classification bool) (trainSpec, error) {
	s := trainSpec{ref: ref}
	t, _ := e.Catalog.Table(ref.key)
	if lbl, ok := o.take("label"); ok {
		c, err := ref.column(lbl)
		if err != nil {
			return s, err
		}
		s.label = c
	} else if classification {
		var withDomain []string
		for _, c := range ref.schema {
			if _, ok := t.Labels[strings.ToLower(c.Name)]; ok {
				withDomain = append(withDomain, c.Name)
			}
		}
		if len(withDomain) != 1 {
			return s, fmt.Errorf("cannot choose the label column: %d columns of %s have a declared label domain; pass label=<column>", len(withDomain), ref.key)
		}
		s.label = withDomain[0]
	} else {
		// Regression: the last column with declared bounds.
		for _, c := range ref.schema {
			if _, ok := t.Bounds[strings.ToLower(c.Name)]; ok {
				s.label = c.Name
			}
		}
		if s.label == "" {
			return s, fmt.Errorf("no column of %s has declared bounds; pass label=<column> and declare its bounds", ref.key)
		}
	}
	if classification {
		dom, ok := t.Labels[strings.ToLower(s.label)]
		if !ok {
			return s, fmt.Errorf("label column %s of %s has no declared label domain (CALL dp_labels first)", s.label, ref.key)
		}
		if len(dom) < 2 {
			return s, fmt.Errorf("label domain of %s.%s has %d value(s); a classifier needs at least 2", ref.key, s.label, len(dom))
		}
		s.classes = dom
	} else {
		b, ok := t.Bounds[strings.ToLower(s.label)]
		if !ok {
			return s, fmt.Errorf("label column %s of %s has no declared bounds (CALL dp_bounds first)", s.label, ref.key)
		}
		s.labelLo, s.labelHi = b.Lo, b.Hi
	}
	if fs, ok := o.list("features"); ok {
		if len(fs) == 0 {
			return s, fmt.Errorf("features= lists no columns")
		}
		seen := map[string]bool{}
		for _, f := range fs {
			c, err := ref.column(f)
			if err != nil {
				return s, err
			}
			if strings.EqualFold(c, s.label) {
				return s, fmt.Errorf("column %s is the label and cannot also be a feature", c)
			}
			if seen[strings.ToLower(c)] {
				return s, fmt.Errorf("feature %s listed twice", c)
			}
			seen[strings.ToLower(c)] = true
			b, ok := t.Bounds[strings.ToLower(c)]
			if !ok {
				return s, fmt.Errorf("feature column %s of %s has no declared bounds (CALL dp_bounds first)", c, ref.key)
			}
			s.features, s.lo, s.hi = append(s.features, c), append(s.lo, b.Lo), append(s.hi, b.Hi)
		}
	} else {
		for _, c := range ref.schema {
			if strings.EqualFold(c.Name, s.label) {
				continue
			}
			if b, ok := t.Bounds[strings.ToLower(c.Name)]; ok {
				s.features, s.lo, s.hi = append(s.features, c.Name), append(s.lo, b.Lo), append(s.hi, b.Hi)
			}
		}
		if len(s.features) == 0 {
			return s, fmt.Errorf("no feature columns: declare bounds on the feature columns of %s (CALL dp_bounds)", ref.key)
		}
	}
	s.reads = e.Reads(ref.key, s.features)
	if !classification {
		s.reads = append(s.reads, t.ReadOf(s.label))
	}
	n, err := e.rowCount(ref.ctx, ref)
	if err != nil {
		return s, fmt.Errorf("row count of %s: %w", ref.key, err)
	}
	if n < 1 {
		return s, fmt.Errorf("table %s is empty", ref.key)
	}
	s.n = n
	return s, nil
}

// modelName resolves model= or picks the next free <kind>_<table>_<k>. The
// name is reserved for the running query (runtime.go) before anything is
// charged, so concurrent trainings cannot both pay for one name.
func (e *Env) modelName(o options, kind string, ref tableRef) (string, error) {
	if name, ok := o.take("model"); ok {
		if !identRE.MatchString(name) {
			return "", fmt.Errorf("model name %q must be 1–64 letters, digits, _ or $", name)
		}
		if err := e.reserveModelName(ref.ctx, name); err != nil {
			return "", err
		}
		return name, nil
	}
	return e.freeModelName(ref.ctx, fmt.Sprintf("%s_%s", kind, strings.ToLower(ref.table))), nil
}

// loadClassification reads features and class indices in one snapshot.
// Labels outside the domain (impossible after dp_labels validation, but
// NULL is allowed) map to class 0: a fixed, data-independent rule.
func (e *Env) loadClassification(s trainSpec) ([][]float64, []int, error) {
	d := len(s.features)
	index := map[string]int{}
	for i, c := range s.classes {
		index[c] = i
	}
	X := make([][]float64, 0, s.n)
	y := make([]int, 0, s.n)
	var backing []float64
	row := func() []float64 {
		if len(backing) < d {
			backing = make([]float64, d*4096)
		}
		r := backing[:d:d]
		backing = backing[d:]
		return r
	}
	cols := append(append([]string(nil), s.features...), s.label)
	labelIdx := s.ref.schema.IndexOfColName(s.label)
	if labelIdx >= 0 && isNumeric(s.ref.schema[labelIdx].Type) {
		_, err := e.Store.ScanFloats(s.ref.db, s.ref.table, cols, func(v []float64) error {
			r := row()
			copy(r, v[:d])
			readRow(s.featureReads(), r)
			X = append(X, r)
			cls := 0
			if !math.IsNaN(v[d]) {
				cls = index[LabelString(v[d])]
			}
			y = append(y, cls)
			return nil
		})
		return X, y, err
	}
	_, err := e.Store.ScanValues(s.ref.db, s.ref.table, cols, func(v []any) error {
		r := row()
		for j := 0; j < d; j++ {
			f, ok := floatOf(v[j])
			if !ok {
				f = nanValue
			}
			r[j] = f
		}
		readRow(s.featureReads(), r)
		X = append(X, r)
		cls := 0
		if v[d] != nil {
			cls = index[LabelString(v[d])]
		}
		y = append(y, cls)
		return nil
	})
	return X, y, err
}

// loadRegression reads features and the numeric label in one snapshot.
func (e *Env) loadRegression(s trainSpec) ([][]float64, []float64, error) {
	d := len(s.features)
	X := make([][]float64, 0, s.n)
	y := make([]float64, 0, s.n)
	backing := make([]float64, 0)
	cols := append(append([]string(nil), s.features...), s.label)
	_, err := e.Store.ScanFloats(s.ref.db, s.ref.table, cols, func(v []float64) error {
		readRow(s.reads, v)
		if len(backing) < d {
			backing = make([]float64, d*4096)
		}
		r := backing[:d:d]
		backing = backing[d:]
		copy(r, v[:d])
		X = append(X, r)
		y = append(y, v[d])
		return nil
	})
	return X, y, err
}

// saveModel records a released model in the catalog.
func (e *Env) saveModel(ctx *sql.Context, s trainSpec, m *mechanism.Model, params string, eps, delta, reqEps float64) (string, error) {
	m.Label, m.Features = s.label, s.features
	// The model applies the features' public transforms to raw rows at
	// prediction; training read them already transformed (dpread.go).
	sc, err := m.Scaler.WithTransforms(transformsOf(s.featureReads()))
	if err != nil {
		return "", err
	}
	m.Scaler = sc
	if len(s.reads) > len(s.features) {
		m.LabelTransform = s.reads[len(s.features)].Transform
	}
	js, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encode model: %w", err)
	}
	rec := catalog.ModelRecord{
		Name: s.model, Kind: m.Kind, Kernel: m.Kernel, Params: params,
		Epsilon: eps, Delta: delta, RequestedEpsilon: reqEps, N: s.n, Table: s.ref.key,
		Creator: UserOf(ctx), CreatedAt: time.Now().UTC(), Model: js,
	}
	// Saved only if the release has not been killed meanwhile (atomically).
	if err := e.commit(ctx, func() error { return e.Catalog.PutModel(rec) }); err != nil {
		return "", err
	}
	return s.model, nil
}

// paramString renders hyperparameters for dp_models.
func paramString(kv ...any) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%v=", kv[i])
		switch v := kv[i+1].(type) {
		case float64:
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		case []string:
			b.WriteString(strings.Join(v, ","))
		default:
			fmt.Fprintf(&b, "%v", v)
		}
	}
	return b.String()
}

// eventsCost sums the (ε, δ) of a release's events under basic composition,
// the figure recorded in dp_models.
func eventsCost(events []budget.Event) (eps, delta float64) {
	for _, ev := range events {
		eps += ev.Epsilon
		delta += ev.Delta
	}
	return eps, delta
}

// trainArgs are the leading arguments every training function shares:
// '<table>', ε [, '<kernel>'] [, '<options>'].
type trainArgs struct {
	ref    tableRef
	eps    float64
	kernel string
	opts   options
}

// parseTrainArgs parses them; withKernel says whether argument 3 is a kernel.
func (e *Env) parseTrainArgs(ctx *sql.Context, args []any, withKernel bool) (trainArgs, error) {
	var a trainArgs
	name, err := argString(args, 0, "table")
	if err != nil {
		return a, err
	}
	if a.eps, err = argEpsilon(args, 1); err != nil {
		return a, err
	}
	next := 2
	if withKernel {
		k, err := argString(args, 2, "kernel")
		if err != nil {
			return a, err
		}
		a.kernel, next = strings.ToLower(k), 3
	}
	if a.opts, err = optionsArg(args, next); err != nil {
		return a, err
	}
	a.ref, err = e.protectedTable(ctx, name)
	return a, err
}

// optionsArg parses an optional options string (NULL or ” = none).
func optionsArg(args []any, i int) (options, error) {
	if len(args) <= i || args[i] == nil {
		return options{}, nil
	}
	if s, ok := args[i].(string); ok && strings.TrimSpace(s) == "" {
		return options{}, nil
	}
	s, err := argString(args, i, "options")
	if err != nil {
		return nil, err
	}
	return parseOptions(s)
}
