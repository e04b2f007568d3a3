package functions

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/mechanism/agg"
)

// Histogram is the JSON released by DP_HISTOGRAM.
type Histogram struct {
	Table   string  `json:"table"`
	Column  string  `json:"column"`
	Epsilon float64 `json:"epsilon"`
	Scale   float64 `json:"laplace_scale"`
	// N is the row count read (public at row level); nil on a unit's table,
	// where it is not public.
	N    *int64         `json:"n,omitempty"`
	Bins []HistogramBin `json:"bins"`
	Note string         `json:"note,omitempty"`
	// Person level (a table of a privacy unit): the unit and the bounds of
	// each person's contribution.
	Unit      string `json:"unit,omitempty"`
	MaxGroups int    `json:"max_groups_contributed,omitempty"`
	MaxRows   int    `json:"max_rows_contributed_per_group,omitempty"`
}

// HistogramBin is one bin: a domain value, or the interval [Lo, Hi).
type HistogramBin struct {
	Label string   `json:"label"`
	Lo    *float64 `json:"lo,omitempty"`
	Hi    *float64 `json:"hi,omitempty"`
	Count float64  `json:"count"`
}

// dpHistogram implements DP_HISTOGRAM('<table>', '<column>', ε [, '<options>']).
// Bins come from public information only: the column's declared domain
// (dp_labels), or bins over its declared bounds (options bins=K, equal width,
// or edges=e0,e1,…,eK inside the bounds). It is a grouped COUNT(*) with a
// public domain (mechanism/agg): a row moving between bins changes two
// counts, ℓ₁ sensitivity 2, Laplace scale 2/ε. dry_run=1 answers the plan.
func (e *Env) dpHistogram(ctx *sql.Context, args []any) (any, error) {
	p, dry, err := e.planHistogram(ctx, args)
	if err != nil {
		return nil, err
	}
	return e.execute(ctx, p, dry)
}

// planHistogram plans DP_HISTOGRAM from public inputs only (the bins).
func (e *Env) planHistogram(ctx *sql.Context, args []any) (*releasePlan, bool, error) {
	name, err := argString(args, 0, "table")
	if err != nil {
		return nil, false, err
	}
	colArg, err := argString(args, 1, "column")
	if err != nil {
		return nil, false, err
	}
	eps, err := argEpsilon(args, 2)
	if err != nil {
		return nil, false, err
	}
	opts := options{}
	if len(args) > 3 {
		s, err := argString(args, 3, "options")
		if err != nil {
			return nil, false, err
		}
		if opts, err = parseOptions(s); err != nil {
			return nil, false, err
		}
	}
	dry, err := dryRunOption(opts)
	if err != nil {
		return nil, false, err
	}
	ref, err := e.protectedTable(ctx, name)
	if err != nil {
		return nil, false, err
	}
	col, err := ref.column(colArg)
	if err != nil {
		return nil, false, err
	}
	h := &Histogram{Table: ref.key, Column: col, Epsilon: eps}
	// Public bins: the declared domain, or intervals over the bounds.
	var binOf func(v any) int
	t, _ := e.Catalog.Table(ref.key)
	kBins, err := opts.positiveInt("bins")
	if err != nil {
		return nil, false, err
	}
	edges, hasEdges := opts.list("edges")
	unit, isUnit := e.Catalog.UnitOf(ref.key)
	var maxGroups, maxRows int
	if isUnit {
		if maxGroups, err = opts.positiveInt("max_groups_contributed"); err != nil {
			return nil, false, err
		}
		if maxRows, err = opts.positiveInt("max_rows_contributed_per_group"); err != nil {
			return nil, false, err
		}
	}
	if err := opts.unknown(); err != nil {
		if !isUnit {
			return nil, false, fmt.Errorf("%w (max_groups_contributed and max_rows_contributed_per_group apply to tables of a privacy unit only)", err)
		}
		return nil, false, err
	}
	dom, hasDomain := t.Labels[strings.ToLower(col)]
	switch {
	case hasDomain && kBins == 0 && !hasEdges:
		index := map[string]int{}
		for i, v := range dom {
			index[v] = i
			h.Bins = append(h.Bins, HistogramBin{Label: v})
		}
		binOf = func(v any) int {
			if v == nil {
				return -1
			}
			if i, ok := index[LabelString(v)]; ok {
				return i
			}
			return -1
		}
	default:
		b, ok := e.Catalog.Bounds(ref.key, col)
		if !ok {
			return nil, false, fmt.Errorf("column %s of %s has neither a declared domain (dp_labels) nor bounds (dp_bounds): histogram bins must be public", col, ref.key)
		}
		var cuts []float64
		switch {
		case hasEdges && kBins > 0:
			return nil, false, fmt.Errorf("give either bins=K or edges=…, not both")
		case hasEdges:
			for _, s := range edges {
				f, err := strconv.ParseFloat(s, 64)
				if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
					return nil, false, fmt.Errorf("edge %q is not a finite number", s)
				}
				cuts = append(cuts, f)
			}
			if len(cuts) < 2 || !sort.Float64sAreSorted(cuts) {
				return nil, false, fmt.Errorf("edges must be at least two increasing numbers")
			}
			for i := 1; i < len(cuts); i++ {
				if !(cuts[i] > cuts[i-1]) {
					return nil, false, fmt.Errorf("edges must be strictly increasing")
				}
			}
		default:
			if kBins == 0 {
				kBins = 10
			}
			if kBins > agg.MaxGroups {
				return nil, false, fmt.Errorf("bins=%d exceeds %d", kBins, agg.MaxGroups)
			}
			for i := 0; i <= kBins; i++ {
				cuts = append(cuts, b.Lo+(b.Hi-b.Lo)*float64(i)/float64(kBins))
			}
		}
		read := e.Reads(ref.key, []string{col})[0]
		h.Note = fmt.Sprintf("values are clipped to the declared bounds [%v, %v] first; NULL is left out", b.Lo, b.Hi)
		if read.Transform != "" {
			h.Note = fmt.Sprintf("values are transformed by %s, then clipped to the declared bounds [%v, %v] (on the transformed scale); NULL is left out", read.Transform, b.Lo, b.Hi)
		}
		for i := 0; i+1 < len(cuts); i++ {
			lo, hi := cuts[i], cuts[i+1]
			h.Bins = append(h.Bins, HistogramBin{Label: fmt.Sprintf("[%g, %g)", lo, hi), Lo: &lo, Hi: &hi})
		}
		binOf = func(v any) int {
			f, ok := floatOf(v)
			if !ok || math.IsNaN(f) {
				return -1
			}
			f = ReadValue(read, f)
			// The bin whose [lo, hi) holds f; the top edge goes in the last
			// bin; values outside the edges are left out.
			k := len(cuts) - 1
			switch {
			case f < cuts[0] || f > cuts[k]:
				return -1
			case f == cuts[k]:
				return k - 1
			}
			i := sort.SearchFloat64s(cuts, f)
			if cuts[i] == f {
				return i
			}
			return i - 1
		}
	}
	if isUnit {
		return e.planUnitHistogram(ctx, ref, unit, h, binOf, maxGroups, maxRows, dry)
	}
	p, err := agg.New(agg.Spec{Groups: len(h.Bins), Count: true, Epsilon: eps})
	if err != nil {
		return nil, false, err
	}
	h.Scale = p.CountScale()
	labels := make([]string, len(h.Bins))
	for i, b := range h.Bins {
		labels[i] = b.Label
	}
	rp := &releasePlan{
		fn: "DP_HISTOGRAM", ref: ref, reqEps: eps, events: p.Events(),
		mechanism:   "grouped COUNT(*) over public bins + Laplace noise per bin (ℓ₁ sensitivity 2)",
		calibration: map[string]float64{"sensitivity": 2, "laplace_scale": p.CountScale()},
		hyper:       map[string]any{"bins": labels},
		info:        map[string]any{"column": col},
	}
	rp.compute = func() (any, error) {
		acc := p.Accumulator()
		if _, err := e.Store.ScanValues(ref.db, ref.table, []string{col}, func(row []any) error {
			acc.Row(binOf(row[0]), nil)
			return nil
		}); err != nil {
			return nil, fmt.Errorf("scan %s: %w", ref.key, err)
		}
		r, err := acc.Release()
		if err != nil {
			return nil, err
		}
		n := acc.N()
		h.N = &n
		for i := range h.Bins {
			h.Bins[i].Count = r.Count[i]
		}
		buf, err := json.Marshal(h)
		if err != nil {
			return nil, err
		}
		return string(buf), nil
	}
	return rp, dry, nil
}

