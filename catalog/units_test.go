package catalog

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// shop is customers ← orders ← items with an unrelated self-referencing
// employees table.
func shop() Schema {
	return Schema{
		FKs: []ForeignKey{
			{Table: "s.orders", Column: "customer_id", Parent: "s.customers", ParentColumn: "id"},
			{Table: "s.items", Column: "order_id", Parent: "s.orders", ParentColumn: "id"},
			{Table: "s.employees", Column: "manager_id", Parent: "s.employees", ParentColumn: "id"},
		},
		PrimaryKey: map[string]string{"s.customers": "id", "s.orders": "id", "s.items": "id", "s.employees": "id"},
	}
}

func TestResolveUnitsThreeHops(t *testing.T) {
	m, err := ResolveUnits([]Explicit{{Table: "s.customers", Column: "id", Unit: "s.customer"}}, shop())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Member{
		"s.customers": {Unit: "s.customer", Column: "id", Explicit: true},
		"s.orders":    {Unit: "s.customer", Column: "customer_id"},
		"s.items":     {Unit: "s.customer", Column: "order_id", Parent: "s.orders", ParentKey: "id"},
	}
	if len(m) != len(want) {
		t.Fatalf("members %v", m)
	}
	for k, w := range want {
		if m[k] != w {
			t.Fatalf("%s: got %+v want %+v", k, m[k], w)
		}
	}
	if _, ok := m["s.employees"]; ok {
		t.Fatal("employees must stay row-level")
	}
}

// TestResolveUnitsExplicitChild: a unit declared on orders.customer_id with
// no customers table; items inherits through orders' primary key.
func TestResolveUnitsExplicitChild(t *testing.T) {
	s := shop()
	s.FKs = s.FKs[1:]
	m, err := ResolveUnits([]Explicit{{Table: "s.orders", Column: "customer_id", Unit: "s.customer"}}, s)
	if err != nil {
		t.Fatal(err)
	}
	if m["s.items"] != (Member{Unit: "s.customer", Column: "order_id", Parent: "s.orders", ParentKey: "id"}) {
		t.Fatalf("items: %+v", m["s.items"])
	}
}

func TestResolveUnitsRefusals(t *testing.T) {
	root := []Explicit{{Table: "s.customers", Column: "id", Unit: "s.customer"}}
	cases := map[string]struct {
		ex   []Explicit
		s    Schema
		want string
	}{
		"ambiguous": {root, func() Schema {
			s := shop()
			s.FKs = append(s.FKs, ForeignKey{Table: "s.items", Column: "buyer_id", Parent: "s.customers", ParentColumn: "id"})
			return s
		}(), "ambiguous"},
		"two units": {append(root, Explicit{Table: "s.sellers", Column: "id", Unit: "s.seller"}), func() Schema {
			s := shop()
			s.FKs = append(s.FKs, ForeignKey{Table: "s.orders", Column: "seller_id", Parent: "s.sellers", ParentColumn: "id"})
			return s
		}(), "ambiguous"},
		"cycle": {root, func() Schema {
			s := shop()
			s.FKs = append(s.FKs,
				ForeignKey{Table: "s.a", Column: "b_id", Parent: "s.b", ParentColumn: "id"},
				ForeignKey{Table: "s.b", Column: "a_id", Parent: "s.a", ParentColumn: "id"},
				ForeignKey{Table: "s.b", Column: "order_id", Parent: "s.orders", ParentColumn: "id"})
			s.PrimaryKey["s.a"], s.PrimaryKey["s.b"] = "id", "id"
			return s
		}(), "cycle"},
		"non-key parent column": {root, func() Schema {
			s := shop()
			s.FKs = append(s.FKs, ForeignKey{Table: "s.notes", Column: "order_ref", Parent: "s.orders", ParentColumn: "ref"})
			return s
		}(), "neither"},
		"other database": {[]Explicit{{Table: "s.customers", Column: "id", Unit: "t.customer"}}, shop(), "another database"},
		"fk from another database": {root, func() Schema {
			s := shop()
			s.FKs = append(s.FKs, ForeignKey{Table: "t.visits", Column: "customer_id", Parent: "s.customers", ParentColumn: "id"})
			return s
		}(), "another database"},
	}
	for name, c := range cases {
		_, err := ResolveUnits(c.ex, c.s)
		if err == nil || !errors.Is(err, ErrUnit) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an ErrUnit naming %q", name, err, c.want)
		}
	}
}

func TestUnitsPersistAndAccount(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	db, c := openAt(t, path)
	m, err := ResolveUnits([]Explicit{{Table: "s.customers", Column: "id", Unit: "s.customer"}}, shop())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetBounds("s.orders", "amount", 0, 100); err != nil {
		t.Fatal(err)
	}
	if err := c.SetUnits("s", m); err != nil {
		t.Fatal(err)
	}
	if got := c.AccountKey("s.items"); got != "unit:s.customer" {
		t.Fatalf("account of items = %q", got)
	}
	if got := c.AccountKey("s.employees"); got != "s.employees" {
		t.Fatalf("account of employees = %q", got)
	}
	if b, ok := c.Bounds("s.orders", "amount"); !ok || b.Hi != 100 {
		t.Fatal("SetUnits lost the bounds")
	}
	db.Close()
	db, c = openAt(t, path)
	defer db.Close()
	if got := c.UnitMembers("s.customer"); strings.Join(got, ",") != "s.customers,s.items,s.orders" {
		t.Fatalf("members after reopen: %v", got)
	}
	if ex := c.ExplicitUnits("s"); len(ex) != 1 || ex[0].Table != "s.customers" {
		t.Fatalf("explicit: %v", ex)
	}
	// A member the resolution no longer finds keeps its membership; one it
	// maps differently is refused.
	delete(m, "s.items")
	if err := c.SetUnits("s", m); err != nil {
		t.Fatal(err)
	}
	if u, ok := c.UnitOf("s.items"); !ok || u.Parent != "s.orders" {
		t.Fatalf("items left its unit: %+v", u)
	}
	m["s.items"] = Member{Unit: "s.customer", Column: "id"}
	if err := c.SetUnits("s", m); err == nil || !strings.Contains(err.Error(), "cannot leave") {
		t.Fatalf("remapping a member: %v", err)
	}
	// Dropping a member keeps it protected and in its unit.
	if err := c.Forget("s.orders"); err != nil {
		t.Fatal(err)
	}
	if u, ok := c.UnitOf("s.orders"); !ok || u.Unit != "s.customer" || !c.IsProtected("s.orders") {
		t.Fatalf("a dropped member left its unit: %+v", u)
	}
	if _, ok := c.Bounds("s.orders", "amount"); ok {
		t.Fatal("a dropped member kept its bounds")
	}
	// A restore keeps the membership even if the dumped entry has none.
	if err := c.Restore("s.items", Table{Protected: true}); err != nil {
		t.Fatal(err)
	}
	if u, ok := c.UnitOf("s.items"); !ok || u.Unit != "s.customer" {
		t.Fatalf("restore dropped the unit: %+v", u)
	}
}
