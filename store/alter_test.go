package store

import (
	"math/rand"
	"strings"
	"testing"
)

// An AUTO_INCREMENT added to a column that has values continues after the
// largest one (it used to start at 1 and collide).
func TestAutoIncrementAddedLater(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
	h.mustQuery("INSERT INTO t VALUES (1, 'a'), (7, 'b'), (3, 'c')")
	h.mustQuery("ALTER TABLE t MODIFY COLUMN id INT NOT NULL AUTO_INCREMENT")
	h.mustQuery("INSERT INTO t (v) VALUES ('d')")
	expectRows(t, h, "SELECT id FROM t WHERE v = 'd'", "8")
	h.reopen()
	h.ctx.SetCurrentDatabase("db")
	h.mustQuery("INSERT INTO t (v) VALUES ('e')")
	expectRows(t, h, "SELECT id FROM t WHERE v = 'e'", "9")
	// A new AUTO_INCREMENT column numbers the existing rows.
	h.mustQuery("CREATE TABLE k (name VARCHAR(10))")
	h.mustQuery("INSERT INTO k VALUES ('x'), ('y')")
	h.mustQuery("ALTER TABLE k ADD COLUMN id INT AUTO_INCREMENT PRIMARY KEY FIRST")
	h.mustQuery("INSERT INTO k (name) VALUES ('z')")
	expectRows(t, h, "SELECT id, name FROM k ORDER BY id", "1,x; 2,y; 3,z")
}

// A multi-clause ALTER TABLE is all or nothing.
func TestMultiClauseAlterIsAtomic(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE t (id INT PRIMARY KEY, a INT, s VARCHAR(5), KEY ia (a))")
	h.mustQuery("INSERT INTO t VALUES (1, 10, 'x'), (2, 10, 'y'), (3, 300, 'z')")
	before := rowsString(h.mustQuery("SHOW CREATE TABLE t"))
	for _, q := range []string{
		// The unique index fails on the duplicate 10s after the column
		// was added.
		"ALTER TABLE t ADD COLUMN b INT DEFAULT 1, ADD UNIQUE INDEX ua (a)",
		// 300 does not fit a TINYINT.
		"ALTER TABLE t ADD COLUMN c INT, DROP INDEX ia, MODIFY COLUMN a TINYINT",
		"ALTER TABLE t RENAME TO t2, ADD COLUMN d INT, ADD UNIQUE INDEX ua (a)",
		"ALTER TABLE t ADD COLUMN e INT NOT NULL DEFAULT 0, ADD CONSTRAINT chk CHECK (a < 100)",
	} {
		if _, err := h.query(q); err == nil {
			t.Fatalf("%s: accepted", q)
		}
		if got := rowsString(h.mustQuery("SHOW CREATE TABLE t")); got != before {
			t.Fatalf("%s failed but changed the table:\n%s\nwas\n%s", q, got, before)
		}
		expectRows(t, h, "SELECT id, a, s FROM t ORDER BY id", "1,10,x; 2,10,y; 3,300,z")
		expectRows(t, h, "SELECT id FROM t WHERE a = 10 ORDER BY id", "1; 2")
		checkIndexes(t, h, "t")
	}
	if h.s.HasTable("db", "t2") {
		t.Fatal("a failed ALTER … RENAME TO left the new name")
	}
	// The same clauses succeed together when they can.
	h.mustQuery("ALTER TABLE t ADD COLUMN b INT DEFAULT 1, ADD INDEX ib (b), MODIFY COLUMN s VARCHAR(10)")
	expectRows(t, h, "SELECT id, b FROM t WHERE b = 1 ORDER BY id", "1,1; 2,1; 3,1")
	checkIndexes(t, h, "t")
}

