package gmstest

import "strings"

// knownFailures are the statements (or script names) of the suites that
// pass on go-mysql-server's memory harness and not on the store, each with
// the reason (docs/results/enginetest.md). The harness skips them, so that
// any other failure fails the build.
var knownFailures = map[string]string{
	// Size statistics are 0 by design (they depend on the rows).
	"SHOW TABLE STATUS":                                                          "sizes reported as 0 by design",
	"SHOW TABLE STATUS FROM mydb":                                                "sizes reported as 0 by design",
	"SHOW TABLE STATUS FROM mydb LIKE 'othertable'":                              "sizes reported as 0 by design",
	"SHOW TABLE STATUS LIKE '%table'":                                            "sizes reported as 0 by design",
	"SHOW TABLE STATUS WHERE Name = 'mytable'":                                   "sizes reported as 0 by design",
	"CREATE EVENT foo ON SCHEDULE EVERY 1 YEAR DO CREATE TABLE bar AS SELECT 1;": "events are not offered (scheduled statements run with their definer's rights)",
	"CREATE EVENT foo ON SCHEDULE EVERY 1 YEAR DO CREATE VIEW bar AS SELECT 1;":  "events are not offered (scheduled statements run with their definer's rights)",
	// Vector indexes are definitions only.
	"select * from comp_vector_index_t0 order by vec_distance('[50,50]', v2) limit 5":    "plan: vector indexes hold no entries, the engine sorts",
	"select * from comp_vector_index_t0 order by vec_distance(v2, '[50,50]') limit 5":    "plan: vector indexes hold no entries, the engine sorts",
	"select pk+1 from comp_vector_index_t0 order by vec_distance('[50,50]', v2) limit 5": "plan: vector indexes hold no entries, the engine sorts",
	"select v1+1 from comp_vector_index_t0 order by vec_distance(v2, '[50,50]') limit 5": "plan: vector indexes hold no entries, the engine sorts",
	// Plan check only: the index chosen for a unique TEXT key without
	// prefix differs (the rows are right).
	"select t.col1 from t order by t.col1;": "plan: a different index is chosen for ORDER BY on a TEXT unique key",
	// A failing stored procedure inside a trigger: the engine's trigger
	// savepoint is not rolled back to (under investigation).
	"triggers with declare statements and stored procedure": "trigger calling a failing procedure keeps the row",
	"non-existent procedure in trigger body":                "trigger calling a missing procedure keeps the row",
	"FETCH captures state at OPEN":                          "a procedure cursor reads rows its own statement wrote",
	// Not offered by the store (these also fail, or are not reached, on
	// the memory harness, whose transaction suite panics).
	"/* client a */ create temporary table tmp(pk int primary key)":                                        "temporary tables are not supported",
	"/* client a */ INSERT INTO tmp VALUES (1)":                                                            "temporary tables are not supported",
	"certain ddl queries on temporary tables are not implicitly committed":                                 "temporary tables are not supported",
	"/* client a */ create event e on schedule every 1 second starts '2025-01-01' do begin select 1; end;": "events are not offered",
	"/* client b */ show create event e;":                                                                  "events are not offered",
}

func (h *Harness) SkipQueryTest(q string) bool {
	_, ok := knownFailures[strings.TrimSpace(q)]
	return ok
}
