package functions

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/catalog"
)

// Training sources that join a unit's tables with public tables (issue 27
// item 5, docs/privacy/units.md §10 "Joined training sources"): the table
// argument of DP_TRAIN, DP_SVM_TRAIN, DP_LSQ, DP_LMGC_TRAIN and DP_EVALUATE
// may be the text of a FROM clause,
//
//	'orders o JOIN customers c ON o.customer_id = c.id JOIN regions r ON c.region = r.name'
//
// compiled by the DP query compiler (Env.Units.CompileFrom) with its join
// rules and refusals. The joined rows — every column of every table, named
// alias.column, each with the bounds or domain its table declares — are a
// virtual table the row-level code reads through the person-level sample
// (unittrain.go), exactly as a unit table: one joined row per person.

// isSourceText reports whether a table argument is a FROM clause rather
// than a table name (a name is one identifier, db.name at most: it never
// holds a blank or a parenthesis).
func isSourceText(s string) bool {
	return strings.ContainsAny(strings.TrimSpace(s), " \t\r\n()")
}

// joinSource compiles a FROM-clause source for function fn; every refusal
// is public and before any charge.
func (e *Env) joinSource(ctx *sql.Context, fn, text string) (unitSource, error) {
	if e.Units == nil {
		return unitSource{}, fmt.Errorf("%s on a join: the DP query compiler is not available in this server", fn)
	}
	scan, err := e.Units.CompileFrom(ctx.GetCurrentDatabase(), text, func(db, table string) bool { return e.canRead(ctx, db, table) })
	if err != nil {
		return unitSource{}, fmt.Errorf("%s on %q: %w", fn, strings.TrimSpace(text), err)
	}
	if len(scan.Origins) != len(scan.Columns) || scan.Anchor == "" {
		return unitSource{}, fmt.Errorf("internal: %s on %q: the compiled source has no column origins", fn, text)
	}
	db, _, _ := strings.Cut(scan.Unit, ".")
	anchorDB, anchorTable, _ := strings.Cut(scan.Anchor, ".")
	if anchorDB != "" {
		db = anchorDB
	}
	// The virtual table, in the database its models belong to (its name
	// only names default models; reads of it go to the sample).
	table := anchorTable + "_join"
	entry := &catalog.Table{Name: scan.From, Protected: true, Bounds: map[string]catalog.Bound{}, Labels: map[string][]string{},
		Domains: map[string]bool{}, Clip: map[string]bool{}, Transforms: map[string]string{}}
	schema := make(sql.Schema, len(scan.Columns))
	entries := map[string]catalog.Table{}
	for i, o := range scan.Origins {
		sch, err := e.Store.TableSchema(o.DB, o.Table)
		if err != nil {
			return unitSource{}, fmt.Errorf("%s on %q: %w", fn, text, noSuchTable(o.DB, o.Table))
		}
		idx := sch.IndexOfColName(o.Column)
		if idx < 0 {
			return unitSource{}, fmt.Errorf("internal: %s on %q: no column %s in %s.%s", fn, text, o.Column, o.DB, o.Table)
		}
		c := *sch[idx]
		c.Name, c.Source, c.DatabaseSource = scan.Columns[i], table, db
		schema[i] = &c
		key := catalog.Key(o.DB, o.Table)
		t, ok := entries[key]
		if !ok {
			t, _ = e.Catalog.Table(key)
			entries[key] = t
		}
		// The column keeps its table's public declarations, under its
		// qualified name; the reads clip to them as on the table.
		src, dst := strings.ToLower(o.Column), strings.ToLower(scan.Columns[i])
		if b, ok := t.Bounds[src]; ok {
			entry.Bounds[dst] = b
		}
		if l, ok := t.Labels[src]; ok {
			entry.Labels[dst] = l
		}
		if t.Domains[src] {
			entry.Domains[dst] = true
		}
		if t.Clip[src] {
			entry.Clip[dst] = true
		}
		if tf, ok := t.Transforms[src]; ok {
			entry.Transforms[dst] = tf
		}
	}
	ref := tableRef{db: db, table: table, key: scan.From, schema: schema, ctx: ctx}
	return unitSource{ref: ref, scan: scan, text: text, schema: schema, entry: entry}, nil
}

// joinedRef is the virtual table of a joined source while its call plans
// (resolveTable serves it for the call's own text).
func (s *unitSample) joinedRef(ctx *sql.Context) tableRef {
	return tableRef{db: s.db, table: s.table, key: s.key, schema: s.schema, ctx: ctx, sample: s}
}

// tableEntry is the public catalog entry of ref: the catalog's, or the
// merged declarations of a joined source's columns.
func (e *Env) tableEntry(ref tableRef) catalog.Table {
	if ref.sample != nil && ref.sample.entry != nil {
		return *ref.sample.entry
	}
	t, _ := e.Catalog.Table(ref.key)
	return t
}

// readsOf is Reads for ref (a joined source's merged declarations).
func (e *Env) readsOf(ref tableRef, cols []string) []catalog.Read {
	if ref.sample == nil || ref.sample.entry == nil {
		return e.Reads(ref.key, cols)
	}
	out := make([]catalog.Read, len(cols))
	for i, c := range cols {
		out[i] = ref.sample.entry.ReadOf(c)
	}
	return out
}

// isProtected reports whether ref is protected: a joined source always is
// (it reads a unit's tables).
func (e *Env) isProtected(ref tableRef) bool {
	if ref.sample != nil && ref.sample.entry != nil {
		return true
	}
	return e.Catalog.IsProtected(ref.key)
}

// recordTable is the table a model trained on ref is listed under (and
// visible with, models.go): the table, or a joined source's first
// protected table.
func (r tableRef) recordTable() string {
	if r.sample != nil && r.sample.anchor != "" {
		return r.sample.anchor
	}
	return r.key
}
