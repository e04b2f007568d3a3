package functions

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
)

// Procedures returns the dp_* stored procedures, callable with CALL by data
// owners.
func (e *Env) Procedures() []sql.ExternalStoredProcedureDetails {
	okSchema := sql.Schema{{Name: "status", Type: types.LongText}}
	return append(e.biProcedures(okSchema), []sql.ExternalStoredProcedureDetails{
		{Name: "dp_protect", Schema: okSchema, Function: func(ctx *sql.Context, table string, eps, delta float64) (sql.RowIter, error) {
			return e.protect(ctx, table, eps, delta, "basic")
		}},
		{Name: "dp_protect", Schema: okSchema, Function: func(ctx *sql.Context, table string, eps, delta float64, mode string) (sql.RowIter, error) {
			return e.protect(ctx, table, eps, delta, mode)
		}},
		{Name: "dp_bounds", Schema: okSchema, Function: func(ctx *sql.Context, table, column string, lo, hi float64) (sql.RowIter, error) {
			return e.bounds(ctx, table, column, lo, hi, "")
		}},
		{Name: "dp_bounds", Schema: okSchema, Function: e.bounds},
		{Name: "dp_transform", Schema: okSchema, Function: e.transform},
		{Name: "dp_labels", Schema: okSchema, Function: e.labels},
		{Name: "dp_owner_add", Schema: okSchema, Function: func(ctx *sql.Context, u string) (sql.RowIter, error) { return e.owner(ctx, u, true) }},
		{Name: "dp_owner_remove", Schema: okSchema, Function: func(ctx *sql.Context, u string) (sql.RowIter, error) { return e.owner(ctx, u, false) }},
		{Name: "dp_drop_model", Schema: okSchema, Function: e.dropModel},
		{Name: "dp_quota", Schema: okSchema, Function: e.quota},
		{Name: "dp_quota_remove", Schema: okSchema, Function: e.quotaRemove},
		{Name: "dp_privacy_unit", Schema: okSchema, Function: e.privacyUnit},
		{Name: "dp_max_rows", Schema: okSchema, Function: e.maxRows},
	}...)
}

func done(format string, a ...any) (sql.RowIter, error) {
	return sql.RowsToRowIter(sql.Row{fmt.Sprintf(format, a...)}), nil
}

func (e *Env) requireOwner(ctx *sql.Context, proc string) error {
	if !e.Catalog.IsOwner(UserOf(ctx)) {
		return fmt.Errorf("%s: only data owners may call it (user %q is an analyst)", proc, UserOf(ctx))
	}
	return nil
}

func validBudget(eps, delta float64) error {
	if math.IsNaN(eps) || math.IsInf(eps, 0) || !(eps > 0) {
		return fmt.Errorf("epsilon budget must be positive and finite, got %v", eps)
	}
	if math.IsNaN(delta) || !(delta >= 0 && delta < 1) {
		return fmt.Errorf("delta budget must be in [0, 1), got %v", delta)
	}
	return nil
}

