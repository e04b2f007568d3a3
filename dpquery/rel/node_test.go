package rel

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/sirupsen/logrus"
	bolt "go.etcd.io/bbolt"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/functions"
)

// memRows is functions.Rows over the in-memory shop.
type memRows struct{ *mem }

func (r memRows) TableSchema(db, table string) (sql.Schema, error) {
	cols, err := r.Columns(db, table)
	if err != nil {
		return nil, err
	}
	s := make(sql.Schema, len(cols))
	for i, c := range cols {
		s[i] = &sql.Column{Name: c, Type: types.Int64, Source: table}
	}
	return s, nil
}

func (r memRows) RowCount(db, table string) (int64, error) {
	return int64(len(r.rows[catalog.Key(db, table)])), nil
}

func (r memRows) ScanFloats(string, string, []string, func([]float64) error) (int64, error) {
	return 0, errors.New("not used")
}

// TestAggregateNodeCharges: the SQL leaf reserves the unit's one budget
// before reading, answers identical queries on the same snapshot from the
// cache at no charge, charges dp_fresh queries again, and refuses an
// overspend before reading anything.
func TestAggregateNodeCharges(t *testing.T) {
	m := shop(t, 200, 2)
	db, err := bolt.Open(filepath.Join(t.TempDir(), "d.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cat, err := catalog.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	acct, err := budget.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	members := map[string]catalog.Member{}
	for k, e := range m.entries {
		if e.Unit != nil && e.Unit.Unit == "s.customer" {
			members[k] = *e.Unit
		}
		for c, l := range e.Labels {
			if err := cat.SetLabels(k, c, l); err != nil {
				t.Fatal(err)
			}
		}
		if err := cat.SetProtected(k, e.Protected); err != nil {
			t.Fatal(err)
		}
	}
	if err := cat.SetUnits("s", members); err != nil {
		t.Fatal(err)
	}
	if err := acct.Protect(catalog.UnitPrefix+"s.customer", 2, 1e-6, budget.Basic); err != nil {
		t.Fatal(err)
	}
	rows := memRows{m}
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	env := &functions.Env{Store: rows, Catalog: cat, Budget: acct, Log: log}
	meta := CatalogMeta{Cat: cat, Schemas: rows}
	ctx := sql.NewContext(context.Background(), sql.WithSession(memory.NewSession(sql.NewBaseSession(), memory.NewDBProvider())))

	run := func(eps float64, fresh bool) ([]sql.Row, error) {
		gb := parseGroupBy(t, "SELECT c.region, COUNT(*) FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region")
		if !Touches(gb, cat) {
			t.Fatal("Touches: the GroupBy reads unit tables")
		}
		leaf, err := PlanGroupBy(gb, Options{Epsilon: eps}, nil, meta, Deps{Env: env, Src: rows, Cat: cat, Fresh: fresh})
		if err != nil {
			t.Fatal(err)
		}
		it, err := leaf.RowIter(ctx, nil)
		if err != nil {
			return nil, err
		}
		return sql.RowIterToRows(ctx, it)
	}
	spent := func() float64 {
		st, err := acct.Status(catalog.UnitPrefix + "s.customer")
		if err != nil {
			t.Fatal(err)
		}
		return st.EpsilonSpent
	}
	r1, err := run(0.5, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(r1) != 2 || spent() != 0.5 {
		t.Fatalf("rows %v, spent %v", r1, spent())
	}
	r2, err := run(0.5, false)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(r1) != fmt.Sprint(r2) || spent() != 0.5 {
		t.Fatalf("cache: %v then %v, spent %v", r1, r2, spent())
	}
	if _, err := run(0.5, true); err != nil || spent() != 1 {
		t.Fatalf("dp_fresh: %v, spent %v", err, spent())
	}
	if _, err := run(5, false); !errors.Is(err, budget.ErrBudgetExceeded) || spent() != 1 {
		t.Fatalf("overspend: %v, spent %v", err, spent())
	}
	led, err := acct.Ledger()
	if err != nil || len(led) != 2 || led[0].Table != "unit:s.customer" || led[0].Function != "DP_UNIT_AGGREGATE" {
		t.Fatalf("ledger %+v (%v)", led, err)
	}
}
