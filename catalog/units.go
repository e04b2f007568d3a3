package catalog

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Privacy units (issue 27, docs/privacy/units.md): a table of a unit maps
// each row to one person. The root declaration names the column whose value
// is the person; other tables inherit the unit through declared foreign
// keys. Everything here is public (schema and declarations).

// UnitPrefix starts the budget account key shared by all tables of a unit.
const UnitPrefix = "unit:"

// Member is a table's membership in a privacy unit. The person of a row is
// the value of Column when Parent is empty; otherwise Column references
// Parent's primary key ParentKey and the person is that parent row's.
type Member struct {
	Unit      string `json:"unit"`   // "db.unit", lower case
	Column    string `json:"column"` // lower case
	Parent    string `json:"parent,omitempty"`
	ParentKey string `json:"parent_key,omitempty"`
	// Explicit: declared with dp_privacy_unit on this table (not inherited).
	Explicit bool `json:"explicit,omitempty"`
}

// UnitKey is the unit's key "db.unit" for a table key "db.table".
func UnitKey(tableKey, unit string) string {
	db, _, _ := strings.Cut(tableKey, ".")
	return db + "." + strings.ToLower(strings.TrimSpace(unit))
}

// AccountKey is the budget account a table charges: its unit's shared
// account, or the table's own.
func (c *Catalog) AccountKey(tableKey string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if t, ok := c.tables[tableKey]; ok && t.Unit != nil {
		return UnitPrefix + t.Unit.Unit
	}
	return tableKey
}

// UnitOf returns the table's membership, if any.
func (c *Catalog) UnitOf(tableKey string) (Member, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if t, ok := c.tables[tableKey]; ok && t.Unit != nil {
		return *t.Unit, true
	}
	return Member{}, false
}

// UnitMembers lists the tables of unit "db.unit", sorted.
func (c *Catalog) UnitMembers(unit string) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for k, t := range c.tables {
		if t.Unit != nil && t.Unit.Unit == unit {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// ForeignKey is one declared single-column foreign key, keys lower case.
type ForeignKey struct {
	Table, Column        string // child "db.table" and its column
	Parent, ParentColumn string // referenced "db.table" and column
}

// Schema is what unit resolution needs of one database: its foreign keys
// and the single-column primary key of each table ("" if none or compound).
type Schema struct {
	FKs        []ForeignKey
	PrimaryKey map[string]string // by table key
}

// Explicit is one dp_privacy_unit declaration.
type Explicit struct {
	Table, Column, Unit string // table key, column, "db.unit"
}

// ErrUnit wraps every refusal of unit resolution.
var ErrUnit = errors.New("privacy unit")

func unitErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnit}, a...)...)
}

