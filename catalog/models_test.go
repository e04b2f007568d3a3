package catalog

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Two databases may each have a model m; each is found, listed and dropped
// in its own database only, and both survive a reopen.
func TestModelsPerDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	db, c := openAt(t, path)
	t0 := time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
	for i, tbl := range []string{"a.t", "b.t"} {
		m := ModelRecord{Name: "m", Kind: "lda", Table: tbl, N: int64(10 + i), CreatedAt: t0, Model: json.RawMessage(`{}`)}
		if err := c.PutModel(m); err != nil {
			t.Fatalf("PutModel(%s): %v", tbl, err)
		}
	}
	err := c.PutModel(ModelRecord{Name: "M", Table: "a.u", Model: json.RawMessage(`{}`)})
	if err == nil || !strings.Contains(err.Error(), "already exists in database a") {
		t.Fatalf("second m in database a: %v", err)
	}
	for _, bad := range []ModelRecord{{Name: "x", Table: "nodb"}, {Name: "x", Table: ".t"}, {Name: "", Table: "a.t"}, {Name: "a.x", Table: "a.t"}} {
		if err := c.PutModel(bad); err == nil {
			t.Fatalf("PutModel(%+v) accepted", bad)
		}
	}
	if !c.HasModel("A", "M") || !c.HasModel("b", "m") || c.HasModel("c", "m") {
		t.Fatal("HasModel is not per database")
	}
	if m, err := c.Model("b", "m"); err != nil || m.N != 11 || m.DB() != "b" {
		t.Fatalf("Model(b, m) = %+v, %v", m, err)
	}
	if _, err := c.Model("c", "m"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Model(c, m): %v", err)
	}
	if ms := c.Models(); len(ms) != 2 || ms[0].DB() != "a" || ms[1].DB() != "b" {
		t.Fatalf("Models() = %+v", ms)
	}
	db.Close()

	db, c = openAt(t, path)
	defer db.Close()
	if err := c.DropModel("a", "m"); err != nil {
		t.Fatal(err)
	}
	if c.HasModel("a", "m") || !c.HasModel("b", "m") {
		t.Fatal("dropping a.m touched b.m")
	}
	if err := c.DropModel("a", "m"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second drop: %v", err)
	}
	if err := c.PutModel(ModelRecord{Name: "m", Table: "a.t", Model: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("name free again after drop: %v", err)
	}
}

// A catalog written before per-database names stored a model under
// "model/<name>"; Open moves it to "model/<db>.<name>" (db of its table),
// durably, and it is found in that database only.
func TestModelsMigrateBareKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]ModelRecord{
		"model/flowers": {Name: "Flowers", Kind: "lmgc", Table: "demo.iris", N: 150, Model: json.RawMessage(`{"w":[1]}`)},
		"model/prog":    {Name: "prog", Kind: "lsq", Table: "clinic.diabetes", N: 442, Model: json.RawMessage(`{"w":[2]}`)},
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketName)
		if err != nil {
			return err
		}
		for k, m := range old {
			v, err := json.Marshal(m)
			if err != nil {
				return err
			}
			if err := b.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Open(db)
	if err != nil {
		t.Fatalf("open old-format catalog: %v", err)
	}
	if m, err := c.Model("demo", "flowers"); err != nil || m.N != 150 || string(m.Model) != `{"w":[1]}` {
		t.Fatalf("demo.flowers after migration = %+v, %v", m, err)
	}
	if m, err := c.Model("clinic", "PROG"); err != nil || m.N != 442 {
		t.Fatalf("clinic.prog after migration = %+v, %v", m, err)
	}
	if c.HasModel("clinic", "flowers") || c.HasModel("demo", "prog") {
		t.Fatal("migrated model visible in another database")
	}
	db.Close()

	// The move is stored: only the new keys remain, and a second open
	// reads them as they are.
	db, err = bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var keys []string
	if err := db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketName).ForEach(func(k, _ []byte) error {
			if strings.HasPrefix(string(k), modelsPrefix) {
				keys = append(keys, string(k))
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, ",") != "model/clinic.prog,model/demo.flowers" {
		t.Fatalf("stored model keys after migration: %v", keys)
	}
	c, err = Open(db)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Models()) != 2 || !c.HasModel("demo", "flowers") {
		t.Fatalf("models after second open: %+v", c.Models())
	}
}

// A stored model without a training table cannot be placed in a database:
// Open says so instead of guessing.
func TestModelsMigrateRefusesTablelessRecord(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "c.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketName)
		if err != nil {
			return err
		}
		return b.Put([]byte("model/m"), []byte(`{"name":"m","model":{}}`))
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(db); err == nil || !strings.Contains(err.Error(), "not db.table") {
		t.Fatalf("Open of a tableless model: %v", err)
	}
}
