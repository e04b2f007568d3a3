package fastpath

import (
	"context"
	"reflect"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/dpsql/dpsql/store"
)

// Plan cache for text INSERTs (issue 13, sysbench oltp_insert).
//
// sysbench sends each row of oltp_insert as a text query (COM_QUERY), which
// go-mysql-server parses, binds and analyses in full every time. A short
// statement of the plain form (bulkinsert.go's, below bulkInsertMinBytes)
//
//	INSERT INTO tbl [(col, …)] VALUES (lit, …)[, (lit, …) …]
//
// whose literals are numbers, simple quoted strings or NULL is split into
// a template and values,
//
//	INSERT INTO tbl [(col, …)] VALUES (?, -?, NULL, …)   and   v1, v2, …
//
// where each value is the very AST node the parser makes of its literal
// (an integer with its sign, a decimal or exponent number without it, a
// string's unquoted content) and the template keeps what the parser would
// not turn into one such node: a NULL, and the unary minus of a decimal or
// exponent number. Binding the template with these values gives the bound
// plan of the text itself (the planner builds a bound value exactly as the
// literal in its place, and the VALUES stay literal-only in both), so the
// prepared-statement plan cache (plancache.go) can take it from there with
// all its checks: bound again on every execution (privileges, tables), the
// guard, protected tables never cached, table identity and the DDL/GRANT
// generation, the first re-uses analysed in full and compared.
//
// The template's parse is kept in the plan entry. For the first few uses of
// an entry the text is also parsed in full and must give the template's
// AST with the values in place, or the entry is never used again.
//
// Only a COM_QUERY / COM_MULTI_QUERY text holding this one statement (at
// most a trailing ';') takes the path; anything else — comments, double
// quotes, backslashes, introducers, hex or bit literals, expressions,
// DEFAULT, placeholders, IGNORE, ON DUPLICATE KEY UPDATE, SET or SELECT
// forms, a second statement — takes the ordinary path unchanged.

// textVerifyUses is how many uses of an entry compare the template with a
// full parse of the text.
const textVerifyUses = verifyHits + 1

// textKeyPrefix keeps the text entries apart from prepared statements
// whose text is the same as a template.
const textKeyPrefix = "\x01text\x00"

// textInsert returns the plan for a text INSERT, or nil for the ordinary
// path.
func (pc *PlanCache) textInsert(ctx context.Context, sm *server.SessionManager, c *mysql.Conn, query string) sql.Node {
	if sm == nil || pc.e == nil || pc.off || pc.textOff.Load() || int64(len(query)) >= bulkInsertMinBytes.Load() {
		return nil
	}
	ti, ok := splitTextInsert(query)
	if !ok {
		return nil
	}
	sqlCtx, err := sm.NewContextWithQuery(ctx, c, query)
	if err != nil {
		return nil
	}
	en := pc.entry(c.ConnectionID, textKey(sqlCtx, ti))
	if en.never || en.misses >= maxMisses {
		return nil
	}
	opts := sql.LoadSqlMode(sqlCtx).ParserOptions()
	if en.stmt == nil {
		st, _, rest, err := pc.e.Parser.ParseWithOptions(sqlCtx, ti.template, ';', false, opts)
		if err != nil || rest != "" {
			en.never = true
			return nil
		}
		en.stmt = st
	}
	if en.parsed < textVerifyUses {
		st, _, rest, err := pc.e.Parser.ParseWithOptions(sqlCtx, query, ';', false, opts)
		if err != nil || rest != "" || !sameInsert(st, en.stmt, ti.params) {
			en.never = true
			return nil
		}
		en.parsed++
	}
	if node := pc.fastInsert(sqlCtx, en, ti.params); node != nil {
		pc.textHits.Add(1)
		pc.textFast.Add(1)
		return node
	}
	node, hit := pc.planStmt(sqlCtx, en, en.stmt, ti.template, ti.params)
	if hit {
		pc.textHits.Add(1)
	}
	return node
}

// TextHits is the number of text INSERTs that re-used an analysed plan.
func (pc *PlanCache) TextHits() uint64 { return pc.textHits.Load() }

