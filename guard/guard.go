package guard

import (
	"errors"
	"fmt"
	"github.com/dpsql/dpsql/dpquery/syntax"
	"math"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/store"
)

// ErrProtected is returned to analysts for any SQL path to a protected table.
var ErrProtected = errors.New("is protected: analysts can reach it only through DP functions (see dp_budget and docs/sql.md)")

func protectedErr(key string) error { return fmt.Errorf("table %s %w", key, ErrProtected) }

// Guard keeps protected rows away from analysts (see the package doc).
type Guard struct {
	cat *catalog.Catalog
	st  *store.Store
	// mdb holds the accounts and grants; set once the analyzer is built.
	mdb *mysql_db.MySQLDb
	env *functions.Env // bi (issue 12): releases of DP aggregate queries

	// PlanDPAgg plans an analyst's aggregate query over a protected table
	// as a DP release (the DP aggregate planner): (nil, nil) when the plan
	// is not one; nil means no planner.
	PlanDPAgg func(ctx *sql.Context, root sql.Node) (sql.Node, error)
	// TableRelease reports whether node is a ★ table function (a release,
	// DP_HISTOGRAM) and whether it is the sole source of root; nil means
	// none is registered.
	TableRelease func(root, node sql.Node) (release, sole bool)
}

// New returns the guard of a catalog, its store and the DP functions'
// environment. SetAccounts completes it once the analyzer is built.
func New(cat *catalog.Catalog, st *store.Store, env *functions.Env) *Guard {
	return &Guard{cat: cat, st: st, env: env}
}

// SetAccounts gives the guard the accounts and grants.
func (g *Guard) SetAccounts(mdb *mysql_db.MySQLDb) { g.mdb = mdb }

// hasGlobal reports whether the account of ctx holds priv globally (root
// holds every privilege).
func (g *Guard) hasGlobal(ctx *sql.Context, priv sql.PrivilegeType) bool {
	if g.mdb == nil || !g.mdb.Enabled() {
		return true
	}
	return g.mdb.UserHasPrivileges(ctx, sql.NewPrivilegedOperation(sql.PrivilegeCheckSubject{}, priv))
}

// CanRead reports whether the account of ctx may SELECT from db.table: the
// privilege DP functions require (functions.Env.CanRead).
func (g *Guard) CanRead(ctx *sql.Context, db, table string) bool {
	if g.mdb == nil || !g.mdb.Enabled() {
		return true
	}
	return g.mdb.UserHasPrivileges(ctx, sql.NewPrivilegedOperation(sql.PrivilegeCheckSubject{Database: db, Table: table}, sql.PrivilegeType_Select))
}

// ownConnection reports whether connection id belongs to the account of ctx.
func ownConnection(ctx *sql.Context, id uint32) bool {
	if ctx.ProcessList == nil {
		return false
	}
	for _, p := range ctx.ProcessList.Processes() {
		if p.Connection == id {
			return p.User == functions.UserOf(ctx)
		}
	}
	return false
}

// secureFilePriv is the server variable naming the directory for server-side
// file access; it is a path inside the data directory, shown only to
// accounts with the FILE privilege.
const secureFilePriv = "secure_file_priv"

// Owner reports whether the account of ctx is a data owner.
func (g *Guard) Owner(ctx *sql.Context) bool { return g.cat.IsOwner(functions.UserOf(ctx)) }

// Hooks are the storage-level checks.
func (g *Guard) Hooks() store.Hooks {
	return store.Hooks{
		CheckRead: func(ctx *sql.Context, db, table string) error {
			key := catalog.Key(db, table)
			if g.cat.IsProtected(key) && !g.Owner(ctx) {
				return protectedErr(key)
			}
			return nil
		},
		HideRowCount: func(ctx *sql.Context, db, table string) bool {
			return g.HideRowCount(ctx, catalog.Key(db, table))
		},
		CheckWrite: func(ctx *sql.Context, db, table string, op store.WriteOp, row sql.Row) error {
			if op == store.OpCreate || op == store.OpRename {
				for _, v := range functions.ViewNames {
					if strings.EqualFold(v, table) {
						return fmt.Errorf("table name %s is reserved for the dpsql view of the same name", table)
					}
				}
			}
			key := catalog.Key(db, table)
			if op == store.OpCreate {
				// issue 13: a name with a budget account is created protected.
				if err := g.ProtectOnCreate(ctx, key); err != nil {
					return err
				}
			}
			t, known := g.cat.Table(key)
			if known && t.Protected && !g.Owner(ctx) {
				return fmt.Errorf("table %s is protected: only data owners may modify it", key)
			}
			// bi (issue 12): a write starts a new snapshot for the answer
			// cache — only one that may happen: a refused analyst write
			// changes nothing, not even the snapshot (issue 25).
			if err := g.cat.NoteWrite(key); err != nil {
				return err
			}
			if !known {
				return nil
			}
			switch op {
			case store.OpDrop:
				// Bounds and domains describe the old table; the budget
				// account (with what was spent) survives in the accountant.
				return g.cat.Forget(key)
			case store.OpRename:
				if t.Protected {
					return fmt.Errorf("table %s is protected and cannot be renamed (its privacy budget is bound to the name)", key)
				}
			}
			if row == nil {
				return nil
			}
			return g.ValidateRow(db, table, t, row)
		},
	}
}

