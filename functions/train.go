package functions

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/internal/bigmem"
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
	// enc, when set, encodes the raw input columns (categorical, missing
	// indicators) into features; nil: features are the raw columns.
	enc    *mechanism.Encoder
	unused []unusedColumn
	// X, y are the rows a classification read (classificationData), kept
	// for the prior selection (prior.go).
	X [][]float64
	y []int
	// free gives X's buffers back (classificationData); the release calls
	// it once the model is trained, nil when nothing was read.
	free func()
}

// inputs describes the raw input columns in DP_PREDICT order with their
// public encoding (dry run, DP_MODEL_JSON).
func (s *trainSpec) inputs() []mechanism.Input {
	if s.enc != nil {
		return s.enc.Inputs
	}
	out := make([]mechanism.Input, len(s.features))
	for j, f := range s.features {
		out[j] = mechanism.Input{Column: f, Encoding: mechanism.EncodeNumeric, Lo: s.lo[j], Hi: s.hi[j]}
		if j < len(s.reads) {
			out[j].Transform = s.reads[j].Transform
		}
	}
	return out
}

// unusedList is unused, never nil (JSON: [] rather than null).
func (s *trainSpec) unusedList() []unusedColumn {
	if s.unused == nil {
		return []unusedColumn{}
	}
	return s.unused
}

// inputColumns are the raw columns a training reads for its features.
func (s *trainSpec) inputColumns() []string {
	if s.enc == nil {
		return s.features
	}
	out := make([]string, len(s.enc.Inputs))
	for i, in := range s.enc.Inputs {
		out[i] = in.Column
	}
	return out
}

// featureReads returns the reads of the feature columns (none if the spec
// was built without them: then values are read raw, already in bounds).
func (s *trainSpec) featureReads() []catalog.Read {
	return s.reads[:min(len(s.reads), len(s.features))]
}