// textInsertStmt is a text INSERT split into template and values.
type textInsertStmt struct {
	template string
	sig      string // the values' literal types, as the planner will type them
	params   map[string]ast.Expr
}

// splitTextInsert splits query (see the file comment); false if it is not
// of the plain form.
func splitTextInsert(query string) (textInsertStmt, bool) {
	m := insertHead.FindStringSubmatchIndex(query)
	if m == nil {
		return textInsertStmt{}, false
	}
	head := query[:m[1]-1]
	// Comments (kept verbatim they would be harmless, but the cache stays
	// off any text with one).
	if strings.ContainsAny(head, "#/-") {
		return textInsertStmt{}, false
	}
	var tb, sig strings.Builder
	tb.Grow(len(query))
	tb.WriteString(head)
	params := map[string]ast.Expr{}
	i := m[1] - 1
	for {
		tb.WriteByte('(')
		col := 0
		var bad bool
		_, end, ok := scanTuple(query, i, func(k litKind, text string) error {
			if col > 0 {
				tb.WriteString(", ")
			}
			col++
			if k == litNull {
				tb.WriteString("NULL")
				return nil
			}
			name := "v" + strconv.Itoa(len(params)+1)
			var e ast.Expr
			switch k {
			case litStr:
				e = ast.NewStrVal([]byte(text))
				sig.WriteString("s")
			case litInt:
				e = ast.NewIntVal([]byte(text))
				sig.WriteString(intClass(text))
			case litDec, litExp:
				if text[0] == '-' {
					text = text[1:]
					tb.WriteByte('-')
				}
				e = ast.NewFloatVal([]byte(text))
				if k == litExp {
					sig.WriteString("e")
				} else {
					p, s := expression.GetDecimalPrecisionAndScale(strings.ToLower(text))
					sig.WriteString("d" + strconv.Itoa(int(p)) + "." + strconv.Itoa(int(s)))
				}
			default:
				bad = true
				return errBadLiteral
			}
			sig.WriteByte(',')
			params[name] = e
			tb.WriteByte('?')
			return nil
		})
		if !ok || bad || col == 0 {
			return textInsertStmt{}, false
		}
		tb.WriteByte(')')
		i = skipSpace(query, end)
		if i < len(query) && query[i] == ',' {
			tb.WriteString(", ")
			i = skipSpace(query, i+1)
			continue
		}
		if i < len(query) && query[i] == ';' {
			i = skipSpace(query, i+1)
		}
		if i != len(query) || len(params) == 0 {
			return textInsertStmt{}, false
		}
		return textInsertStmt{template: tb.String(), sig: sig.String(), params: params}, true
	}
}

var errBadLiteral = sql.ErrInvalidSQLValType.New("literal")

// intClass names the integer type the planner gives an integer literal
// (intLiteral), so that literals of one class share an entry.
func intClass(text string) string {
	if v, err := strconv.ParseInt(text, 10, 64); err == nil {
		switch {
		case v >= -128 && v <= 127:
			return "i8"
		case v >= 0 && v <= 255:
			return "u8"
		case v >= -32768 && v <= 32767:
			return "i16"
		case v >= 0 && v <= 65535:
			return "u16"
		case v >= -2147483648 && v <= 2147483647:
			return "i32"
		case v >= 0 && v <= 4294967295:
			return "u32"
		}
		return "i64"
	}
	if _, err := strconv.ParseUint(text, 10, 64); err == nil {
		return "u64"
	}
	return "n"
}

// textKey is planKey for a text INSERT.
func textKey(ctx *sql.Context, ti textInsertStmt) string {
	var sb strings.Builder
	sb.WriteString(textKeyPrefix)
	writeSessionKey(&sb, ctx)
	sb.WriteString(ti.sig)
	sb.WriteByte(0)
	sb.WriteString(ti.template)
	return sb.String()
}

