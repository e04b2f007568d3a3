package server

import (
	"context"
	"fmt"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// ComStatistics answers COM_STATISTICS (mariadb-admin status) with
// MariaDB's one-line text; the protocol library calls it through the
// vitess patch (third_party/vitess/PATCHES.md). Only a logged-in session
// can send the command. Every figure is about the server, none about
// rows: Threads counts the authenticated sessions, Questions the
// statements clients sent (text statements, prepares, executes), Slow
// queries go-mysql-server's count; dpsql keeps no table cache, so Opens and
// Open tables are 0.
func (h *conformHandler) ComStatistics(_ context.Context, _ *mysql.Conn) (string, error) {
	return statisticsText(time.Since(h.started), h.threads(), h.questions.Load(), slowQueries()), nil
}

// statisticsText formats the reply as MariaDB's sql_parse.cc does.
func statisticsText(up time.Duration, threads int, questions, slow uint64) string {
	secs := uint64(up / time.Second)
	qps := "0.000"
	if secs > 0 {
		qps = fmt.Sprintf("%.3f", float64(questions)/float64(secs))
	}
	return fmt.Sprintf("Uptime: %d  Threads: %d  Questions: %d  Slow queries: %d  Opens: 0  Open tables: 0  Queries per second avg: %s",
		secs, threads, questions, slow, qps)
}

func (h *conformHandler) threads() int {
	n := 0
	h.sessions.Range(func(_, _ any) bool { n++; return true })
	return n
}

func slowQueries() uint64 {
	if sql.StatusVariables == nil {
		return 0
	}
	_, v, ok := sql.StatusVariables.GetGlobal("Slow_queries")
	if !ok {
		return 0
	}
	switch n := v.(type) {
	case uint64:
		return n
	case int64:
		return uint64(max(n, 0))
	case int:
		return uint64(max(n, 0))
	}
	return 0
}
