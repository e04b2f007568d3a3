package store

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/shopspring/decimal"
)

func rowsString(rows []sql.Row) string {
	var b strings.Builder
	for i, r := range rows {
		if i > 0 {
			b.WriteString("; ")
		}
		for j, v := range r {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprint(&b, v)
		}
	}
	return b.String()
}

// isDupKey reports whether err is the engine's duplicate-key error, which
// the server sends as MySQL error 1062 (ER_DUP_ENTRY).
func isDupKey(err error) bool {
	if w, ok := err.(sql.WrappedInsertError); ok {
		err = w.Cause
	}
	return err != nil && (sql.ErrPrimaryKeyViolation.Is(err) || sql.ErrUniqueKeyViolation.Is(err)) && sql.CastSQLError(err).Num == 1062
}

func expectRows(t *testing.T, h *harness, q, want string) {
	t.Helper()
	if got := rowsString(h.mustQuery(q)); got != want {
		t.Errorf("%s\n got: %s\nwant: %s", q, got, want)
	}
}

func TestCRUD(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE t (id BIGINT PRIMARY KEY, name VARCHAR(20), v DOUBLE, d DECIMAL(10,2))")
	h.mustQuery("INSERT INTO t VALUES (3, 'c', 3.5, 1.25), (1, 'a', 1.5, 2.50), (2, 'b', 2.5, NULL)")
	// Rows come back in primary-key order, like InnoDB.
	expectRows(t, h, "SELECT id, name, v, d FROM t", "1,a,1.5,2.5; 2,b,2.5,<nil>; 3,c,3.5,1.25")
	expectRows(t, h, "SELECT name FROM t WHERE v > 2 ORDER BY v DESC", "c; b")
	h.mustQuery("UPDATE t SET v = v * 10, name = 'bb' WHERE id = 2")
	expectRows(t, h, "SELECT id, name, v FROM t WHERE id = 2", "2,bb,25")
	h.mustQuery("DELETE FROM t WHERE id = 1")
	expectRows(t, h, "SELECT id FROM t", "2; 3")
	// Changing the primary key moves the row.
	h.mustQuery("UPDATE t SET id = 10 WHERE id = 3")
	expectRows(t, h, "SELECT id, name FROM t", "2,bb; 10,c")
	if n, err := h.s.RowCount("db", "t"); err != nil || n != 2 {
		t.Fatalf("RowCount = %d, %v", n, err)
	}
	h.mustQuery("DELETE FROM t")
	expectRows(t, h, "SELECT COUNT(*) FROM t", "0")
	h.mustQuery("DROP TABLE t")
	if h.s.HasTable("db", "t") {
		t.Fatal("table still exists after DROP")
	}
}

func TestPrimaryKeyDuplicate(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE t (a INT, b VARCHAR(10), v INT, PRIMARY KEY (b, a))")
	h.mustQuery("INSERT INTO t VALUES (1, 'x', 10), (2, 'x', 20), (1, 'y', 30)")
	for _, q := range []string{
		"INSERT INTO t VALUES (1, 'x', 99)",                           // against committed
		"INSERT INTO t VALUES (5, 'z', 1), (5, 'z', 2)",               // inside one statement
		"UPDATE t SET a = 2 WHERE a = 1 AND b = 'x'",                  // update onto an existing key
		"INSERT INTO t VALUES (7, 'q', 1), (2, 'x', 1)",               // last row collides
		"REPLACE INTO t VALUES (8, 'w', 1), (8, 'w', 2), (1, 'x', 3)", // fine: REPLACE, checked below
	} {
		_, err := h.query(q)
		if strings.HasPrefix(q, "REPLACE") {
			if err != nil {
				t.Errorf("%s: %v", q, err)
			}
			continue
		}
		if !isDupKey(err) {
			t.Errorf("%s: got %v, want a primary-key violation (error 1062)", q, err)
		}
	}
	expectRows(t, h, "SELECT a, b, v FROM t ORDER BY b, a", "8,w,2; 1,x,3; 2,x,20; 1,y,30")
	// A _ci collation makes 'K' and 'k' the same key, as in MySQL.
	h.mustQuery("CREATE TABLE ci (k VARCHAR(10) COLLATE utf8mb4_0900_ai_ci PRIMARY KEY)")
	h.mustQuery("INSERT INTO ci VALUES ('K')")
	if _, err := h.query("INSERT INTO ci VALUES ('k')"); !isDupKey(err) {
		t.Errorf("case-insensitive duplicate: got %v", err)
	}
	h.mustQuery("INSERT INTO t VALUES (1, 'x', 0) ON DUPLICATE KEY UPDATE v = v + 100")
	expectRows(t, h, "SELECT v FROM t WHERE a = 1 AND b = 'x'", "103")
	// INSERT IGNORE skips only the duplicate.
	h.mustQuery("INSERT IGNORE INTO t VALUES (1, 'x', 0), (9, 'x', 9)")
	expectRows(t, h, "SELECT a, v FROM t WHERE b = 'x' ORDER BY a", "1,103; 2,20; 9,9")
}

