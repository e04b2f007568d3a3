package engine_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dpsql/dpsql/engine"
	"github.com/dpsql/dpsql/server"
)

// MySQL conformance (issue 29), through go-sql-driver on loopback. Each
// expectation is MySQL's documented behaviour; where mariadbd is installed
// (CI installs it: scripts/test-setup.sh) a private MariaDB started here
// answers the same statements and must agree.

const mdbRootPW = "mdb-root"

// startMariaDB starts a private MariaDB (.ci/lib-mariadb.sh) and returns its
// address, or "" when mariadbd is not installed.
func startMariaDB(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("mariadbd"); err != nil {
		if os.Getenv("DPSQL_REQUIRE_MARIADB") != "" { // .ci/run installed it: the comparison must run
			t.Fatal("mariadbd is not installed but DPSQL_REQUIRE_MARIADB is set")
		}
		t.Log("mariadbd is not installed: checking dpsql against MySQL's documented answers only (bash scripts/test-setup.sh --deps installs it)")
		return ""
	}
	dir, err := os.MkdirTemp("", "dpsql-mariadb-")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", "-c", `. ../.ci/lib-mariadb.sh && mariadb_up "$1" "$2" >&2 && echo "$MDB_PORT"`, "-", dir+"/m", mdbRootPW).Output()
	t.Cleanup(func() {
		_ = exec.Command("bash", "-c", `. ../.ci/lib-mariadb.sh && mariadb_down "$1"`, "-", dir+"/m").Run()
		os.RemoveAll(dir)
	})
	if err != nil {
		t.Fatalf("start MariaDB: %v (%s)", err, out)
	}
	return "127.0.0.1:" + strings.TrimSpace(string(out))
}

// handshakeStatus reads the status flags of the server's initial handshake
// packet (protocol 10).
func handshakeStatus(t *testing.T, addr string) uint16 {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
	if _, err := io.ReadFull(r, p); err != nil {
		t.Fatal(err)
	}
	if p[0] != 10 {
		t.Fatalf("handshake protocol %d", p[0])
	}
	i := 1 + strings.IndexByte(string(p[1:]), 0) + 1 // server version
	i += 4 + 8 + 1 + 2 + 1                           // connection id, auth data, filler, capabilities, charset
	return binary.LittleEndian.Uint16(p[i:])
}

func sqlErr(err error) (uint16, string) {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number, string(me.SQLState[:])
	}
	return 0, ""
}

func wantCode(t *testing.T, who string, err error, code uint16, state string) {
	t.Helper()
	if n, s := sqlErr(err); n != code || s != state {
		t.Errorf("%s: got %d/%s (%v), want %d/%s", who, n, s, err, code, state)
	}
}