// spec resolves label=, features= and missing= from the catalog
// (docs/sql.md, "DP_TRAIN features"): the label, every feature column with
// declared bounds (numeric) or a declared domain (categorical, one-hot from
// the domain), and every other column named as unused with the reason.
func (e *Env) spec(ref tableRef, o options, classification bool) (trainSpec, error) {
	s := trainSpec{ref: ref}
	t := e.tableEntry(ref)
	lbl, err := labelColumn(ref, t, o, classification)
	if err != nil {
		return s, err
	}
	o.take("label")
	s.label = lbl
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
	fs, err := featureInputs(ref, t, s.label, o)
	if err != nil {
		return s, err
	}
	o.take("features")
	o.take("missing")
	s.unused = fs.unused
	if fs.encoded {
		enc, err := mechanism.NewEncoder(fs.inputs)
		if err != nil {
			return s, err
		}
		s.enc = enc
		s.features = enc.Features()
		s.lo, s.hi = enc.Bounds()
		// The encoder applies transforms and clipping itself: the
		// encoded coordinates are read as they are.
		s.reads = make([]catalog.Read, len(s.features))
	} else {
		for _, in := range fs.inputs {
			s.features, s.lo, s.hi = append(s.features, in.Column), append(s.lo, in.Lo), append(s.hi, in.Hi)
		}
		s.reads = e.readsOf(ref, s.features)
	}
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

// labelColumn resolves the label from label= (not consumed) or the
// catalog: classification takes the one column declared with dp_labels
// (dp_domain columns are categorical features, not label candidates);
// regression the last column with declared bounds.
func labelColumn(ref tableRef, t catalog.Table, o options, classification bool) (string, error) {
	if lbl, ok := o["label"]; ok {
		return ref.column(lbl)
	}
	if classification {
		var labels []string
		for _, c := range ref.schema {
			if t.IsLabel(c.Name) {
				labels = append(labels, c.Name)
			}
		}
		if len(labels) != 1 {
			return "", fmt.Errorf("cannot choose the label column: %d columns of %s are declared as labels (CALL dp_labels; dp_domain declares categorical features); pass label=<column>", len(labels), ref.key)
		}
		return labels[0], nil
	}
	label := ""
	for _, c := range ref.schema {
		if _, ok := t.Bounds[strings.ToLower(c.Name)]; ok {
			label = c.Name
		}
	}
	if label == "" {
		return "", fmt.Errorf("no column of %s has declared bounds; pass label=<column> and declare its bounds", ref.key)
	}
	return label, nil
}

// unusedColumn is a column of the table a training does not read, and why.
type unusedColumn struct {
	Column string `json:"column"`
	Reason string `json:"reason"`
}

// featureSet is the resolved features= of a training.
type featureSet struct {
	inputs  []mechanism.Input
	unused  []unusedColumn
	encoded bool // some input is categorical or has a missing indicator
}

// Missing-value rules of numeric features (option missing=).
const (
	missingFill      = "fill"      // NULL → the midpoint of the declared bounds
	missingIndicator = "indicator" // and a 0/1 coordinate for nullable columns
)

// featureInputs resolves features= and missing= (neither consumed) into
// the raw inputs and their public encoding: a column with declared bounds
// is numeric, one with a declared domain (dp_domain, or dp_labels when not
// the label) categorical. Without features= every such column but the
// label and the primary key is a feature; every other column is listed in
// unused with the reason.
func featureInputs(ref tableRef, t catalog.Table, label string, o options) (featureSet, error) {
	var fs featureSet
	missing := missingFill
	if v, ok := o["missing"]; ok {
		switch v = strings.ToLower(strings.TrimSpace(v)); v {
		case missingFill, missingIndicator:
			missing = v
		default:
			return fs, fmt.Errorf("missing must be %q or %q, got %q", missingFill, missingIndicator, v)
		}
	}
	input := func(c *sql.Column) (mechanism.Input, string) {
		col := strings.ToLower(c.Name)
		if b, ok := t.Bounds[col]; ok {
			in := mechanism.Input{Column: c.Name, Encoding: mechanism.EncodeNumeric, Lo: b.Lo, Hi: b.Hi, Transform: t.Transforms[col]}
			in.Indicator = missing == missingIndicator && c.Nullable
			return in, ""
		}
		if dom, ok := t.Labels[col]; ok {
			// NULL (and a value outside the domain) is the all-zeros
			// block: after the kinds' map of [0, 1] to [−1, 1] it is a
			// point of its own (the reference level of dummy coding), so
			// a NULL coordinate would only add a dimension (encoding.md §3).
			return mechanism.Input{Column: c.Name, Encoding: mechanism.EncodeOneHot, Levels: dom}, ""
		}
		return mechanism.Input{}, "no declared bounds (dp_bounds) or domain (dp_domain)"
	}
	listed := map[string]bool{}
	if v, ok := o["features"]; ok {
		var names []string
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				names = append(names, p)
			}
		}
		if len(names) == 0 {
			return fs, fmt.Errorf("features= lists no columns")
		}
		for _, f := range names {
			c, err := ref.column(f)
			if err != nil {
				return fs, err
			}
			if strings.EqualFold(c, label) {
				return fs, fmt.Errorf("column %s is the label and cannot also be a feature", c)
			}
			if listed[strings.ToLower(c)] {
				return fs, fmt.Errorf("feature %s listed twice", c)
			}
			listed[strings.ToLower(c)] = true
			in, why := input(ref.schema[ref.schema.IndexOfColName(c)])
			if why != "" {
				return fs, fmt.Errorf("feature column %s of %s has %s", c, ref.key, why)
			}
			fs.inputs = append(fs.inputs, in)
		}
		for _, c := range ref.schema {
			if !listed[strings.ToLower(c.Name)] && !strings.EqualFold(c.Name, label) {
				fs.unused = append(fs.unused, unusedColumn{c.Name, "not listed in features="})
			}
		}
	} else {
		for _, c := range ref.schema {
			if strings.EqualFold(c.Name, label) {
				continue
			}
			if c.PrimaryKey {
				fs.unused = append(fs.unused, unusedColumn{c.Name, "primary key (a row identifier; name it in features= to use it)"})
				continue
			}
			in, why := input(c)
			if why != "" {
				fs.unused = append(fs.unused, unusedColumn{c.Name, why})
				continue
			}
			fs.inputs = append(fs.inputs, in)
		}
		if len(fs.inputs) == 0 {
			return fs, fmt.Errorf("no feature columns: declare bounds (CALL dp_bounds) or a domain (CALL dp_domain) on the feature columns of %s", ref.key)
		}
	}
	for _, in := range fs.inputs {
		fs.encoded = fs.encoded || in.Encoding == mechanism.EncodeOneHot || in.Indicator
	}
	return fs, nil
}