// HideRowCount reports whether the row count of table key is hidden from
// the caller: for analysts on a protected table of a privacy unit. Under
// add/remove-one-person neighbours the number of rows is not public (one
// person may have any number of rows in every table of the unit:
// docs/privacy/units.md §2); on row-level protected tables it stays public
// (replace-one neighbours keep n fixed: threat-model.md).
func (g *Guard) HideRowCount(ctx *sql.Context, key string) bool {
	if !g.cat.IsProtected(key) {
		return false
	}
	if _, unit := g.cat.UnitOf(key); !unit {
		return false
	}
	return !g.Owner(ctx)
}

// ValidateRow checks an owner's write against declared bounds and domains.
// The owner may see their own data, so the error names the value.
func (g *Guard) ValidateRow(db, table string, t catalog.Table, row sql.Row) error {
	if len(t.Bounds) == 0 && len(t.Labels) == 0 {
		return nil
	}
	sch, err := g.st.TableSchema(db, table)
	if err != nil {
		return err
	}
	for i, c := range sch {
		if i >= len(row) || row[i] == nil {
			continue
		}
		name := strings.ToLower(c.Name)
		if b, ok := t.Bounds[name]; ok && !t.Clip[name] {
			f, ok := functions.ToFloat(row[i])
			// Bounds are on the scale of the declared transform, if any.
			tf := t.Transforms[name]
			f = mechanism.ApplyTransform(tf, f)
			if !ok || math.IsNaN(f) || f < b.Lo || f > b.Hi {
				if tf != "" {
					return fmt.Errorf("value %v of column %s is outside its declared bounds [%v, %v] for %s (on the %s scale; declare the bounds with 'clip' to keep such values)", row[i], c.Name, b.Lo, b.Hi, t.Name, tf)
				}
				return fmt.Errorf("value %v of column %s is outside its declared bounds [%v, %v] for %s", row[i], c.Name, b.Lo, b.Hi, t.Name)
			}
		}
		if dom, ok := t.Labels[name]; ok {
			s := functions.LabelString(row[i])
			found := false
			for _, d := range dom {
				if d == s {
					found = true
					break
				}
			}
			if !found {
				return fmt.Errorf("value %s of column %s is not in its declared label domain for %s", quoteShort(s), c.Name, t.Name)
			}
		}
	}
	return nil
}

// quoteShort quotes a value for an owner's error message, cut at 64 bytes.
func quoteShort(s string) string {
	if len(s) <= 64 {
		return strconv.Quote(s)
	}
	return strconv.Quote(strings.ToValidUTF8(s[:64], "")) + fmt.Sprintf("… (%d bytes)", len(s))
}