// planUnitHistogram is DP_HISTOGRAM on a table of a privacy unit: a
// person-level grouped COUNT over the same public bins, each person's bins
// sampled down to max_groups_contributed = k and their rows per bin capped
// at max_rows_contributed_per_group = C (defaults from the compiler:
// docs/privacy/units.md §5, §8).
func (e *Env) planUnitHistogram(ctx *sql.Context, ref tableRef, u catalog.Member, h *Histogram, binOf func(any) int, k, c int, dry bool) (*releasePlan, bool, error) {
	labels := make([]string, len(h.Bins))
	for i, b := range h.Bins {
		labels[i] = b.Label
	}
	seen := make(map[string]bool, len(labels))
	for _, l := range labels {
		if seen[l] {
			return nil, false, fmt.Errorf("bin %q appears twice: bins must be distinct", l)
		}
		seen[l] = true
	}
	key, err := json.Marshal(labels)
	if err != nil {
		return nil, false, err
	}
	req := UnitRequest{Kind: UnitHistogram, Column: h.Column, Epsilon: h.Epsilon, MaxGroups: k, MaxRows: c,
		Labels: labels, BinOf: binOf, BinKey: "histogram" + string(key)}
	var rp *releasePlan
	rp, err = e.planUnit(ctx, ref, u, "DP_HISTOGRAM", req, func(v []float64) (any, error) {
		if len(v) != len(h.Bins) {
			return nil, fmt.Errorf("DP_HISTOGRAM: %d counts for %d bins", len(v), len(h.Bins))
		}
		for i := range h.Bins {
			h.Bins[i].Count = v[i]
		}
		buf, err := json.Marshal(h)
		if err != nil {
			return nil, err
		}
		return string(buf), nil
	})
	if err != nil {
		return nil, false, err
	}
	h.Unit = rp.info["unit"].(string)
	h.MaxGroups, h.MaxRows = rp.hyper["max_groups_contributed"].(int), rp.hyper["max_rows_contributed_per_group"].(int)
	h.Scale = rp.calibration["laplace_scale"]
	rp.hyper["bins"] = labels
	return rp, dry, nil
}

// HistogramRelease is DP_HISTOGRAM for the table-function form
// (SELECT * FROM DP_HISTOGRAM(…), dpquery/histtf.go): the same checks, the
// same single charged release, the result decoded.
func (e *Env) HistogramRelease(ctx *sql.Context, args []any) (*Histogram, error) {
	v, err := e.dpHistogram(ctx, args)
	if err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("DP_HISTOGRAM: unexpected result %T", v)
	}
	var h Histogram
	if err := json.Unmarshal([]byte(s), &h); err != nil {
		return nil, fmt.Errorf("DP_HISTOGRAM: decode: %w", err)
	}
	return &h, nil
}
