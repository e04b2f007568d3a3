package fastpath

import (
	"context"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/guard"
	"github.com/dpsql/dpsql/store"
)

// Prepared-statement plan cache (issue 13, sysbench OLTP).
//
// go-mysql-server binds and fully analyses a prepared statement on every
// COM_STMT_EXECUTE; for a point select the costed index planning is most of
// the CPU. PlanCache keeps, per connection and statement text, the analysed
// plan of a first execution and re-uses it with the new parameter values.
//
// Soundness, in order of the checks on every execution:
//   - Statements on protected tables are never cached, for any account:
//     the guard's answer for them (a refusal, or a DP aggregate plan) comes
//     from the normal path every time.
//   - The statement is bound again from its parsed text with the new values
//     (go-mysql-server's planbuilder): privilege checks, table and view
//     resolution run as without the cache, against the current grants.
//   - The guard's rule runs on that bound plan (as its pre-analysis rule
//     does) and on the re-used analysed plan (as its post-validation rule
//     does), for the current user and catalog; any refusal is returned,
//     any rewrite sends the statement down the normal path.
//   - The plan is re-used only if every table of the new bound plan is the
//     same table, with the same definition, as in the cached one, and no
//     statement other than plain DML/queries (DDL, GRANT, CALL, SET, …) ran
//     through the analyser since it was cached (a process-wide generation).
//   - Only small plans are cached: whitelisted node and expression types
//     (projections, filters, static index lookups with one range, sorts,
//     DISTINCT, GROUP BY with plain aggregates, single-table UPDATE /
//     DELETE, INSERT … VALUES whose omitted columns' defaults are plain
//     too), so nothing evaluated at analysis time (functions, subqueries,
//     DP releases) can be frozen in the plan.
//   - A parameter value appears in the analysed plan either as its literal
//     (replaced by pointer) or as a key of the index range, which is rebuilt
//     by converting the new value with the range's column type. A range key
//     is attributed to a parameter only if the parameter is compared
//     directly with that index column and no other such parameter, nor a
//     constant of the statement, has the same value; every parameter must
//     be found. The first two
//     re-uses of a statement are also analysed in full and must print
//     exactly the same plan, or the statement is never cached.
//
// Text INSERTs of a plain form go through the same entries as templates
// with bound values (textinsert.go), which after their verified re-uses
// skip the binding (fastInsert says what replaces it).
type PlanCache struct {
	e   *sqle.Engine // set once the engine is built
	g   *guard.Guard
	cat *catalog.Catalog
	off bool
	gen atomic.Uint64

	mu    sync.Mutex
	conns map[uint32]map[string]*planEntry

	hits atomic.Uint64 // executions that re-used a cached plan

	textOff  atomic.Bool   // test hook: text INSERTs take the ordinary path
	textHits atomic.Uint64 // text INSERTs that re-used a cached plan (textinsert.go)
	textFast atomic.Uint64 // of which without binding again (fastInsert)
}

// Hits is the number of prepared-statement executions that re-used an
// analysed plan.
func (pc *PlanCache) Hits() uint64 { return pc.hits.Load() }

// maxPlansPerConn bounds one connection's cache (cleared when full).
const maxPlansPerConn = 256

// verifyHits is how many re-uses of a statement are checked against a full
// analysis before the cached plan is trusted.
const verifyHits = 2

// maxMisses: a statement whose plan could not be cached this many times
// (for value-dependent reasons) is no longer tried.
const maxMisses = 8

type planEntry struct {
	never    bool
	misses   int
	verified int

	gen      uint64
	tables   []tableRef            // tables of the bound plan, in order
	nexprs   int                   // expressions of the bound plan, in walk order
	pos      []int                 // walk positions of the parameters' literals
	lits     []*expression.Literal // their literals in the cached bound plan
	names    map[*expression.Literal]string
	analyzed sql.Node
	slots    map[*plan.IndexedTableAccess][]rangeSlot

	// Text INSERTs (textinsert.go): the template's parse, and how many
	// uses compared it with the text's.
	stmt   ast.Statement
	parsed int
	qFlags *sql.QueryFlags // the bound statement's flags, for the guard
}

type tableRef struct {
	name string
	key  string // catalog key (db.table)
	t    sql.Table
}

// rangeSlot is one range cut of a static lookup whose key is a parameter.
type rangeSlot struct {
	col   int
	upper bool
	param string
}

// NewPlanCache returns the plan cache of the guard g over catalog cat; off
// turns it off (for comparisons). SetEngine completes it.
func NewPlanCache(g *guard.Guard, cat *catalog.Catalog, off bool) *PlanCache {
	return &PlanCache{g: g, cat: cat, off: off, conns: map[uint32]map[string]*planEntry{}}
}