// sameInsert reports whether parsed (the text's full parse) is the template
// tmpl with params in place of its bind variables.
func sameInsert(parsed, tmpl ast.Statement, params map[string]ast.Expr) bool {
	pi, ok1 := parsed.(*ast.Insert)
	ti, ok2 := tmpl.(*ast.Insert)
	if !ok1 || !ok2 {
		return false
	}
	pv, ok1 := pi.Rows.(*ast.AliasedValues)
	tv, ok2 := ti.Rows.(*ast.AliasedValues)
	if !ok1 || !ok2 || len(pv.Values) != len(tv.Values) {
		return false
	}
	used := 0
	for r := range tv.Values {
		if len(pv.Values[r]) != len(tv.Values[r]) {
			return false
		}
		for j, te := range tv.Values[r] {
			pe := pv.Values[r][j]
			if u, ok := te.(*ast.UnaryExpr); ok {
				pu, ok := pe.(*ast.UnaryExpr)
				if !ok || pu.Operator != u.Operator {
					return false
				}
				te, pe = u.Expr, pu.Expr
			}
			if v, ok := te.(*ast.SQLVal); ok && v.Type == ast.ValArg {
				want, ok := params[strings.TrimPrefix(string(v.Val), ":")]
				if !ok || !reflect.DeepEqual(pe, want) {
					return false
				}
				used++
				continue
			}
			if !reflect.DeepEqual(pe, te) {
				return false
			}
		}
	}
	if used != len(params) {
		return false
	}
	// Everything but the values must be the template's.
	rows := pi.Rows
	pi.Rows = ti.Rows
	same := reflect.DeepEqual(pi, ti)
	pi.Rows = rows
	return same
}

// fastInsert re-uses the plan of an entry whose re-uses were verified
// (planStmt) without binding the template again: for this statement form
// the binder's outcome depends only on what is checked here, now —
//   - the privilege check the binder makes for an INSERT (HandleAuth of
//     the statement's authorisation information), for the current grants;
//   - the tables: still the same tables with the same definitions, not
//     protected, and no DDL, GRANT, CALL, SET … since the plan was cached
//     (the generation; it also covers what a name resolves to);
//   - the values, built by the planner itself (SetBindings) and of the
//     cached literals' types.
//
// The guard's rule runs on the plan as on every re-use. Nil means the
// checked path (planStmt), which reports any refusal.
func (pc *PlanCache) fastInsert(sqlCtx *sql.Context, en *planEntry, params map[string]ast.Expr) sql.Node {
	ins, ok := en.stmt.(*ast.Insert)
	if !ok || en.analyzed == nil || en.verified < verifyHits || en.qFlags == nil || len(en.lits) != len(params) || en.gen != pc.gen.Load() {
		return nil
	}
	for _, t := range en.tables {
		// SameTable of the cached table with itself: it is still the
		// live table, with the definition it was cached with.
		if t.key == "" || !store.SameTable(t.t, t.t) || pc.cat.IsProtected(t.key) {
			return nil
		}
	}
	sqlCtx, end, ok := beginPlanning(sqlCtx)
	if !ok {
		return nil
	}
	defer end()
	// A READ ONLY transaction is enforced by an analyser rule.
	if tx := sqlCtx.GetTransaction(); tx != nil && tx.IsReadOnly() {
		return nil
	}
	if err := pc.e.Analyzer.Catalog.AuthorizationHandler().HandleAuth(sqlCtx, nil, ins.Auth); err != nil {
		return nil
	}
	// The values as the binder builds them (no catalog is needed for
	// literals).
	b := planbuilder.New(sqlCtx, nil, nil, nil)
	b.SetBindings(params)
	vals := b.BindCtx().Bindings
	lits := make([]*expression.Literal, len(en.lits))
	for i, old := range en.lits {
		l, ok := vals[en.names[old]].(*expression.Literal)
		if !ok {
			return nil
		}
		lits[i] = l
	}
	out, ok := en.rebindLits(sqlCtx, lits)
	if !ok {
		return nil
	}
	qf := *en.qFlags
	if post, _, err := pc.g.Rule(sqlCtx, pc.e.Analyzer, out, nil, nil, &qf); err != nil || post != out {
		return nil
	}
	// What binding counts (planbuilder's buildInsert), and what an
	// executed statement does first.
	sql.IncrementStatusVariable(sqlCtx, "Com_insert", 1)
	pc.start(sqlCtx)
	return out
}