func TestStatementAtomicity(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)")
	h.mustQuery("INSERT INTO t VALUES (1, 1), (2, 2)")
	for _, q := range []string{
		"INSERT INTO t VALUES (3, 3), (4, 4), (3, 5)",
		"INSERT INTO t VALUES (5, 5), (6, NULL)",
		"UPDATE t SET id = id + 1", // 1→2 collides with the existing 2
		"INSERT INTO t SELECT id + 10, v FROM t UNION ALL SELECT 11, 0",
	} {
		if _, err := h.query(q); err == nil {
			t.Errorf("%s: expected an error", q)
		}
		expectRows(t, h, "SELECT id, v FROM t", "1,1; 2,2")
	}
	if n, _ := h.s.RowCount("db", "t"); n != 2 {
		t.Errorf("RowCount = %d after failed statements, want 2", n)
	}
	// Keyless tables too.
	h.mustQuery("CREATE TABLE k (v INT NOT NULL)")
	h.mustQuery("INSERT INTO k VALUES (1)")
	if _, err := h.query("INSERT INTO k VALUES (2), (NULL)"); err == nil {
		t.Error("NULL into NOT NULL accepted")
	}
	expectRows(t, h, "SELECT v FROM k", "1")
}

func TestNulls(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE t (id INT PRIMARY KEY, x DOUBLE, s TEXT, d DATETIME, b BLOB)")
	h.mustQuery("INSERT INTO t VALUES (1, NULL, NULL, NULL, NULL), (2, 4, '', '2024-01-02 03:04:05', x'00ff'), (3, 8, 'z', NULL, x'')")
	expectRows(t, h, "SELECT id FROM t WHERE x IS NULL", "1")
	expectRows(t, h, "SELECT COUNT(x), COUNT(*), AVG(x), SUM(x) FROM t", "2,3,6,12")
	expectRows(t, h, "SELECT id FROM t WHERE s IS NULL", "1")
	expectRows(t, h, "SELECT id FROM t WHERE s = ''", "2")
	expectRows(t, h, "SELECT id FROM t WHERE d IS NULL ORDER BY id", "1; 3")
	expectRows(t, h, "SELECT HEX(b) FROM t ORDER BY id", "<nil>; 00FF; ")
	expectRows(t, h, "SELECT YEAR(d) FROM t WHERE id = 2", "2024")
	if _, err := h.query("INSERT INTO t VALUES (NULL, 1, 'a', NULL, NULL)"); err == nil {
		t.Error("NULL primary key accepted")
	}
	h.mustQuery("UPDATE t SET x = NULL WHERE id = 3")
	expectRows(t, h, "SELECT COUNT(x) FROM t", "1")
}