func (e *Env) protect(ctx *sql.Context, name string, eps, delta float64, mode string) (sql.RowIter, error) {
	if err := e.requireOwner(ctx, "dp_protect"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(name) == "" {
		return nil, fmt.Errorf("dp_protect: table name must not be empty")
	}
	ref, err := e.resolveTable(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("dp_protect: %w", err)
	}
	if err := validBudget(eps, delta); err != nil {
		return nil, fmt.Errorf("dp_protect: %w", err)
	}
	m := budget.Mode(strings.ToLower(strings.TrimSpace(mode)))
	if m != budget.Basic && m != budget.RDP {
		return nil, fmt.Errorf("dp_protect: accounting mode must be 'basic' or 'rdp', got %q", mode)
	}
	// A table whose foreign keys reach a declared unit joins it first
	// (its rows are a person's rows: a row-level account would not do).
	if len(e.Catalog.ExplicitUnits(ref.db)) > 0 {
		if _, err := e.declareUnits(ctx, ref.db, nil); err != nil {
			return nil, fmt.Errorf("dp_protect: %w", err)
		}
	}
	tables, what := []string{ref.key}, "table "+ref.key
	if u, ok := e.Catalog.UnitOf(ref.key); ok {
		// One budget for every table of the unit.
		tables, what = e.Catalog.UnitMembers(u.Unit), "unit "+u.Unit+" ("+strings.Join(e.Catalog.UnitMembers(u.Unit), ", ")+")"
	}
	// Protect in the catalog first: from here on analysts cannot read it.
	for _, k := range tables {
		if err := e.Catalog.SetProtected(k, true); err != nil {
			return nil, fmt.Errorf("dp_protect: %w", err)
		}
	}
	if err := e.Budget.Protect(e.Catalog.AccountKey(ref.key), eps, delta, m); err != nil {
		return nil, fmt.Errorf("dp_protect: %w", err)
	}
	return done("%s protected with budget epsilon=%v delta=%v (%s accounting)", what, eps, delta, m)
}

func isNumeric(t sql.Type) bool {
	return types.IsNumber(t) || types.IsDecimal(t)
}

// bounds implements CALL dp_bounds(t, c, lo, hi [, 'clip']). Without
// 'clip' every row must lie within the bounds (checked now and at every
// write); with it rows keep raw values and every DP read clips
// (functions/dpread.go). Bounds are on the scale of the column's declared
// transform (dp_transform), if any.
func (e *Env) bounds(ctx *sql.Context, name, column string, lo, hi float64, mode string) (sql.RowIter, error) {
	if err := e.requireOwner(ctx, "dp_bounds"); err != nil {
		return nil, err
	}
	var clip bool
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case "":
	case "clip":
		clip = true
	default:
		return nil, fmt.Errorf("dp_bounds: the fifth argument must be 'clip' (or omitted), got %q", mode)
	}
	ref, err := e.resolveTable(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("dp_bounds: %w", err)
	}
	c, err := ref.column(column)
	if err != nil {
		return nil, fmt.Errorf("dp_bounds: %w", err)
	}
	idx := ref.schema.IndexOfColName(c)
	if !isNumeric(ref.schema[idx].Type) {
		return nil, fmt.Errorf("dp_bounds: column %s is %s, not numeric", c, ref.schema[idx].Type)
	}
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || !(lo < hi) {
		return nil, fmt.Errorf("dp_bounds: bounds must be finite with lower < upper, got [%v, %v]", lo, hi)
	}
	tf := e.Reads(ref.key, []string{c})[0].Transform
	if !clip {
		// The owner may see their own data, so the error may count violations.
		bad, err := e.countOutside(ref, c, tf, lo, hi)
		if err != nil {
			return nil, fmt.Errorf("dp_bounds: %w", err)
		}
		if bad > 0 {
			return nil, fmt.Errorf("dp_bounds: %d existing rows of %s have %s outside [%v, %v]%s; fix them, widen the bounds, or declare them with 'clip' (every DP read then clips)", bad, ref.key, c, lo, hi, scaleNote(tf))
		}
	}
	if err := e.Catalog.SetBoundsClip(ref.key, c, lo, hi, clip); err != nil {
		return nil, fmt.Errorf("dp_bounds: %w", err)
	}
	if clip {
		return done("bounds of %s.%s set to [%v, %v]%s; rows may hold values outside them, every DP read clips", ref.key, c, lo, hi, scaleNote(tf))
	}
	return done("bounds of %s.%s set to [%v, %v]%s", ref.key, c, lo, hi, scaleNote(tf))
}

func scaleNote(tf string) string {
	if tf == "" {
		return ""
	}
	return " (on the " + tf + " scale)"
}

// countOutside counts the rows whose transformed value of c lies outside
// [lo, hi] (NULL is never outside).
func (e *Env) countOutside(ref tableRef, c, tf string, lo, hi float64) (int64, error) {
	var bad int64
	if tf == "" { // scale-out (issue 14): counted on the backend when it serves the table
		if n, pushed, err := e.pushCountOutside(ref, c, lo, hi); pushed {
			return n, err
		}
	}
	if _, err := e.Store.ScanFloats(ref.db, ref.table, []string{c}, func(row []float64) error {
		if v := row[0]; !math.IsNaN(v) {
			if v = mechanism.ApplyTransform(tf, v); v < lo || v > hi {
				bad++
			}
		}
		return nil
	}); err != nil {
		return 0, fmt.Errorf("scan: %w", err)
	}
	return bad, nil
}