// A multi-clause ALTER interrupted by a crash is undone when the file is
// opened again.
func TestInterruptedAlterIsRestoredOnOpen(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE t (id INT PRIMARY KEY, a INT, KEY ia (a))")
	h.mustQuery("INSERT INTO t VALUES (1, 10), (2, 20)")
	ts, err := h.s.lookup("db", "t")
	if err != nil {
		t.Fatal(err)
	}
	// The state a crash between two clauses leaves: a backup, and the
	// first clause applied.
	if err := h.s.backupTables([]*tableState{ts}); err != nil {
		t.Fatal(err)
	}
	ts.altering.Store(false)
	h.mustQuery("ALTER TABLE t ADD COLUMN b INT DEFAULT 5")
	h.mustQuery("ALTER TABLE t DROP INDEX ia")
	h.reopen()
	h.ctx.SetCurrentDatabase("db")
	got := rowsString(h.mustQuery("SHOW CREATE TABLE t"))
	if strings.Contains(got, "`b`") || !strings.Contains(got, "KEY `ia`") {
		t.Fatalf("interrupted ALTER not undone:\n%s", got)
	}
	expectRows(t, h, "SELECT id FROM t WHERE a = 20", "2")
	checkIndexes(t, h, "t")
}

// What the store does not support is refused with a message, and leaves
// nothing behind.
func TestUnsupportedDDLIsRefused(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE t (id INT PRIMARY KEY, s TEXT, g GEOMETRY NOT NULL)")
	for q, frag := range map[string]string{
		"CREATE FULLTEXT INDEX f ON t (s)":                     "", // refused by the engine, not the store
		"CREATE TABLE u (id INT, s TEXT, FULLTEXT (s))":        "full-text",
		"CREATE SPATIAL INDEX sp ON t (g)":                     "spatial",
		"ALTER TABLE t CONVERT TO CHARACTER SET latin1":        "not supported",
		"CREATE TABLE p (v VARCHAR(100), PRIMARY KEY (v(10)))": "prefix",
		"CREATE INDEX j ON t (g)":                              "cannot be indexed",
	} {
		_, err := h.query(q)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), frag) {
			t.Errorf("%s: %v (want an error mentioning %q)", q, err, frag)
		}
	}
	for _, name := range []string{"u", "p"} {
		if h.s.HasTable("db", name) {
			t.Errorf("refused CREATE TABLE %s left a table", name)
		}
	}
}

// ALTER TABLE clauses go-mysql-server parses and drops are refused with a
// message and change nothing; hints and InnoDB no-ops are accepted.
func TestIgnoredAlterClausesAreRefused(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE t (id INT PRIMARY KEY, a INT, s VARCHAR(20), KEY ia (a), CONSTRAINT c CHECK (a > 0))")
	h.mustQuery("INSERT INTO t VALUES (1, 10, 'x'), (2, 20, 'y')")
	before := rowsString(h.mustQuery("SHOW CREATE TABLE t"))
	for q, frag := range map[string]string{
		"ALTER TABLE t ENGINE=MyISAM":                                      "ENGINE=InnoDB is the only engine",
		"ALTER TABLE t ENGINE = Memory, ADD COLUMN z INT":                  "only engine",
		"ALTER TABLE t PARTITION BY HASH(id) PARTITIONS 4":                 "partitioning",
		"ALTER TABLE t ADD PARTITION (PARTITION p1 VALUES LESS THAN (10))": "partitioning",
		"ALTER TABLE t DROP PARTITION p1":                                  "partitioning",
		"ALTER TABLE t REMOVE PARTITIONING":                                "partitioning",
		"ALTER TABLE t COMMENT = 'a, b'":                                   "comment",
		"ALTER TABLE t ADD COLUMN z INT, COMMENT 'x'":                      "comment",
		"ALTER TABLE t ALTER INDEX ia INVISIBLE":                           "invisible",
		"ALTER TABLE t ALTER CHECK c NOT ENFORCED":                         "enforcement",
		"ALTER TABLE t DISCARD TABLESPACE":                                 "tablespace",
		"ALTER TABLE t TABLESPACE ts1":                                     "tablespace",
		"ALTER TABLE t ROW_FORMAT=COMPRESSED":                              "table options",
		"ALTER TABLE t KEY_BLOCK_SIZE=8":                                   "table options",
		"ALTER TABLE t ADD FULLTEXT INDEX ft (s)":                          "full-text",
		"CREATE FULLTEXT INDEX ft ON t (s)":                                "full-text",
		"ALTER TABLE t UNION = (t)":                                        "merge",
		"ALTER TABLE t INDEX DIRECTORY = '/tmp'":                           "directories",
	} {
		_, err := h.query(q)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(frag)) {
			t.Errorf("%s: %v (want an error mentioning %q)", q, err, frag)
		}
		if got := rowsString(h.mustQuery("SHOW CREATE TABLE t")); got != before {
			t.Fatalf("%s changed the table:\n%s", q, got)
		}
	}
	for _, q := range []string{
		"ALTER TABLE t ENGINE=InnoDB",
		"ALTER TABLE t FORCE",
		"ALTER TABLE t DISABLE KEYS",
		"/*!40000 ALTER TABLE t ENABLE KEYS */",
		"ALTER TABLE t ALTER INDEX ia VISIBLE",
		"ALTER TABLE t ALGORITHM=INPLACE, LOCK=NONE, ADD COLUMN b INT DEFAULT 3",
	} {
		h.mustQuery(q)
	}
	expectRows(t, h, "SELECT id, b FROM t WHERE a = 20", "2,3")
}