// modelName resolves model= or picks the next free <kind>_<table>_<k> in
// the database of the training table, which the model will belong to. The
// name is reserved for the running query (runtime.go) before anything is
// charged, so concurrent trainings cannot both pay for one name.
func (e *Env) modelName(o options, kind string, ref tableRef) (string, error) {
	if name, ok := o.take("model"); ok {
		if db, _, ok := strings.Cut(name, "."); ok {
			// A model belongs to the database of its training table.
			if !strings.EqualFold(strings.Trim(db, "`"), ref.db) {
				return "", fmt.Errorf("model=%s: a model belongs to the database of its training table (%s); write model=<name> or model=%s.<name>", name, ref.db, ref.db)
			}
			name = strings.Trim(name[len(db)+1:], "`")
		}
		if !identRE.MatchString(name) {
			return "", fmt.Errorf("model name %q must be 1–64 letters, digits, _ or $", name)
		}
		if err := e.reserveModelName(ref.ctx, ref.db, name); err != nil {
			return "", err
		}
		return name, nil
	}
	return e.freeModelName(ref.ctx, ref.db, fmt.Sprintf("%s_%s", kind, strings.ToLower(ref.table))), nil
}

// rowBlock hands out rows of width d as views into one block sized for the
// n rows planned (public), advised for huge pages (internal/bigmem): one
// allocation instead of one per 4096 rows, and the first writes of a
// 160 MB read (10⁶ × 20) fault 2 MiB at a time instead of 4 KiB. Rows
// beyond n (owners wrote since planning) come from blocks of 4096 rows.
type rowBlock struct {
	d    int
	free []float64
}

func newRowBlock(n int64, d int) *rowBlock {
	return &rowBlock{d: d, free: bigmem.Make[float64](int(max(n, 0)) * d)}
}

// next returns the next row, zeroed, of length and capacity d.
func (b *rowBlock) next() []float64 {
	if len(b.free) < b.d {
		b.free = make([]float64, b.d*4096)
	}
	r := b.free[:b.d:b.d]
	b.free = b.free[b.d:]
	return r
}

// scanRows reads cols of ref's table in one snapshot on several cores when
// rows can (ParallelFloats; ok = false otherwise, nothing read): alloc gets
// the snapshot's row count first, then set(i, v, r) fills row i's d values
// r (a view into one slab per core from internal/bigmem's pool) from the
// decoded columns v, and X[i] = r; free gives X and the slabs back. A row whose set panicked (RowSafe) is
// left out as the serial scan leaves it out: X is compacted, with move
// called to shift the caller's per-row entries alike.
func scanRows(rows Rows, ref tableRef, cols []string, d int, alloc func(n int64), set func(i int64, v, r []float64), move func(dst, src int)) ([][]float64, func(), bool, error) {
	p, ok := rows.(ParallelFloats)
	if !ok {
		return nil, nil, false, nil
	}
	var X [][]float64
	var slabs [][]float64
	per := 1
	_, ok, err := p.ScanFloatsParallel(ref.db, ref.table, cols, func(n int64) error {
		// make zeroes what it allocates, on one core: the rows come in one
		// slab per core, zeroed at once (≈ 0.1 s of 190 MB at 10⁶ × 20).
		parts := max(1, runtime.GOMAXPROCS(0))
		per = max(1, (int(n)+parts-1)/parts)
		slabs = make([][]float64, parts)
		var wg sync.WaitGroup
		for w := range slabs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				slabs[w] = bigmem.Get[float64](min(per, max(int(n)-w*per, 0)) * d)
			}()
		}
		X = bigmem.Get[[]float64](int(n))
		alloc(n)
		wg.Wait()
		return nil
	}, func(i int64, v []float64) {
		o := (int(i) % per) * d
		r := slabs[int(i)/per][o : o+d : o+d]
		set(i, v, r)
		X[i] = r
	})
	if !ok {
		return nil, nil, false, nil
	}
	free := func() {
		bigmem.Put(X)
		for _, sl := range slabs {
			bigmem.Put(sl)
		}
	}
	kept := 0
	for i, r := range X {
		if r != nil {
			if kept != i {
				X[kept] = r
				move(kept, i)
			}
			kept++
		}
	}
	return X[:kept], free, true, err
}