func TestAggregates(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE m (g VARCHAR(5), x DOUBLE, n INT)")
	type agg struct {
		sum, min, max float64
		cnt           int
	}
	want := map[string]*agg{}
	var vals []string
	for i := 0; i < 300; i++ {
		g := fmt.Sprintf("g%d", i%7)
		x := float64((i*37)%101) / 4
		vals = append(vals, fmt.Sprintf("('%s', %v, %d)", g, x, i))
		a := want[g]
		if a == nil {
			a = &agg{min: math.Inf(1), max: math.Inf(-1)}
			want[g] = a
		}
		a.sum += x
		a.cnt++
		a.min = math.Min(a.min, x)
		a.max = math.Max(a.max, x)
	}
	h.mustQuery("INSERT INTO m VALUES " + strings.Join(vals, ","))
	rows := h.mustQuery("SELECT g, COUNT(*), SUM(x), AVG(x), MIN(x), MAX(x) FROM m GROUP BY g ORDER BY g")
	if len(rows) != 7 {
		t.Fatalf("%d groups", len(rows))
	}
	var groups []string
	for g := range want {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for i, r := range rows {
		a := want[groups[i]]
		if r[0] != groups[i] || fmt.Sprint(r[1]) != fmt.Sprint(a.cnt) ||
			math.Abs(r[2].(float64)-a.sum) > 1e-9 || math.Abs(r[3].(float64)-a.sum/float64(a.cnt)) > 1e-9 ||
			r[4].(float64) != a.min || r[5].(float64) != a.max {
			t.Errorf("group %s: got %v, want %+v", groups[i], r, *a)
		}
	}
	expectRows(t, h, "SELECT n FROM m WHERE g = 'g3' ORDER BY n DESC LIMIT 3", "297; 290; 283")
	expectRows(t, h, "SELECT g, COUNT(*) c FROM m GROUP BY g HAVING c > 42 ORDER BY g", "g0,43; g1,43; g2,43; g3,43; g4,43; g5,43")
}

func TestReopenPreservesEverything(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE DATABASE other COLLATE utf8mb4_0900_ai_ci")
	h.mustQuery(`CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20) NOT NULL DEFAULT 'anon',
		amount DECIMAL(8,3), ts DATETIME(6), e ENUM('lo','hi'), s SET('a','b'), j JSON, y YEAR, tm TIME,
		f FLOAT, u BIGINT UNSIGNED, bt BIT(4), CHECK (amount >= 0)) COMMENT 'the table'`)
	h.mustQuery(`INSERT INTO t (name, amount, ts, e, s, j, y, tm, f, u, bt) VALUES
		('x', 1.5, '2024-05-06 07:08:09.123456', 'hi', 'a,b', '{"k": [1, 2]}', 2021, '-01:02:03', 0.25, 18446744073709551615, 5)`)
	h.mustQuery("INSERT INTO t (amount) VALUES (2)")
	h.mustQuery("CREATE TABLE other.k (v DOUBLE)")
	h.mustQuery("INSERT INTO other.k VALUES (1), (1), (2)")
	h.mustQuery("CREATE VIEW vw AS SELECT name, amount FROM t WHERE amount > 1")
	before := rowsString(h.mustQuery("SELECT * FROM t"))
	beforeDDL := rowsString(h.mustQuery("SHOW CREATE TABLE t"))

	h.reopen()
	h.ctx.SetCurrentDatabase("db")
	if got := rowsString(h.mustQuery("SELECT * FROM t")); got != before {
		t.Errorf("rows after reopen:\n got %s\nwant %s", got, before)
	}
	if got := rowsString(h.mustQuery("SHOW CREATE TABLE t")); got != beforeDDL {
		t.Errorf("schema after reopen:\n got %s\nwant %s", got, beforeDDL)
	}
	expectRows(t, h, "SELECT name FROM vw", "x; anon")
	expectRows(t, h, "SELECT SUM(v), COUNT(*) FROM other.k", "4,3")
	expectRows(t, h, "SELECT default_collation_name FROM information_schema.schemata WHERE schema_name = 'other'", "utf8mb4_0900_ai_ci")
	// Counters continue: AUTO_INCREMENT and the keyless sequence.
	h.mustQuery("INSERT INTO t (amount) VALUES (3)")
	expectRows(t, h, "SELECT id FROM t", "1; 2; 3")
	h.mustQuery("INSERT INTO other.k VALUES (5)")
	expectRows(t, h, "SELECT v FROM other.k", "1; 1; 2; 5")
	// Defaults and checks survive.
	if _, err := h.query("INSERT INTO t (amount) VALUES (-1)"); err == nil {
		t.Error("CHECK constraint lost after reopen")
	}
	h.reopen()
	h.ctx.SetCurrentDatabase("db")
	expectRows(t, h, "SELECT COUNT(*) FROM t", "3")
	h.mustQuery("DROP DATABASE other")
	h.reopen()
	if h.s.Provider().HasDatabase(h.ctx, "other") {
		t.Error("dropped database back after reopen")
	}
}

func TestInformationSchemaShowsOnlyRowCount(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE t (id INT PRIMARY KEY, payload TEXT)")
	h.mustQuery("CREATE TABLE e (x INT)")
	var vals []string
	for i := 0; i < 257; i++ {
		vals = append(vals, fmt.Sprintf("(%d, '%s')", i, strings.Repeat("p", i)))
	}
	h.mustQuery("INSERT INTO t VALUES " + strings.Join(vals, ","))
	h.mustQuery("DELETE FROM t WHERE id < 7")
	// information_schema.statistics describes the index (PRIMARY) but no
	// statistic of its values: CARDINALITY is 0.
	expectRows(t, h, "SELECT index_name, column_name, cardinality FROM information_schema.statistics WHERE table_schema = 'db'",
		"PRIMARY,id,0")
	expectRows(t, h, `SELECT table_name, table_rows, avg_row_length, data_length, max_data_length, index_length, data_free
		FROM information_schema.tables WHERE table_schema = 'db' ORDER BY table_name`,
		"e,0,0,0,0,0,0; t,250,0,0,0,0,0")
	for _, r := range h.mustQuery("SHOW TABLE STATUS") {
		// Name, Engine, Version, Row_format, Rows, Avg_row_length, Data_length, Max_data_length, Index_length, Data_free
		for _, i := range []int{5, 6, 7, 8, 9} {
			if fmt.Sprint(r[i]) != "0" {
				t.Errorf("SHOW TABLE STATUS %v: column %d = %v, want 0", r[0], i, r[i])
			}
		}
	}
	// The engine answers COUNT(*) from the exact row count.
	expectRows(t, h, "SELECT COUNT(*) FROM t", "250")
}

func TestKeylessUpdateDelete(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE k (a INT, b VARCHAR(5))")
	h.mustQuery("INSERT INTO k VALUES (1, 'x'), (1, 'x'), (2, 'y'), (3, NULL), (1, 'x')")
	h.mustQuery("DELETE FROM k WHERE a = 1 LIMIT 2")
	expectRows(t, h, "SELECT a, b FROM k ORDER BY a", "1,x; 2,y; 3,<nil>")
	h.mustQuery("UPDATE k SET a = a + 1")
	expectRows(t, h, "SELECT a, b FROM k ORDER BY a", "2,x; 3,y; 4,<nil>")
	h.mustQuery("UPDATE k SET b = 'n' WHERE b IS NULL")
	expectRows(t, h, "SELECT a, b FROM k ORDER BY a", "2,x; 3,y; 4,n")
	if n, _ := h.s.RowCount("db", "k"); n != 3 {
		t.Errorf("RowCount = %d", n)
	}
}

func TestAutoIncrement(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE a (id BIGINT AUTO_INCREMENT PRIMARY KEY, x INT)")
	h.mustQuery("INSERT INTO a (x) VALUES (10), (20)")
	h.mustQuery("INSERT INTO a VALUES (10, 30)")
	h.mustQuery("INSERT INTO a (x) VALUES (40)")
	expectRows(t, h, "SELECT id, x FROM a", "1,10; 2,20; 10,30; 11,40")
	expectRows(t, h, "SELECT auto_increment FROM information_schema.tables WHERE table_name = 'a'", "12")
	h.mustQuery("TRUNCATE TABLE a")
	h.mustQuery("INSERT INTO a (x) VALUES (50)")
	expectRows(t, h, "SELECT id, x FROM a", "1,50")
	h.mustQuery("ALTER TABLE a AUTO_INCREMENT = 100")
	h.reopen()
	h.ctx.SetCurrentDatabase("db")
	h.mustQuery("INSERT INTO a (x) VALUES (60)")
	expectRows(t, h, "SELECT id, x FROM a", "1,50; 100,60")
}

func TestAlterTable(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE t (id INT PRIMARY KEY, v INT, s VARCHAR(10))")
	h.mustQuery("INSERT INTO t VALUES (1, 10, 'a'), (2, 20, 'b')")
	h.mustQuery("ALTER TABLE t ADD COLUMN w DOUBLE NOT NULL DEFAULT 0.5 AFTER id")
	expectRows(t, h, "SELECT * FROM t", "1,0.5,10,a; 2,0.5,20,b")
	h.mustQuery("ALTER TABLE t DROP COLUMN s")
	h.mustQuery("ALTER TABLE t MODIFY COLUMN v BIGINT")
	h.mustQuery("ALTER TABLE t RENAME COLUMN v TO vv")
	h.mustQuery("ALTER TABLE t RENAME TO t2")
	h.reopen()
	h.ctx.SetCurrentDatabase("db")
	expectRows(t, h, "SELECT id, w, vv FROM t2", "1,0.5,10; 2,0.5,20")
	if _, err := h.query("ALTER TABLE t2 MODIFY COLUMN vv TINYINT UNSIGNED"); err != nil {
		t.Fatal(err)
	}
	h.mustQuery("INSERT INTO t2 VALUES (3, 1, 255)")
	if _, err := h.query("ALTER TABLE t2 MODIFY COLUMN vv ENUM('x')"); err == nil {
		t.Error("incompatible MODIFY accepted")
	}
	expectRows(t, h, "SELECT id, vv FROM t2", "1,10; 2,20; 3,255")
}

func TestUnsupportedIndexLeavesNoTable(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	for _, q := range []string{
		"CREATE TABLE u (a INT PRIMARY KEY, b TEXT, FULLTEXT KEY (b))",
		"CREATE TABLE u (a INT, b INT, KEY b (b), KEY b (a))",
	} {
		if _, err := h.query(q); err == nil {
			t.Errorf("%s: accepted", q)
		}
		if h.s.HasTable("db", "u") {
			t.Errorf("%s left a table behind", q)
		}
	}
	// CREATE TABLE … AS SELECT that fails while filling its table.
	if _, err := h.query("CREATE TABLE ctas AS SELECT 1 AS a UNION ALL SELECT JSON_EXTRACT('{bad', '$')"); err == nil {
		t.Error("CTAS with a failing SELECT succeeded")
	}
	if h.s.HasTable("db", "ctas") {
		t.Error("failed CTAS left its table behind")
	}
	// An embedded caller reusing one context: a failing first INSERT does
	// not undo the earlier CREATE TABLE.
	ctx := h.newCtx()
	for _, q := range []string{"CREATE TABLE keep (id INT PRIMARY KEY)", "INSERT INTO keep VALUES (1), (1)"} {
		_, it, _, err := h.e.Query(ctx, q)
		if err == nil {
			_, err = sql.RowIterToRows(ctx, it)
		}
		if err != nil && !isDupKey(err) {
			t.Fatal(q, err)
		}
	}
	if !h.s.HasTable("db", "keep") {
		t.Error("table dropped by a later failing statement")
	}
}

func TestConcurrentWriters(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE c (id INT PRIMARY KEY, w INT)")
	h.mustQuery("CREATE TABLE n (w INT)")
	const workers, per = 8, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	dupOK := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			ctx := h.newCtx()
			for i := 0; i < per; i++ {
				if _, err := h.queryCtx(ctx, fmt.Sprintf("INSERT INTO c VALUES (%d, %d)", w*per+i, w)); err != nil {
					t.Error(err)
				}
				if _, err := h.queryCtx(ctx, fmt.Sprintf("INSERT INTO n VALUES (%d)", w)); err != nil {
					t.Error(err)
				}
				// Everybody races for the same key: exactly one wins.
				if _, err := h.queryCtx(ctx, fmt.Sprintf("INSERT INTO c VALUES (%d, %d)", 100000+i, w)); err == nil {
					mu.Lock()
					dupOK++
					mu.Unlock()
				} else if !isDupKey(err) {
					t.Error(err)
				}
			}
		}(w)
	}
	wg.Wait()
	if dupOK != per {
		t.Errorf("%d inserts of contested keys succeeded, want %d", dupOK, per)
	}
	expectRows(t, h, "SELECT COUNT(*) FROM c", fmt.Sprint(workers*per+per))
	expectRows(t, h, "SELECT COUNT(*), SUM(w) FROM n", fmt.Sprintf("%d,%d", workers*per, per*workers*(workers-1)/2))
	if n, _ := h.s.RowCount("db", "n"); n != workers*per {
		t.Errorf("RowCount(n) = %d", n)
	}
}

