package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	bolt "go.etcd.io/bbolt"
)

// checkIndexes verifies that every index of db.table holds exactly the
// entries of the committed rows.
func checkIndexes(t *testing.T, h *harness, table string) {
	t.Helper()
	ts, err := h.s.lookup("db", table)
	if err != nil {
		t.Fatal(err)
	}
	m := ts.meta.Load()
	ctx := sql.NewEmptyContext()
	err = h.db.View(func(btx *bolt.Tx) error {
		tb := tableBucket(btx, ts.db.key, ts.id)
		full := newProjection(len(m.schema()), seqOrds(len(m.schema())))
		for _, im := range m.indexes {
			if im.vector {
				continue
			}
			want := map[string]string{}
			err := tb.Bucket(bucketRows).ForEach(func(k, v []byte) error {
				row := make(sql.Row, len(m.schema()))
				if err := m.codec.decode(v, &full, row); err != nil {
					return err
				}
				ek, _, err := im.entry(ctx, row, k)
				want[string(ek)] = string(k)
				return err
			})
			if err != nil {
				return err
			}
			got := map[string]string{}
			if err := indexBucket(tb, im.id).ForEach(func(k, v []byte) error {
				got[string(k)] = string(v)
				return nil
			}); err != nil {
				return err
			}
			if len(got) != len(want) {
				t.Errorf("index %s of %s: %d entries, %d rows", im.name, table, len(got), len(want))
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("index %s of %s: entry %x missing or wrong", im.name, table, k)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func explain(t *testing.T, h *harness, q string) string {
	t.Helper()
	var b strings.Builder
	for _, r := range h.mustQuery("EXPLAIN PLAN " + q) {
		fmt.Fprintln(&b, r[0])
	}
	return b.String()
}

func TestIndexLookups(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery(`CREATE TABLE t (id INT PRIMARY KEY, k INT, name VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, d DECIMAL(8,2), x DOUBLE,
		KEY k_1 (k), UNIQUE KEY uname (name), KEY kd (k, d))`)
	h.mustQuery(`INSERT INTO t VALUES (1, 10, 'ann', 1.50, 0.5), (2, 20, 'bob', -2.25, 1), (3, 10, 'cid', 3, NULL),
		(4, NULL, NULL, NULL, 2), (5, 30, NULL, 10.10, 3), (6, 20, 'Dee', -0.5, 4)`)
	for _, c := range []struct{ q, want, index string }{
		{"SELECT id FROM t WHERE k = 10 ORDER BY id", "1; 3", "k_1"},
		{"SELECT id FROM t WHERE k > 10 AND k <= 30 ORDER BY id", "2; 5; 6", ""},
		{"SELECT id FROM t WHERE k IN (20, 30) ORDER BY id", "2; 5; 6", ""},
		{"SELECT id FROM t WHERE k IS NULL", "4", ""},
		{"SELECT id FROM t WHERE name = 'bob'", "2", "uname"},
		{"SELECT id FROM t WHERE name = 'DEE'", "6", "uname"}, // case-insensitive collation
		{"SELECT id FROM t WHERE name >= 'c' ORDER BY name", "3; 6", ""},
		{"SELECT id FROM t WHERE k = 10 AND d > 2", "3", ""},
		{"SELECT id FROM t WHERE k = 20 AND d < 0 ORDER BY id", "2; 6", ""},
		{"SELECT id FROM t WHERE k = 10.5", "", ""},
		{"SELECT id FROM t WHERE k >= 10.5 ORDER BY id", "2; 5; 6", ""},
		{"SELECT id FROM t WHERE id BETWEEN 2 AND 4 ORDER BY id", "2; 3; 4", "PRIMARY"},
		{"SELECT id FROM t WHERE id = 5", "5", "PRIMARY"},
		{"SELECT id FROM t WHERE id > 4 ORDER BY id DESC", "6; 5", ""},
	} {
		expectRows(t, h, c.q, c.want)
		if c.index != "" {
			if plan := explain(t, h, c.q); !strings.Contains(plan, "IndexedTableAccess") || !strings.Contains(plan, "index: [t."+firstCol(c.index)) {
				t.Errorf("%s: plan does not use index %s:\n%s", c.q, c.index, plan)
			}
		}
	}
	// A join uses the index of its inner table.
	h.mustQuery("CREATE TABLE o (oid INT PRIMARY KEY, k INT)")
	h.mustQuery("INSERT INTO o VALUES (100, 10), (101, 30), (102, 99)")
	q := "SELECT /*+ LOOKUP_JOIN(o,t) */ o.oid, t.id FROM o JOIN t ON t.k = o.k ORDER BY o.oid, t.id"
	expectRows(t, h, q, "100,1; 100,3; 101,5")
	if plan := explain(t, h, q); !strings.Contains(plan, "IndexedTableAccess") {
		t.Errorf("join does not use an index:\n%s", plan)
	}
	checkIndexes(t, h, "t")
}

func firstCol(index string) string {
	switch index {
	case "k_1":
		return "k"
	case "uname":
		return "name"
	}
	return "id"
}

func TestUniqueIndexes(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE u (id INT PRIMARY KEY, a INT, b VARCHAR(10) COLLATE utf8mb4_general_ci, UNIQUE KEY ab (a, b))")
	h.mustQuery("INSERT INTO u VALUES (1, 1, 'x'), (2, 1, 'y'), (3, NULL, 'x'), (4, NULL, 'x'), (5, 2, NULL), (6, 2, NULL)")
	for _, q := range []string{
		"INSERT INTO u VALUES (7, 1, 'x')",                // against committed
		"INSERT INTO u VALUES (7, 9, 'q'), (8, 9, 'Q')",   // inside one statement (case-insensitive)
		"UPDATE u SET b = 'x' WHERE id = 2",               // update into a taken key
		"INSERT INTO u VALUES (9, 3, 'z'), (10, 3, 'z ')", // PAD SPACE: trailing spaces are equal
		"ALTER TABLE u ADD UNIQUE KEY bonly (b)",          // existing duplicates
		"CREATE UNIQUE INDEX aonly ON u (a)",              // existing duplicates
	} {
		if _, err := h.query(q); !isDupKey(err) {
			t.Errorf("%s: %v, want duplicate key (1062)", q, err)
		}
	}
	expectRows(t, h, "SELECT COUNT(*) FROM u", "6")
	// INSERT IGNORE skips the duplicates only.
	h.mustQuery("INSERT IGNORE INTO u VALUES (11, 1, 'x'), (12, 7, 'x')")
	expectRows(t, h, "SELECT id FROM u WHERE a = 7", "12")
	// REPLACE removes the row holding the unique key; ON DUPLICATE KEY
	// UPDATE finds it through the unique key.
	h.mustQuery("REPLACE INTO u VALUES (20, 1, 'y')")
	expectRows(t, h, "SELECT id FROM u WHERE a = 1 ORDER BY id", "1; 20")
	h.mustQuery("INSERT INTO u VALUES (21, 1, 'x') ON DUPLICATE KEY UPDATE b = 'w'")
	expectRows(t, h, "SELECT id, b FROM u WHERE a = 1 ORDER BY id", "1,w; 20,y")
	// Swapping keys row by row fails like InnoDB; deleting then inserting
	// in one transaction works.
	checkIndexes(t, h, "u")
	h.reopen()
	h.ctx.SetCurrentDatabase("db")
	if _, err := h.query("INSERT INTO u VALUES (30, 1, 'y')"); !isDupKey(err) {
		t.Errorf("unique key lost after reopen: %v", err)
	}
	expectRows(t, h, "SELECT non_unique, index_name, seq_in_index, column_name, cardinality FROM information_schema.statistics WHERE table_name = 'u' ORDER BY index_name, seq_in_index",
		"0,ab,1,a,0; 0,ab,2,b,0; 0,PRIMARY,1,id,0")
	h.mustQuery("DROP INDEX ab ON u")
	h.mustQuery("INSERT INTO u VALUES (30, 1, 'y')")
	checkIndexes(t, h, "u")
}

func TestIndexDDL(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(40), c INT)")
	h.mustQuery("INSERT INTO t VALUES (1, 5, 'hello world', 1), (2, 6, 'hello there', 2), (3, 5, 'bye', 3)")
	h.mustQuery("CREATE INDEX ia ON t (a)")
	h.mustQuery("ALTER TABLE t ADD INDEX ibc (b(5), c)")
	h.mustQuery("ALTER TABLE t RENAME INDEX ia TO ia2")
	expectRows(t, h, "SELECT id FROM t WHERE a = 5 ORDER BY id", "1; 3")
	expectRows(t, h, "SELECT id FROM t WHERE b = 'hello there'", "2")
	expectRows(t, h, "SELECT id FROM t WHERE b LIKE 'hello%' ORDER BY id", "1; 2")
	// Column changes keep the indexes consistent.
	h.mustQuery("ALTER TABLE t RENAME COLUMN a TO aa")
	h.mustQuery("ALTER TABLE t MODIFY COLUMN c BIGINT")
	h.mustQuery("ALTER TABLE t ADD COLUMN z INT DEFAULT 7 FIRST")
	expectRows(t, h, "SELECT id FROM t WHERE aa = 5 ORDER BY id", "1; 3")
	checkIndexes(t, h, "t")
	h.mustQuery("ALTER TABLE t DROP COLUMN c")
	checkIndexes(t, h, "t")
	expectRows(t, h, "SELECT index_name, column_name, sub_part FROM information_schema.statistics WHERE table_name = 't' ORDER BY index_name, seq_in_index",
		"ia2,aa,<nil>; ibc,b,5; PRIMARY,id,<nil>")
	if _, err := h.query("CREATE INDEX ia2 ON t (b)"); err == nil {
		t.Error("duplicate index name accepted")
	}
	h.mustQuery("ALTER TABLE t DROP INDEX ia2")
	h.mustQuery("TRUNCATE TABLE t")
	h.mustQuery("INSERT INTO t (id, aa, b) VALUES (9, 1, 'hello')")
	checkIndexes(t, h, "t")
	h.mustQuery("RENAME TABLE t TO t2")
	expectRows(t, h, "SELECT id FROM t2 WHERE b = 'hello'", "9")
}

// Random writes through SQL, checked against a model after each batch:
// lookups through every index return what a full scan of the model does,
// and the index buckets match the rows.
func TestIndexRandomized(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	h.mustQuery("CREATE TABLE r (id INT PRIMARY KEY, a INT, b VARCHAR(4), KEY ia (a), KEY iba (b, a), UNIQUE KEY ub (b))")
	type row struct {
		a *int
		b *string
	}
	model := map[int]row{}
	rng := rand.New(rand.NewPCG(1, 2))
	val := func() (*int, string) {
		if rng.IntN(5) == 0 {
			return nil, "NULL"
		}
		v := rng.IntN(10)
		return &v, fmt.Sprint(v)
	}
	str := func() (*string, string) {
		if rng.IntN(3) == 0 {
			return nil, "NULL"
		}
		s := fmt.Sprintf("s%d", rng.IntN(40))
		return &s, "'" + s + "'"
	}
	taken := func(b *string, except int) bool {
		if b == nil {
			return false
		}
		for id, r := range model {
			if id != except && r.b != nil && *r.b == *b {
				return true
			}
		}
		return false
	}
	for step := 0; step < 400; step++ {
		id := rng.IntN(60)
		a, as := val()
		b, bs := str()
		switch rng.IntN(4) {
		case 0, 1:
			_, err := h.query(fmt.Sprintf("INSERT INTO r VALUES (%d, %s, %s)", id, as, bs))
			_, exists := model[id]
			if dupe := exists || taken(b, -1); dupe != isDupKey(err) || (!dupe && err != nil) {
				t.Fatalf("step %d insert %d: %v (exists %v)", step, id, err, exists)
			}
			if err == nil {
				model[id] = row{a, b}
			}
		case 2:
			_, err := h.query(fmt.Sprintf("UPDATE r SET a = %s, b = %s WHERE id = %d", as, bs, id))
			_, exists := model[id]
			if dupe := exists && taken(b, id); dupe != isDupKey(err) || (!dupe && err != nil) {
				t.Fatalf("step %d update %d: %v", step, id, err)
			}
			if err == nil && exists {
				model[id] = row{a, b}
			}
		case 3:
			h.mustQuery(fmt.Sprintf("DELETE FROM r WHERE a = %s OR id = %d", as, id))
			for k, r := range model {
				if k == id || (a != nil && r.a != nil && *r.a == *a) {
					delete(model, k)
				}
			}
		}
		if step%40 != 39 {
			continue
		}
		checkIndexes(t, h, "r")
		for q := 0; q < 10; q++ {
			lo := rng.IntN(10)
			bq := fmt.Sprintf("s%d", rng.IntN(40))
			var want []string
			for k, r := range model {
				if r.a != nil && *r.a >= lo || r.b != nil && *r.b == bq {
					want = append(want, fmt.Sprint(k))
				}
			}
			sort.Slice(want, func(i, j int) bool {
				return len(want[i]) < len(want[j]) || len(want[i]) == len(want[j]) && want[i] < want[j]
			})
			expectRows(t, h, fmt.Sprintf("SELECT id FROM r WHERE a >= %d OR b = '%s' ORDER BY id", lo, bq), strings.Join(want, "; "))
		}
	}
	var buf bytes.Buffer
	fmt.Fprint(&buf, len(model))
	expectRows(t, h, "SELECT COUNT(*) FROM r", buf.String())
}