// transform implements CALL dp_transform(t, c, 'log1p' | 'identity'): a
// public transform every DP read applies to the column before clipping and
// scaling. Declared bounds are on the transformed scale; if they are not
// declared with 'clip', existing rows must satisfy them on the new scale.
func (e *Env) transform(ctx *sql.Context, name, column, kind string) (sql.RowIter, error) {
	if err := e.requireOwner(ctx, "dp_transform"); err != nil {
		return nil, err
	}
	ref, err := e.resolveTable(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("dp_transform: %w", err)
	}
	c, err := ref.column(column)
	if err != nil {
		return nil, fmt.Errorf("dp_transform: %w", err)
	}
	idx := ref.schema.IndexOfColName(c)
	if !isNumeric(ref.schema[idx].Type) {
		return nil, fmt.Errorf("dp_transform: column %s is %s, not numeric", c, ref.schema[idx].Type)
	}
	kind = strings.ToLower(strings.TrimSpace(kind))
	if kind == "" || !mechanism.ValidTransform(kind) {
		return nil, fmt.Errorf("dp_transform: transform must be 'log1p' or 'identity', got %q", kind)
	}
	tf := kind
	if tf == mechanism.TransformIdentity {
		tf = ""
	}
	r := e.Reads(ref.key, []string{c})[0]
	if r.Bounded && !r.Clip {
		bad, err := e.countOutside(ref, c, tf, r.Lo, r.Hi)
		if err != nil {
			return nil, fmt.Errorf("dp_transform: %w", err)
		}
		if bad > 0 {
			return nil, fmt.Errorf("dp_transform: %d existing rows of %s have %s(%s) outside its declared bounds [%v, %v]; declare bounds on the %s scale first (CALL dp_bounds(…, 'clip') keeps raw values and clips)", bad, ref.key, kind, c, r.Lo, r.Hi, kind)
		}
	}
	if err := e.Catalog.SetTransform(ref.key, c, tf); err != nil {
		return nil, fmt.Errorf("dp_transform: %w", err)
	}
	return done("transform of %s.%s set to %s", ref.key, c, kind)
}

func (e *Env) labels(ctx *sql.Context, name, column, values string) (sql.RowIter, error) {
	return e.declareDomain(ctx, "dp_labels", name, column, values)
}

// domain implements CALL dp_domain: the public domain of a categorical
// column (a GROUP BY key, a DP_TRAIN feature), not a label candidate.
func (e *Env) domain(ctx *sql.Context, name, column, values string) (sql.RowIter, error) {
	return e.declareDomain(ctx, "dp_domain", name, column, values)
}