func TestMySQLConformance(t *testing.T) {
	mdb := startMariaDB(t)
	ts := startServerOpts(t, t.TempDir(), engine.Options{}, server.Options{
		Throttle: server.LoginThrottle{MaxFailures: 3, BaseLock: time.Minute, MaxLock: time.Minute, Window: time.Minute,
			AddressFailures: 10, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}})
	root := setupProtected(t, ts, 20, 10)
	type target struct {
		name, addr, rootPW string
		dpsql              bool
	}
	targets := []target{{"dpsql", ts.srv.Addr(), rootPW, true}}
	if mdb != "" {
		m := connectAddr(t, mdb, "root", mdbRootPW, "")
		for _, q := range []string{"CREATE DATABASE demo", "CREATE TABLE demo.people (id INT PRIMARY KEY, name VARCHAR(64), age DOUBLE, town INT)",
			"CREATE TABLE demo.towns (id INT PRIMARY KEY, tname VARCHAR(64))", "CREATE USER 'ana'@'%' IDENTIFIED BY 'ana-pw'",
			"GRANT SELECT ON demo.people TO 'ana'@'%'"} {
			mustExec(t, m, q)
		}
		targets = append(targets, target{"MariaDB", mdb, mdbRootPW, false})
	}
	// ana: SELECT on demo.people only, as on MariaDB.
	mustExec(t, root, "REVOKE SELECT, INSERT, UPDATE, DELETE, CREATE, CREATE VIEW, DROP, ALTER, EXECUTE, TRIGGER ON demo.* FROM 'ana'@'%'")
	mustExec(t, root, "GRANT SELECT ON demo.people TO 'ana'@'%'")

	t.Run("handshake status", func(t *testing.T) {
		for _, tg := range targets {
			if st := handshakeStatus(t, tg.addr); st&0x0002 == 0 {
				t.Errorf("%s: handshake status 0x%04x without SERVER_STATUS_AUTOCOMMIT", tg.name, st)
			}
		}
	})

	t.Run("error codes", func(t *testing.T) {
		for _, tg := range targets {
			r := connectAddr(t, tg.addr, "root", tg.rootPW, "demo")
			_, err := r.Exec("SELEC 1")
			wantCode(t, tg.name+" syntax", err, 1064, "42000")
			ana := connectAddr(t, tg.addr, "ana", "ana-pw", "demo")
			_, err = ana.Exec("SELECT * FROM towns")
			wantCode(t, tg.name+" table privilege", err, 1142, "42000")
			_, err = ana.Exec("CREATE DATABASE other")
			if n, _ := sqlErr(err); n != 1044 && n != 1142 {
				t.Errorf("%s: CREATE DATABASE without the privilege: %v", tg.name, err)
			}
			_, err = ana.Exec("USE mysql")
			wantCode(t, tg.name+" database privilege", err, 1044, "42000")

			// KILL QUERY of a running statement.
			conn, err := r.Conn(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var id int64
			if err := conn.QueryRowContext(t.Context(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := conn.ExecContext(t.Context(), "SELECT SLEEP(20)")
				done <- err
			}()
			time.Sleep(300 * time.Millisecond)
			other := connectAddr(t, tg.addr, "root", tg.rootPW, "")
			mustExec(t, other, fmt.Sprintf("KILL QUERY %d", id))
			err = <-done
			conn.Close()
			if tg.dpsql || err != nil { // MariaDB's SLEEP returns 1 when killed, without an error
				wantCode(t, tg.name+" KILL QUERY", err, 1317, "70100")
			}
		}
		// A server file outside secure_file_priv (DIR/files): MySQL's 1290.
		_, err := root.Exec("LOAD DATA INFILE '/etc/hostname' INTO TABLE towns")
		wantCode(t, "LOAD DATA INFILE outside secure_file_priv", err, 1290, "HY000")
		// dpsql's own range for refusals on privacy grounds.
		ana := ts.connect("ana", "ana-pw", "demo")
		_, err = ana.Exec("SELECT * FROM people")
		wantCode(t, "protected table", err, engine.ERDPProtected, engine.SSDPRefused)
		_, err = ana.Exec("SELECT DP_MEAN('people', 'age', 11)")
		wantCode(t, "budget exceeded", err, engine.ERDPBudgetExceeded, engine.SSDPRefused)
		mustExec(t, root, "CALL dp_quota('ana', 'people', 1, 0)")
		_, err = ana.Exec("SELECT DP_MEAN('people', 'age', 2)")
		wantCode(t, "quota exceeded", err, engine.ERDPQuotaExceeded, engine.SSDPRefused)
		_, err = root.Exec("SELECT DP_MEAN('towns', 'id', 1)")
		wantCode(t, "not protected", err, engine.ERDPNotProtected, engine.SSDPRefused)
	})

	t.Run("DO and DESCRIBE pattern", func(t *testing.T) {
		for _, tg := range targets {
			r := connectAddr(t, tg.addr, "root", tg.rootPW, "demo")
			for _, q := range []string{"DO 1", "DO 1, 2", "do (SELECT 1) ;", "/* c */ DO SLEEP(0)"} {
				if _, err := r.Exec(q); err != nil {
					t.Errorf("%s: %s: %v", tg.name, q, err)
				}
			}
			if _, err := r.Exec("DO nosuchcolumn"); err == nil {
				t.Errorf("%s: DO of an unknown column accepted", tg.name)
			}
			// Multi-statement texts mixing DO and SELECT.
			cfg := mysql.NewConfig()
			cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName, cfg.MultiStatements = "root", tg.rootPW, "tcp", tg.addr, "demo", true
			cn, _ := mysql.NewConnector(cfg)
			multi := sql.OpenDB(cn)
			rows, err := multi.Query("DO 1; SELECT 7 AS x; DO 2")
			if err != nil {
				t.Fatalf("%s: multi-statement with DO: %v", tg.name, err)
			}
			var got []int
			for {
				for rows.Next() {
					var x int
					rows.Scan(&x)
					got = append(got, x)
				}
				if !rows.NextResultSet() {
					break
				}
			}
			if err := rows.Err(); err != nil || len(got) != 1 || got[0] != 7 {
				t.Errorf("%s: DO 1; SELECT 7; DO 2 gave %v, %v", tg.name, got, err)
			}
			rows.Close()
			multi.Close()
			for q, want := range map[string]int{"DESCRIBE people '%'": 4, "DESC demo.people 'a%'": 1, "DESCRIBE people age": 1, "DESCRIBE `people` 'zz%'": 0} {
				rows, err := r.Query(q)
				if err != nil {
					t.Errorf("%s: %s: %v", tg.name, q, err)
					continue
				}
				n := 0
				for rows.Next() {
					n++
				}
				rows.Close()
				if n != want {
					t.Errorf("%s: %s: %d rows, want %d", tg.name, q, n, want)
				}
			}
		}
	})

	t.Run("CHECK, OPTIMIZE, REPAIR, ANALYZE TABLE", func(t *testing.T) {
		for _, tg := range targets {
			r := connectAddr(t, tg.addr, "root", tg.rootPW, "demo")
			for _, op := range []string{"CHECK", "OPTIMIZE", "REPAIR", "ANALYZE"} {
				rows, err := r.Query(op + " TABLE people, demo.towns")
				if err != nil {
					t.Errorf("%s: %s TABLE: %v", tg.name, op, err)
					continue
				}
				status := map[string]string{}
				for _, row := range scanAll(t, rows) {
					if row[2].String == "Error" {
						t.Errorf("%s: %s TABLE: %v", tg.name, op, row)
					}
					if len(row) != 4 {
						t.Fatalf("%s: %s TABLE: %d columns", tg.name, op, len(row))
					}
					if row[2].String == "status" {
						status[row[0].String] = row[3].String
					}
				}
				// InnoDB answers REPAIR with a note ("doesn't support repair") and no status.
				if (status["demo.people"] != "OK" || status["demo.towns"] != "OK") && !(op == "REPAIR" && !tg.dpsql && len(status) == 0) {
					t.Errorf("%s: %s TABLE statuses %v", tg.name, op, status)
				}
			}
			rows, err := r.Query("CHECK TABLE nosuch")
			if err != nil {
				t.Fatalf("%s: CHECK TABLE nosuch: %v", tg.name, err)
			}
			res := scanAll(t, rows)
			if len(res) == 0 || res[0][2].String != "Error" {
				t.Errorf("%s: CHECK TABLE of a missing table: %v", tg.name, res)
			}
			tool, err := exec.LookPath("mariadb-check")
			if err != nil && os.Getenv("DPSQL_REQUIRE_MARIADB") != "" {
				t.Fatal("mariadb-check is not installed but DPSQL_REQUIRE_MARIADB is set")
			}
			if err == nil {
				host, port, _ := net.SplitHostPort(tg.addr)
				out, err := exec.Command(tool, "--protocol=tcp", "-h"+host, "-P"+port, "-uroot", "-p"+tg.rootPW, "demo").CombinedOutput()
				if err != nil || !strings.Contains(string(out), "OK") {
					t.Errorf("%s: mariadb-check: %v\n%s", tg.name, err, out)
				}
			}
		}
		ana := ts.connect("ana", "ana-pw", "demo")
		_, err := ana.Exec("CHECK TABLE people")
		wantCode(t, "analyst CHECK TABLE", err, 1142, "42000")
	})

	t.Run("processlist", func(t *testing.T) {
		for _, tg := range targets {
			// A connection without a database (go-mysql-server marked such
			// sessions ready only on USE) and one with.
			for _, db := range []string{"", "demo"} {
				r := connectAddr(t, tg.addr, "root", tg.rootPW, db)
				conn, err := r.Conn(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				var id int64
				if err := conn.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
					t.Fatal(err)
				}
				rows, err := conn.QueryContext(context.Background(), "SHOW PROCESSLIST")
				if err != nil {
					t.Fatalf("%s: SHOW PROCESSLIST: %v", tg.name, err)
				}
				found := false
				for _, row := range scanAll(t, rows) {
					if row[0].String != fmt.Sprint(id) {
						continue
					}
					found = true
					host, _, err := net.SplitHostPort(row[2].String)
					if row[1].String != "root" || err != nil || host != "127.0.0.1" || strings.Contains(row[6].String, "\n") {
						t.Errorf("%s (db %q): own processlist row User=%q Host=%q State=%q; want root, 127.0.0.1:port, one line", tg.name, db, row[1].String, row[2].String, row[6].String)
					}
				}
				conn.Close()
				if !found {
					t.Errorf("%s: own connection %d not in SHOW PROCESSLIST", tg.name, id)
				}
			}
		}
		// An analyst sees only their own connections (MySQL, without the
		// PROCESS privilege); an owner's, open meanwhile, stays hidden.
		connID := func(db *sql.DB) (*sql.Conn, string) {
			conn, err := db.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			var id string
			if err := conn.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
				t.Fatal(err)
			}
			return conn, id
		}
		_, rootID := connID(connectAddr(t, ts.srv.Addr(), "root", rootPW, "demo"))
		anaConn, anaID := connID(ts.connect("ana", "ana-pw", "demo"))
		for _, q := range []string{"SHOW PROCESSLIST", "SHOW FULL PROCESSLIST", "SELECT ID, USER FROM information_schema.PROCESSLIST",
			"SELECT ID FROM information_schema.PROCESSLIST WHERE ID > 0 ORDER BY ID"} {
			rows, err := anaConn.QueryContext(context.Background(), q)
			if err != nil {
				t.Errorf("analyst %s: %v", q, err)
				continue
			}
			own := false
			for _, row := range scanAll(t, rows) {
				own = own || row[0].String == anaID
				if row[0].String == rootID || (len(row) > 1 && row[1].String != "ana") {
					t.Errorf("analyst %s shows another account's connection: %v", q, row)
				}
				// State without the plan's progress (rows read so far).
				if strings.HasPrefix(q, "SHOW") && row[6].String != "" && row[6].String != "running" {
					t.Errorf("analyst %s: State %q", q, row[6].String)
				}
			}
			if !own {
				t.Errorf("analyst %s: own connection %s missing", q, anaID)
			}
		}
		if n := queryString(t, connectAddr(t, ts.srv.Addr(), "root", rootPW, ""), "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID IN (?, ?)", rootID, anaID); n != "2" {
			t.Errorf("owner sees %s of the two connections, want both", n)
		}
	})

	t.Run("mariadb-admin status and processlist", func(t *testing.T) {
		tool, err := exec.LookPath("mariadb-admin")
		if err != nil {
			if os.Getenv("DPSQL_REQUIRE_MARIADB") != "" {
				t.Fatal("mariadb-admin is not installed but DPSQL_REQUIRE_MARIADB is set")
			}
			t.Log("mariadb-admin is not installed (bash scripts/test-setup.sh --deps installs it)")
			return
		}
		reStatus := regexp.MustCompile(`^Uptime: \d+  Threads: [1-9]\d*  Questions: \d+  Slow queries: \d+  Opens: \d+  Open tables: \d+  Queries per second avg: \d+\.\d{3}\n$`)
		admin := func(addr, user, pw string, cmd ...string) string {
			host, port, _ := net.SplitHostPort(addr)
			out, err := exec.Command(tool, append([]string{"--protocol=tcp", "-h" + host, "-P" + port, "-u" + user, "-p" + pw}, cmd...)...).CombinedOutput()
			if err != nil {
				t.Errorf("%s mariadb-admin %s as %s: %v\n%s", addr, cmd, user, err, out)
			}
			return string(out)
		}
		for _, tg := range targets {
			if out := admin(tg.addr, "root", tg.rootPW, "status"); !reStatus.MatchString(out) {
				t.Errorf("%s: mariadb-admin status: %q", tg.name, out)
			}
			// processlist: a table with mariadb-admin's own connection in it.
			if out := admin(tg.addr, "root", tg.rootPW, "processlist"); !strings.Contains(out, "| Id ") || !strings.Contains(out, "| root ") {
				t.Errorf("%s: mariadb-admin processlist:\n%s", tg.name, out)
			}
		}
		// Any logged-in account may ask, as on MySQL and MariaDB; an
		// analyst's processlist holds only their own connection.
		if out := admin(ts.srv.Addr(), "ana", "ana-pw", "status"); !reStatus.MatchString(out) {
			t.Errorf("analyst mariadb-admin status: %q", out)
		}
		if out := admin(ts.srv.Addr(), "ana", "ana-pw", "processlist"); !strings.Contains(out, "| ana ") || strings.Contains(out, "| root ") {
			t.Errorf("analyst mariadb-admin processlist:\n%s", out)
		}
	})

	t.Run("tabular EXPLAIN", func(t *testing.T) {
		// MySQL's columns and access types (MariaDB's EXPLAIN has no
		// partitions or filtered column, so MySQL's documentation is the
		// reference): whether and which index is used, and the row count.
		r := connectAddr(t, ts.srv.Addr(), "root", rootPW, "demo")
		mustExec(t, r, "CREATE TABLE ex (id INT PRIMARY KEY, a INT, b VARCHAR(10), KEY ia (a))")
		mustExec(t, r, "CREATE TABLE ex2 (id INT PRIMARY KEY, ex_id INT)")
		mustExec(t, r, "INSERT INTO ex VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 2, 'c')")
		mustExec(t, r, "INSERT INTO ex2 VALUES (1, 1)")
		for q, want := range map[string][]string{
			"SELECT * FROM ex":                                  {"1|SIMPLE|ex|NULL|ALL|NULL|NULL|NULL|NULL|3|100|NULL"},
			"SELECT * FROM ex WHERE id = 2":                     {"1|SIMPLE|ex|NULL|const|PRIMARY|PRIMARY|NULL|const|1|100|NULL"},
			"SELECT * FROM ex WHERE a = 2":                      {"1|SIMPLE|ex|NULL|ref|ia|ia|NULL|const|3|100|NULL"},
			"SELECT * FROM ex WHERE b = 'a'":                    {"1|SIMPLE|ex|NULL|ALL|NULL|NULL|NULL|NULL|3|100|Using where"},
			"SELECT * FROM ex AS e WHERE e.id > 1":              {"1|SIMPLE|e|NULL|range|PRIMARY|PRIMARY|NULL|NULL|3|100|Using where"},
			"SELECT ex.b FROM ex JOIN ex2 ON ex2.ex_id = ex.id": {"1|SIMPLE|ex2|NULL|ALL|NULL|NULL|NULL|NULL|1|100|NULL", "1|SIMPLE|ex|NULL|eq_ref|PRIMARY|PRIMARY|NULL|ex2.ex_id|1|100|NULL"},
			"SELECT 1": {"1|SIMPLE|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|No tables used"},
		} {
			for _, explain := range []string{"EXPLAIN ", "DESCRIBE "} {
				rows, err := r.Query(explain + q)
				if err != nil {
					t.Errorf("%s%s: %v", explain, q, err)
					continue
				}
				cols, _ := rows.Columns()
				if got := strings.Join(cols, ","); got != "id,select_type,table,partitions,type,possible_keys,key,key_len,ref,rows,filtered,Extra" {
					t.Errorf("%s%s: columns %s", explain, q, got)
				}
				if got := rowStrings(t, rows); strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%s%s:\n got %q\nwant %q", explain, q, got, want)
				}
			}
		}
		// FORMAT=TREE of a one-row plan (go-mysql-server refused its
		// several lines as "more than one row").
		rows, err := r.Query("EXPLAIN FORMAT=TREE SELECT * FROM ex WHERE id = 2")
		if err != nil {
			t.Fatalf("EXPLAIN FORMAT=TREE of a point lookup: %v", err)
		}
		if got := strings.Join(rowStrings(t, rows), "\n"); !strings.Contains(got, "IndexedTableAccess(ex)") {
			t.Errorf("EXPLAIN FORMAT=TREE: %s", got)
		}
		// An owner sees a protected table's row count; an analyst's EXPLAIN
		// of it stays refused (the guard: no plan, no row count).
		rows, err = r.Query("EXPLAIN SELECT * FROM people")
		if err != nil {
			t.Fatalf("owner EXPLAIN of the protected table: %v", err)
		}
		if got := rowStrings(t, rows); len(got) != 1 || !strings.Contains(got[0], "|ALL|") || !strings.Contains(got[0], "|20|") {
			t.Errorf("owner EXPLAIN of the protected table: %q", got)
		}
		ana := ts.connect("ana", "ana-pw", "demo")
		if _, err := ana.Query("EXPLAIN SELECT * FROM people WHERE id = 1"); err == nil {
			t.Errorf("analyst EXPLAIN of a protected table accepted")
		}
	})

	t.Run("SHOW CREATE TABLE loads into MariaDB", func(t *testing.T) {
		// What mariadb-dump writes for an unprotected table: MariaDB 10.11
		// knows no utf8mb4_0900_* collation (item 9).
		r := connectAddr(t, ts.srv.Addr(), "root", rootPW, "demo")
		mustExec(t, r, "CREATE TABLE colls (id INT PRIMARY KEY, a VARCHAR(10) COLLATE utf8mb4_0900_ai_ci, b VARCHAR(5) COLLATE utf8mb4_bin, c TEXT)")
		var name, create string
		if err := r.QueryRow("SHOW CREATE TABLE colls").Scan(&name, &create); err != nil {
			t.Fatal(err)
		}
		mustExec(t, r, "CREATE DATABASE demo2")
		mustExec(t, connectAddr(t, ts.srv.Addr(), "root", rootPW, "demo2"), create)
		for col, want := range map[string]string{"a": "utf8mb4_0900_ai_ci", "b": "utf8mb4_bin", "c": "utf8mb4_0900_bin"} {
			if got := queryString(t, r, "SELECT collation_name FROM information_schema.columns WHERE table_schema = 'demo2' AND table_name = 'colls' AND column_name = ?", col); got != want {
				t.Errorf("dpsql restore: column %s collation %s, want %s (%s)", col, got, want, create)
			}
		}
		if mdb != "" {
			m := connectAddr(t, mdb, "root", mdbRootPW, "demo")
			mustExec(t, m, create)
			if got := queryString(t, m, "SELECT table_collation FROM information_schema.tables WHERE table_schema = 'demo' AND table_name = 'colls'"); got != "utf8mb4_nopad_bin" {
				t.Errorf("MariaDB: table collation %s, want utf8mb4_nopad_bin", got)
			}
		}
	})

	t.Run("CHECKSUM TABLE", func(t *testing.T) {
		for _, tg := range targets {
			r := connectAddr(t, tg.addr, "root", tg.rootPW, "demo")
			mustExec(t, r, "CREATE TABLE ck1 (id INT PRIMARY KEY, s VARCHAR(10))")
			mustExec(t, r, "CREATE TABLE ck2 (id INT PRIMARY KEY, s VARCHAR(10))")
			mustExec(t, r, "INSERT INTO ck1 VALUES (1, 'a'), (2, NULL), (3, '')")
			mustExec(t, r, "INSERT INTO ck2 VALUES (3, ''), (1, 'a'), (2, NULL)")
			sums := func(q string) []sql.NullInt64 {
				rows, err := r.Query(q)
				if err != nil {
					t.Fatalf("%s: %s: %v", tg.name, q, err)
				}
				defer rows.Close()
				var out []sql.NullInt64
				for rows.Next() {
					var name string
					var v sql.NullInt64
					if err := rows.Scan(&name, &v); err != nil {
						t.Fatal(err)
					}
					out = append(out, v)
				}
				return out
			}
			got := sums("CHECKSUM TABLE ck1, demo.ck2, nosuch")
			if len(got) != 3 || !got[0].Valid || got[0] != got[1] || got[2].Valid {
				t.Errorf("%s: CHECKSUM TABLE of equal tables and a missing one: %v", tg.name, got)
			}
			mustExec(t, r, "UPDATE ck2 SET s = 'b' WHERE id = 1")
			if got := sums("CHECKSUM TABLE ck1, ck2 EXTENDED"); len(got) != 2 || got[0] == got[1] {
				t.Errorf("%s: CHECKSUM TABLE after a change: %v", tg.name, got)
			}
		}
		_, err := ts.connect("ana", "ana-pw", "demo").Exec("CHECKSUM TABLE towns")
		wantCode(t, "analyst CHECKSUM TABLE", err, 1142, "42000")
	})

	t.Run("LOAD DATA escapes and OPTIONALLY ENCLOSED BY", func(t *testing.T) {
		// R's write.csv quotes strings only; \t is a tab, \N NULL, "" a quote.
		const csv = "1,\"Smith, J\",2.5,\"say \"\"hi\"\"\"\n2,plain,NA,\"tab\\there\"\n3,\\N,4,NULL\n4,a\\\\c\\,d,\\Z,\"x\\by\"\n"
		mysql.RegisterReaderHandler("conform_csv", func() io.Reader { return strings.NewReader(csv) })
		defer mysql.DeregisterReaderHandler("conform_csv")
		var want []string
		for _, tg := range targets {
			r := connectAddr(t, tg.addr, "root", tg.rootPW, "demo")
			mustExec(t, r, "CREATE TABLE loadq (id INT PRIMARY KEY, name VARCHAR(32), x VARCHAR(8), note VARCHAR(32))")
			if _, err := r.Exec(`LOAD DATA LOCAL INFILE 'Reader::conform_csv' INTO TABLE loadq FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' LINES TERMINATED BY '\n'`); err != nil {
				t.Errorf("%s: LOAD DATA: %v", tg.name, err)
				continue
			}
			rows, err := r.Query("SELECT id, COALESCE(name, '<null>'), COALESCE(x, '<null>'), COALESCE(note, '<null>') FROM loadq ORDER BY id")
			if err != nil {
				t.Fatal(err)
			}
			got := rowStrings(t, rows)
			if got := strings.Join(got, "|"); !strings.Contains(got, "Smith, J") || !strings.Contains(got, "say \"hi\"") || !strings.Contains(got, "tab\there") {
				t.Errorf("%s: LOAD DATA rows %q", tg.name, got)
			}
			if want == nil {
				want = got
			} else if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("%s rows %q differ from %s's %q", tg.name, got, targets[0].name, want)
			}
		}
	})

	t.Run("read-only session", func(t *testing.T) {
		for _, tg := range targets {
			r := connectAddr(t, tg.addr, "root", tg.rootPW, "demo")
			conn, err := r.Conn(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			mustConn := func(q string) {
				if _, err := conn.ExecContext(t.Context(), q); err != nil {
					t.Fatalf("%s: %s: %v", tg.name, q, err)
				}
			}
			mustConn("CREATE TABLE ro (v INT)")
			mustConn("SET SESSION TRANSACTION READ ONLY")
			for _, q := range []string{"INSERT INTO ro VALUES (1)", "DROP TABLE ro"} {
				_, err := conn.ExecContext(t.Context(), q)
				wantCode(t, tg.name+" read-only "+q, err, 1792, "25006")
			}
			var n int
			if err := conn.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM ro").Scan(&n); err != nil || n != 0 {
				t.Errorf("%s: read in a read-only session: %v %v", tg.name, n, err)
			}
			mustConn("SET SESSION TRANSACTION READ WRITE")
			mustConn("DROP TABLE ro")
			conn.Close()
		}
	})

	t.Run("login lock-out", func(t *testing.T) {
		addr := ts.srv.Addr()
		login := func(user, pw string) error {
			db, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)/", user, pw, addr))
			if err != nil {
				return err
			}
			defer db.Close()
			return db.Ping()
		}
		// 30 failed logins of other names from this address: root still logs in.
		for i := 0; i < 30; i++ {
			err := login(fmt.Sprintf("nobody%d", i), "x")
			wantCode(t, "unknown name", err, 1045, "28000")
		}
		if err := login("root", rootPW); err != nil {
			t.Fatalf("root stopped by 30 failed logins of other names: %v", err)
		}
		if err := login("ana", "ana-pw"); err != nil {
			t.Fatalf("ana stopped by 30 failed logins of other names: %v", err)
		}
		// The account under attack is locked (from this address), with its own answer.
		mustExec(t, root, "CREATE USER victim IDENTIFIED BY 'right-pw'")
		for i := 0; i < 3; i++ {
			wantCode(t, "wrong password", login("victim", "guess"), 1045, "28000")
		}
		locked := login("victim", "right-pw")
		wantCode(t, "locked account", locked, 3955, "HY000")
		if locked == nil || !strings.Contains(locked.Error(), "locked") {
			t.Fatalf("a locked account's answer: %v", locked)
		}
		// The same answer for a name that does not exist.
		for i := 0; i < 3; i++ {
			login("ghost", "guess")
		}
		wantCode(t, "locked unknown name", login("ghost", "x"), 3955, "HY000")
		// Only owners unlock.
		mustExec(t, root, "GRANT SELECT ON demo.* TO 'ana'@'%'")
		ana := ts.connect("ana", "ana-pw", "demo")
		_, err := ana.Exec("ALTER USER victim ACCOUNT UNLOCK")
		wantCode(t, "analyst unlock", err, 1227, "42000")
		mustExec(t, root, "ALTER USER 'victim'@'%' ACCOUNT UNLOCK")
		if err := login("victim", "right-pw"); err != nil {
			t.Fatalf("victim after ALTER USER … ACCOUNT UNLOCK: %v", err)
		}
	})
}

