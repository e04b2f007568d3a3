package dump

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/guard"
	"github.com/dpsql/dpsql/store"
)

// Dump and restore (issue 13). mysqldump copies a table as DROP TABLE IF
// EXISTS, the table's SHOW CREATE TABLE, then INSERTs. The only statement
// that comes before the rows is the CREATE TABLE, so that is where a
// table's dpsql state travels: for data owners, SHOW CREATE TABLE carries
// the table's catalog entry (protection, bounds, domains) and its budget
// account and ledger in the table COMMENT, after the marker catalogMarker.
// Replaying such a CREATE TABLE installs the catalog and merges the budget
// BEFORE the table exists, so no row is ever readable unprotected, even if
// the restore stops half-way. Only owners may replay one; an analyst's is
// refused (the table would otherwise be created unprotected). Besides, a
// CREATE TABLE of a name that has a budget account (a table that is or was
// protected) always creates it protected (guard hooks).
//
// The dpsql views (dp_budget, ...) are dumped by mysqldump as placeholder
// tables: their DROP TABLE IF EXISTS, CREATE TABLE with the view's columns
// and DROP VIEW IF EXISTS answer OK without doing anything (CREATE VIEW of
// a dpsql view name stays refused).

// Rules are the analyzer rules of dump and restore (PreRule, PostRule).
type Rules struct {
	guard *guard.Guard // owners, and a new table's protection
	cat   *catalog.Catalog
	st    *store.Store
	env   *functions.Env
}

// New returns the dump and restore rules.
func New(g *guard.Guard, cat *catalog.Catalog, st *store.Store, env *functions.Env) *Rules {
	return &Rules{guard: g, cat: cat, st: st, env: env}
}

// catalogMarker starts the dpsql part of a table comment.
const catalogMarker = "dpsql:v1:"

// dumpedTable is the dpsql part of a dumped table's comment.
type dumpedTable struct {
	Catalog *catalog.Table    `json:"catalog,omitempty"`
	Budget  *budget.TableDump `json:"budget,omitempty"`
	// Models released from the table: DP outputs, public, restored under
	// their names when those are free.
	Models []catalog.ModelRecord `json:"models,omitempty"`
	// UnitBudget is the shared account (and ledger) of the table's privacy
	// unit (catalog.AccountKey): every member's dump carries it, and the
	// restores merge into one account (RestoreTable counts a release once).
	UnitBudget *budget.TableDump `json:"unit_budget,omitempty"`
}

// splitComment separates a table comment into the user's comment and the
// dpsql JSON (ok when the marker is present).
func splitComment(c string) (user, js string, ok bool) {
	i := strings.Index(c, catalogMarker)
	if i < 0 {
		return c, "", false
	}
	return strings.TrimSpace(c[:i]), c[i+len(catalogMarker):], true
}