// ResolveUnits computes the membership of every table of one database from
// the explicit declarations and the foreign keys: a table inherits a unit
// through a foreign key into a member table that references either the
// member's person column (when the member holds the person directly) or its
// single-column primary key. It refuses ambiguous tables (two keys leading
// to units), cycles along the paths, keys into other columns, and units
// spanning databases.
func ResolveUnits(explicit []Explicit, s Schema) (map[string]Member, error) {
	out := map[string]Member{}
	for _, e := range explicit {
		tdb, _, _ := strings.Cut(e.Table, ".")
		udb, _, _ := strings.Cut(e.Unit, ".")
		if tdb != udb {
			return nil, unitErr("table %s cannot belong to unit %s of another database", e.Table, e.Unit)
		}
		if m, ok := out[e.Table]; ok && m.Column != e.Column {
			return nil, unitErr("table %s is declared twice (columns %s and %s)", e.Table, m.Column, e.Column)
		}
		out[e.Table] = Member{Unit: e.Unit, Column: e.Column, Explicit: true}
	}
	// Tables that can reach an explicit member along foreign keys: only
	// their keys are followed (an unrelated self-referencing table does not
	// make a declaration fail).
	byChild := map[string][]ForeignKey{}
	byParent := map[string][]ForeignKey{}
	for _, fk := range s.FKs {
		byChild[fk.Table] = append(byChild[fk.Table], fk)
		byParent[fk.Parent] = append(byParent[fk.Parent], fk)
	}
	reach := map[string]bool{}
	var queue []string
	for t := range out {
		reach[t] = true
		queue = append(queue, t)
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, fk := range byParent[p] {
			if !reach[fk.Table] {
				reach[fk.Table] = true
				queue = append(queue, fk.Table)
			}
		}
	}
	const (
		visiting = 1
		finished = 2
	)
	state := map[string]int{}
	var resolve func(t string, path []string) (*Member, error)
	resolve = func(t string, path []string) (*Member, error) {
		if m, ok := out[t]; ok && m.Explicit {
			return &m, nil
		}
		switch state[t] {
		case visiting:
			return nil, unitErr("the foreign keys %s → %s form a cycle; declare the person column of one of these tables explicitly", strings.Join(path, " → "), t)
		case finished:
			if m, ok := out[t]; ok {
				return &m, nil
			}
			return nil, nil
		}
		state[t] = visiting
		var found *Member
		var via string
		fks := append([]ForeignKey(nil), byChild[t]...)
		sort.Slice(fks, func(i, j int) bool { return fks[i].Column < fks[j].Column })
		for _, fk := range fks {
			if !reach[fk.Parent] {
				continue
			}
			pm, err := resolve(fk.Parent, append(path, t))
			if err != nil {
				return nil, err
			}
			if pm == nil {
				continue
			}
			var m Member
			switch {
			case pm.Parent == "" && fk.ParentColumn == pm.Column:
				m = Member{Unit: pm.Unit, Column: fk.Column}
			case fk.ParentColumn == s.PrimaryKey[fk.Parent] && fk.ParentColumn != "":
				m = Member{Unit: pm.Unit, Column: fk.Column, Parent: fk.Parent, ParentKey: fk.ParentColumn}
			default:
				return nil, unitErr("foreign key %s.%s → %s.%s: %s belongs to unit %s, but %s is neither its person column nor its single-column primary key, so a row of %s could belong to several persons",
					t, fk.Column, fk.Parent, fk.ParentColumn, fk.Parent, pm.Unit, fk.ParentColumn, t)
			}
			if found != nil {
				return nil, unitErr("table %s is ambiguous: both %s.%s and %s.%s lead to a privacy unit (%s, %s); declare its person column explicitly with dp_privacy_unit",
					t, t, via, t, fk.Column, found.Unit, m.Unit)
			}
			found, via = &m, fk.Column
		}
		state[t] = finished
		if found != nil {
			out[t] = *found
		}
		return found, nil
	}
	var tables []string
	for t := range reach {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		if _, err := resolve(t, nil); err != nil {
			return nil, err
		}
	}
	for t, m := range out {
		tdb, _, _ := strings.Cut(t, ".")
		udb, _, _ := strings.Cut(m.Unit, ".")
		if tdb != udb {
			return nil, unitErr("table %s would inherit unit %s of another database through its foreign keys", t, m.Unit)
		}
	}
	return out, nil
}

// SetUnits records the memberships of one database (ResolveUnits' result).
// Existing members never leave or change (their releases were charged to
// the unit's account under their person mapping): a member the resolution
// no longer finds (a dropped table, a dropped key) keeps its membership,
// and one it maps differently is refused.
func (c *Catalog) SetUnits(db string, members map[string]Member) error {
	prefix := strings.ToLower(db) + "."
	c.mu.Lock()
	for k, t := range c.tables {
		if !strings.HasPrefix(k, prefix) || t.Unit == nil {
			continue
		}
		m, ok := members[k]
		if ok && (m.Unit != t.Unit.Unit || m.Column != t.Unit.Column || m.Parent != t.Unit.Parent || m.ParentKey != t.Unit.ParentKey) {
			c.mu.Unlock()
			return unitErr("table %s belongs to unit %s through %s and cannot leave it or change how its rows map to persons (now %s through %s)", k, t.Unit.Unit, how(*t.Unit), m.Unit, how(m))
		}
		if !ok {
			members[k] = *t.Unit
		}
	}
	keys := make([]string, 0, len(members))
	for k := range members {
		if !strings.HasPrefix(k, prefix) {
			c.mu.Unlock()
			return unitErr("table %s is not in database %s", k, db)
		}
		keys = append(keys, k)
	}
	defer c.mu.Unlock()
	// All memberships in one commit: copies first, the map only on success.
	old := map[string]*Table{}
	for _, k := range keys {
		m := members[k]
		prev := c.tables[k]
		old[k] = prev
		t := &Table{Name: k, Bounds: map[string]Bound{}, Labels: map[string][]string{}}
		if prev != nil {
			cp := *prev
			t = &cp
		}
		t.Unit = &m
		c.tables[k] = t
	}
	if err := c.saveTablesLocked(); err != nil {
		for k, prev := range old {
			if prev == nil {
				delete(c.tables, k)
			} else {
				c.tables[k] = prev
			}
		}
		return fmt.Errorf("save catalog: %w", err)
	}
	return nil
}

func how(m Member) string {
	if m.Parent == "" {
		return m.Column
	}
	return m.Column + " → " + m.Parent + "." + m.ParentKey
}

// ExplicitUnits lists the explicit declarations of one database.
func (c *Catalog) ExplicitUnits(db string) []Explicit {
	prefix := strings.ToLower(db) + "."
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []Explicit
	for k, t := range c.tables {
		if strings.HasPrefix(k, prefix) && t.Unit != nil && t.Unit.Explicit {
			out = append(out, Explicit{Table: k, Column: t.Unit.Column, Unit: t.Unit.Unit})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Table < out[j].Table })
	return out
}