// SetEngine gives the cache the engine it plans for, once it is built.
func (pc *PlanCache) SetEngine(e *sqle.Engine) { pc.e = e }

// BumpRule is a pre-analysis rule: any statement that is not plain DML or
// a query may change what a plan means (DDL, triggers, views, grants,
// session variables, procedures): cached plans of every connection expire.
func (pc *PlanCache) BumpRule(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !cacheableTop(n) {
		pc.gen.Add(1)
	}
	return n, transform.SameTree, nil
}

func cacheableTop(n sql.Node) bool {
	switch n.(type) {
	case *plan.Project, *plan.Filter, *plan.Sort, *plan.Distinct, *plan.OrderedDistinct, *plan.GroupBy,
		*plan.Limit, *plan.TopN, *plan.InsertInto, *plan.Update, *plan.DeleteFrom,
		*plan.ResolvedTable, *plan.IndexedTableAccess, *plan.StartTransaction, *plan.Commit, *plan.Rollback,
		// SHOW WARNINGS, and the VALUES of an INSERT, which the analyser
		// analyses on their own.
		plan.ShowWarnings, *plan.Values:
		return true
	}
	return false
}

func (pc *PlanCache) dropConn(id uint32) {
	pc.mu.Lock()
	delete(pc.conns, id)
	pc.mu.Unlock()
}

func (pc *PlanCache) entry(id uint32, key string) *planEntry {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	m := pc.conns[id]
	if m == nil {
		m = map[string]*planEntry{}
		pc.conns[id] = m
	}
	en := m[key]
	if en == nil {
		if len(m) >= maxPlansPerConn {
			clear(m)
		}
		en = &planEntry{}
		m[key] = en
	}
	return en
}

// Handler is go-mysql-server's connection handler with the plan cache in
// front of COM_STMT_EXECUTE (and of plain text INSERTs, textinsert.go) and
// statement restarts (restart.go).
type Handler struct {
	*server.Handler
	pc       *PlanCache
	sm       atomic.Pointer[server.SessionManager] // set once the server is built
	sessions *Sessions                             // for statement restarts (restart.go)
	// Connections amid a multi-statement text (restart.go): its later
	// statements arrive one by one and keep the ordinary path.
	inMulti sync.Map
	// The clauses of SQL-level prepared statements (sqlprepare.go).
	prepared sqlPrepared
}

// comStmtExecute runs a prepared statement whose text go-mysql-server
// parses (ComStmtExecute, prepclause.go, rewrites the DP clause first).
func (h *Handler) comStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	defer h.pinIfLockingRead(c, prepare.PrepareStmt)
	node := h.pc.plan(ctx, h.sm.Load(), c, prepare)
	if node == nil {
		return h.restarting(c, func(sent *bool) error {
			return h.Handler.ComStmtExecute(ctx, c, prepare, func(r *sqltypes.Result) error { *sent = true; return callback(r) })
		})
	}
	if !plan.IsReadOnly(node) {
		return h.restarting(c, func(sent *bool) error {
			return h.Handler.ComExecuteBound(ctx, c, prepare.PrepareStmt, node, func(r *sqltypes.Result, _ bool) error { *sent = true; return callback(r) })
		})
	}
	if err := h.query(ctx, c, prepare.PrepareStmt, node, callback); err != nil {
		return sql.CastSQLError(err)
	}
	return nil
}

// spoolRows is how many rows query sends per packet batch.
const spoolRows = 128