// openDSN opens a go-sql-driver pool with extra DSN parameters.
func openDSN(t *testing.T, addr, pw, params string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", "root:"+pw+"@tcp("+addr+")/wire?timeout=10s&"+params)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if err := db.Ping(); err != nil {
		t.Fatalf("%s: %v", params, err)
	}
	return db
}

// TestWireConformance: what drivers read off the wire (issue 29; the
// failures of go-sql-driver's own suite in docs/results/drivers.md), on
// dpsql and on a private MariaDB.
func TestWireConformance(t *testing.T) {
	mdb := startMariaDB(t)
	ts := startServerOpts(t, t.TempDir(), engine.Options{}, server.Options{})
	targets := [][3]string{{"dpsql", ts.srv.Addr(), rootPW}}
	if mdb != "" {
		targets = append(targets, [3]string{"MariaDB", mdb, mdbRootPW})
	}
	for _, tg := range targets {
		name, addr, pw := tg[0], tg[1], tg[2]
		t.Run(name, func(t *testing.T) {
			mustExec(t, connectAddr(t, addr, "root", pw, ""), "CREATE DATABASE wire")
			root := openDSN(t, addr, pw, "")
			mustExec(t, root, "CREATE TABLE ct (f FLOAT, d DOUBLE NOT NULL, b BIT(8), y YEAR NOT NULL)")
			mustExec(t, root, "INSERT INTO ct VALUES (1.5, 2.5, b'1000010', 2020)")

			// The collation asked for at connect (the handshake's collation
			// id) and by SET NAMES … COLLATE.
			for _, c := range []string{"latin1_general_ci", "binary", "utf8mb4_unicode_ci"} {
				got := queryString(t, openDSN(t, addr, pw, "collation="+c), "SELECT @@collation_connection")
				if got != c {
					t.Errorf("collation=%s at connect: @@collation_connection = %s", c, got)
				}
			}
			if got := queryString(t, openDSN(t, addr, pw, "charset=utf8mb4&collation=utf8mb4_unicode_ci"),
				"SELECT CONCAT(@@collation_connection, ' ', @@character_set_client, ' ', @@character_set_results)"); got != "utf8mb4_unicode_ci utf8mb4 utf8mb4" {
				t.Errorf("SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci: %s", got)
			}

			// Zero dates and date parameters through the binary protocol.
			pt := openDSN(t, addr, pw, "parseTime=true")
			for _, q := range []string{"SELECT CAST(? AS DATE)", "SELECT CAST(? AS DATETIME)"} {
				var v time.Time
				if err := pt.QueryRow(q, "0000-00-00").Scan(&v); err != nil || !v.IsZero() {
					t.Errorf("%s with '0000-00-00': %v %v, want the zero time", q, v, err)
				}
			}
			want := time.Date(2021, 3, 4, 5, 6, 7, 5000, time.UTC)
			var v time.Time
			if err := pt.QueryRow("SELECT CAST(? AS DATETIME(6))", want).Scan(&v); err != nil || !v.Equal(want) {
				t.Errorf("DATETIME(6) parameter %v came back as %v (%v)", want, v, err)
			}

			// CAST(… AS TIME) of a DATETIME: go-sql-driver sends a time.Time
			// parameter as the string '0001-01-01 03:25:45' (TestDateTime);
			// MariaDB takes its time of day (package sqlcompat). Not TIME(n):
			// go-mysql-server keeps no fractional precision for TIME, so the
			// column's decimals are 0 and the driver drops the fraction.
			tm := time.Date(1, 1, 1, 3, 25, 45, 100000000, time.UTC)
			for _, c := range []struct {
				q    string
				args []any
				want string
			}{
				{"SELECT CAST(? AS TIME)", []any{tm}, "03:25:45"},
				{"SELECT CAST('2021-03-04 05:06:07' AS TIME)", nil, "05:06:07"},
				{"SELECT CAST('12:34:56' AS TIME)", nil, "12:34:56"},
				{"SELECT CAST(123456 AS TIME)", nil, "12:34:56"},
			} {
				var got sql.NullString
				if err := root.QueryRow(c.q, c.args...).Scan(&got); err != nil || got.String != c.want {
					t.Errorf("%s %v: %q (%v), want %q", c.q, c.args, got.String, err, c.want)
				}
			}

			// Column metadata: FLOAT/DOUBLE have no scale, BIT reads as
			// bytes, YEAR is unsigned; the same through prepared statements.
			for _, args := range [][]any{nil, {1}} {
				q := "SELECT f, d, b, y FROM ct"
				if args != nil {
					q += " WHERE 1 = ?"
				}
				rows, err := root.Query(q, args...)
				if err != nil {
					t.Fatal(err)
				}
				cts, err := rows.ColumnTypes()
				rows.Close()
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range cts[:2] {
					if p, s, ok := c.DecimalSize(); !ok || s != 9223372036854775807 {
						t.Errorf("%s (args %v): %s DecimalSize = %d, %d, %v; want no scale", q, args, c.Name(), p, s, ok)
					}
				}
				if st := cts[2].ScanType().String(); st != "[]uint8" {
					t.Errorf("%s: BIT scan type %s, want []uint8 (bytes)", q, st)
				}
				if st := cts[3].ScanType().String(); st != "uint16" {
					t.Errorf("%s: YEAR NOT NULL scan type %s, want uint16", q, st)
				}
			}

			// Table alias case in result metadata.
			rows, err := openDSN(t, addr, pw, "columnsWithAlias=true").Query("SELECT * FROM (SELECT 1 AS one) AS A")
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			rows.Close()
			if len(cols) != 1 || cols[0] != "A.one" {
				t.Errorf("columnsWithAlias: %q, want [A.one]", cols)
			}

			// 65535 placeholders run (vitess's NULL-bitmap length wrapped
			// above 65528: third_party/vitess/PATCHES.md); 65536 are
			// refused with 1390, and the connection stays usable.
			args := make([]any, 65536)
			for i := range args {
				args[i] = i
			}
			if rows, err := root.Query("SELECT ?"+strings.Repeat(",?", 65534), args[:65535]...); err != nil {
				t.Errorf("65535 placeholders: %v", err)
			} else {
				cols, _ := rows.Columns()
				rows.Close()
				if len(cols) != 65535 {
					t.Errorf("65535 placeholders: %d columns", len(cols))
				}
			}
			rows, err = root.Query("SELECT ?"+strings.Repeat(",?", 65535), args...)
			if err == nil {
				rows.Close()
			}
			wantCode(t, "65536 placeholders", err, 1390, "HY000")
			if got := queryString(t, root, "SELECT ?", "still here"); got != "still here" {
				t.Errorf("after 65536 placeholders: %q", got)
			}

			// Statements the protocol library's parser does not know,
			// prepared (server-side): DO (the drivers' ping) and DESCRIBE
			// t 'pattern' (Perl DBI's column_info with server-side prepares).
			stmt, err := root.Prepare("DO ?")
			if err != nil {
				t.Fatalf("prepare DO ?: %v", err)
			}
			if res, err := stmt.Exec(1); err != nil {
				t.Errorf("prepared DO ?: %v", err)
			} else if n, _ := res.RowsAffected(); n != 0 {
				t.Errorf("prepared DO ?: %d rows affected", n)
			}
			stmt.Close()
			stmt, err = root.Prepare("DESCRIBE ct 'f%'")
			if err != nil {
				t.Fatalf("prepare DESCRIBE ct 'f%%': %v", err)
			}
			rows, err = stmt.Query()
			if err != nil {
				t.Fatalf("prepared DESCRIBE ct 'f%%': %v", err)
			}
			defer stmt.Close()
			if got := rowStrings(t, rows); len(got) != 1 || !strings.HasPrefix(got[0], "f|float") {
				t.Errorf("prepared DESCRIBE ct 'f%%': %q", got)
			}
		})
	}
}