func TestConcurrentUpdateConflict(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE c (id INT PRIMARY KEY, v INT)")
	h.mustQuery("INSERT INTO c VALUES (1, 0)")
	// Two statements read the same row: the second waits for the first's
	// row lock, then finds the row changed since it read it. Without a
	// server session to restart the statement (lock.go), that is the
	// write conflict, and its transaction is rolled back.
	t1 := h.newTable("c")
	t2 := h.newTable("c")
	u1, u2 := t1.Updater(h.ctx), t2.Updater(h.ctx)
	old := sql.Row{int32(1), int32(0)}
	if err := u1.Update(h.ctx, old, sql.Row{int32(1), int32(1)}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- u2.Update(h.ctx, old, sql.Row{int32(1), int32(2)}) }()
	awaitLockWait(t, h.s)
	if err := u1.Close(h.ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "concurrent") {
		t.Fatalf("update of a row changed while waiting for its lock: %v", err)
	}
	if err := u2.Close(h.ctx); err != nil {
		t.Fatal(err)
	}
	expectRows(t, h, "SELECT v FROM c", "1")

	// Two statements insert the same new key: the second waits for the
	// first's lock on it, and is a duplicate once the first commits.
	i1, i2 := h.newTable("c").Inserter(h.ctx), h.newTable("c").Inserter(h.ctx)
	if err := i1.Insert(h.ctx, sql.Row{int32(7), int32(0)}); err != nil {
		t.Fatal(err)
	}
	go func() { done <- i2.Insert(h.ctx, sql.Row{int32(7), int32(0)}) }()
	awaitLockWait(t, h.s)
	if err := i1.Close(h.ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !isDupKey(err) {
		t.Fatalf("second insert: %v", err)
	}
	if err := i2.Close(h.ctx); err != nil {
		t.Fatal(err)
	}
	if held, _ := h.s.LockStats(); held != 0 {
		t.Fatalf("%d row locks held after both statements", held)
	}
	if n, _ := h.s.RowCount("db", "c"); n != 2 {
		t.Errorf("RowCount = %d", n)
	}
}

func (h *harness) newTable(name string) *Table {
	h.t.Helper()
	db, err := h.s.Provider().Database(h.ctx, "db")
	if err != nil {
		h.t.Fatal(err)
	}
	tbl, ok, err := db.GetTableInsensitive(h.ctx, name)
	if err != nil || !ok {
		h.t.Fatal(name, err)
	}
	return tbl.(*Table)
}

func TestDirectAccess(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE Mixed (ID INT PRIMARY KEY, f DOUBLE, i BIGINT, d DECIMAL(6,2), s VARCHAR(5), y YEAR, e ENUM('a','b'), u TINYINT UNSIGNED)")
	h.mustQuery("INSERT INTO Mixed VALUES (1, 1.5, -7, 2.25, 'x', 2000, 'b', 200), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL)")
	sch, err := h.s.TableSchema("DB", "mixed")
	if err != nil || len(sch) != 8 || sch[0].Name != "ID" {
		t.Fatalf("TableSchema: %v %v", sch, err)
	}
	if !h.s.HasTable("db", "MIXED") || h.s.HasTable("db", "nope") || h.s.HasTable("nodb", "mixed") {
		t.Error("HasTable")
	}
	var got [][]float64
	n, err := h.s.ScanFloats("db", "mixed", []string{"u", "F", "i", "d", "s", "y", "e", "id"}, func(r []float64) error {
		got = append(got, append([]float64{}, r...))
		return nil
	})
	if err != nil || n != 2 {
		t.Fatal(n, err)
	}
	want := []float64{200, 1.5, -7, 2.25, math.NaN(), 2000, math.NaN(), 1}
	for j, w := range want {
		if g := got[0][j]; !(g == w || math.IsNaN(g) && math.IsNaN(w)) {
			t.Errorf("row 1 column %d: %v, want %v", j, g, w)
		}
	}
	for j := 0; j < 7; j++ {
		if !math.IsNaN(got[1][j]) {
			t.Errorf("row 2 column %d: %v, want NaN for NULL", j, got[1][j])
		}
	}
	var vals [][]any
	n, err = h.s.ScanValues("db", "mixed", []string{"d", "s", "i"}, func(r []any) error {
		vals = append(vals, append([]any{}, r...))
		return nil
	})
	if err != nil || n != 2 {
		t.Fatal(n, err)
	}
	if d, ok := vals[0][0].(decimal.Decimal); !ok || !d.Equal(decimal.RequireFromString("2.25")) || vals[0][1] != "x" || vals[0][2] != int64(-7) {
		t.Errorf("ScanValues row 1: %#v", vals[0])
	}
	if vals[1][0] != nil || vals[1][1] != nil || vals[1][2] != nil {
		t.Errorf("ScanValues row 2: %#v", vals[1])
	}
	if _, err := h.s.ScanFloats("db", "mixed", []string{"zz"}, func([]float64) error { return nil }); err == nil {
		t.Error("unknown column accepted")
	}
	var startN int64 = -1
	n, err = h.s.ScanFloatsCounted("db", "mixed", []string{"f"}, func(c int64) error {
		startN = c
		return nil
	}, func(r []float64) error {
		if startN != 2 {
			t.Error("start not called before the rows")
		}
		return nil
	})
	if err != nil || n != 2 || startN != 2 {
		t.Errorf("ScanFloatsCounted: %d %d %v", n, startN, err)
	}
	if c, err := h.s.RowCount("db", "Mixed"); err != nil || c != 2 {
		t.Error("RowCount", c, err)
	}
	stop := fmt.Errorf("stop")
	if _, err := h.s.ScanValues("db", "mixed", nil, func(r []any) error {
		if len(r) != 8 {
			t.Errorf("all columns: %d", len(r))
		}
		return stop
	}); err != stop {
		t.Errorf("callback error not returned: %v", err)
	}
}

// The cached row count (tview.rowCount) and view definitions follow every
// change: commits, snapshots, TRUNCATE, a failed ALTER, CREATE/DROP VIEW.
func TestCachedCountsAndViews(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE t (id INT PRIMARY KEY, a INT)")
	h.mustQuery("INSERT INTO t VALUES (1, 1), (2, 2)")
	count := func(ctx *sql.Context) string {
		rows, err := h.queryCtx(ctx, "SELECT COUNT(*) FROM t")
		if err != nil {
			t.Fatal(err)
		}
		return rowsString(rows)
	}
	if got := count(h.ctx); got != "2" {
		t.Fatalf("count %s", got)
	}
	other := h.newCtx()
	h.queryCtx(other, "BEGIN")
	if got := count(other); got != "2" {
		t.Fatalf("snapshot count %s", got)
	}
	h.mustQuery("INSERT INTO t VALUES (3, 3)")
	if got := count(h.ctx); got != "3" {
		t.Fatalf("count after insert %s", got)
	}
	if got := count(other); got != "2" {
		t.Fatalf("snapshot count after a later commit %s", got)
	}
	h.queryCtx(other, "INSERT INTO t VALUES (10, 10)")
	if got := count(other); got != "3" {
		t.Fatalf("count with own insert %s", got)
	}
	h.queryCtx(other, "COMMIT")
	if got := count(h.ctx); got != "4" {
		t.Fatalf("count after the other commit %s", got)
	}
	if _, err := h.query("ALTER TABLE t ADD COLUMN b INT, ADD UNIQUE INDEX u (a), MODIFY COLUMN a TINYINT"); err != nil {
		t.Logf("(ALTER failed as it may: %v)", err)
	}
	if got := count(h.ctx); got != "4" {
		t.Fatalf("count after ALTER %s", got)
	}
	h.mustQuery("TRUNCATE TABLE t")
	if got := count(h.ctx); got != "0" {
		t.Fatalf("count after TRUNCATE %s", got)
	}
	h.mustQuery("INSERT INTO t (id, a) VALUES (1, 5)")
	h.mustQuery("CREATE VIEW v AS SELECT a FROM t")
	expectRows(t, h, "SELECT * FROM v", "5")
	h.mustQuery("DROP VIEW v")
	if _, err := h.query("SELECT * FROM v"); err == nil {
		t.Fatal("dropped view still answers")
	}
	h.mustQuery("CREATE VIEW v AS SELECT id FROM t")
	expectRows(t, h, "SELECT * FROM v", "1")
}

// awaitLockWait blocks until a row lock wait is in progress.
func awaitLockWait(t *testing.T, s *Store) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, w := s.LockStats(); w > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no lock wait showed up")
		}
		time.Sleep(time.Millisecond)
	}
}

