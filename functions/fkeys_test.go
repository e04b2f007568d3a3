package functions

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/sirupsen/logrus"
	bolt "go.etcd.io/bbolt"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
)

// TestProviderForeignKeys: the declared single-column keys of a provider's
// tables become unit-resolution edges; compound keys are left out.
func TestProviderForeignKeys(t *testing.T) {
	db := memory.NewDatabase("Shop")
	pro := memory.NewDBProvider(db)
	ctx := sql.NewContext(context.Background(), sql.WithSession(memory.NewSession(sql.NewBaseSession(), pro)))
	mk := func(name string, cols ...string) *memory.Table {
		var s sql.Schema
		for i, c := range cols {
			s = append(s, &sql.Column{Name: c, Type: types.Int64, PrimaryKey: i == 0, Source: name})
		}
		tb := memory.NewTable(db, name, sql.NewPrimaryKeySchema(s), db.GetForeignKeyCollection())
		db.AddTable(name, tb)
		return tb
	}
	mk("customers", "id")
	orders := mk("orders", "id", "Customer_ID", "a", "b")
	items := mk("items", "id", "order_id")
	for _, x := range []struct {
		t  *memory.Table
		fk sql.ForeignKeyConstraint
	}{
		{orders, sql.ForeignKeyConstraint{Name: "f1", Database: "Shop", Table: "orders", Columns: []string{"Customer_ID"}, ParentDatabase: "Shop", ParentTable: "customers", ParentColumns: []string{"id"}}},
		{orders, sql.ForeignKeyConstraint{Name: "f2", Database: "Shop", Table: "orders", Columns: []string{"a", "b"}, ParentDatabase: "Shop", ParentTable: "items", ParentColumns: []string{"id", "order_id"}}},
		{items, sql.ForeignKeyConstraint{Name: "f3", Database: "Shop", Table: "items", Columns: []string{"order_id"}, ParentTable: "orders", ParentColumns: []string{"id"}}},
	} {
		if err := x.t.AddForeignKey(ctx, x.fk); err != nil {
			t.Fatal(err)
		}
	}
	fks, err := ProviderForeignKeys(pro)(ctx, "Shop")
	if err != nil {
		t.Fatal(err)
	}
	want := map[catalog.ForeignKey]bool{
		{Table: "shop.orders", Column: "customer_id", Parent: "shop.customers", ParentColumn: "id"}: true,
		{Table: "shop.items", Column: "order_id", Parent: "shop.orders", ParentColumn: "id"}:        true,
	}
	if len(fks) != len(want) {
		t.Fatalf("keys %v", fks)
	}
	for _, fk := range fks {
		if !want[fk] {
			t.Fatalf("unexpected key %+v (all: %v)", fk, fks)
		}
	}
}

// providerRows is the Rows of a memory provider for procedures that only
// resolve tables (no scans).
type providerRows struct {
	ctx *sql.Context
	pro sql.DatabaseProvider
}

func (r providerRows) TableSchema(db, table string) (sql.Schema, error) {
	d, err := r.pro.Database(r.ctx, db)
	if err != nil {
		return nil, err
	}
	t, ok, err := d.GetTableInsensitive(r.ctx, table)
	if err != nil || !ok {
		return nil, sql.ErrTableNotFound.New(table)
	}
	return t.Schema(), nil
}
func (providerRows) RowCount(string, string) (int64, error) { return 0, nil }
func (providerRows) ScanFloats(string, string, []string, func([]float64) error) (int64, error) {
	return 0, nil
}
func (providerRows) ScanValues(string, string, []string, func([]any) error) (int64, error) {
	return 0, nil
}