// query runs a cached query plan and sends its rows: go-mysql-server's
// Handler.doQuery for one statement, without the per-statement goroutines
// and socket polling of its streaming path (ComExecuteBound would take that
// path even for a point select, as it cannot carry the planner's one-row
// flag). A client that disconnects during a long cached scan is noticed
// when the rows are sent; KILL works as for any statement.
func (h *Handler) query(ctx context.Context, c *mysql.Conn, query string, node sql.Node, callback func(*sqltypes.Result) error) (err error) {
	sm := h.sm.Load()
	sqlCtx, err := sm.NewContextWithQuery(ctx, c, query)
	if err != nil {
		return err
	}
	sqlCtx, err = sqlCtx.ProcessList.BeginQuery(sqlCtx, query)
	if err != nil {
		return err
	}
	defer sqlCtx.ProcessList.EndQuery(sqlCtx)
	if err := sql.SessionCommandBegin(sqlCtx.Session); err != nil {
		return err
	}
	defer sql.SessionCommandEnd(sqlCtx.Session)

	schema, iter, _, err := h.pc.e.PrepQueryPlanForExecution(sqlCtx, query, node, &sql.QueryFlags{})
	if err != nil {
		return err
	}
	fields := schemaToFields(sqlCtx, schema)
	buf := sql.ByteBufPool.Get().(*sql.ByteBuffer)
	defer func() {
		buf.Reset()
		sql.ByteBufPool.Put(buf)
	}()
	res := &sqltypes.Result{Fields: fields}
	for {
		row, nerr := iter.Next(sqlCtx)
		if nerr == io.EOF {
			break
		}
		if nerr != nil {
			iter.Close(sqlCtx)
			return nerr
		}
		out, cerr := server.RowToSQL(sqlCtx, schema, row, nil, buf)
		if cerr != nil {
			iter.Close(sqlCtx)
			return cerr
		}
		res.Rows = append(res.Rows, out)
		res.RowsAffected++
		if len(res.Rows) == spoolRows {
			if err := callback(res); err != nil {
				iter.Close(sqlCtx)
				return err
			}
			res = &sqltypes.Result{Fields: fields}
		}
	}
	if err := iter.Close(sqlCtx); err != nil {
		return err
	}
	// The status flags of the OK/EOF packet: autocommit, in transaction.
	if ac, err := sqlCtx.GetSessionVariable(sqlCtx, "autocommit"); err == nil {
		if on, _ := sql.ConvertToBool(sqlCtx, ac); on {
			c.StatusFlags |= uint16(mysql.ServerStatusAutocommit)
		} else {
			c.StatusFlags &^= uint16(mysql.ServerStatusAutocommit)
		}
	}
	if sqlCtx.GetTransaction() != nil {
		c.StatusFlags |= uint16(mysql.ServerInTransaction)
	} else {
		c.StatusFlags &^= uint16(mysql.ServerInTransaction)
	}
	return callback(res)
}

// schemaToFields is go-mysql-server's (server/handler.go, unexported).
func schemaToFields(ctx *sql.Context, s sql.Schema) []*querypb.Field {
	charSetResults := ctx.GetCharacterSetResults()
	fields := make([]*querypb.Field, len(s))
	for i, c := range s {
		charset := uint32(sql.Collation_Default.CharacterSet())
		if collatedType, ok := c.Type.(sql.TypeWithCollation); ok {
			charset = uint32(collatedType.Collation().CharacterSet())
		}
		if types.IsBinaryType(c.Type) {
			charset = uint32(sql.Collation_binary)
		} else if charSetResults != sql.CharacterSet_Unspecified {
			charset = uint32(charSetResults)
		}
		var flags querypb.MySqlFlag
		if !c.Nullable {
			flags |= querypb.MySqlFlag_NOT_NULL_FLAG
		}
		if c.AutoIncrement {
			flags |= querypb.MySqlFlag_AUTO_INCREMENT_FLAG
		}
		if c.PrimaryKey {
			flags |= querypb.MySqlFlag_PRI_KEY_FLAG
		}
		if types.IsUnsigned(c.Type) {
			flags |= querypb.MySqlFlag_UNSIGNED_FLAG
		}
		fields[i] = &querypb.Field{
			Name: c.Name, OrgName: c.Name, Table: c.Source, OrgTable: c.Source, Database: c.DatabaseSource,
			Type: c.Type.Type(), Charset: charset, ColumnLength: c.Type.MaxTextResponseByteLength(ctx), Flags: uint32(flags),
		}
		if types.IsDecimal(c.Type) {
			fields[i].Decimals = uint32(c.Type.(sql.DecimalType).Scale())
		} else if types.IsDatetimeType(c.Type) {
			fields[i].Decimals = uint32(c.Type.(sql.DatetimeType).Precision())
		}
	}
	return fields
}

func (h *Handler) ConnectionClosed(c *mysql.Conn) {
	h.pc.dropConn(c.ConnectionID)
	h.sessions.m.Delete(c.ConnectionID)
	h.inMulti.Delete(c.ConnectionID)
	h.prepared.drop(c.ConnectionID)
	h.Handler.ConnectionClosed(c)
}

func (h *Handler) ComResetConnection(c *mysql.Conn) error {
	h.pc.dropConn(c.ConnectionID)
	return h.Handler.ComResetConnection(c)
}

