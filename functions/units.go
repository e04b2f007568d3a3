package functions

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
)

// Privacy units (issue 27, docs/privacy/units.md). CALL dp_privacy_unit
// declares the person column of a table; tables reaching it through
// declared foreign keys inherit the unit; all tables of a unit share one
// budget account (catalog.AccountKey). Row-level releases on a unit's tables
// are refused before charging: their proofs protect one row, not a person.

// ForeignKeySource lists the declared foreign keys of a database (the
// engine reads go-mysql-server's; nil: no inheritance, explicit
// declarations only).
type ForeignKeySource func(ctx *sql.Context, db string) ([]catalog.ForeignKey, error)

// privacyUnit implements CALL dp_privacy_unit('<table>', '<column>', '<unit>').
func (e *Env) privacyUnit(ctx *sql.Context, name, column, unit string) (sql.RowIter, error) {
	if err := e.requireOwner(ctx, "dp_privacy_unit"); err != nil {
		return nil, err
	}
	ref, err := e.resolveTable(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("dp_privacy_unit: %w", err)
	}
	c, err := ref.column(column)
	if err != nil {
		return nil, fmt.Errorf("dp_privacy_unit: %w", err)
	}
	unit = strings.TrimSpace(unit)
	if !identRE.MatchString(unit) {
		return nil, fmt.Errorf("dp_privacy_unit: unit name %q must be 1–64 letters, digits, _ or $", unit)
	}
	decl := catalog.Explicit{Table: ref.key, Column: strings.ToLower(c), Unit: catalog.UnitKey(ref.key, unit)}
	members, err := e.declareUnits(ctx, ref.db, &decl)
	if err != nil {
		return nil, fmt.Errorf("dp_privacy_unit: %w", err)
	}
	var names []string
	for _, k := range e.Catalog.UnitMembers(decl.Unit) {
		m := members[k]
		how := "person = " + m.Column
		if m.Parent != "" {
			how = m.Column + " → " + m.Parent + "." + m.ParentKey
		}
		names = append(names, k+" ("+how+")")
	}
	return done("unit %s: %s; its tables share one budget (%s%s)", decl.Unit, strings.Join(names, ", "), catalog.UnitPrefix, decl.Unit)
}

// declareUnits re-resolves the units of database db with decl added (nil:
// the current declarations, e.g. after new foreign keys) and records them.
// Under unitMu (exclusive): no row-level release can reserve on a table
// between the check that it has none and its joining a unit.
func (e *Env) declareUnits(ctx *sql.Context, db string, decl *catalog.Explicit) (map[string]catalog.Member, error) {
	e.unitMu.Lock()
	defer e.unitMu.Unlock()
	explicit := e.Catalog.ExplicitUnits(db)
	if decl != nil {
		replaced := false
		for _, x := range explicit {
			if x.Table == decl.Table {
				if x.Unit != decl.Unit || x.Column != decl.Column {
					return nil, fmt.Errorf("table %s is already declared as unit %s on column %s; a declaration cannot change", x.Table, x.Unit, x.Column)
				}
				replaced = true
			}
		}
		if !replaced {
			explicit = append(explicit, *decl)
		}
	}
	if len(explicit) == 0 {
		return nil, nil
	}
	s := catalog.Schema{PrimaryKey: map[string]string{}}
	if e.ForeignKeys != nil {
		fks, err := e.ForeignKeys(ctx, db)
		if err != nil {
			return nil, fmt.Errorf("foreign keys of %s: %w", db, err)
		}
		s.FKs = fks
		for _, fk := range fks {
			if _, ok := s.PrimaryKey[fk.Parent]; ok {
				continue
			}
			s.PrimaryKey[fk.Parent] = e.singlePrimaryKey(fk.Parent)
		}
	}
	members, err := catalog.ResolveUnits(explicit, s)
	if err != nil {
		return nil, err
	}
	// New members must not have been released on at row level, and the
	// unit's account takes the smallest budget any of them already had.
	type acct struct {
		st  budget.Status
		key string
	}
	var seeds []acct
	units := map[string]bool{}
	for k, m := range members {
		units[m.Unit] = true
		if _, was := e.Catalog.UnitOf(k); was {
			continue
		}
		st, err := e.Budget.Status(k)
		if errors.Is(err, budget.ErrNotProtected) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if st.Releases > 0 {
			return nil, fmt.Errorf("table %s already has %d row-level releases; their guarantee protects one row, not one person of unit %s, so it cannot join the unit (declare units before the first release)", k, st.Releases, m.Unit)
		}
		seeds = append(seeds, acct{st, k})
	}
	for u := range units {
		key := catalog.UnitPrefix + u
		if _, err := e.Budget.Status(key); err == nil || len(seeds) == 0 {
			continue
		} else if !errors.Is(err, budget.ErrNotProtected) {
			return nil, err
		}
		eps, delta, mode := math.Inf(1), math.Inf(1), seeds[0].st.Mode
		for _, s := range seeds {
			if members[s.key].Unit != u {
				continue
			}
			if s.st.Mode != mode {
				return nil, fmt.Errorf("tables of unit %s use different accounting modes (%s: %s, %s: %s); protect them alike first", u, seeds[0].key, mode, s.key, s.st.Mode)
			}
			eps, delta = math.Min(eps, s.st.EpsilonTotal), math.Min(delta, s.st.DeltaTotal)
		}
		if !math.IsInf(eps, 1) {
			if err := e.Budget.Protect(key, eps, delta, mode); err != nil {
				return nil, err
			}
		}
	}
	if err := e.Catalog.SetUnits(db, members); err != nil {
		return nil, err
	}
	// A unit with a budget protects every member (a new member must not
	// stay readable).
	for u := range units {
		if _, err := e.Budget.Status(catalog.UnitPrefix + u); err != nil {
			continue
		}
		for _, k := range e.Catalog.UnitMembers(u) {
			if !e.Catalog.IsProtected(k) {
				if err := e.Catalog.SetProtected(k, true); err != nil {
					return nil, err
				}
			}
		}
	}
	return members, nil
}

