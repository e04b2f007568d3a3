package gmstest

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/enginetest"
	"github.com/dolthub/go-mysql-server/enginetest/queries"
)

// suite is one of go-mysql-server's engine test functions.
type suite struct {
	name string
	run  func(*testing.T, enginetest.Harness)
}

// raceSuites run under the race detector too; the rest only in the normal
// pass (CI runs go test and go test -race within a fixed time).
var raceSuites = map[string]bool{
	"TransactionScripts": true, "ConcurrentTransactions": true, "InsertInto": true, "Update": true,
	"Delete": true, "ReplaceInto": true, "Indexes": true, "ForeignKeys": true, "AlterTable": true,
	"Truncate": true, "JoinQueries": true, "InsertDuplicateKeyKeyless": true,
}

var suites = []suite{
	{"Queries", enginetest.TestQueries},
	{"JoinQueries", enginetest.TestJoinQueries},
	{"LateralJoinQueries", enginetest.TestLateralJoinQueries},
	{"JSONTableQueries", enginetest.TestJSONTableQueries},
	{"JSONTableScripts", enginetest.TestJSONTableScripts},
	{"InfoSchema", enginetest.TestInfoSchema},
	{"QueriesPrepared", enginetest.TestQueriesPrepared},
	{"JoinQueriesPrepared", enginetest.TestJoinQueriesPrepared},
	{"InfoSchemaPrepared", enginetest.TestInfoSchemaPrepared},
	{"OrderByGroupBy", enginetest.TestOrderByGroupBy},
	{"ColumnAliases", enginetest.TestColumnAliases},
	{"DerivedTableOuterScopeVisibility", enginetest.TestDerivedTableOuterScopeVisibility},
	{"AmbiguousColumnResolution", enginetest.TestAmbiguousColumnResolution},
	{"QueryErrors", enginetest.TestQueryErrors},
	{"InsertInto", enginetest.TestInsertInto},
	{"InsertDuplicateKeyKeyless", enginetest.TestInsertDuplicateKeyKeyless},
	{"InsertIgnoreInto", enginetest.TestInsertIgnoreInto},
	{"IgnoreIntoWithDuplicateUniqueKeyKeyless", enginetest.TestIgnoreIntoWithDuplicateUniqueKeyKeyless},
	{"InsertIntoErrors", enginetest.TestInsertIntoErrors},
	{"LoadData", enginetest.TestLoadData},
	{"LoadDataErrors", enginetest.TestLoadDataErrors},
	{"ReplaceInto", enginetest.TestReplaceInto},
	{"ReplaceIntoErrors", enginetest.TestReplaceIntoErrors},
	{"Update", enginetest.TestUpdate},
	{"UpdateIgnore", enginetest.TestUpdateIgnore},
	{"UpdateErrors", enginetest.TestUpdateErrors},
	{"Delete", enginetest.TestDelete},
	{"UpdateQueriesPrepared", enginetest.TestUpdateQueriesPrepared},
	{"DeleteQueriesPrepared", enginetest.TestDeleteQueriesPrepared},
	{"InsertQueriesPrepared", enginetest.TestInsertQueriesPrepared},
	{"ReplaceQueriesPrepared", enginetest.TestReplaceQueriesPrepared},
	{"DeleteErrors", enginetest.TestDeleteErrors},
	{"Truncate", enginetest.TestTruncate},
	{"Convert", enginetest.TestConvert},
	{"RowLimit", enginetest.TestRowLimit},
	{"Scripts", enginetest.TestScripts},
	{"NumericErrorScripts", enginetest.TestNumericErrorScripts},
	{"ScriptsPrepared", enginetest.TestScriptsPrepared},
	{"InsertScriptsPrepared", enginetest.TestInsertScriptsPrepared},
	{"GeneratedColumns", enginetest.TestGeneratedColumns},
	{"ComplexIndexQueries", enginetest.TestComplexIndexQueries},
	{"ComplexIndexQueriesPrepared", enginetest.TestComplexIndexQueriesPrepared},
	{"JsonScriptsPrepared", func(t *testing.T, h enginetest.Harness) { enginetest.TestJsonScriptsPrepared(t, h, nil) }},
	{"CreateCheckConstraintsScriptsPrepared", enginetest.TestCreateCheckConstraintsScriptsPrepared},
	{"InsertIgnoreScriptsPrepared", enginetest.TestInsertIgnoreScriptsPrepared},
	{"InsertErrorScriptsPrepared", enginetest.TestInsertErrorScriptsPrepared},
	{"Views", enginetest.TestViews},
	{"CreateTable", enginetest.TestCreateTable},
	{"DropTable", enginetest.TestDropTable},
	{"RenameTable", enginetest.TestRenameTable},
	{"RenameColumn", enginetest.TestRenameColumn},
	{"AddColumn", enginetest.TestAddColumn},
	{"ModifyColumn", enginetest.TestModifyColumn},
	{"DropColumn", enginetest.TestDropColumn},
	{"DropColumnKeylessTables", enginetest.TestDropColumnKeylessTables},
	{"CreateDatabase", enginetest.TestCreateDatabase},
	{"PkOrdinalsDDL", enginetest.TestPkOrdinalsDDL},
	{"PkOrdinalsDML", enginetest.TestPkOrdinalsDML},
	{"DropDatabase", enginetest.TestDropDatabase},
	{"CreateForeignKeys", enginetest.TestCreateForeignKeys},
	{"DropForeignKeys", enginetest.TestDropForeignKeys},
	{"ForeignKeys", enginetest.TestForeignKeys},
	{"CreateCheckConstraints", enginetest.TestCreateCheckConstraints},
	{"ChecksOnInsert", enginetest.TestChecksOnInsert},
	{"ChecksOnUpdate", enginetest.TestChecksOnUpdate},
	{"DisallowedCheckConstraints", enginetest.TestDisallowedCheckConstraints},
	{"DropCheckConstraints", enginetest.TestDropCheckConstraints},
	{"WindowFunctions", enginetest.TestWindowFunctions},
	{"WindowRowFrames", enginetest.TestWindowRowFrames},
	{"WindowRangeFrames", enginetest.TestWindowRangeFrames},
	{"NamedWindows", enginetest.TestNamedWindows},
	{"NaturalJoin", enginetest.TestNaturalJoin},
	{"NaturalJoinEqual", enginetest.TestNaturalJoinEqual},
	{"NaturalJoinDisjoint", enginetest.TestNaturalJoinDisjoint},
	{"InnerNestedInNaturalJoins", enginetest.TestInnerNestedInNaturalJoins},
	{"Variables", enginetest.TestVariables},
	{"PreparedInsert", enginetest.TestPreparedInsert},
	{"PreparedStatements", enginetest.TestPreparedStatements},
	{"ShowTableStatus", enginetest.TestShowTableStatus},
	{"DateParse", enginetest.TestDateParse},
	{"VariableErrors", enginetest.TestVariableErrors},
	{"Warnings", enginetest.TestWarnings},
	{"ClearWarnings", enginetest.TestClearWarnings},
	{"Use", enginetest.TestUse},
	{"ConcurrentTransactions", enginetest.TestConcurrentTransactions},
	{"TransactionScripts", func(t *testing.T, h enginetest.Harness) {
		// enginetest.TestTransactionScripts, without the scripts of
		// features the store does not offer (it skips no script by name).
		for _, script := range queries.TransactionTests {
			if _, skip := knownFailures[script.Name]; skip && h != nil && isStore(h) {
				continue
			}
			enginetest.TestTransactionScript(t, h, script)
		}
	}},
	{"NoDatabaseSelected", enginetest.TestNoDatabaseSelected},
	{"SessionSelectLimit", enginetest.TestSessionSelectLimit},
	{"CurrentTimestamp", enginetest.TestCurrentTimestamp},
	{"OnUpdateExprScripts", enginetest.TestOnUpdateExprScripts},
	{"AddDropPks", enginetest.TestAddDropPks},
	{"NullRanges", enginetest.TestNullRanges},
	{"JsonScripts", func(t *testing.T, h enginetest.Harness) { enginetest.TestJsonScripts(t, h, nil) }},
	{"AlterTable", enginetest.TestAlterTable},
	{"ColumnDefaults", enginetest.TestColumnDefaults},
	{"Blobs", enginetest.TestBlobs},
	{"Indexes", enginetest.TestIndexes},
	{"IndexPrefix", enginetest.TestIndexPrefix},
	{"QueryPlans", func(t *testing.T, h enginetest.Harness) { enginetest.TestQueryPlans(t, h, queries.PlanTests) }},
	{"IndexQueryPlans", enginetest.TestIndexQueryPlans},
	{"SysbenchPlans", enginetest.TestSysbenchPlans},
	{"Triggers", enginetest.TestTriggers},
	{"StoredProcedures", enginetest.TestStoredProcedures},
}

