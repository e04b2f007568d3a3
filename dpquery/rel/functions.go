package rel

import (
	"fmt"
	"strings"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/mechanism/bound"
)

// Functions compiles DP functions on a table of a privacy unit into
// person-level queries of this compiler (functions.UnitCompiler,
// docs/privacy/units.md §8): one mechanism, one proof.
//
//	DP_MEAN(t, x, ε)          ≡ SELECT AVG(x) FROM t
//	DP_HISTOGRAM(t, x, ε, …)  ≡ SELECT bin(x), COUNT(*) FROM t GROUP BY bin(x)
//	                            over the public bins, with k and C
//	DP_QUANTILE(t, x, q, ε, …) ≡ the scan of x with persons, then
//	                            mechanism/bound's quantile (C values per person)
type Functions struct {
	Meta Meta
	Src  Source
}

var _ functions.UnitCompiler = Functions{}

// CompileUnit implements functions.UnitCompiler; every refusal is before
// any charge.
func (f Functions) CompileUnit(r functions.UnitRequest) (*functions.UnitRelease, error) {
	p, err := f.compile(r)
	if err != nil {
		return nil, err
	}
	if r.Kind == functions.UnitQuantile {
		return f.quantile(p, r)
	}
	return f.release(p, r), nil
}

// quantileMech is the person-level quantile of a compiled call.
func quantileMech(p *Plan, r functions.UnitRequest) (*bound.Quantile, error) {
	c := r.MaxRows
	if c == 0 {
		c = DefaultMaxRows
	}
	m := p.Bound().Measures[0]
	qm, err := bound.NewQuantile(m.Lo, m.Hi, r.Q, r.Epsilon, r.Grid, c)
	if err != nil {
		return nil, refuse("%v", err)
	}
	return qm, nil
}

// quantile describes a compiled DP_QUANTILE and runs it.
func (f Functions) quantile(p *Plan, r functions.UnitRequest) (*functions.UnitRelease, error) {
	qm, err := quantileMech(p, r)
	if err != nil {
		return nil, err
	}
	return &functions.UnitRelease{
		Unit: p.Unit, Tables: p.Tables, Events: []budget.Event{qm.Event()}, MaxGroups: 1, MaxRows: qm.MaxRows, Memory: p.memoryOf(f.Src),
		Mechanism: "person-level quantile (dpquery/rel, mechanism/bound): at most C non-NULL values per person (a uniform C-subset, crypto RNG), report-noisy-max over the K public grid points of the declared bounds with utility −|rank − round(q·n)|, n the kept values",
		Bound:     fmt.Sprintf("each person keeps at most C = %d value(s): adding or removing a person moves every utility by at most ⌈C·max(q, 1−q)⌉ = %v", qm.MaxRows, qm.Sensitivity()),
		Calibration: map[string]float64{"sensitivity": qm.Sensitivity(), "laplace_scale": qm.Scale(),
			"lower_bound": qm.Grid.Lo, "upper_bound": qm.Grid.Hi},
		Run: func(check func() error) ([]float64, error) {
			acc := qm.Accumulator()
			if err := p.each(f.Src, check, func(person, _ string, vals []float64) { acc.Row(person, vals[0]) }); err != nil {
				return nil, err
			}
			v, err := acc.Release()
			if err != nil {
				return nil, err
			}
			return []float64{v}, nil
		},
	}, nil
}

// compile is the query of a function call.
func (f Functions) compile(r functions.UnitRequest) (*Plan, error) {
	q := Query{From: Scan{DB: r.DB, Table: r.Table}, Options: Options{Epsilon: r.Epsilon}}
	c := Col{Column: r.Column}
	switch r.Kind {
	case functions.UnitMean:
		if r.MaxGroups != 0 || r.MaxRows != 0 || r.Labels != nil {
			return nil, refuse("DP_MEAN takes no bins or contribution bounds: a person contributes one mean")
		}
		q.Aggs = []Agg{{Kind: bound.Avg, Col: &c}}
	case functions.UnitQuantile:
		if r.MaxGroups != 0 || r.Labels != nil {
			return nil, refuse("DP_QUANTILE takes no bins or max_groups_contributed: one quantile, at most max_rows_contributed_per_group values per person")
		}
		// The column read as AVG reads it (declared bounds required, the
		// declared transform and clip); the mechanism is the quantile's.
		q.Aggs = []Agg{{Kind: bound.Avg, Col: &c}}
	case functions.UnitHistogram:
		q.GroupBy = []Col{c}
		q.Bins = []*Bins{{Labels: r.Labels, Of: r.BinOf, Key: r.BinKey}}
		q.Aggs = []Agg{{Kind: bound.Count}}
		q.Options.MaxGroups, q.Options.MaxRows = r.MaxGroups, r.MaxRows
	default:
		return nil, refuse("unit-level function kind %d is not supported", r.Kind)
	}
	return Compile(q, f.Meta)
}

