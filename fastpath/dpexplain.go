package fastpath

import (
	"context"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/dpsql/dpsql/explain"
)

// EXPLAIN of a DP query (docs/sql.md "EXPLAIN of a DP query").
// go-mysql-server answers every EXPLAIN with one of two fixed schemas (its
// analyser never replaces the EXPLAIN node, only the explained statement),
// so the DP plan, which has its own columns, is answered here: a text
// EXPLAIN is analysed as the ordinary path would (parser, binder, every
// analyser rule, the guard and the DP planner included); when the
// explained statement became a DP release, the statement runs as the node
// that describes that release (explain.Node: nothing read, nothing
// charged). Anything else — another statement, an error — takes the
// ordinary path, which analyses it again and reports exactly what it
// reports today (a refusal of the DP planner is the same message for the
// EXPLAIN as for the query).

// dpExplain returns the node answering query when it is the EXPLAIN of a
// DP release, nil for the ordinary path, or the refusal of EXPLAIN ANALYZE
// of a DP release (it would run, and charge, the release).
func (h *Handler) dpExplain(ctx context.Context, c *mysql.Conn, query string) (sql.Node, error) {
	pc, sm := h.pc, h.sm.Load()
	if pc == nil || pc.e == nil || sm == nil || !explain.Candidate(query) {
		return nil, nil
	}
	query = sql.RemoveSpaceAndDelimiter(query, ';')
	sqlCtx, err := sm.NewContextWithQuery(ctx, c, query)
	if err != nil {
		return nil, nil
	}
	sqlCtx, end, ok := beginPlanning(sqlCtx)
	if !ok {
		return nil, nil
	}
	defer end()
	stmt, _, rest, err := pc.e.Parser.ParseWithOptions(sqlCtx, query, ';', false, sql.LoadSqlMode(sqlCtx).ParserOptions())
	if err != nil || rest != "" {
		return nil, nil
	}
	if _, ok := stmt.(*ast.Explain); !ok {
		return nil, nil
	}
	b := planbuilder.New(sqlCtx, pc.e.Analyzer.Catalog, pc.e.EventScheduler, pc.e.Parser)
	bound, qFlags, err := b.BindOnly(stmt, query, nil)
	if err != nil {
		return nil, nil
	}
	if _, ok := bound.(*plan.DescribeQuery); !ok {
		return nil, nil
	}
	analyzed, err := pc.e.Analyzer.Analyze(sqlCtx, bound, nil, qFlags)
	if err != nil {
		return nil, nil
	}
	d, ok := analyzed.(*plan.DescribeQuery)
	if !ok {
		return nil, nil
	}
	node, ok := explain.Describe(d)
	if !ok {
		return nil, nil
	}
	if d.Format.Analyze {
		return nil, explain.ErrAnalyze
	}
	if d.Format.Plan {
		return nil, nil // FORMAT=TREE keeps go-mysql-server's tree
	}
	pc.start(sqlCtx)
	return node, nil
}