// encodeComment appends the dpsql JSON to the user's comment. Backslashes
// are doubled: go-mysql-server quotes the comment with only ” escaping,
// and the CREATE TABLE of the restore reads it back as a string literal.
func encodeComment(user string, d dumpedTable) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return "", fmt.Errorf("encode dpsql catalog comment: %w", err)
	}
	js := strings.ReplaceAll(strings.TrimSpace(buf.String()), `\`, `\\`)
	if user != "" {
		return user + " " + catalogMarker + js, nil
	}
	return catalogMarker + js, nil
}

// dumpState returns the dpsql state of key for SHOW CREATE TABLE (ok false
// when there is none: no catalog entry and no budget account).
func (g *Rules) dumpState(key string) (dumpedTable, bool, error) {
	var d dumpedTable
	if t, ok := g.cat.Table(key); ok {
		t.Name = ""
		d.Catalog = &t
	}
	if g.env != nil && g.env.Budget != nil {
		bd, ok, err := g.env.Budget.ExportTable(key, true)
		if err != nil {
			return d, false, fmt.Errorf("export budget of %s: %w", key, err)
		}
		if ok {
			d.Budget = &bd
		}
		if acct := g.cat.AccountKey(key); acct != key {
			ud, ok, err := g.env.Budget.ExportTable(acct, true)
			if err != nil {
				return d, false, fmt.Errorf("export budget of %s (unit of %s): %w", acct, key, err)
			}
			if ok {
				d.UnitBudget = &ud
			}
		}
	}
	for _, m := range g.cat.Models() {
		if m.Table == key {
			d.Models = append(d.Models, m)
		}
	}
	return d, d.Catalog != nil || d.Budget != nil || d.UnitBudget != nil, nil
}

// commentedTable presents a table with another comment (SHOW CREATE TABLE).
type commentedTable struct {
	sql.Table
	comment string
}

func (t commentedTable) Comment() string       { return t.comment }
func (t commentedTable) Underlying() sql.Table { return t.Table }

var (
	_ sql.CommentedTable = commentedTable{}
	_ sql.TableWrapper   = commentedTable{}
)

// PostRule rewrites SHOW CREATE TABLE: owners see the table's dpsql
// state in its comment; nobody sees a stale dpsql part a table was created
// with by other paths (CREATE TABLE … AS SELECT).
func (g *Rules) PostRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	owner := g.guard.Owner(ctx)
	return transform.Node(n, func(node sql.Node) (sql.Node, transform.TreeIdentity, error) {
		sc, ok := node.(*plan.ShowCreateTable)
		if !ok || sc.IsView {
			return node, transform.SameTree, nil
		}
		rt, ok := sc.Child.(*plan.ResolvedTable)
		if !ok || rt.SqlDatabase == nil {
			return node, transform.SameTree, nil
		}
		key, ok := functions.TableKey(rt)
		if !ok || functions.IsView(rt.Name()) {
			return node, transform.SameTree, nil
		}
		var comment string
		if ct, ok := rt.Table.(sql.CommentedTable); ok {
			comment = ct.Comment()
		}
		user, _, stale := splitComment(comment)
		d, has, err := g.dumpState(key)
		if err != nil {
			return nil, transform.SameTree, err
		}
		if !owner || !has {
			if !stale {
				return node, transform.SameTree, nil
			}
			comment = user
		} else if comment, err = encodeComment(user, d); err != nil {
			return nil, transform.SameTree, err
		}
		out, err := sc.WithChildren(plan.NewResolvedTable(commentedTable{Table: rt.Table, comment: comment}, rt.SqlDatabase, rt.AsOf))
		if err != nil {
			return nil, transform.SameTree, err
		}
		return out, transform.NewTree, nil
	})
}

// PreRule handles the statements of a restore: a CREATE TABLE carrying
// a dpsql catalog, and the placeholders of the dpsql views.
func (g *Rules) PreRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	// A rename onto a name with a budget account protects the table, like a
	// CREATE (the storage hook sees only the old name).
	var err error
	transform.Inspect(n, func(node sql.Node) bool {
		if r, ok := node.(*plan.RenameTable); ok && err == nil && r.Database() != nil {
			for _, to := range r.NewNames {
				if err = g.guard.ProtectOnCreate(ctx, catalog.Key(r.Database().Name(), to)); err != nil {
					break
				}
			}
		}
		return err == nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	switch x := n.(type) {
	case *plan.CreateTable:
		if functions.IsView(x.Name()) && g.matchesView(x) {
			return noop(fmt.Sprintf("%s is a dpsql view, always present: the dumped placeholder was skipped", x.Name())), transform.NewTree, nil
		}
		return g.restoreCreate(ctx, x)
	case *plan.DropTable:
		return dropViewPlaceholders(x)
	case *plan.DropView:
		if !x.IfExists {
			return n, transform.SameTree, nil
		}
		for _, c := range x.Children() {
			if !functions.IsView(nodeName(c)) {
				return n, transform.SameTree, nil
			}
		}
		return noop("the dpsql views are always present: DROP VIEW IF EXISTS of them was skipped"), transform.NewTree, nil
	}
	return n, transform.SameTree, nil
}

func nodeName(n sql.Node) string {
	if nm, ok := n.(sql.Nameable); ok {
		return nm.Name()
	}
	return ""
}

// matchesView reports whether a CREATE TABLE named like a dpsql view has
// exactly that view's columns (what mysqldump writes for it).
func (g *Rules) matchesView(ct *plan.CreateTable) bool {
	if g.env == nil || ct.Database() == nil {
		return false
	}
	v, ok := g.env.Views(ct.Database().Name())[strings.ToLower(ct.Name())]
	if !ok {
		return false
	}
	want, got := v.Schema(), ct.PkSchema().Schema
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		if !strings.EqualFold(want[i].Name, got[i].Name) {
			return false
		}
	}
	return true
}

// dropViewPlaceholders drops the dpsql views from DROP TABLE IF EXISTS (a
// DROP TABLE of a view finds no table; with IF EXISTS that is no error).
func dropViewPlaceholders(d *plan.DropTable) (sql.Node, transform.TreeIdentity, error) {
	if !d.IfExists() {
		return d, transform.SameTree, nil
	}
	var keep []sql.Node
	for _, t := range d.Tables {
		if !functions.IsView(nodeName(t)) {
			keep = append(keep, t)
		}
	}
	switch {
	case len(keep) == len(d.Tables):
		return d, transform.SameTree, nil
	case len(keep) == 0:
		return noop("the dpsql views are not tables: DROP TABLE IF EXISTS of them was skipped"), transform.NewTree, nil
	}
	return plan.NewDropTable(keep, true), transform.NewTree, nil
}

// restoreCreate installs the dpsql catalog a CREATE TABLE carries, before
// the table exists, and strips it from the comment the table keeps.
func (g *Rules) restoreCreate(ctx *sql.Context, ct *plan.CreateTable) (sql.Node, transform.TreeIdentity, error) {
	comment, _ := ct.TableOpts["comment"].(string)
	user, js, ok := splitComment(comment)
	if !ok || ct.Database() == nil {
		return ct, transform.SameTree, nil
	}
	db, name := ct.Database().Name(), ct.Name()
	key := catalog.Key(db, name)
	if !g.guard.Owner(ctx) {
		return nil, transform.SameTree, fmt.Errorf("CREATE TABLE %s carries a dpsql catalog (a dump of a protected table): only data owners may restore it", key)
	}
	if ct.Temporary() {
		return nil, transform.SameTree, fmt.Errorf("CREATE TEMPORARY TABLE %s: a dpsql catalog can only be restored into a permanent table", key)
	}
	var d dumpedTable
	dec := json.NewDecoder(strings.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		// Never create the table without the protection it was dumped with.
		return nil, transform.SameTree, fmt.Errorf("CREATE TABLE %s: the dpsql catalog in its comment is unreadable (%v); the table was not created", key, err)
	}
	opts := make(map[string]any, len(ct.TableOpts))
	for k, v := range ct.TableOpts {
		opts[k] = v
	}
	opts["comment"] = user
	out := *ct
	out.TableOpts = opts
	if _, err := g.st.TableSchema(db, name); err == nil {
		// The table exists: the CREATE fails (or IF NOT EXISTS does
		// nothing) and its catalog is left as it is.
		return &out, transform.NewTree, nil
	}
	if err := g.restoreState(db, key, d); err != nil {
		return nil, transform.SameTree, fmt.Errorf("CREATE TABLE %s: restore its dpsql catalog: %w", key, err)
	}
	return &out, transform.NewTree, nil
}

// restoreState installs a dumped catalog entry of table key (in database
// db) and merges a dumped budget and the dumped account of its unit.
func (g *Rules) restoreState(db, key string, d dumpedTable) error {
	if d.Budget != nil || d.UnitBudget != nil {
		if g.env == nil || g.env.Budget == nil {
			return errors.New("no accountant")
		}
		if d.Catalog == nil {
			d.Catalog = &catalog.Table{}
		}
		// An account means the table was protected.
		d.Catalog.Protected = true
	}
	if d.UnitBudget != nil && d.Catalog.Unit == nil {
		return errors.New("the dump carries a privacy unit's budget but no unit membership")
	}
	if d.Catalog != nil {
		if d.Catalog.Unit != nil {
			// A unit lives in one database: the one restored into.
			m := *d.Catalog.Unit
			m.Unit, m.Parent = inDB(db, m.Unit), inDB(db, m.Parent)
			d.Catalog.Unit = &m
		}
		// Protection first: from here on analysts cannot read the table.
		if err := g.cat.Restore(key, *d.Catalog); err != nil {
			return err
		}
	}
	if d.Budget != nil {
		if err := g.env.Budget.RestoreTable(key, *d.Budget); err != nil {
			return err
		}
	}
	if d.UnitBudget != nil {
		// Into the account the table charges now (a restore never moves a
		// table out of a unit it already has: catalog.Restore): what was
		// spent on its persons stays spent.
		acct := g.cat.AccountKey(key)
		if acct == key {
			return fmt.Errorf("%s has no privacy unit after the restore", key)
		}
		if err := g.env.Budget.RestoreTable(acct, *d.UnitBudget); err != nil {
			return fmt.Errorf("budget of %s: %w", acct, err)
		}
	}
	for _, m := range d.Models {
		// A model belongs to the database of its table: restored into
		// another database it moves there with the table; a name already
		// taken in that database keeps the existing model.
		m.Table = key
		if m.Name == "" || g.cat.HasModel(m.DB(), m.Name) {
			continue
		}
		if err := g.cat.PutModel(m); err != nil {
			return fmt.Errorf("model %s: %w", m.Name, err)
		}
	}
	return nil
}

// inDB moves a "db.name" key into database db ("" stays "").
func inDB(db, key string) string {
	if key == "" {
		return ""
	}
	_, name, _ := strings.Cut(key, ".")
	return strings.ToLower(db) + "." + name
}

// noopNode answers OK without doing anything, with a note for the client.
type noopNode struct{ note string }

func noop(note string) sql.Node { return &noopNode{note: note} }

var _ sql.ExecSourceRel = (*noopNode)(nil)

func (n *noopNode) Resolved() bool       { return true }
func (n *noopNode) IsReadOnly() bool     { return true }
func (n *noopNode) Schema() sql.Schema   { return types.OkResultSchema }
func (n *noopNode) Children() []sql.Node { return nil }
func (n *noopNode) String() string       { return "NoOp(" + n.note + ")" }
func (n *noopNode) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}
func (n *noopNode) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	ctx.Warn(1105, "dpsql: %s", n.note)
	return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(0))), nil
}

// mysqldump of the mysql database always asks for the structure of
// mysql.general_log and mysql.slow_log, which go-mysql-server's mysql
// database does not have; Parser answers those two SHOW CREATE TABLEs
// with MySQL's definitions (the logs themselves are not kept).
var logTables = map[string]string{
	"general_log": "CREATE TABLE `general_log` (\n  `event_time` timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),\n  `user_host` mediumtext NOT NULL,\n  `thread_id` bigint unsigned NOT NULL,\n  `server_id` int unsigned NOT NULL,\n  `command_type` varchar(64) NOT NULL,\n  `argument` mediumblob NOT NULL\n) ENGINE=CSV DEFAULT CHARSET=utf8mb3 COMMENT='General log'",
	"slow_log":    "CREATE TABLE `slow_log` (\n  `start_time` timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),\n  `user_host` mediumtext NOT NULL,\n  `query_time` time(6) NOT NULL,\n  `lock_time` time(6) NOT NULL,\n  `rows_sent` int NOT NULL,\n  `rows_examined` int NOT NULL,\n  `db` varchar(512) NOT NULL,\n  `last_insert_id` int NOT NULL,\n  `insert_id` int NOT NULL,\n  `server_id` int unsigned NOT NULL,\n  `sql_text` mediumblob NOT NULL,\n  `thread_id` bigint unsigned NOT NULL\n) ENGINE=CSV DEFAULT CHARSET=utf8mb3 COMMENT='Slow log'",
}

// Parser wraps the engine's parser to answer SHOW CREATE TABLE of
// mysql.general_log and mysql.slow_log (see logTables).
type Parser struct{ sql.Parser }

func (p Parser) ParseSimple(query string) (ast.Statement, error) {
	st, err := p.Parser.ParseSimple(query)
	if err != nil {
		return st, err
	}
	return p.rewrite(nil, st), nil
}

func (p Parser) Parse(ctx *sql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	st, q, rest, err := p.Parser.Parse(ctx, query, multi)
	if err != nil {
		return st, q, rest, err
	}
	return p.rewrite(ctx, st), q, rest, nil
}

func (p Parser) ParseWithOptions(ctx context.Context, query string, delim rune, multi bool, o ast.ParserOptions) (ast.Statement, string, string, error) {
	st, q, rest, err := p.Parser.ParseWithOptions(ctx, query, delim, multi, o)
	if err != nil {
		return st, q, rest, err
	}
	return p.rewrite(ctx, st), q, rest, nil
}

func (p Parser) ParseOneWithOptions(ctx context.Context, query string, o ast.ParserOptions) (ast.Statement, int, error) {
	st, i, err := p.Parser.ParseOneWithOptions(ctx, query, o)
	if err != nil {
		return st, i, err
	}
	return p.rewrite(ctx, st), i, nil
}

func (p Parser) rewrite(ctx context.Context, st ast.Statement) ast.Statement {
	s, ok := st.(*ast.Show)
	if !ok || !strings.EqualFold(s.Type, "create table") {
		return st
	}
	ddl, ok := logTables[strings.ToLower(s.Table.Name.String())]
	if !ok {
		return st
	}
	db := s.Table.DbQualifier.String()
	if db == "" {
		if sctx, ok := ctx.(*sql.Context); ok && sctx != nil && sctx.Session != nil {
			db = sctx.GetCurrentDatabase()
		}
	}
	if !strings.EqualFold(db, "mysql") {
		return st
	}
	q := "SELECT '" + s.Table.Name.String() + "' AS `Table`, '" + strings.ReplaceAll(ddl, "'", "''") + "' AS `Create Table`"
	out, err := p.Parser.ParseSimple(q)
	if err != nil {
		return st
	}
	return out
}