// plan returns the analysed plan to execute, or nil for the normal path.
// Any error on the way also means the normal path, which reports it.
func (pc *PlanCache) plan(ctx context.Context, sm *server.SessionManager, c *mysql.Conn, prepare *mysql.PrepareData) sql.Node {
	if sm == nil || pc.e == nil || pc.off || len(prepare.BindVars) == 0 {
		return nil
	}
	query := sql.RemoveSpaceAndDelimiter(prepare.PrepareStmt, ';')
	sqlCtx, err := sm.NewContextWithQuery(ctx, c, query)
	if err != nil {
		return nil
	}
	key := planKey(sqlCtx, query, prepare.BindVars)
	en := pc.entry(c.ConnectionID, key)
	if en.never || en.misses >= maxMisses {
		return nil
	}
	stmt, ok := pc.e.PreparedDataCache.GetCachedStmt(sqlCtx.Session.ID(), query)
	if !ok {
		return nil
	}
	astParams, err := bindVarsToAST(prepare.BindVars)
	if err != nil {
		return nil
	}
	node, hit := pc.planStmt(sqlCtx, en, stmt, query, astParams)
	if hit {
		pc.hits.Add(1)
	}
	return node
}

// planStmt plans the parsed statement stmt (of text query) with the
// parameter values params through entry en: the re-used plan (hit), a
// fresh analysis the entry learnt from, or nil for the normal path.
func (pc *PlanCache) planStmt(sqlCtx *sql.Context, en *planEntry, stmt ast.Statement, query string, astParams map[string]ast.Expr) (sql.Node, bool) {
	sqlCtx, end, ok := beginPlanning(sqlCtx)
	if !ok {
		return nil, false
	}
	defer end()

	gen := pc.gen.Load()
	b := planbuilder.New(sqlCtx, pc.e.Analyzer.Catalog, pc.e.EventScheduler, pc.e.Parser)
	b.SetBindings(astParams)
	bound, qFlags, err := b.BindOnly(stmt, query, nil)
	if err != nil || len(b.BindCtx().UnusedBindings()) > 0 {
		return nil, false
	}
	if !cacheableTree(bound) {
		en.never = true
		return nil, false
	}
	// A READ ONLY transaction is enforced by an analyser rule.
	if tx := sqlCtx.GetTransaction(); tx != nil && tx.IsReadOnly() && !plan.IsReadOnly(bound) {
		return nil, false
	}
	tables := boundTables(bound)
	// Statements on protected tables are never cached, for anyone: the
	// guard's answer for them (refusal, or a DP aggregate plan) is given
	// by the normal path on every execution.
	for _, t := range tables {
		if t.key == "" || pc.cat.IsProtected(t.key) {
			return nil, false
		}
	}
	// The guard's pre-analysis check, for this user and catalog, now.
	if out, _, err := pc.g.Rule(sqlCtx, pc.e.Analyzer, bound, nil, nil, qFlags); err != nil || out != bound {
		return nil, false
	}

	exprs := boundExprs(bound)
	if en.analyzed != nil && en.gen == gen && sameTables(en.tables, tables) {
		out, ok := en.rebind(sqlCtx, exprs)
		if ok {
			if post, _, err := pc.g.Rule(sqlCtx, pc.e.Analyzer, out, nil, nil, qFlags); err != nil || post != out {
				return nil, false
			}
			if en.verified >= verifyHits {
				pc.start(sqlCtx)
				return out, true
			}
			fresh, err := pc.e.Analyzer.Analyze(sqlCtx, bound, nil, qFlags)
			if err != nil {
				return nil, false
			}
			if sql.DebugString(fresh) != sql.DebugString(out) {
				en.never = true
				en.analyzed = nil
				pc.start(sqlCtx)
				return fresh, false
			}
			en.verified++
			pc.start(sqlCtx)
			return out, true
		}
	}

	analyzed, err := pc.e.Analyzer.Analyze(sqlCtx, bound, nil, qFlags)
	if err != nil {
		return nil, false
	}
	if !cacheableTree(analyzed) {
		en.never = true
		return nil, false
	}
	if !en.learn(sqlCtx, pc, stmt, query, bound, exprs, analyzed) {
		en.misses++
		en.analyzed = nil
		return nil, false
	}
	en.gen, en.tables, en.verified = gen, tables, 0
	qf := *qFlags
	en.qFlags = &qf
	pc.start(sqlCtx)
	return analyzed, false
}

// beginPlanning brackets the planning of a cached statement as
// go-mysql-server's handler brackets a statement (a process-list operation,
// a session command); end undoes both. False: the normal path.
func beginPlanning(ctx *sql.Context) (_ *sql.Context, end func(), ok bool) {
	ctx, err := ctx.ProcessList.BeginOperation(ctx)
	if err != nil {
		return nil, nil, false
	}
	if err := sql.SessionCommandBegin(ctx.Session); err != nil {
		ctx.ProcessList.EndOperation(ctx)
		return nil, nil, false
	}
	return ctx, func() {
		sql.SessionCommandEnd(ctx.Session)
		ctx.ProcessList.EndOperation(ctx)
	}, true
}