// ALTER TABLE … AUTO_INCREMENT = n sets the next value; below the largest
// value it continues after it (as InnoDB does).
func TestAlterAutoIncrementValue(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
	h.mustQuery("INSERT INTO t (v) VALUES (1), (2)")
	h.mustQuery("ALTER TABLE t AUTO_INCREMENT = 100")
	h.mustQuery("INSERT INTO t (v) VALUES (3)")
	h.mustQuery("ALTER TABLE t AUTO_INCREMENT = 5")
	h.mustQuery("INSERT INTO t (v) VALUES (4)")
	expectRows(t, h, "SELECT id, v FROM t ORDER BY id", "1,1; 2,2; 100,3; 101,4")
}

// A table comment survives a CREATE TABLE whose primary key is a separate
// clause (mysqldump's form), and a primary key on a column prefix is
// refused before the table exists.
func TestCreateTableKeepsCommentAndRefusesPrefixKey(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE c (id INT NOT NULL, s VARCHAR(20), PRIMARY KEY (id)) COMMENT='kept'")
	if got := rowsString(h.mustQuery("SHOW CREATE TABLE c")); !strings.Contains(got, "COMMENT='kept'") {
		t.Fatalf("comment lost: %s", got)
	}
	if _, err := h.query("CREATE TABLE p (s VARCHAR(20) NOT NULL, PRIMARY KEY (s(5)))"); err == nil || !strings.Contains(err.Error(), "prefix") {
		t.Fatalf("prefix primary key: err = %v, want a refusal", err)
	}
	if _, err := h.query("SELECT * FROM p"); err == nil {
		t.Fatal("the refused table exists")
	}
}

// TestContainsFoldMatchesByteLoop: containsFold finds exactly what the
// plain byte loop finds, on random strings rich in the words' letters.
func TestContainsFoldMatchesByteLoop(t *testing.T) {
	slow := func(s, sub string) bool {
		for i := 0; i+len(sub) <= len(s); i++ {
			if s[i]|0x20 == sub[0] && strings.EqualFold(s[i:i+len(sub)], sub) {
				return true
			}
		}
		return false
	}
	r := rand.New(rand.NewSource(1))
	// Fragments: the words, their prefixes in mixed case, other bytes.
	frags := []string{"alter", "ALTER", "AlTeR", "alte", "ALT", "a", "A", "index", "INDEX", "iNdEx", "inde", "IN", "i", "I",
		"l", "t", "e", "r", "n", "d", "x", " ", "0", "1.5", ",", "(", "\u212a", "\xff"}
	found := 0
	for range 100000 {
		var b strings.Builder
		for range r.Intn(12) {
			b.WriteString(frags[r.Intn(len(frags))])
		}
		s := b.String()
		for _, sub := range []string{"alter", "index", "a", "in"} {
			want := slow(s, sub)
			if got := containsFold(s, sub); got != want {
				t.Fatalf("containsFold(%q, %q) = %v, want %v", s, sub, got, want)
			}
			if want && len(sub) > 2 {
				found++
			}
		}
	}
	for _, c := range []struct {
		s, sub string
		want   bool
	}{{"ALTER", "alter", true}, {"xAlTeR", "alter", true}, {"alte", "alter", false}, {"", "alter", false}, {"create INDEX i", "index", true}, {"aaaalter", "alter", true}, {"AAAALTER", "alter", true}} {
		if got := containsFold(c.s, c.sub); got != c.want {
			t.Fatalf("containsFold(%q, %q) = %v", c.s, c.sub, got)
		}
	}
	if found < 100 {
		t.Fatalf("only %d random strings contained a word", found)
	}
}