// Rule is the analyzer rule (post-validation) described in the package doc.
func (g *Guard) Rule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, scope *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	// issue 29: a read-only session (SET SESSION TRANSACTION READ ONLY)
	// refuses writes, as MySQL does (1792; go-sql-driver's rejectReadOnly
	// reconnects on it). SET, USE and transaction statements are read-only.
	if v, verr := ctx.GetSessionVariable(ctx, "transaction_read_only"); verr == nil && !plan.IsReadOnly(n) {
		if fmt.Sprint(v) == "1" || v == true {
			return n, transform.SameTree, sql.ErrReadOnlyTransaction.New()
		}
	}
	owner := g.Owner(ctx)
	fileOK := g.hasGlobal(ctx, sql.PrivilegeType_File)
	// bi (issue 12): statements that provably read no rows answer empty;
	// DP aggregate queries are planned by dpquery (PlanDPAgg) instead of refused.
	// A statement with SELECT WITH DIFFERENTIAL_PRIVACY is a DP query for
	// owners too: never answered exactly because the caller may read rows.
	if !owner || hasDPClause(ctx) {
		out, ok, err := g.biRewrite(ctx, n, scope)
		if ok || err != nil {
			return out, transform.NewTree, err
		}
		n = out
	}
	var err error
	touchesProtected, predicts, showVars, showProcs := false, false, false, false
	check := func(node sql.Node) bool {
		if err != nil {
			return false
		}
		// bi (issue 12): public metadata statements, SHOW GRANTS.
		if stop, merr := metaCheck(ctx, node); stop || merr != nil {
			err = merr
			return false
		}
		if g.TableRelease != nil {
			// bi (issue 12): a ★ table function is one release only as the
			// sole source of its statement (dpquery/histtf.go).
			if release, sole := g.TableRelease(n, node); release && ((scope != nil && !scope.IsEmpty()) || !sole) {
				err = errors.New("DP_HISTOGRAM spends privacy budget and must be the only source of its statement, as SELECT … FROM DP_HISTOGRAM(…) [AS h] [WHERE/ORDER BY/LIMIT on its bins], with no join, UNION or subquery, so that it is evaluated exactly once")
				return false
			}
		}
		switch x := node.(type) {
		case *plan.AnalyzeTable:
			for _, t := range x.Tables {
				key, ok := functions.TableKey(t)
				if !ok {
					key, ok = catalog.Key(x.Db, t.Name()), true
				}
				if g.cat.IsProtected(key) {
					err = fmt.Errorf("ANALYZE TABLE is refused on protected table %s: its statistics would describe the rows", key)
					return false
				}
			}
		case *plan.ShowProcessList:
			// An analyst's own connections only (processlist.go).
			showProcs = !owner
		case *plan.Set:
			// Server-wide variables change every session, the owners'
			// included: SUPER only, as in MySQL.
			for _, ex := range x.Exprs {
				sf, ok := ex.(*expression.SetField)
				if !ok {
					continue
				}
				if sv, ok := sf.LeftChild.(*expression.SystemVar); ok && (sv.Scope == nil || !sv.Scope.IsSessionOnly()) && !g.hasGlobal(ctx, sql.PrivilegeType_Super) {
					err = fmt.Errorf("SET GLOBAL/PERSIST of %s is refused: changing a server-wide variable needs the SUPER privilege (SET SESSION is allowed)", sv.Name)
					return false
				}
			}
		case *plan.Kill:
			// Any account may kill its own statements; others' need SUPER.
			// Other accounts' connection ids are not revealed.
			if !g.hasGlobal(ctx, sql.PrivilegeType_Super) && !ownConnection(ctx, x.ConnID) {
				err = fmt.Errorf("unknown thread id: %d", x.ConnID)
				return false
			}
		case *plan.Into:
			if (x.Outfile != "" || x.Dumpfile != "") && !fileOK {
				err = errors.New("SELECT … INTO OUTFILE/DUMPFILE needs the FILE privilege")
				return false
			}
		case *plan.ShowVariables:
			showVars = true
		case *plan.InsertInto:
			// Refused while planning, before go-mysql-server touches the
			// table's AUTO_INCREMENT counter (the storage hook refuses the
			// write itself too).
			if key, ok := functions.TableKey(x.Destination); ok && g.cat.IsProtected(key) && !owner {
				err = fmt.Errorf("table %s is protected: only data owners may modify it", key)
				return false
			}
		}
		if key, ok := functions.TableKey(node); ok {
			if g.cat.IsProtected(key) {
				touchesProtected = true
				if !owner {
					err = protectedErr(key)
					return false
				}
			}
		}
		return true
	}
	inspectDeep(n, check, func(e sql.Expression) {
		if err != nil {
			return
		}
		switch x := e.(type) {
		case *expression.SystemVar:
			if strings.EqualFold(x.Name, secureFilePriv) && !fileOK {
				err = errors.New("@@secure_file_priv is visible to accounts with the FILE privilege only")
				return
			}
		case sql.FunctionExpression:
			if strings.EqualFold(x.FunctionName(), "load_file") && !fileOK {
				err = errors.New("LOAD_FILE needs the FILE privilege")
				return
			}
		}
		if r, ok := e.(functions.Releaser); ok {
			if r.IsDPRelease() {
				if !topLevelRelease(n, scope, e) {
					err = fmt.Errorf("%s spends privacy budget and must be called on its own, as SELECT %s(...) with no FROM, WHERE, JOIN, subquery, UNION or other clause, so that it is evaluated exactly once", e, funcName(e))
				}
			} else {
				predicts = true
			}
		}
	})
	if err == nil && predicts && touchesProtected {
		err = errors.New("DP_PREDICT is refused on protected tables: per-row predictions of private rows are not differentially private")
	}
	if err != nil {
		return nil, transform.SameTree, err
	}
	if showProcs {
		return ownProcessesOnly(ctx, n)
	}
	if showVars && !fileOK {
		return hideFilePriv(n)
	}
	return n, transform.SameTree, nil
}