// start does what go-mysql-server does for an executed statement before
// its plan runs (the bound-plan path skips it).
func (pc *PlanCache) start(ctx *sql.Context) {
	sql.IncrementStatusVariable(ctx, "Questions", 1)
	ctx.ClearWarnings()
}

func planKey(ctx *sql.Context, query string, bv map[string]*querypb.BindVariable) string {
	var sb strings.Builder
	writeSessionKey(&sb, ctx)
	// The parameter types: a NULL or a string where a number was changes
	// the plan.
	for i := 1; i <= len(bv); i++ {
		if v, ok := bv["v"+strconv.Itoa(i)]; ok {
			sb.WriteString(v.Type.String())
		}
		sb.WriteByte(',')
	}
	sb.WriteByte(0)
	sb.WriteString(query)
	return sb.String()
}

// writeSessionKey writes the part of a plan key that is the session's:
// database, user and sql_mode.
func writeSessionKey(sb *strings.Builder, ctx *sql.Context) {
	sb.WriteString(ctx.GetCurrentDatabase())
	sb.WriteByte(0)
	sb.WriteString(ctx.Session.Client().User)
	sb.WriteByte(0)
	if m, err := ctx.GetSessionVariable(ctx, "sql_mode"); err == nil {
		if s, ok := m.(string); ok {
			sb.WriteString(s)
		}
	}
	sb.WriteByte(0)
}

// bindVarsToAST is go-mysql-server's handler conversion of the wire
// parameters (server.bindingsToExprs, unexported).
func bindVarsToAST(bindings map[string]*querypb.BindVariable) (map[string]ast.Expr, error) {
	res := make(map[string]ast.Expr, len(bindings))
	for name, bv := range bindings {
		val, err := sqltypes.BindVariableToValue(bv)
		if err != nil {
			return nil, err
		}
		expr, err := ast.ExprFromValue(val)
		if err != nil {
			return nil, err
		}
		res[name] = expr
	}
	return res, nil
}

// cacheableTree reports whether every node and expression of n is of a
// kind whose analysis depends on nothing but the tables, the statement and
// the parameter values (see the package comment above).
func cacheableTree(n sql.Node) bool {
	ok := true
	var walk func(sql.Node)
	walk = func(n sql.Node) {
		transform.Inspect(n, func(node sql.Node) bool {
			if !ok || node == nil {
				return false
			}
			switch x := node.(type) {
			case *plan.Project, *plan.Filter, *plan.Sort, *plan.Distinct, *plan.OrderedDistinct, *plan.GroupBy,
				*plan.Limit, *plan.TopN, *plan.Update, *plan.UpdateSource, *plan.DeleteFrom,
				*plan.TableAlias, *plan.Values, *plan.InsertDestination:
			case *plan.ResolvedTable:
				if !store.IsStoreTable(underlying(x.Table)) {
					ok = false
				}
			case *plan.IndexedTableAccess:
				if !store.IsStoreTable(underlying(x.UnderlyingTable())) {
					ok = false
				}
				if x.Typ != plan.ItaTypeStatic {
					ok = false
				}
			case *plan.InsertInto:
				if x.IsReplace || len(x.OnDupExprs) > 0 || len(x.Returning) > 0 {
					ok = false
				} else if !valuesSource(x.Source) {
					ok = false
				} else {
					walk(x.Source)
				}
			case *plan.UpdateJoin:
				ok = false
			default:
				ok = false
			}
			if !ok {
				return false
			}
			if dl, isDel := node.(*plan.DeleteFrom); isDel && dl.HasExplicitTargets() {
				ok = false
				return false
			}
			if ex, isEx := node.(sql.Expressioner); isEx {
				for _, e := range ex.Expressions() {
					if !cacheableExpr(e) {
						ok = false
						return false
					}
				}
			}
			return true
		})
	}
	walk(n)
	return ok
}

// valuesSource reports whether an INSERT's source is its VALUES, as bound
// or as analysed (a projection of their columns, of the omitted columns'
// defaults, whose expressions cacheableExpr checks, and of the
// AUTO_INCREMENT column's next value).
func valuesSource(n sql.Node) bool {
	if p, ok := n.(*plan.Project); ok {
		for _, e := range p.Projections {
			switch e.(type) {
			case *expression.GetField, *expression.Wrapper, *sql.ColumnDefaultValue, *expression.AutoIncrement:
			default:
				return false
			}
		}
		n = p.Child
	}
	_, ok := n.(*plan.Values)
	return ok
}