// singlePrimaryKey is the lower-case single-column primary key of a table,
// "" if it has none or a compound one.
func (e *Env) singlePrimaryKey(key string) string {
	db, table, _ := strings.Cut(key, ".")
	sch, err := e.Store.TableSchema(db, table)
	if err != nil {
		return ""
	}
	pk := ""
	for _, c := range sch {
		if c.PrimaryKey {
			if pk != "" {
				return ""
			}
			pk = strings.ToLower(c.Name)
		}
	}
	return pk
}

// errRowLevelOnUnit refuses a row-level release on a table of a unit.
func errRowLevelOnUnit(key string, m catalog.Member, function string) error {
	return fmt.Errorf("%s on %s refused: the table belongs to privacy unit %s, and %s protects one row, not one person (a person may have many rows); unit-level aggregates go through the DP query compiler (docs/privacy/units.md)", function, key, m.Unit, function)
}

// ReleaseUnit reserves a unit-level release against the unit's shared
// account (every table in tables must belong to unit), then runs compute as
// release does. The ledger row names the unit's account.
func (e *Env) ReleaseUnit(ctx *sql.Context, unit string, tables []string, function string, reqEps, reqDelta float64, events []budget.Event, compute func() (any, error)) (any, error) {
	for _, k := range tables {
		m, ok := e.Catalog.UnitOf(k)
		if !ok || m.Unit != unit {
			return nil, fmt.Errorf("%s: table %s is not in unit %s", function, k, unit)
		}
	}
	db, _, _ := strings.Cut(unit, ".")
	ref := tableRef{db: db, key: catalog.UnitPrefix + unit}
	return e.releaseAccount(ctx, ref, ref.key, function, reqEps, reqDelta, events, compute)
}

// AdmitUnit is the memory admission of a person-level release
// (docs/privacy/units.md §6), called before anything is charged: the
// release's estimate (public quantities and the stored row counts of the
// tables read, each rounded up to a power of two: dpquery/rel's Memory) is
// checked against MaxReleaseMemory and then reserved in the shared pool
// (waiting, killably, for running releases) until done is called or the
// release hands it to its computation. The refusal reveals one bit — above
// or below the operator's limit — and names neither a count nor the
// estimate (threat-model.md).
func (e *Env) AdmitUnit(ctx *sql.Context, estimate func() (float64, error)) (done func(), err error) {
	if e.MaxReleaseMemory <= 0 || estimate == nil {
		return func() {}, nil
	}
	est, err := estimate()
	if err != nil {
		return nil, fmt.Errorf("memory estimate of the person-level release: %w; nothing was charged", err)
	}
	if est > float64(e.MaxReleaseMemory) {
		return nil, fmt.Errorf("this person-level release is estimated to need more memory than the server's limit of %s per release (--max-release-memory): read fewer or smaller tables or ask the operator for a higher limit; the estimate uses the tables' row counts rounded up to powers of two and this message reveals only that it is above the limit; nothing was charged",
			formatBytes(float64(e.MaxReleaseMemory)))
	}
	rt := e.rt()
	t, err := rt.mem.acquire(ctx, int64(math.Ceil(est)))
	if err != nil {
		return nil, err
	}
	rt.hold(ctx, t)
	return func() { rt.unhold(ctx, t) }, nil
}