// TestPrivacyUnitInheritance: CALL dp_privacy_unit on customers makes orders
// (customer_id → customers.id) and items (order_id → orders.id) members
// through the declared keys; dp_protect on items protects the three with
// one account; an ambiguous table is refused with nothing recorded.
func TestPrivacyUnitInheritance(t *testing.T) {
	db := memory.NewDatabase("shop")
	pro := memory.NewDBProvider(db)
	ctx := sql.NewContext(context.Background(), sql.WithSession(memory.NewSession(
		sql.NewBaseSessionWithClientServer("test", sql.Client{User: "root", Address: "localhost"}, 1), pro)))
	ctx.SetCurrentDatabase("shop")
	mk := func(name string, cols ...string) *memory.Table {
		var s sql.Schema
		for i, c := range cols {
			s = append(s, &sql.Column{Name: c, Type: types.Int64, PrimaryKey: i == 0, Source: name})
		}
		tb := memory.NewTable(db, name, sql.NewPrimaryKeySchema(s), db.GetForeignKeyCollection())
		db.AddTable(name, tb)
		return tb
	}
	fk := func(tb *memory.Table, name, child, col, parent, pcol string) {
		if err := tb.AddForeignKey(ctx, sql.ForeignKeyConstraint{Name: name, Database: "shop", Table: child, Columns: []string{col},
			ParentDatabase: "shop", ParentTable: parent, ParentColumns: []string{pcol}}); err != nil {
			t.Fatal(err)
		}
	}
	mk("customers", "id")
	orders := mk("orders", "id", "customer_id")
	items := mk("items", "id", "order_id")
	fk(orders, "f1", "orders", "customer_id", "customers", "id")
	fk(items, "f2", "items", "order_id", "orders", "id")
	env := testEnv(t, providerRows{ctx, pro})
	env.ForeignKeys = ProviderForeignKeys(pro)
	if _, err := env.privacyUnit(ctx, "customers", "id", "customer"); err != nil {
		t.Fatal(err)
	}
	want := map[string]catalog.Member{
		"shop.customers": {Unit: "shop.customer", Column: "id", Explicit: true},
		"shop.orders":    {Unit: "shop.customer", Column: "customer_id"},
		"shop.items":     {Unit: "shop.customer", Column: "order_id", Parent: "shop.orders", ParentKey: "id"},
	}
	for k, w := range want {
		if m, ok := env.Catalog.UnitOf(k); !ok || m != w {
			t.Fatalf("%s: %+v, want %+v", k, m, w)
		}
	}
	if _, err := env.protect(ctx, "items", 2, 1e-6, "basic"); err != nil {
		t.Fatal(err)
	}
	for k := range want {
		if !env.Catalog.IsProtected(k) {
			t.Fatalf("%s not protected by dp_protect on items", k)
		}
	}
	if st, err := env.Budget.Status(catalog.UnitPrefix + "shop.customer"); err != nil || st.EpsilonTotal != 2 {
		t.Fatalf("unit account %+v (%v)", st, err)
	}
	// Dropping items (and its key) keeps it in the unit, and declarations
	// in the database still work.
	if err := env.Catalog.Forget("shop.items"); err != nil {
		t.Fatal(err)
	}
	if err := items.DropForeignKey(ctx, "f2"); err != nil {
		t.Fatal(err)
	}
	if _, err := env.privacyUnit(ctx, "customers", "id", "customer"); err != nil {
		t.Fatalf("after dropping a member: %v", err)
	}
	if m, _ := env.Catalog.UnitOf("shop.items"); m != want["shop.items"] || !env.Catalog.IsProtected("shop.items") {
		t.Fatalf("dropped items: %+v", m)
	}
	if err := items.AddForeignKey(ctx, sql.ForeignKeyConstraint{Name: "f2", Database: "shop", Table: "items", Columns: []string{"order_id"},
		ParentDatabase: "shop", ParentTable: "orders", ParentColumns: []string{"id"}}); err != nil {
		t.Fatal(err)
	}
	// A second key from items to the unit makes items ambiguous: refused,
	// and nothing changes.
	fk(items, "f3", "items", "id", "customers", "id")
	if _, err := env.privacyUnit(ctx, "customers", "id", "customer"); err == nil {
		t.Fatal("ambiguous items accepted")
	}
	if m, _ := env.Catalog.UnitOf("shop.items"); m != want["shop.items"] {
		t.Fatalf("items changed after a refusal: %+v", m)
	}
}

// testEnv is an Env over rows with a real catalog and accountant in a
// temporary bbolt file.
func testEnv(t testing.TB, rows Rows) *Env {
	t.Helper()
	bdb, err := bolt.Open(filepath.Join(t.TempDir(), "env.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bdb.Close() })
	cat, err := catalog.Open(bdb)
	if err != nil {
		t.Fatal(err)
	}
	acct, err := budget.Open(bdb)
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	return &Env{Store: rows, Catalog: cat, Budget: acct, Log: log}
}