func cacheableExpr(e sql.Expression) bool {
	ok := true
	transform.InspectExpr(e, func(e sql.Expression) bool {
		switch e.(type) {
		case *expression.Literal, *expression.GetField, *expression.Equals, *expression.GreaterThan,
			*expression.LessThan, *expression.GreaterThanOrEqual, *expression.LessThanOrEqual,
			*expression.Between, *expression.And, *expression.Or, *expression.Not, *expression.IsNull,
			*expression.Arithmetic, *expression.Alias, *expression.SetField, *expression.Convert,
			*expression.Star, *expression.Wrapper, *expression.AutoIncrement, *expression.UnaryMinus,
			*aggregation.Sum, *aggregation.Count, *aggregation.Min, *aggregation.Max, *aggregation.Avg:
			return false
		case *sql.ColumnDefaultValue:
			// An INSERT's column defaults (nil for a column without one);
			// the default's expression is inspected as its child.
			return false
		case nil:
			return false
		}
		ok = false
		return true
	})
	return ok
}

func underlying(t sql.Table) sql.Table {
	for {
		switch x := t.(type) {
		case sql.TableWrapper:
			t = x.Underlying()
		default:
			return t
		}
	}
}

// boundTables lists the tables of a bound plan in walk order.
func boundTables(n sql.Node) []tableRef {
	var out []tableRef
	var walk func(sql.Node)
	walk = func(n sql.Node) {
		transform.Inspect(n, func(node sql.Node) bool {
			switch x := node.(type) {
			case *plan.ResolvedTable:
				key, _ := functions.TableKey(x)
				out = append(out, tableRef{name: x.Name(), key: key, t: underlying(x.Table)})
			case *plan.InsertInto:
				walk(x.Source)
			}
			return true
		})
	}
	walk(n)
	return out
}

func sameTables(a, b []tableRef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || !store.SameTable(a[i].t, b[i].t) {
			return false
		}
	}
	return true
}

// boundExprs lists every expression of a bound plan in walk order.
func boundExprs(n sql.Node) []sql.Expression {
	var out []sql.Expression
	walkExprs(n, func(e sql.Expression) { out = append(out, e) })
	return out
}

// paramPositions binds stmt without parameter values and returns the walk
// positions of its bind variables, which in the plan bound with values are
// the parameters' literals (possibly converted to a compared column's
// type); nil if the two plans do not line up expression by expression.
func (pc *PlanCache) paramPositions(ctx *sql.Context, stmt ast.Statement, query string, exprs []sql.Expression) ([]int, []string) {
	b := planbuilder.New(ctx, pc.e.Analyzer.Catalog, pc.e.EventScheduler, pc.e.Parser)
	unbound, _, err := b.BindOnly(stmt, query, nil)
	if err != nil {
		return nil, nil
	}
	vars := boundExprs(unbound)
	if len(vars) != len(exprs) {
		return nil, nil
	}
	var pos []int
	var names []string
	for i, e := range vars {
		if bv, ok := e.(*expression.BindVar); ok {
			if _, isLit := exprs[i].(*expression.Literal); !isLit {
				return nil, nil
			}
			pos = append(pos, i)
			names = append(names, bv.Name)
			continue
		}
		if reflect.TypeOf(e) != reflect.TypeOf(exprs[i]) {
			return nil, nil
		}
	}
	return pos, names
}

// walkExprs calls f on every expression of n (INSERT sources included).
func walkExprs(n sql.Node, f func(sql.Expression)) {
	transform.Inspect(n, func(node sql.Node) bool {
		if ii, ok := node.(*plan.InsertInto); ok {
			walkExprs(ii.Source, f)
		}
		if ex, ok := node.(sql.Expressioner); ok {
			for _, e := range ex.Expressions() {
				transform.InspectExpr(e, func(e sql.Expression) bool {
					f(e)
					return false
				})
			}
		}
		return true
	})
}

// directColumns maps each parameter compared directly with a column of the
// bound plan (col op ?, col BETWEEN ? AND ?) to those columns, as
// "table.column" in lower case.
func directColumns(bound sql.Node, names map[*expression.Literal]string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	add := func(col, lit sql.Expression) {
		gf, ok1 := col.(*expression.GetField)
		l, ok2 := lit.(*expression.Literal)
		if !ok1 || !ok2 {
			return
		}
		name, ok := names[l]
		if !ok {
			return
		}
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		out[name][strings.ToLower(gf.Table()+"."+gf.Name())] = true
	}
	walkExprs(bound, func(e sql.Expression) {
		switch x := e.(type) {
		case *expression.Equals, *expression.GreaterThan, *expression.LessThan,
			*expression.GreaterThanOrEqual, *expression.LessThanOrEqual:
			be := x.(expression.BinaryExpression)
			add(be.Left(), be.Right())
			add(be.Right(), be.Left())
		case *expression.Between:
			add(x.Val, x.Lower)
			add(x.Val, x.Upper)
		}
	})
	return out
}