// ScanFloatsParallel gives row i of the serial scan as row i, for every row
// (NULLs and batch boundaries included), with start called first with the
// snapshot's count.
func TestScanFloatsParallelMatchesSerial(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE p (id INT PRIMARY KEY, a DOUBLE, b BIGINT, c VARCHAR(10))")
	for _, rows := range []int{0, 1, scanBatchRows - 1, scanBatchRows + 1, 3*scanBatchRows + 7} {
		h.mustQuery("DELETE FROM p")
		var vals []string
		for i := 0; i < rows; i++ {
			a := fmt.Sprintf("%g", float64(i)*0.25-3)
			if i%7 == 3 {
				a = "NULL"
			}
			vals = append(vals, fmt.Sprintf("(%d, %s, %d, 'x%d')", i, a, -i*3, i))
		}
		for len(vals) > 0 {
			k := min(len(vals), 500)
			h.mustQuery("INSERT INTO p VALUES " + strings.Join(vals[:k], ", "))
			vals = vals[k:]
		}
		cols := []string{"b", "A", "c", "id"}
		var serial [][]float64
		if _, err := h.s.ScanFloats("db", "p", cols, func(r []float64) error {
			serial = append(serial, append([]float64{}, r...))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		got := make([][]float64, rows)
		var startN int64 = -1
		var calls atomic.Int64
		n, ok, err := h.s.ScanFloatsParallel("db", "p", cols, func(c int64) error {
			startN = c
			return nil
		}, func(i int64, r []float64) {
			calls.Add(1)
			got[i] = append([]float64{}, r...)
		})
		if err != nil || !ok || n != int64(rows) || startN != int64(rows) || calls.Load() != int64(rows) {
			t.Fatalf("%d rows: n %d ok %v start %d calls %d err %v", rows, n, ok, startN, calls.Load(), err)
		}
		for i := range serial {
			for j, w := range serial[i] {
				if g := got[i][j]; !(g == w || math.IsNaN(g) && math.IsNaN(w)) {
					t.Fatalf("%d rows: row %d column %d: %v, serial %v", rows, i, j, g, w)
				}
			}
		}
	}
	if _, _, err := h.s.ScanFloatsParallel("db", "p", []string{"zz"}, nil, func(int64, []float64) {}); err == nil {
		t.Error("unknown column accepted")
	}
	stop := fmt.Errorf("stop")
	if _, _, err := h.s.ScanFloatsParallel("db", "p", nil, func(int64) error { return stop }, func(int64, []float64) {
		t.Error("row handed after start failed")
	}); err != stop {
		t.Errorf("start error not returned: %v", err)
	}
}