// hideFilePriv drops secure_file_priv from SHOW VARIABLES.
func hideFilePriv(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(node sql.Node) (sql.Node, transform.TreeIdentity, error) {
		sv, ok := node.(*plan.ShowVariables)
		if !ok {
			return node, transform.SameTree, nil
		}
		hide := expression.NewNot(expression.NewEquals(
			expression.NewGetField(0, types.LongText, plan.ShowVariablesVariableCol, false),
			expression.NewLiteral(secureFilePriv, types.LongText)))
		filter := sql.Expression(hide)
		if sv.Filter != nil {
			filter = expression.NewAnd(sv.Filter, hide)
		}
		return plan.NewShowVariables(filter, sv.Global), transform.NewTree, nil
	})
}

func funcName(e sql.Expression) string {
	if f, ok := e.(sql.FunctionExpression); ok {
		return strings.ToUpper(f.FunctionName())
	}
	return "DP_FUNCTION"
}

// topLevelRelease reports whether release expression e sits in the select
// list of a top-level SELECT with no FROM clause.
func topLevelRelease(root sql.Node, scope *plan.Scope, e sql.Expression) bool {
	if scope != nil && !scope.IsEmpty() {
		return false
	}
	root = unwrapRelease(root) // bi (issue 12): LIMIT, SELECT * FROM (…) AS x
	p, ok := root.(*plan.Project)
	if !ok {
		return false
	}
	if !isDual(p.Child) {
		return false
	}
	for _, pe := range p.Projections {
		found := false
		transform.InspectExpr(pe, func(x sql.Expression) bool {
			if x == e {
				found = true
			}
			return found
		})
		if found {
			return true
		}
	}
	return false
}

func isDual(n sql.Node) bool {
	switch x := n.(type) {
	case *plan.ResolvedTable:
		return plan.IsDualTable(x.Table)
	case *plan.TableAlias:
		return isDual(x.Child)
	}
	return false
}

// hiddenChildren returns subtrees a node keeps outside Children(): go-mysql-
// server analyses them separately, but the guard must see them.
func hiddenChildren(n sql.Node) []sql.Node {
	switch x := n.(type) {
	case *plan.InsertInto:
		return []sql.Node{x.Source}
	case *plan.TableCopier:
		return []sql.Node{x.Source}
	case *plan.CreateView:
		if x.Definition != nil {
			return []sql.Node{x.Definition}
		}
	}
	return nil
}

// inspectDeep walks every node and expression, descending into subqueries
// and other expressions that carry nodes.
func inspectDeep(n sql.Node, onNode func(sql.Node) bool, onExpr func(sql.Expression)) {
	transform.Inspect(n, func(node sql.Node) bool {
		if node == nil {
			return false
		}
		if !onNode(node) {
			return false
		}
		for _, h := range hiddenChildren(node) {
			if h != nil {
				inspectDeep(h, onNode, onExpr)
			}
		}
		if ne, ok := node.(sql.Expressioner); ok {
			for _, e := range ne.Expressions() {
				transform.InspectExpr(e, func(x sql.Expression) bool {
					onExpr(x)
					if wn, ok := x.(sql.ExpressionWithNodes); ok {
						for _, c := range wn.NodeChildren() {
							inspectDeep(c, onNode, onExpr)
						}
					}
					return false
				})
			}
		}
		return true
	})
}

// NewAuthFactory wraps the default authorisation so every logged-in user
// may read the dpsql system views.
func NewAuthFactory(inner sql.AuthorizationHandlerFactory) sql.AuthorizationHandlerFactory {
	return authFactory{inner: inner}
}

type authFactory struct {
	inner sql.AuthorizationHandlerFactory
}

func (f authFactory) CreateHandler(cat sql.Catalog) sql.AuthorizationHandler {
	h := authHandler{AuthorizationHandler: f.inner.CreateHandler(cat)}
	if c, ok := cat.(*analyzer.Catalog); ok {
		h.mdb = c.MySQLDb
	}
	return h
}

type authHandler struct {
	sql.AuthorizationHandler
	mdb *mysql_db.MySQLDb
}