// declareDomain declares the domain of a column for dp_labels or dp_domain
// (proc). Existing rows must hold a declared value or NULL: NULL is not a
// value outside the domain (DP_TRAIN gives it a level of its own, GROUP BY
// a group of its own).
func (e *Env) declareDomain(ctx *sql.Context, proc, name, column, values string) (sql.RowIter, error) {
	if err := e.requireOwner(ctx, proc); err != nil {
		return nil, err
	}
	ref, err := e.resolveTable(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", proc, err)
	}
	c, err := ref.column(column)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", proc, err)
	}
	var domain []string
	seen := map[string]bool{}
	// A level with a comma is declared with the JSON form '["a", "b, c"]';
	// anything else (also a list whose first level starts with '[') is
	// split at commas.
	list := strings.Split(values, ",")
	var arr []string
	if t := strings.TrimSpace(values); strings.HasPrefix(t, "[") && json.Unmarshal([]byte(t), &arr) == nil {
		list = arr
	}
	for _, v := range list {
		v = strings.TrimSpace(v)
		if v == "" {
			return nil, fmt.Errorf("%s: empty value in the list %q", proc, values)
		}
		if seen[v] {
			return nil, fmt.Errorf("%s: value %q listed twice", proc, v)
		}
		seen[v] = true
		domain = append(domain, v)
	}
	if len(domain) == 0 {
		return nil, fmt.Errorf("%s: the list of values is empty", proc)
	}
	var bad, empty int64
	var examples []string // the owner's own rows: named to help fix them
	if _, err := e.Store.ScanValues(ref.db, ref.table, []string{c}, func(row []any) error {
		if row[0] == nil {
			return nil
		}
		if v := LabelString(row[0]); !seen[v] {
			bad++
			if v == "" {
				empty++
			} else if len(examples) < 3 {
				if r := []rune(v); len(r) > 40 { // a long value is named by its start
					v = string(r[:40]) + "…"
				}
				if !slices.Contains(examples, v) {
					examples = append(examples, v)
				}
			}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("%s: scan: %w", proc, err)
	}
	if bad > 0 {
		msg := fmt.Sprintf("%s: %d existing rows of %s have a value of %s outside the declared domain (NULLs are allowed and not counted)", proc, bad, ref.key, c)
		if len(examples) > 0 {
			msg += fmt.Sprintf("; e.g. %q", examples)
		}
		// A CSV export writes a missing value as an empty field, which LOAD
		// DATA reads as '' in a text column (as MySQL does).
		if empty > 0 {
			msg += fmt.Sprintf("; %d of them are empty strings (LOAD DATA reads an empty field of a text column as ''): UPDATE %s SET %s = NULLIF(%s, '') makes them NULL", empty, ref.table, c, c)
		}
		return nil, errors.New(msg)
	}
	if err := e.Catalog.SetDomain(ref.key, c, domain, proc == "dp_domain"); err != nil {
		return nil, fmt.Errorf("%s: %w", proc, err)
	}
	what := "label domain"
	if proc == "dp_domain" {
		what = "domain"
	}
	return done("%s of %s.%s set to %d values", what, ref.key, c, len(domain))
}

// quota implements CALL dp_quota('<user>', '<table>', ε, δ): caps the
// account's share of the table's budget ('%' = every account without a
// quota of its own).
func (e *Env) quota(ctx *sql.Context, u, name string, eps, delta float64) (sql.RowIter, error) {
	if err := e.requireOwner(ctx, "dp_quota"); err != nil {
		return nil, err
	}
	u = strings.TrimSpace(u)
	if u == "" {
		return nil, fmt.Errorf("dp_quota: account name must not be empty ('%s' sets the default quota)", budget.AnyUser)
	}
	ref, err := e.protectedTable(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("dp_quota: %w", err)
	}
	if err := e.Budget.SetQuota(e.Catalog.AccountKey(ref.key), u, eps, delta); err != nil {
		return nil, fmt.Errorf("dp_quota: %w", err)
	}
	who := "account " + u
	if u == budget.AnyUser {
		who = "every account without its own quota"
	}
	return done("%s may spend at most epsilon=%v delta=%v of %s", who, eps, delta, ref.key)
}

// quotaRemove implements CALL dp_quota_remove('<user>', '<table>').
func (e *Env) quotaRemove(ctx *sql.Context, u, name string) (sql.RowIter, error) {
	if err := e.requireOwner(ctx, "dp_quota_remove"); err != nil {
		return nil, err
	}
	ref, err := e.resolveTable(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("dp_quota_remove: %w", err)
	}
	if err := e.Budget.RemoveQuota(e.Catalog.AccountKey(ref.key), strings.TrimSpace(u)); err != nil {
		return nil, fmt.Errorf("dp_quota_remove: %w", err)
	}
	return done("quota of %s on %s removed", strings.TrimSpace(u), ref.key)
}

func (e *Env) owner(ctx *sql.Context, u string, on bool) (sql.RowIter, error) {
	// Only root designates owners: an owner must not be able to mint more.
	if UserOf(ctx) != "root" {
		return nil, fmt.Errorf("dp_owner_add/dp_owner_remove: only root may designate owners")
	}
	u = strings.TrimSpace(u)
	if err := e.Catalog.SetOwner(u, on); err != nil {
		return nil, err
	}
	if on {
		return done("%s is now a data owner", u)
	}
	return done("%s is no longer a data owner", u)
}

func (e *Env) dropModel(ctx *sql.Context, name string) (sql.RowIter, error) {
	if err := e.requireOwner(ctx, "dp_drop_model"); err != nil {
		return nil, err
	}
	ref, err := resolveModel(ctx, strings.TrimSpace(name))
	if err != nil {
		return nil, fmt.Errorf("dp_drop_model: %w", err)
	}
	if err := e.Catalog.DropModel(ref.db, ref.name); err != nil {
		return nil, fmt.Errorf("dp_drop_model: %w", err)
	}
	return done("model %s dropped", ref)
}

// LabelString renders a stored label value the way label domains are
// declared: integers without a decimal point, floats in shortest form.
func LabelString(v any) string {
	return mechanism.LevelString(v) // one rule for labels and categorical levels
}

// maxRows implements CALL dp_max_rows('<table>', n): the owner's public
// upper bound on the table's row count (0 removes it). Memory estimates of
// person-level releases use it instead of the stored count, which is not
// public on a unit's tables (docs/privacy/units.md §6). The bound is
// checked against the stored count now (the caller is an owner) but not
// enforced on later writes: past it, estimates are low, not refusals.
func (e *Env) maxRows(ctx *sql.Context, name string, n float64) (sql.RowIter, error) {
	if err := e.requireOwner(ctx, "dp_max_rows"); err != nil {
		return nil, err
	}
	ref, err := e.resolveTable(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("dp_max_rows: %w", err)
	}
	if math.IsNaN(n) || n < 0 || n != math.Trunc(n) || n > 1<<53 {
		return nil, fmt.Errorf("dp_max_rows: the maximum row count must be a whole number in [0, 2^53] (0 removes it), got %v", n)
	}
	if n > 0 {
		have, err := e.Store.RowCount(ref.db, ref.table)
		if err != nil {
			return nil, fmt.Errorf("dp_max_rows: %w", err)
		}
		if have > int64(n) {
			return nil, fmt.Errorf("dp_max_rows: %s already has %d rows, more than %v", ref.key, have, n)
		}
	}
	if err := e.Catalog.SetMaxRows(ref.key, int64(n)); err != nil {
		return nil, fmt.Errorf("dp_max_rows: %w", err)
	}
	if n == 0 {
		return done("%s: no maximum row count (memory estimates use its stored count rounded up to a power of two)", ref.key)
	}
	return done("%s: at most %v rows (public; memory estimates of person-level releases use it)", ref.key, n)
}