// loadClassification reads features and class indices in one snapshot.
// free gives the row buffers back to internal/bigmem's pool (zeroed there)
// once nothing reads X or y any more; not calling it leaves them to the
// collector.
// Labels outside the domain (impossible after dp_labels validation, but
// NULL is allowed) map to class 0: a fixed, data-independent rule.
func (e *Env) loadClassification(s trainSpec) ([][]float64, []int, func(), error) {
	d := len(s.features)
	index := map[string]int{}
	for i, c := range s.classes {
		index[c] = i
	}
	cols := append(append([]string(nil), s.features...), s.label)
	labelIdx := s.ref.schema.IndexOfColName(s.label)
	if labelIdx >= 0 && isNumeric(s.ref.schema[labelIdx].Type) && s.enc == nil {
		nums := classNumbers(s.classes)
		reads := s.featureReads()
		var ys []int
		X, free, ok, err := scanRows(e.rows(s.ref), s.ref, cols, d, func(n int64) { ys = bigmem.Get[int](int(n)) },
			func(i int64, v, r []float64) {
				copy(r, v[:d])
				readRow(reads, r)
				ys[i] = classOfNumber(nums, v[d])
			}, func(dst, src int) { ys[dst] = ys[src] })
		if ok {
			return X, ys[:len(X)], func() { free(); bigmem.Put(ys) }, err
		}
	}
	// Serial scans (an attached table, the person-level sample, text labels).
	X := bigmem.Make[[]float64](int(max(s.n, 0)))[:0]
	y := bigmem.Make[int](int(max(s.n, 0)))[:0]
	row := newRowBlock(s.n, d).next
	if s.enc != nil {
		err := e.loadEncoded(s, func(v any, _ float64) { y = append(y, classOf(index, v)) }, func(r []float64) { X = append(X, r) }, row)
		return X, y, func() {}, err
	}
	if labelIdx >= 0 && isNumeric(s.ref.schema[labelIdx].Type) {
		nums := classNumbers(s.classes)
		_, err := e.rows(s.ref).ScanFloats(s.ref.db, s.ref.table, cols, func(v []float64) error {
			r := row()
			copy(r, v[:d])
			readRow(s.featureReads(), r)
			X = append(X, r)
			y = append(y, classOfNumber(nums, v[d]))
			return nil
		})
		return X, y, func() {}, err
	}
	_, err := e.rows(s.ref).ScanValues(s.ref.db, s.ref.table, cols, func(v []any) error {
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
	return X, y, func() {}, err
}

// classNumbers returns, per class, the one number whose LabelString is the
// class, NaN where no number spells it ("1.0", "-0", "abc"): LabelString
// of a number is its integer digits or its shortest round-trip form, so
// LabelString(v) = c implies ParseFloat(c) = v (−0 and 0 both spell "0",
// and compare equal).
func classNumbers(classes []string) []float64 {
	out := make([]float64, len(classes))
	for k, c := range classes {
		f, err := strconv.ParseFloat(c, 64)
		if err != nil || LabelString(f) != c {
			f = math.NaN()
		}
		out[k] = f
	}
	return out
}

// classOfNumber is index[LabelString(v)] (class 0 for NaN = NULL and for a
// number outside the domain, the rule of classOf) for nums =
// classNumbers(classes), at a fixed cost: one comparison per class, no
// formatting (whose time depends on the digits) and no map. The numbers of
// distinct classes differ, so at most one matches.
func classOfNumber(nums []float64, v float64) int {
	cls := 0
	for k, c := range nums {
		cls |= k & -b2i(v == c)
	}
	return cls
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// classOf is the class index of a raw label: NULL (and a value outside the
// domain, which dp_labels and inserts refuse) is class 0, a fixed public
// rule that keeps the row, so n stays the public row count.
func classOf(index map[string]int, v any) int {
	if v == nil {
		return 0
	}
	return index[LabelString(v)]
}

// loadEncoded reads the raw input columns and the label in one snapshot,
// encodes each row by s.enc into a row from alloc and hands it with the
// raw label (and the label as a number, NaN if NULL or not one) to label
// and add.
func (e *Env) loadEncoded(s trainSpec, label func(raw any, num float64), add func([]float64), alloc func() []float64) error {
	cols := append(s.inputColumns(), s.label)
	k := len(cols) - 1
	_, err := e.rows(s.ref).ScanValues(s.ref.db, s.ref.table, cols, func(v []any) error {
		r := s.enc.Encode(alloc(), v[:k])
		add(r)
		num, ok := mechanism.NumberOf(v[k])
		if !ok {
			num = nanValue
		}
		label(v[k], num)
		return nil
	})
	return err
}

// loadRegression reads features and the numeric label in one snapshot.
func (e *Env) loadRegression(s trainSpec) ([][]float64, []float64, error) {
	d := len(s.features)
	cols := append(append([]string(nil), s.features...), s.label)
	if s.enc == nil {
		var ys []float64
		X, _, ok, err := scanRows(e.rows(s.ref), s.ref, cols, d, func(n int64) { ys = bigmem.Make[float64](int(n)) },
			func(i int64, v, r []float64) {
				readRow(s.reads, v)
				copy(r, v[:d])
				ys[i] = v[d]
			}, func(dst, src int) { ys[dst] = ys[src] })
		if ok {
			return X, ys[:len(X)], err
		}
	}
	// Serial scans (an attached table, the person-level sample, encoded inputs).
	X := bigmem.Make[[]float64](int(max(s.n, 0)))[:0]
	y := bigmem.Make[float64](int(max(s.n, 0)))[:0]
	alloc := newRowBlock(s.n, d).next
	if s.enc != nil {
		lr := s.reads[len(s.reads)-1]
		err := e.loadEncoded(s, func(_ any, num float64) { y = append(y, ReadValue(lr, num)) }, func(r []float64) { X = append(X, r) }, alloc)
		return X, y, err
	}
	_, err := e.rows(s.ref).ScanFloats(s.ref.db, s.ref.table, cols, func(v []float64) error {
		readRow(s.reads, v)
		r := alloc()
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
	if s.enc != nil {
		m.Inputs = s.enc.Inputs
	}
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
	if u := s.ref.sample; u != nil {
		// Trained at person level on m rows (units.md §10); m is public.
		params += paramString("privacy_unit", u.unit, "rows", "one per person", "m", u.m, "persons_count_epsilon", u.oneRow.Eps1)
		if u.source != "" {
			params += "; " + paramString("source", u.key)
		}
	}
	rec := catalog.ModelRecord{
		Name: s.model, Kind: m.Kind, Kernel: m.Kernel, Params: params,
		Epsilon: eps, Delta: delta, RequestedEpsilon: reqEps, N: s.n, Table: s.ref.recordTable(),
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
	a.ref, err = e.rowLevelTable(ctx, name, "a training")
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