// release describes a compiled function call and runs it.
func (f Functions) release(p *Plan, r functions.UnitRequest) *functions.UnitRelease {
	bp := p.Bound()
	out := &functions.UnitRelease{
		Unit: p.Unit, Tables: p.Tables, Events: p.Events(), Delta: 0,
		MaxGroups: bp.MaxGroups, MaxRows: bp.MaxRows, Memory: p.memoryOf(f.Src),
	}
	first, second := bp.Sensitivity(0)
	s1, s2 := bp.Scales(0)
	m := bp.Measures[0]
	switch r.Kind {
	case functions.UnitMean:
		_, h := mid(m.Lo, m.Hi)
		out.Mechanism = "person-level AVG (dpquery/rel, mechanism/bound): the mean over persons of each person's mean of their non-NULL values, clamped to the declared bounds; Laplace noise on the person count and on the centred sum of person means (ε split equally), clamped to the bounds"
		out.Bound = fmt.Sprintf("each person contributes one mean clamped to [%v, %v]: adding or removing a person moves the person count by 1 and the centred sum by at most %v (half-width) · %v (float slack)", m.Lo, m.Hi, h, bound.Sigma)
		out.Calibration = map[string]float64{"persons_sensitivity": first, "persons_laplace_scale": s1,
			"sum_sensitivity": second, "sum_laplace_scale": s2, "lower_bound": m.Lo, "upper_bound": m.Hi}
	default:
		out.Mechanism = "person-level grouped COUNT over public bins (dpquery/rel, mechanism/bound): each person's bins sampled down to k uniformly with the crypto RNG, at most C rows per person and bin; Laplace noise on every bin"
		out.Bound = fmt.Sprintf("each person counts in at most k = %d bin(s) and at most C = %d row(s) per bin: ℓ₁ sensitivity k·C = %v under adding or removing a person", bp.MaxGroups, bp.MaxRows, first)
		out.Calibration = map[string]float64{"sensitivity": first, "laplace_scale": s1}
	}
	out.Run = func(check func() error) ([]float64, error) {
		res, err := p.Run(f.Src, check)
		if err != nil {
			return nil, err
		}
		if len(res.Bound.Values) != 1 {
			return nil, fmt.Errorf("rel: %d measures released, want 1", len(res.Bound.Values))
		}
		return res.Bound.Values[0], nil
	}
	return out
}

// mid is the centre and half-width of [lo, hi] (as mechanism/bound).
func mid(lo, hi float64) (m, h float64) {
	m = lo + (hi-lo)/2
	if hi-m > m-lo {
		return m, hi - m
	}
	return m, m - lo
}

// CompileScan implements functions.UnitCompiler: the scan of every column
// of a unit table with each row's person, found along the table's unit
// path exactly as for a query (rows whose person is NULL or dangling are
// dropped). Refused (before any charge) for a table outside a unit.
func (f Functions) CompileScan(db, table string) (*functions.UnitScan, error) {
	p, err := Compile(Query{From: Scan{DB: db, Table: table}, Aggs: []Agg{{Kind: bound.Count}}, Options: Options{Epsilon: 1}}, f.Meta)
	if err != nil {
		return nil, err
	}
	s := p.scans[0]
	for _, c := range s.cols {
		s.need[strings.ToLower(c)] = true
	}
	return &functions.UnitScan{
		Unit: p.Unit, Tables: p.Tables, Columns: append([]string(nil), s.cols...),
		Run: func(check func() error, fn func(person string, row []any)) error {
			r := &runner{p: p, src: f.Src, lookup: map[string]map[string]string{}, check: check}
			return r.scan(0, func(row []any, person string) error {
				fn(person, row)
				return nil
			})
		},
	}, nil
}