// usesDB reports whether the account holds any privilege in db (on the
// database or on one of its tables): then it may read the dpsql views of
// that database, whose rows are filtered to the tables it may read.
func (h authHandler) usesDB(ctx *sql.Context, db string) bool {
	if h.mdb == nil || !h.mdb.Enabled() {
		return true
	}
	if db == "" {
		db = ctx.GetCurrentDatabase()
	}
	ps := h.mdb.UserActivePrivilegeSet(ctx)
	return ps.GlobalCount() > 0 || ps.Database(db).HasPrivileges()
}

// viewsOnly reports whether a SELECT names only dpsql views of databases the
// account uses.
func (h authHandler) viewsOnly(ctx *sql.Context, auth ast.AuthInformation) bool {
	if auth.TargetType != ast.AuthTargetType_MultipleTableIdentifiers && auth.TargetType != ast.AuthTargetType_SingleTableIdentifier {
		return false
	}
	if len(auth.TargetNames) == 0 || len(auth.TargetNames)%2 != 0 {
		return false
	}
	for i := 0; i < len(auth.TargetNames); i += 2 {
		if !functions.IsView(auth.TargetNames[i+1]) || !h.usesDB(ctx, auth.TargetNames[i]) {
			return false
		}
	}
	return true
}

func (h authHandler) HandleAuth(ctx *sql.Context, st sql.AuthorizationQueryState, auth ast.AuthInformation) error {
	// KILL is the only statement the parser marks SUPER. Every account may
	// kill its own statements (as in MySQL); the guard's rule refuses the
	// others without SUPER. SHOW GRANTS is decided by checkShowGrants (bi).
	// SHOW PROCESSLIST (the only statement marked PROCESS): every account
	// may list its own connections, as in MySQL; the rule filters the rows
	// of analysts (processlist.go).
	if auth.AuthType == ast.AuthType_SUPER || auth.AuthType == ast.AuthType_PROCESS || showGrantsAuth(auth) {
		return nil
	}
	if auth.AuthType == ast.AuthType_SELECT || auth.AuthType == ast.AuthType_SHOW {
		sys := len(auth.TargetNames) > 0
		step := 1
		if auth.TargetType == ast.AuthTargetType_MultipleTableIdentifiers || auth.TargetType == ast.AuthTargetType_SingleTableIdentifier || auth.TargetType == ast.AuthTargetType_TableColumn {
			step = 2
			if auth.TargetType == ast.AuthTargetType_TableColumn {
				step = 3
			}
		}
		for i := 0; i < len(auth.TargetNames); i += step {
			if !functions.IsSystemDB(auth.TargetNames[i]) {
				sys = false
			}
		}
		if sys || (auth.AuthType == ast.AuthType_SELECT && h.viewsOnly(ctx, auth)) {
			return nil
		}
	}
	return h.AuthorizationHandler.HandleAuth(ctx, st, auth)
}

func (h authHandler) CheckDatabase(ctx *sql.Context, st sql.AuthorizationQueryState, db string) error {
	if functions.IsSystemDB(db) {
		return nil
	}
	return h.AuthorizationHandler.CheckDatabase(ctx, st, db)
}

func (h authHandler) CheckTable(ctx *sql.Context, st sql.AuthorizationQueryState, db, schema, table string) error {
	if functions.IsSystemDB(db) || (functions.IsView(table) && h.usesDB(ctx, db)) {
		return nil
	}
	return h.AuthorizationHandler.CheckTable(ctx, st, db, schema, table)
}

// ProtectOnCreate is the storage hook's rule for a new table: a name with a
// budget account is created protected, and only by an owner.
func (g *Guard) ProtectOnCreate(ctx *sql.Context, key string) error {
	if g.env == nil || g.env.Budget == nil {
		return nil
	}
	has, err := g.env.Budget.HasAccount(key)
	if err != nil || !has {
		return err
	}
	if !g.Owner(ctx) {
		return fmt.Errorf("table %s has a privacy budget (it is or was protected): only data owners may create it", key)
	}
	if g.cat.IsProtected(key) {
		return nil
	}
	return g.cat.SetProtected(key, true)
}

// hasDPClause reports whether the statement carried SELECT WITH
// DIFFERENTIAL_PRIVACY (stashed by the wire handler).
func hasDPClause(ctx *sql.Context) bool {
	if ctx == nil || ctx.Session == nil {
		return false
	}
	_, ok := syntax.Stashed(ctx.Session.ID())
	return ok
}
