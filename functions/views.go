package functions

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// SystemDatabase is the name of the read-only database holding the dpsql
// views. Every logged-in user may read it (the engine's authorisation wrapper
// allows it); dp_ledger is further restricted to owners.
const SystemDatabase = "dpsql"

// systemDB is the read-only dpsql database.
type systemDB struct {
	tables map[string]*view
	names  []string
}

// SystemDB returns the dpsql system database with its views.
func (e *Env) SystemDB() sql.Database {
	d := &systemDB{tables: map[string]*view{}}
	for _, v := range []*view{e.budgetView(), e.modelsView(), e.ledgerView(), e.columnsView(), e.ownersView()} {
		d.tables[v.name] = v
		d.names = append(d.names, v.name)
	}
	return d
}

func (d *systemDB) Name() string { return SystemDatabase }
func (d *systemDB) GetTableInsensitive(_ *sql.Context, name string) (sql.Table, bool, error) {
	v, ok := d.tables[strings.ToLower(name)]
	return v, ok, nil
}
func (d *systemDB) GetTableNames(*sql.Context) ([]string, error) { return d.names, nil }

// view is a read-only table computed from the catalog or the accountant.
type view struct {
	name   string
	schema sql.Schema
	rows   func(ctx *sql.Context) ([]sql.Row, error)
}

func newView(name string, cols []*sql.Column, rows func(ctx *sql.Context) ([]sql.Row, error)) *view {
	for _, c := range cols {
		c.Source = name
		c.DatabaseSource = SystemDatabase
		c.Nullable = true
	}
	return &view{name: name, schema: cols, rows: rows}
}

func (v *view) Name() string                { return v.name }
func (v *view) String() string              { return v.name }
func (v *view) Schema() sql.Schema          { return v.schema }
func (v *view) Collation() sql.CollationID  { return sql.Collation_Default }
func (v *view) Partitions(*sql.Context) (sql.PartitionIter, error) {
	return &onePartition{}, nil
}
func (v *view) PartitionRows(ctx *sql.Context, _ sql.Partition) (sql.RowIter, error) {
	rows, err := v.rows(ctx)
	if err != nil {
		return nil, err
	}
	return sql.RowsToRowIter(rows...), nil
}

type onePartition struct{ done bool }

func (p *onePartition) Next(*sql.Context) (sql.Partition, error) {
	if p.done {
		return nil, io.EOF
	}
	p.done = true
	return partitionKey("all"), nil
}
func (p *onePartition) Close(*sql.Context) error { return nil }

type partitionKey string

func (k partitionKey) Key() []byte { return []byte(k) }

func col(name string, t sql.Type) *sql.Column { return &sql.Column{Name: name, Type: t} }

func (e *Env) budgetView() *view {
	return newView("dp_budget", []*sql.Column{
		col("table_name", types.Text), col("accounting", types.Text),
		col("epsilon_total", types.Float64), col("epsilon_spent", types.Float64), col("epsilon_remaining", types.Float64),
		col("delta_total", types.Float64), col("delta_spent", types.Float64), col("delta_remaining", types.Float64),
	}, func(*sql.Context) ([]sql.Row, error) {
		all, err := e.Budget.All()
		if err != nil {
			return nil, fmt.Errorf("dp_budget: %w", err)
		}
		rows := make([]sql.Row, 0, len(all))
		for _, s := range all {
			rows = append(rows, sql.Row{s.Table, string(s.Mode), s.EpsilonTotal, s.EpsilonSpent, nonNeg(s.EpsilonTotal - s.EpsilonSpent),
				s.DeltaTotal, s.DeltaSpent, nonNeg(s.DeltaTotal - s.DeltaSpent)})
		}
		return rows, nil
	})
}

func nonNeg(x float64) float64 {
	if x < 0 {
		return 0
	}
	return x
}

func (e *Env) modelsView() *view {
	return newView("dp_models", []*sql.Column{
		col("name", types.Text), col("kind", types.Text), col("kernel", types.Text), col("params", types.Text),
		col("epsilon", types.Float64), col("delta", types.Float64), col("epsilon_requested", types.Float64),
		col("n", types.Int64), col("table_name", types.Text), col("creator", types.Text), col("created_at", types.DatetimeMaxPrecision),
	}, func(*sql.Context) ([]sql.Row, error) {
		var rows []sql.Row
		for _, m := range e.Catalog.Models() {
			rows = append(rows, sql.Row{m.Name, m.Kind, m.Kernel, m.Params, m.Epsilon, m.Delta, m.RequestedEpsilon,
				m.N, m.Table, m.Creator, m.CreatedAt.UTC()})
		}
		return rows, nil
	})
}

func (e *Env) ledgerView() *view {
	return newView("dp_ledger", []*sql.Column{
		col("id", types.Int64), col("time", types.DatetimeMaxPrecision), col("user", types.Text), col("table_name", types.Text),
		col("function", types.Text), col("epsilon", types.Float64), col("delta", types.Float64),
		col("epsilon_requested", types.Float64), col("delta_requested", types.Float64), col("status", types.Text), col("detail", types.Text),
	}, func(ctx *sql.Context) ([]sql.Row, error) {
		// Failure details may depend on the data: owners only.
		if !e.Catalog.IsOwner(user(ctx)) {
			return nil, fmt.Errorf("dp_ledger is readable by data owners only")
		}
		entries, err := e.Budget.Ledger()
		if err != nil {
			return nil, fmt.Errorf("dp_ledger: %w", err)
		}
		rows := make([]sql.Row, 0, len(entries))
		for _, l := range entries {
			rows = append(rows, sql.Row{int64(l.ID), l.Time.UTC(), l.User, l.Table, l.Function, l.Epsilon, l.Delta,
				l.RequestedEpsilon, l.RequestedDelta, l.Status, l.Detail})
		}
		return rows, nil
	})
}

func (e *Env) columnsView() *view {
	return newView("dp_columns", []*sql.Column{
		col("table_name", types.Text), col("column_name", types.Text), col("lower_bound", types.Float64),
		col("upper_bound", types.Float64), col("labels", types.Text),
	}, func(*sql.Context) ([]sql.Row, error) {
		var rows []sql.Row
		for _, t := range e.Catalog.Tables() {
			for c, b := range t.Bounds {
				rows = append(rows, sql.Row{t.Name, c, b.Lo, b.Hi, nil})
			}
			for c, l := range t.Labels {
				js, _ := json.Marshal(l)
				rows = append(rows, sql.Row{t.Name, c, nil, nil, string(js)})
			}
		}
		sort.Slice(rows, func(i, j int) bool {
			a, b := rows[i][0].(string)+"."+rows[i][1].(string), rows[j][0].(string)+"."+rows[j][1].(string)
			return a < b
		})
		return rows, nil
	})
}

func (e *Env) ownersView() *view {
	return newView("dp_owners", []*sql.Column{col("user", types.Text)}, func(*sql.Context) ([]sql.Row, error) {
		var rows []sql.Row
		for _, u := range e.Catalog.Owners() {
			rows = append(rows, sql.Row{u})
		}
		return rows, nil
	})
}