// staticLookup returns the single range of a static lookup.
func staticLookup(ctx *sql.Context, ita *plan.IndexedTableAccess) (sql.IndexLookup, sql.MySQLRange, bool) {
	lk, err := ita.GetLookup(ctx, nil)
	if err != nil || lk.IsEmptyRange || lk.IsSpatialLookup || lk.Index == nil {
		return lk, nil, false
	}
	rc, ok := lk.Ranges.(sql.MySQLRangeCollection)
	if !ok || len(rc) != 1 {
		return lk, nil, false
	}
	return lk, rc[0], true
}

func cutKey(c sql.MySQLRangeCut) (any, bool) {
	switch x := c.(type) {
	case sql.Below:
		return x.Key, true
	case sql.Above:
		return x.Key, true
	}
	return nil, false
}

func withKey(c sql.MySQLRangeCut, k any) sql.MySQLRangeCut {
	if _, ok := c.(sql.Below); ok {
		return sql.Below{Key: k}
	}
	return sql.Above{Key: k}
}

// learn records where each parameter of the first execution went in the
// analysed plan; false if that cannot be told for certain.
func (en *planEntry) learn(ctx *sql.Context, pc *PlanCache, stmt ast.Statement, query string, bound sql.Node, exprs []sql.Expression, analyzed sql.Node) bool {
	pos, pnames := pc.paramPositions(ctx, stmt, query, exprs)
	if len(pos) == 0 {
		return false
	}
	names := map[*expression.Literal]string{}
	params := map[string]*expression.Literal{}
	lits := make([]*expression.Literal, len(pos))
	for i, p := range pos {
		l := exprs[p].(*expression.Literal)
		if l.Value() == nil {
			return false
		}
		if _, dup := names[l]; dup {
			return false
		}
		names[l], params[pnames[i]], lits[i] = pnames[i], l, l
	}
	cols := directColumns(bound, names)
	// Constants of the statement text: a range key equal to one of them
	// could come from it.
	var consts []any
	walkExprs(bound, func(e sql.Expression) {
		if l, ok := e.(*expression.Literal); ok {
			if _, isParam := names[l]; !isParam {
				consts = append(consts, l.Value())
			}
		}
	})
	found := map[string]int{}
	walkExprs(analyzed, func(e sql.Expression) {
		if l, ok := e.(*expression.Literal); ok {
			if name, isParam := names[l]; isParam {
				found[name]++
			}
		}
	})
	slots := map[*plan.IndexedTableAccess][]rangeSlot{}
	ok := true
	transform.Inspect(analyzed, func(node sql.Node) bool {
		ita, isITA := node.(*plan.IndexedTableAccess)
		if !ok || !isITA {
			return ok
		}
		lk, rng, good := staticLookup(ctx, ita)
		idx := lk.Index
		if !good || len(idx.Expressions()) < len(rng) {
			ok = false
			return false
		}
		for j, rce := range rng {
			col := strings.ToLower(idx.Expressions()[j])
			for _, upper := range []bool{false, true} {
				cut := rce.LowerBound
				if upper {
					cut = rce.UpperBound
				}
				key, isKey := cutKey(cut)
				if !isKey {
					continue
				}
				var cands []string
				for name := range params {
					// Only a parameter compared directly with this column
					// can have made this key.
					if !cols[name][col] {
						continue
					}
					v, err := convertKey(ctx, rce.Typ, params[name].Value())
					if err != nil {
						continue
					}
					if c, err := rce.Typ.Compare(ctx, v, key); err == nil && c == 0 {
						if !reflect.DeepEqual(v, key) {
							ok = false // equal but not identical: not attributable
							return false
						}
						cands = append(cands, name)
					}
				}
				for _, cv := range consts {
					v, err := convertKey(ctx, rce.Typ, cv)
					if err != nil {
						continue
					}
					if c, err := rce.Typ.Compare(ctx, v, key); err == nil && c == 0 && len(cands) > 0 {
						ok = false
						return false
					}
				}
				if len(cands) > 1 {
					ok = false
					return false
				}
				if len(cands) == 1 {
					slots[ita] = append(slots[ita], rangeSlot{col: j, upper: upper, param: cands[0]})
					found[cands[0]]++
				}
			}
		}
		return true
	})
	if !ok {
		return false
	}
	for name := range params {
		if found[name] == 0 {
			return false
		}
	}
	en.analyzed, en.slots = analyzed, slots
	en.nexprs, en.pos, en.lits, en.names = len(exprs), pos, lits, names
	return true
}