func TestStore(t *testing.T) {
	for _, s := range suites {
		if raceEnabled && !raceSuites[s.name] {
			continue
		}
		t.Run(s.name, func(t *testing.T) { inSuiteDir(t, s); s.run(t, NewHarness(t)) })
	}
}

// bulkSuites run again with dpsql's bulk writer (fastpath/bulkload.go):
// LOAD DATA goes through it, INSERT IGNORE through its statement-atomic
// per-row path.
var bulkSuites = map[string]bool{
	"LoadData": true, "LoadDataErrors": true, "InsertInto": true, "InsertIgnoreInto": true,
	"IgnoreIntoWithDuplicateUniqueKeyKeyless": true, "InsertIntoErrors": true,
}

func TestStoreBulkWriter(t *testing.T) {
	for _, s := range suites {
		if !bulkSuites[s.name] || raceEnabled && !raceSuites[s.name] {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			inSuiteDir(t, s)
			h := NewHarness(t)
			h.bulk = true
			s.run(t, h)
		})
	}
}

func isStore(h enginetest.Harness) bool {
	_, ok := h.(*Harness)
	return ok
}

// inSuiteDir runs the LOAD DATA suites in go-mysql-server's enginetest
// directory, where their files (./testdata/…) are.
func inSuiteDir(t *testing.T, s suite) {
	if !strings.HasPrefix(s.name, "LoadData") {
		return
	}
	file, _ := runtime.FuncForPC(reflect.ValueOf(enginetest.TestLoadData).Pointer()).FileLine(0)
	t.Chdir(filepath.Dir(file))
}

// TestMemory runs the same suites on go-mysql-server's memory harness, for
// the comparison in docs/results/enginetest.md (DPSQL_GMS_MEMORY=1).
func TestMemory(t *testing.T) {
	if os.Getenv("DPSQL_GMS_MEMORY") == "" {
		t.Skip("set DPSQL_GMS_MEMORY=1 to run the suites on the memory harness")
	}
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) { inSuiteDir(t, s); s.run(t, enginetest.NewDefaultMemoryHarness()) })
	}
}
