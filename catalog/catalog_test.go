package catalog

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func openAt(t *testing.T, path string) (*bolt.DB, *Catalog) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Open(db)
	if err != nil {
		t.Fatal(err)
	}
	return db, c
}

func TestCatalogPersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	db, c := openAt(t, path)
	key := Key("Demo", "People")
	if key != "demo.people" {
		t.Fatalf("Key = %q", key)
	}
	if err := c.SetBounds(key, "Age", 0, 100); err != nil {
		t.Fatal(err)
	}
	if err := c.SetLabels(key, "town", []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetProtected(key, true); err != nil {
		t.Fatal(err)
	}
	if err := c.SetOwner("alice", true); err != nil {
		t.Fatal(err)
	}
	m := ModelRecord{Name: "M1", Kind: "svm", Table: key, CreatedAt: time.Now(), Model: json.RawMessage(`{"kind":"svm"}`)}
	if err := c.PutModel(m); err != nil {
		t.Fatal(err)
	}
	if err := c.PutModel(ModelRecord{Name: "m1", Table: "DEMO.other", Model: json.RawMessage(`{}`)}); err == nil {
		t.Fatal("duplicate model name (case-insensitive) in one database accepted")
	}
	db.Close()

	db, c = openAt(t, path)
	defer db.Close()
	if !c.IsProtected(key) {
		t.Fatal("protection lost on reopen")
	}
	if b, ok := c.Bounds(key, "AGE"); !ok || b.Lo != 0 || b.Hi != 100 {
		t.Fatalf("bounds after reopen = %v, %v", b, ok)
	}
	if l, ok := c.Labels(key, "town"); !ok || len(l) != 2 || l[0] != "a" {
		t.Fatalf("labels after reopen = %v", l)
	}
	if !c.IsOwner("alice") || !c.IsOwner("root") || c.IsOwner("bob") {
		t.Fatal("owners wrong after reopen")
	}
	if _, err := c.Model("demo", "m1"); err != nil {
		t.Fatalf("model lost: %v", err)
	}
	if err := c.Forget(key); err != nil {
		t.Fatal(err)
	}
	if c.IsProtected(key) {
		t.Fatal("Forget kept protection")
	}
}

func TestCatalogValidation(t *testing.T) {
	db, c := openAt(t, filepath.Join(t.TempDir(), "c.db"))
	defer db.Close()
	for _, b := range [][2]float64{{1, 1}, {2, 1}} {
		if err := c.SetBounds("d.t", "x", b[0], b[1]); err == nil {
			t.Fatalf("bounds %v accepted", b)
		}
	}
	if err := c.SetOwner("root", false); err == nil {
		t.Fatal("root can be removed as owner")
	}
	if err := c.SetOwner("", true); err == nil {
		t.Fatal("empty owner accepted")
	}
}