// convertKey converts a parameter value to a range key of type typ, as the
// planner does; values out of the type's range are refused.
func convertKey(ctx *sql.Context, typ sql.Type, v any) (any, error) {
	out, inRange, err := typ.Convert(ctx, v)
	if err != nil {
		return nil, err
	}
	if inRange != sql.InRange {
		return nil, errOutOfRange
	}
	return out, nil
}

var errOutOfRange = sql.ErrValueOutOfRange.New("parameter", "range key")

// rebind returns the cached plan with the new parameter values, or false
// if it cannot be used for them.
func (en *planEntry) rebind(ctx *sql.Context, exprs []sql.Expression) (sql.Node, bool) {
	if len(exprs) != en.nexprs {
		return nil, false
	}
	lits := make([]*expression.Literal, len(en.pos))
	for i, p := range en.pos {
		l, ok := exprs[p].(*expression.Literal)
		if !ok {
			return nil, false
		}
		lits[i] = l
	}
	return en.rebindLits(ctx, lits)
}

// rebindLits is rebind with the new literals of the parameters, in the
// order of en.lits.
func (en *planEntry) rebindLits(ctx *sql.Context, lits []*expression.Literal) (sql.Node, bool) {
	if len(lits) != len(en.lits) {
		return nil, false
	}
	repl := make(map[*expression.Literal]sql.Expression, len(en.lits))
	byName := make(map[string]*expression.Literal, len(en.lits))
	for i, l := range lits {
		ok := l != nil
		old := en.lits[i]
		// Same type: a parameter whose literal type changed (e.g. a
		// larger integer, a string) may change the plan.
		if !ok || l.Value() == nil || !reflect.DeepEqual(l.Type(), old.Type()) {
			return nil, false
		}
		repl[old] = l
		byName[en.names[old]] = l
	}
	var sub func(sql.Node) (sql.Node, error)
	sub = func(n sql.Node) (sql.Node, error) {
		out, _, err := transform.Node(n, func(node sql.Node) (sql.Node, transform.TreeIdentity, error) {
			switch x := node.(type) {
			case *plan.IndexedTableAccess:
				slots := en.slots[x]
				if len(slots) == 0 {
					return x, transform.SameTree, nil
				}
				lk, rng, ok := staticLookup(ctx, x)
				if !ok {
					return nil, transform.SameTree, errOutOfRange
				}
				rng = rng.Copy()
				for _, s := range slots {
					k, err := convertKey(ctx, rng[s.col].Typ, byName[s.param].Value())
					if err != nil {
						return nil, transform.SameTree, err
					}
					if s.upper {
						rng[s.col].UpperBound = withKey(rng[s.col].UpperBound, k)
					} else {
						rng[s.col].LowerBound = withKey(rng[s.col].LowerBound, k)
					}
				}
				for _, rce := range rng {
					if empty, err := rce.IsEmpty(); err != nil || empty {
						return nil, transform.SameTree, errOutOfRange
					}
				}
				lk.Ranges = sql.MySQLRangeCollection{rng}
				nita, err := plan.NewStaticIndexedAccessForTableNode(ctx, x.TableNode, lk)
				if err != nil {
					return nil, transform.SameTree, err
				}
				return nita, transform.NewTree, nil
			case *plan.InsertInto:
				src, err := sub(x.Source)
				if err != nil {
					return nil, transform.SameTree, err
				}
				node = x.WithSource(src)
			}
			ex, ok := node.(sql.Expressioner)
			if !ok {
				return node, transform.NewTree, nil
			}
			exprs := ex.Expressions()
			if len(exprs) == 0 {
				return node, transform.NewTree, nil
			}
			nexprs := make([]sql.Expression, len(exprs))
			changed := false
			for i, e := range exprs {
				ne, same, err := transform.Expr(e, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
					if l, ok := e.(*expression.Literal); ok {
						if r, ok := repl[l]; ok {
							return r, transform.NewTree, nil
						}
					}
					return e, transform.SameTree, nil
				})
				if err != nil {
					return nil, transform.SameTree, err
				}
				nexprs[i] = ne
				changed = changed || !bool(same)
			}
			if !changed {
				return node, transform.NewTree, nil
			}
			nn, err := ex.WithExpressions(nexprs...)
			return nn, transform.NewTree, err
		})
		return out, err
	}
	out, err := sub(en.analyzed)
	if err != nil {
		return nil, false
	}
	return out, true
}
