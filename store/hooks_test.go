package store

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
)

var errDenied = errors.New("denied by test hook")

// readLog records CheckRead calls and refuses reads of db.secret.
type readLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *readLog) check(_ *sql.Context, db, table string) error {
	l.mu.Lock()
	l.calls = append(l.calls, db+"."+table)
	l.mu.Unlock()
	if table == "secret" {
		return errDenied
	}
	return nil
}

func (l *readLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.calls
	l.calls = nil
	return c
}

func TestCheckReadOnEveryReadPath(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE secret (id INT AUTO_INCREMENT PRIMARY KEY, v DOUBLE)")
	h.mustQuery("CREATE TABLE pub (id INT PRIMARY KEY, v DOUBLE)")
	h.mustQuery("INSERT INTO secret VALUES (1, 10), (2, 20), (3, 30)")
	h.mustQuery("INSERT INTO pub VALUES (1, 1), (2, 2)")
	h.mustQuery("CREATE VIEW sv AS SELECT * FROM secret")
	log := &readLog{}
	h.s.SetHooks(Hooks{CheckRead: log.check})

	for _, q := range []string{
		"SELECT * FROM secret",
		"SELECT AVG(v) FROM secret",
		"SELECT COUNT(*) FROM secret WHERE v > 15",
		"SELECT MAX(v) FROM secret",
		"SELECT p.id FROM pub p JOIN secret s ON p.id = s.id",
		"SELECT p.id FROM pub p LEFT JOIN secret s ON p.v * 10 = s.v",
		"SELECT id FROM pub WHERE id IN (SELECT id FROM secret)",
		"SELECT id FROM pub WHERE EXISTS (SELECT 1 FROM secret WHERE secret.v > 25)",
		"SELECT (SELECT MAX(v) FROM secret)",
		"SELECT id, (SELECT v FROM secret s WHERE s.id = pub.id) FROM pub",
		"SELECT id FROM pub UNION SELECT id FROM secret",
		"SELECT id FROM pub UNION ALL SELECT id FROM secret",
		"SELECT * FROM (SELECT v FROM secret) d",
		"WITH c AS (SELECT * FROM secret) SELECT * FROM c",
		"SELECT * FROM sv",
		"INSERT INTO pub SELECT id + 100, v FROM secret",
		"CREATE TABLE leak AS SELECT * FROM secret",
		"UPDATE pub SET v = (SELECT MAX(v) FROM secret)",
		"DELETE FROM pub WHERE id IN (SELECT id FROM secret)",
		"UPDATE secret SET v = 0 WHERE id = 1",
		"DELETE FROM secret WHERE v > 15",
		// The existing row behind a duplicate key is data too.
		"INSERT INTO secret VALUES (1, 99)",
		"REPLACE INTO secret VALUES (1, 99)",
		"INSERT INTO secret VALUES (2, 0) ON DUPLICATE KEY UPDATE v = v + 1",
	} {
		rows, err := h.query(q)
		if !errors.Is(err, errDenied) && (err == nil || !strings.Contains(err.Error(), errDenied.Error())) {
			t.Errorf("%s: got rows %v, err %v; want the hook's refusal", q, rows, err)
		}
		if calls := log.take(); !contains(calls, "db.secret") {
			t.Errorf("%s: CheckRead calls %v", q, calls)
		}
	}
	// Nothing leaked into public tables, nothing of secret changed.
	h.s.SetHooks(Hooks{})
	expectRows(t, h, "SELECT id, v FROM pub", "1,1; 2,2")
	expectRows(t, h, "SELECT id, v FROM secret", "1,10; 2,20; 3,30")
	if h.s.HasTable("db", "leak") {
		t.Error("failed CREATE TABLE … AS SELECT left its table behind")
	}
	h.s.SetHooks(Hooks{CheckRead: log.check})

	// The same shapes over a public table pass, and the hook sees
	// lower-case names.
	h.mustQuery("SELECT p.id FROM PUB p JOIN Pub q ON p.id = q.id")
	calls := log.take()
	if len(calls) < 2 {
		t.Errorf("CheckRead calls %v", calls)
	}
	for _, c := range calls {
		if c != "db.pub" {
			t.Errorf("CheckRead calls %v", calls)
		}
	}

	// The row count is public: COUNT(*) without a filter and
	// information_schema.TABLE_ROWS do not need CheckRead. The
	// AUTO_INCREMENT counter (a data-derived statistic) is hidden.
	expectRows(t, h, "SELECT COUNT(*) FROM secret", "3")
	expectRows(t, h, "SELECT table_name, table_rows, auto_increment FROM information_schema.tables WHERE table_schema = 'db' AND table_type = 'BASE TABLE' ORDER BY 1",
		"pub,2,<nil>; secret,3,<nil>")
	h.s.SetHooks(Hooks{})
	expectRows(t, h, "SELECT auto_increment FROM information_schema.tables WHERE table_name = 'secret'", "4")
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

type writeCall struct {
	table string
	op    WriteOp
	row   string
}

func (w writeCall) String() string { return fmt.Sprintf("%s %s %s", w.op, w.table, w.row) }

func TestCheckWrite(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	var mu sync.Mutex
	var calls []writeCall
	h.s.SetHooks(Hooks{CheckWrite: func(_ *sql.Context, db, table string, op WriteOp, row sql.Row) error {
		mu.Lock()
		defer mu.Unlock()
		r := "-"
		if row != nil {
			r = fmt.Sprint(row)
		}
		calls = append(calls, writeCall{db + "." + table, op, r})
		// A protected table refuses values above 100.
		if table == "guarded" && row != nil && row[1].(float64) > 100 {
			return fmt.Errorf("value out of declared bounds")
		}
		return nil
	}})
	take := func() string {
		mu.Lock()
		defer mu.Unlock()
		var s []string
		for _, c := range calls {
			s = append(s, c.String())
		}
		calls = nil
		return strings.Join(s, " | ")
	}
	for _, step := range []struct{ q, want string }{
		{"CREATE TABLE Guarded (id INT PRIMARY KEY, v DOUBLE)", "CREATE db.guarded -"},
		{"INSERT INTO guarded VALUES (1, 5), (2, 6)", "INSERT db.guarded - | INSERT db.guarded [1 5] | INSERT db.guarded [2 6]"},
		{"UPDATE guarded SET v = v + 1 WHERE id = 2", "UPDATE db.guarded - | UPDATE db.guarded [2 7]"},
		{"REPLACE INTO guarded VALUES (3, 1)", "REPLACE db.guarded - | REPLACE db.guarded [3 1]"},
		{"DELETE FROM guarded WHERE id = 3", "DELETE db.guarded -"},
		{"ALTER TABLE guarded ADD COLUMN c INT", "ALTER db.guarded -"},
		{"ALTER TABLE guarded DROP COLUMN c", "ALTER db.guarded -"},
		{"CREATE TABLE other (x INT)", "CREATE db.other -"},
		{"INSERT INTO other VALUES (1)", "INSERT db.other - | INSERT db.other [1]"},
		{"DELETE FROM other", "TRUNCATE db.other -"},
		{"TRUNCATE other", "TRUNCATE db.other -"},
		{"RENAME TABLE other TO other2", "RENAME db.other -"},
		{"DROP TABLE other2", "DROP db.other2 -"},
	} {
		h.mustQuery(step.q)
		if got := take(); got != step.want {
			t.Errorf("%s\n got: %s\nwant: %s", step.q, got, step.want)
		}
	}
	// A refused row aborts the whole statement.
	if _, err := h.query("INSERT INTO guarded VALUES (10, 1), (11, 500), (12, 2)"); err == nil || !strings.Contains(err.Error(), "declared bounds") {
		t.Errorf("refused insert: %v", err)
	}
	if _, err := h.query("UPDATE guarded SET v = v * 100"); err == nil {
		t.Error("refused update accepted")
	}
	expectRows(t, h, "SELECT id, v FROM guarded", "1,5; 2,7")

	h.mustQuery("CREATE DATABASE d2")
	h.mustQuery("CREATE TABLE d2.a (x INT)")
	h.mustQuery("CREATE TABLE d2.b (x INT)")
	take()
	h.mustQuery("DROP DATABASE d2")
	if got := take(); got != "DROP d2.a - | DROP d2.b -" {
		t.Errorf("DROP DATABASE: %s", got)
	}

	// A refusal of DDL leaves the table alone.
	h.s.SetHooks(Hooks{CheckWrite: func(_ *sql.Context, _, _ string, op WriteOp, _ sql.Row) error {
		if op != OpInsert {
			return errDenied
		}
		return nil
	}})
	for _, q := range []string{"DROP TABLE guarded", "TRUNCATE guarded", "DELETE FROM guarded", "ALTER TABLE guarded ADD COLUMN z INT", "RENAME TABLE guarded TO g2", "UPDATE guarded SET v = 0", "DROP DATABASE db"} {
		if _, err := h.query(q); err == nil || !strings.Contains(err.Error(), errDenied.Error()) {
			t.Errorf("%s: %v", q, err)
		}
	}
	h.s.SetHooks(Hooks{})
	expectRows(t, h, "SELECT * FROM guarded", "1,5; 2,7")
}
