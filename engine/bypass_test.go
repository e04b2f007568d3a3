package engine_test

import (
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// bypassStatements is the analyst bypass suite: every statement must be
// refused, echo no row value, and charge nothing. It runs as "ana" (every
// grant on demo) against demo.people (protected, names person<i>, ages
// 20..69, an AUTO_INCREMENT table demo.seq, an owner's view) and, for the
// privilege class, as "nogrant" (no grant at all).
var bypassStatements = []string{
	// Reads, any shape.
	"SELECT * FROM people",
	"SELECT age FROM demo.people WHERE id = 1",
	"SELECT AVG(age) FROM people",
	"SELECT COUNT(*) FROM people WHERE age > 40",
	"SELECT MAX(age), MIN(age) FROM people",
	"SELECT SUM(age) FROM people",
	"SELECT STDDEV(age) FROM people",
	"SELECT GROUP_CONCAT(name) FROM people",
	"SELECT JSON_ARRAYAGG(age) FROM people",
	"SELECT town, COUNT(*) FROM people GROUP BY town",
	"SELECT town FROM people GROUP BY town HAVING AVG(age) > 40",
	"SELECT DISTINCT age FROM people",
	"SELECT id FROM people ORDER BY age LIMIT 1",
	"SELECT id, ROW_NUMBER() OVER (ORDER BY age) FROM people",
	"SELECT 1 FROM people WHERE name LIKE 'person1%'",
	"SELECT COUNT(*) FROM people p1, people p2",
	"SELECT t.tname, p.age FROM towns t JOIN people p ON p.town = t.id",
	"SELECT t.tname FROM towns t LEFT JOIN people p ON p.town = t.id AND p.age > 60",
	"SELECT * FROM towns NATURAL JOIN people",
	"SELECT * FROM towns WHERE id IN (SELECT town FROM people WHERE age > 60)",
	"SELECT * FROM towns WHERE EXISTS (SELECT 1 FROM people WHERE age = 33)",
	"SELECT * FROM towns t WHERE (SELECT COUNT(*) FROM people p WHERE p.town = t.id) > 3",
	"SELECT EXISTS (SELECT 1 FROM people WHERE age = 33)",
	"SELECT (SELECT age FROM people LIMIT 1)",
	"SELECT tname FROM towns UNION SELECT name FROM people",
	"SELECT tname FROM towns UNION ALL SELECT CAST(age AS CHAR) FROM people",
	"SELECT * FROM (SELECT * FROM people) AS sub",
	"SELECT * FROM (SELECT age FROM people WHERE id = 2) x",
	"WITH c AS (SELECT * FROM people) SELECT * FROM c",
	"WITH RECURSIVE r AS (SELECT age FROM people WHERE id = 0 UNION SELECT age + 1 FROM r WHERE age < 10) SELECT * FROM r",
	"SELECT * FROM people AS OF '2020-01-01'",
	"SELECT * FROM DEMO.PEOPLE",
	"SELECT * FROM `demo`.`people`",
	"SELECT JSON_OBJECT('a', (SELECT age FROM people LIMIT 1))",
	"SELECT IF((SELECT COUNT(*) FROM people WHERE age > 60) > 0, SLEEP(0), 0)",
	"SELECT * FROM towns WHERE id = (SELECT MAX(town) FROM people)",
	"SELECT * FROM people FOR UPDATE",
	"SELECT * FROM people LOCK IN SHARE MODE",
	"TABLE people",
	"SELECT age INTO @a FROM people LIMIT 1",
	"SELECT * FROM owner_view",
	"SELECT * FROM owner_view WHERE age > 30",
	"EXPLAIN SELECT * FROM people",
	"EXPLAIN FORMAT=TREE SELECT * FROM people WHERE age > 3",
	"DESCRIBE SELECT * FROM people",
	"EXPLAIN ANALYZE SELECT * FROM people",
	"ANALYZE TABLE people",
	// Copies.
	"CREATE TABLE stolen AS SELECT * FROM people",
	"CREATE TABLE stolen2 SELECT age FROM people",
	"CREATE TEMPORARY TABLE stolen3 AS SELECT * FROM people",
	"INSERT INTO towns SELECT id + 100, name FROM people",
	"INSERT INTO towns (id, tname) SELECT id + 200, CAST(age AS CHAR) FROM people WHERE age > 50",
	"REPLACE INTO towns SELECT id + 300, name FROM people",
	"UPDATE towns SET tname = (SELECT name FROM people LIMIT 1)",
	"UPDATE towns t JOIN people p ON p.town = t.id SET t.tname = p.name",
	"DELETE FROM towns WHERE id IN (SELECT town FROM people WHERE age > 65)",
	"DELETE t FROM towns t JOIN people p ON p.town = t.id WHERE p.age > 65",
	"CREATE VIEW v AS SELECT * FROM people",
	"CREATE VIEW v2 AS SELECT AVG(age) a FROM people",
	"SET @x = (SELECT age FROM people LIMIT 1)",
	"SELECT * FROM people INTO OUTFILE 'x.csv'",
	"SELECT * FROM people INTO DUMPFILE 'x.bin'",
	"SELECT * FROM towns INTO OUTFILE 'towns.csv'",
	// Writes and DDL on the protected table.
	"UPDATE people SET age = 1 WHERE age > 50",
	"UPDATE people SET age = age",
	"DELETE FROM people WHERE age > 50",
	"DELETE FROM people",
	"INSERT INTO people VALUES (1, 'dup', 30, 0)",
	"INSERT INTO people VALUES (1000, 'x', 30, 0)",
	"INSERT IGNORE INTO people VALUES (1, 'dup', 30, 0)",
	"INSERT INTO people VALUES (1, 'x', 30, 0) ON DUPLICATE KEY UPDATE age = age + 1",
	"INSERT INTO people SET id = 2000, name = 'x', age = 1, town = 0",
	"REPLACE INTO people VALUES (1, 'x', 30, 0)",
	"TRUNCATE TABLE people",
	"DROP TABLE people",
	"DROP TABLE IF EXISTS towns, people",
	"DROP DATABASE demo",
	"ALTER TABLE people ADD COLUMN z INT",
	"ALTER TABLE people ADD COLUMN z INT DEFAULT 1",
	"ALTER TABLE people DROP COLUMN age",
	"ALTER TABLE people MODIFY COLUMN age INT",
	"ALTER TABLE people RENAME COLUMN age TO age2",
	"ALTER TABLE people ADD INDEX idx_age (age)",
	"ALTER TABLE people ADD UNIQUE KEY u_age (age)",
	"ALTER TABLE people ADD CONSTRAINT c CHECK (age < 40)",
	"ALTER TABLE people RENAME TO people2",
	"CREATE INDEX idx_age ON people (age)",
	"CREATE UNIQUE INDEX u_name ON people (name)",
	"RENAME TABLE people TO people2",
	"CREATE TRIGGER trg AFTER INSERT ON people FOR EACH ROW INSERT INTO towns VALUES (NEW.id + 500, NEW.name)",
	"CREATE TRIGGER trg2 BEFORE UPDATE ON people FOR EACH ROW SET NEW.age = OLD.age",
	"CREATE TABLE fk (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES people (id))",
	"LOAD DATA INFILE 'x.csv' INTO TABLE people",
	"LOAD DATA LOCAL INFILE 'x.csv' INTO TABLE people",
	// Item 4: refused inserts must not move AUTO_INCREMENT.
	"INSERT INTO seq VALUES (2147483647, 1)",
	"INSERT INTO seq (id, v) VALUES (2147483646, 1)",
	"REPLACE INTO seq VALUES (2147483647, 1)",
	"INSERT INTO seq SELECT 2147483647, 1",
	"ALTER TABLE seq AUTO_INCREMENT = 2147483647",
	// Routines and reserved names.
	"CREATE PROCEDURE p() SELECT * FROM people",
	"CREATE PROCEDURE p2() SELECT 1",
	"CREATE EVENT ev ON SCHEDULE EVERY 1 SECOND DO INSERT INTO towns SELECT id + 900, name FROM people",
	"CALL dp_protect('towns', 100, 0)",
	"CALL dp_protect('people', 1000, 0)",
	"CALL dp_bounds('people', 'age', 0, 30)",
	"CALL dp_labels('people', 'name', 'a,b')",
	"CALL dp_owner_add('ana')",
	"CALL dp_drop_model('m_people')",
	"CALL dp_quota('ana', 'people', 1000, 0)",
	"CALL dp_quota_remove('ana', 'people')",
	"CREATE TABLE dp_budget (x INT)",
	"CREATE TABLE dp_quotas (x INT)",
	"CREATE VIEW dp_ledger AS SELECT 1",
	"CREATE DATABASE dpsql",
	"SELECT * FROM dp_ledger",
	"SELECT * FROM demo.dp_ledger WHERE table_name = 'demo.people'",
	"SELECT * FROM dpsql.dp_ledger",
	// DP functions used so that they could run more than once or per row.
	"SELECT DP_MEAN('people', 'age', 0.1) FROM towns",
	"SELECT id FROM towns WHERE DP_MEAN('people', 'age', 0.1) > 0",
	"SELECT (SELECT DP_MEAN('people', 'age', 0.1))",
	"SELECT DP_MEAN('people', 'age', 0.1) UNION SELECT 1",
	"SELECT DP_MEAN('people', 'age', 0.1) GROUP BY 1",
	"SELECT DP_MEAN('people', 'age', 0.1) ORDER BY 1",
	"SELECT DP_MEAN('people', 'age', 0.1) HAVING 1",
	"CREATE VIEW dpv AS SELECT DP_MEAN('people', 'age', 0.1)",
	"INSERT INTO towns SELECT 77, DP_MEAN('people', 'age', 0.1)",
	"SELECT DP_PREDICT('m_people', age) FROM people",
	// Degenerate arguments, refused before charging.
	"SELECT DP_MEAN('people', 'age', 0)",
	"SELECT DP_MEAN('people', 'age', 1e300)",
	"SELECT DP_MEAN('people', 'age', 'NaN')",
	"SELECT DP_MEAN('people', 'name', 0.1)",
	"SELECT DP_MEAN('people; DROP TABLE towns', 'age', 0.1)",
	"SELECT DP_MEAN('demo.people\\0', 'age', 0.1)",
	"SELECT DP_MEAN('people', 'age', 100)",
	"SELECT DP_LSQ('people', 1, 'linear', 'label=age; C=1')",
	"SELECT DP_LSQ('people', 1, 'rbf', 'label=age; dim=16384')",
	"SELECT DP_LSQ('people', 1, 'rbf', 'label=age; gamma=1e300')",
	"SELECT DP_LSQ('people', 1, 'rbf', 'label=age; gamma=5e-324')",
	"SELECT DP_LSQ('people', 1, 'linear', 'label=age; model=m_people')",
	"SELECT DP_LSQ('people', 1, 'linear', 'label=age; model=bad name')",
	"SELECT DP_LSQ_PREDICT('people', 1, 'cauchy', 'label=age; gamma=1e300', 1)",
	"SELECT DP_SVM_TRAIN('people', 1, 'linear', 'C=5e-324')",
	// Server-wide state and other accounts.
	"SET GLOBAL sql_mode = 'ANSI_QUOTES'",
	"SET @@GLOBAL.max_connections = 1",
	"SET PERSIST local_infile = 0",
	"SET PERSIST_ONLY max_connections = 1",
	"SELECT @@secure_file_priv",
	"SELECT @@GLOBAL.secure_file_priv",
	"SELECT LOAD_FILE('dpsql.db')",
	"SELECT LOAD_FILE('../dpsql.db')",
	"KILL ROOTCONN",
	"KILL QUERY ROOTCONN",
	"KILL CONNECTION ROOTCONN",
	"GRANT ALL ON *.* TO 'ana'@'%'",
	"GRANT SUPER ON *.* TO 'ana'@'%'",
	"CREATE USER evil IDENTIFIED BY 'x'",
	"ALTER USER 'root'@'%' IDENTIFIED BY 'x'",
	"DROP USER 'root'@'%'",
	"REVOKE ALL ON *.* FROM 'root'@'%'",
}

// noGrantStatements run as an account with no grant at all: nothing about
// other databases may be used or charged.
var noGrantStatements = []string{
	"SELECT DP_MEAN('demo.people', 'age', 0.1)",
	"SELECT DP_LSQ('demo.people', 1, 'linear', 'label=age')",
	"SELECT DP_LSQ_PREDICT('demo.people', 1, 'linear', 'label=age', 1, 2)",
	"SELECT DP_SVM_TRAIN('demo.people', 1, 'linear')",
	"SELECT DP_LMGC_TRAIN('demo.people', 1)",
	"SELECT DP_EVALUATE('m_people', 'demo.people', 0.1)",
	"SELECT DP_MODEL_JSON('m_people')",
	"SELECT DP_PREDICT('m_people', 1)",
	"SELECT * FROM demo.dp_budget",
	"SELECT * FROM demo.dp_models",
	"SELECT * FROM dpsql.dp_budget",
	"SELECT * FROM demo.towns",
	"USE demo",
	"SET GLOBAL sql_mode = 'ANSI_QUOTES'",
	"KILL ROOTCONN",
}

func TestAnalystBypassSuite(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := setupProtected(t, ts, 50, 10)
	runBypassSuite(t, ts, root)
}

// runBypassSuite runs the suite on a server prepared by setupProtected (or
// its MariaDB/Spider twin, scaleout_test.go).
func runBypassSuite(t *testing.T, ts *testServer, root *sql.DB) {
	mustExec(t, root, "CREATE VIEW owner_view AS SELECT * FROM people")
	mustExec(t, root, "CREATE TABLE demo.seq (id INT AUTO_INCREMENT PRIMARY KEY, v DOUBLE)")
	mustExec(t, root, "INSERT INTO demo.seq (v) VALUES (1), (2)")
	mustExec(t, root, "CALL dp_protect('seq', 1, 0)")
	mustExec(t, root, "CREATE USER nogrant IDENTIFIED BY 'pw'")
	var m string
	mustExec(t, root, "CALL dp_bounds('people', 'town', 0, 2)")
	if err := root.QueryRow("SELECT DP_LSQ('people', 0.5, 'linear', 'label=age; features=town; model=m_people')").Scan(&m); err != nil {
		t.Fatal(err)
	}
	rc, err := root.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var rootConn int
	if err := rc.QueryRowContext(t.Context(), "SELECT CONNECTION_ID()").Scan(&rootConn); err != nil {
		t.Fatal(err)
	}
	state := func() string {
		var b strings.Builder
		for _, q := range []string{
			"SELECT COUNT(*), SUM(age), SUM(LENGTH(name)) FROM demo.people",
			"SELECT COUNT(*), MAX(id) FROM demo.seq",
			"SELECT table_name, epsilon_spent, delta_spent FROM dpsql.dp_budget ORDER BY 1",
			"SELECT COUNT(*) FROM dpsql.dp_ledger",
			"SELECT COUNT(*) FROM dpsql.dp_models",
			"SELECT COUNT(*) FROM dpsql.dp_quotas",
			"SELECT COUNT(*) FROM demo.towns",
			"SELECT @@GLOBAL.sql_mode, @@GLOBAL.max_connections, @@GLOBAL.local_infile",
			"SELECT COUNT(*) FROM mysql.user",
			"SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'demo'",
		} {
			rows, err := rc.QueryContext(t.Context(), q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			cols, _ := rows.Columns()
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			for rows.Next() {
				rows.Scan(ptrs...)
				for _, v := range vals {
					if bs, ok := v.([]byte); ok {
						v = string(bs)
					}
					fmt.Fprintf(&b, "%v|", v)
				}
			}
			rows.Close()
			b.WriteString("\n")
		}
		return b.String()
	}
	before := state()
	rootConnRE := regexp.MustCompile(`ROOTCONN`)
	leak := regexp.MustCompile(`person\d|` + regexp.QuoteMeta(ts.dir))
	seen := map[string]bool{}
	run := func(user string, list []string, db string) {
		c := ts.connect(user, map[string]string{"ana": "ana-pw", "nogrant": "pw"}[user], db)
		for _, q := range list {
			q = rootConnRE.ReplaceAllString(q, fmt.Sprint(rootConn))
			if seen[user+q] {
				t.Fatalf("statement listed twice: %s", q)
			}
			seen[user+q] = true
			err := queryErr(c, q)
			if err == nil {
				t.Errorf("%s: %s: accepted", user, q)
				continue
			}
			if testing.Verbose() {
				t.Logf("%s: %s → %v", user, q, err)
			}
			if leak.MatchString(err.Error()) {
				t.Errorf("%s: %s: error leaks a value or the data directory: %v", user, q, err)
			}
		}
	}
	run("ana", bypassStatements, "demo")
	run("nogrant", noGrantStatements, "")
	if after := state(); after != before {
		t.Fatalf("refused statements changed the server state:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if err := rc.PingContext(t.Context()); err != nil {
		t.Fatalf("root's connection was killed: %v", err)
	}
	// A statement prepared by name is checked when it is executed.
	ana := ts.connect("ana", "ana-pw", "demo")
	pc, err := ana.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if _, err := pc.ExecContext(t.Context(), "PREPARE s FROM 'SELECT age FROM people'"); err == nil {
		if _, err := pc.ExecContext(t.Context(), "EXECUTE s"); err == nil {
			t.Fatal("EXECUTE of a prepared read of a protected table succeeded")
		}
	}
	// SHOW VARIABLES shows no secure_file_priv to analysts.
	rows, err := ana.Query("SHOW VARIABLES LIKE 'secure_file_priv'")
	if err != nil {
		t.Fatal(err)
	}
	if rows.Next() {
		t.Fatal("SHOW VARIABLES shows secure_file_priv to an analyst")
	}
	rows.Close()
	total := len(bypassStatements) + len(noGrantStatements)
	t.Logf("%d distinct refused statements (%d as an analyst with every grant on demo, %d with no grant)", total, len(bypassStatements), len(noGrantStatements))
	if total < 100 {
		t.Fatalf("the bypass suite has %d statements, want ≥ 100", total)
	}
}
