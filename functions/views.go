package functions

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/mechanism/auto"
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

// SystemDB returns the dpsql system database with its views over every
// database. go-mysql-server lets only accounts with a privilege on it (or a
// global one, such as root and owners granted ALL) open it, so the same
// views also appear in every user database, see Views.
func (e *Env) SystemDB() sql.Database {
	d := &systemDB{tables: map[string]*view{}}
	for _, v := range e.views("") {
		d.tables[v.name] = v
		d.names = append(d.names, v.name)
	}
	return d
}

// ViewNames are the view names reserved in every database.
var ViewNames = []string{"dp_budget", "dp_models", "dp_ledger", "dp_columns", "dp_owners", "dp_quotas"}

// Views returns the dpsql views as they appear inside database db: the same
// columns, restricted to that database's tables, so any account that may use
// the database can read its budgets and models.
func (e *Env) Views(db string) map[string]sql.Table {
	out := map[string]sql.Table{}
	for _, v := range e.views(strings.ToLower(db)) {
		out[v.name] = v
	}
	return out
}

func (e *Env) views(db string) []*view {
	return []*view{e.budgetView(db), e.modelsView(db), e.ledgerView(db), e.columnsView(db), e.ownersView(), e.quotasView(db)}
}

// inDB reports whether catalog key "db.table" belongs to db ("" = all).
func inDB(db, key string) bool {
	return db == "" || strings.HasPrefix(key, db+".")
}

// shows reports whether a view row about table key belongs in the view of
// db for the caller: rows about tables the caller may not read (no SELECT
// privilege) are left out, as the tables themselves are.
func (e *Env) shows(ctx *sql.Context, db, key string) bool {
	return inDB(db, key) && e.canReadKey(ctx, key)
}

func (d *systemDB) Name() string { return SystemDatabase }
func (d *systemDB) GetTableInsensitive(_ *sql.Context, name string) (sql.Table, bool, error) {
	v, ok := d.tables[strings.ToLower(name)]
	return v, ok, nil
}

// GetTableNames lists no base tables: the views are listed by AllViews, as
// VIEW, so that mysqldump --all-databases does not dump their rows as
// tables (issue 13).
func (d *systemDB) GetTableNames(*sql.Context) ([]string, error) { return nil, nil }

// The system database has no views, triggers or procedures of its own, but
// go-mysql-server's privilege wrapper asks for them.
var (
	_ sql.ViewDatabase            = (*systemDB)(nil)
	_ sql.TriggerDatabase         = (*systemDB)(nil)
	_ sql.StoredProcedureDatabase = (*systemDB)(nil)
)

var errReadOnly = fmt.Errorf("database %s is read-only", SystemDatabase)

func (d *systemDB) CreateView(*sql.Context, string, string, string) error { return errReadOnly }
func (d *systemDB) DropView(*sql.Context, string) error                   { return errReadOnly }
func (d *systemDB) GetViewDefinition(*sql.Context, string) (sql.ViewDefinition, bool, error) {
	return sql.ViewDefinition{}, false, nil
}
func (d *systemDB) AllViews(*sql.Context) ([]sql.ViewDefinition, error) {
	out := make([]sql.ViewDefinition, 0, len(d.names))
	for _, v := range d.names {
		def := "SELECT * FROM `" + SystemDatabase + "`.`" + v + "` /* computed by dpsql over every database */"
		out = append(out, sql.ViewDefinition{Name: v, TextDefinition: def, CreateViewStatement: "CREATE VIEW `" + v + "` AS " + def})
	}
	return out, nil
}
func (d *systemDB) GetTriggers(*sql.Context) ([]sql.TriggerDefinition, error) { return nil, nil }
func (d *systemDB) CreateTrigger(*sql.Context, sql.TriggerDefinition) error   { return errReadOnly }
func (d *systemDB) DropTrigger(*sql.Context, string) error                    { return errReadOnly }
func (d *systemDB) GetStoredProcedure(*sql.Context, string) (sql.StoredProcedureDetails, bool, error) {
	return sql.StoredProcedureDetails{}, false, nil
}
func (d *systemDB) GetStoredProcedures(*sql.Context) ([]sql.StoredProcedureDetails, error) {
	return nil, nil
}
func (d *systemDB) SaveStoredProcedure(*sql.Context, sql.StoredProcedureDetails) error {
	return errReadOnly
}
func (d *systemDB) DropStoredProcedure(*sql.Context, string) error { return errReadOnly }

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

func (v *view) Name() string               { return v.name }
func (v *view) String() string             { return v.name }
func (v *view) Schema() sql.Schema         { return v.schema }
func (v *view) Collation() sql.CollationID { return sql.Collation_Default }
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

// DataLength and RowCount make views statistics tables, so that
// information_schema.tables reports 0 for them instead of carrying over the
// previous table's figures (a go-mysql-server v0.20.0 quirk).
func (v *view) DataLength(*sql.Context) (uint64, error)     { return 0, nil }
func (v *view) RowCount(*sql.Context) (uint64, bool, error) { return 0, false, nil }

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

func (e *Env) budgetView(db string) *view {
	return newView("dp_budget", []*sql.Column{
		col("table_name", types.Text), col("accounting", types.Text),
		col("epsilon_total", types.Float64), col("epsilon_spent", types.Float64), col("epsilon_remaining", types.Float64),
		col("delta_total", types.Float64), col("delta_spent", types.Float64), col("delta_remaining", types.Float64),
		// The caller's own share (budget/quota.go): what its releases
		// charged, what it may still spend (its quota and the table's
		// remaining budget both apply) and its quota (NULL = none).
		col("my_epsilon_spent", types.Float64), col("my_epsilon_remaining", types.Float64),
		col("my_delta_spent", types.Float64), col("my_delta_remaining", types.Float64),
		col("my_epsilon_quota", types.Float64), col("my_delta_quota", types.Float64),
		// How many more trainings without delta= run at the default δ
		// (δ_total/10); after them the default is δ = 0 (pure ε).
		col("default_delta", types.Float64), col("my_default_delta_calls", types.Int64),
	}, func(ctx *sql.Context) ([]sql.Row, error) {
		all, err := e.Budget.All()
		if err != nil {
			return nil, fmt.Errorf("dp_budget: %w", err)
		}
		rows := make([]sql.Row, 0, len(all))
		for _, s := range all {
			if e.superseded(s.Table) {
				continue
			}
			// A unit's shared account is shown on each of its tables.
			for _, table := range e.accountTables(s.Table) {
				if !e.shows(ctx, db, table) {
					continue
				}
				me, err := e.Budget.UserStatus(s.Table, UserOf(ctx))
				if err != nil {
					return nil, fmt.Errorf("dp_budget: %w", err)
				}
				var qe, qd any
				if me.HasQuota {
					qe, qd = me.EpsilonQuota, me.DeltaQuota
				}
				dd, calls := auto.DefaultDelta(s.DeltaTotal), int64(0)
				if dd > 0 {
					calls = int64(math.Floor(me.DeltaLeft / dd * (1 + 1e-9)))
				}
				rows = append(rows, sql.Row{table, string(s.Mode), s.EpsilonTotal, s.EpsilonSpent, nonNeg(s.EpsilonTotal - s.EpsilonSpent),
					s.DeltaTotal, s.DeltaSpent, nonNeg(s.DeltaTotal - s.DeltaSpent),
					me.EpsilonSpent, me.EpsilonLeft, me.DeltaSpent, me.DeltaLeft, qe, qd, dd, calls})
			}
		}
		sort.SliceStable(rows, func(i, j int) bool { return rows[i][0].(string) < rows[j][0].(string) })
		return rows, nil
	})
}

// quotasView lists per-account quotas: every quota for owners, the
// caller's own (or the default one that applies to it) for analysts.
func (e *Env) quotasView(db string) *view {
	return newView("dp_quotas", []*sql.Column{
		col("table_name", types.Text), col("user", types.Text),
		col("epsilon_quota", types.Float64), col("delta_quota", types.Float64),
		col("epsilon_spent", types.Float64), col("delta_spent", types.Float64),
		col("epsilon_remaining", types.Float64), col("delta_remaining", types.Float64),
	}, func(ctx *sql.Context) ([]sql.Row, error) {
		qs, err := e.Budget.Quotas()
		if err != nil {
			return nil, fmt.Errorf("dp_quotas: %w", err)
		}
		u, owner := UserOf(ctx), e.Catalog.IsOwner(UserOf(ctx))
		var rows []sql.Row
		for _, q := range qs {
			if e.superseded(q.Table) {
				continue
			}
			for _, table := range e.accountTables(q.Table) {
				if !e.shows(ctx, db, table) {
					continue
				}
				if q.User == budget.AnyUser {
					if owner {
						rows = append(rows, sql.Row{table, q.User, q.EpsilonQuota, q.DeltaQuota, nil, nil, nil, nil})
					}
					continue
				}
				if owner || q.User == u {
					rows = append(rows, sql.Row{table, q.User, q.EpsilonQuota, q.DeltaQuota, q.EpsilonSpent, q.DeltaSpent, q.EpsilonLeft, q.DeltaLeft})
				}
			}
		}
		if !owner {
			// The default quota, as it applies to the caller.
			seen := map[string]bool{}
			for _, r := range rows {
				seen[r[0].(string)] = true
			}
			for _, q := range qs {
				if q.User != budget.AnyUser || e.superseded(q.Table) {
					continue
				}
				for _, table := range e.accountTables(q.Table) {
					if seen[table] || !e.shows(ctx, db, table) {
						continue
					}
					me, err := e.Budget.UserStatus(q.Table, u)
					if err != nil {
						return nil, fmt.Errorf("dp_quotas: %w", err)
					}
					rows = append(rows, sql.Row{table, u, me.EpsilonQuota, me.DeltaQuota, me.EpsilonSpent, me.DeltaSpent, me.EpsilonLeft, me.DeltaLeft})
				}
			}
		}
		return rows, nil
	})
}

// accountTables lists the tables a budget account covers: a unit's
// members (catalog.UnitPrefix), else the table itself.
func (e *Env) accountTables(account string) []string {
	if u, ok := strings.CutPrefix(account, catalog.UnitPrefix); ok {
		return e.Catalog.UnitMembers(u)
	}
	return []string{account}
}

// superseded reports a table's own account that its privacy unit's shared
// account replaced (a table protected before it joined a unit).
func (e *Env) superseded(account string) bool {
	return !strings.HasPrefix(account, catalog.UnitPrefix) && e.Catalog.AccountKey(account) != account
}

// showsAccount is shows for a budget account: a unit's account is shown
// where any of its tables is.
func (e *Env) showsAccount(ctx *sql.Context, db, account string) bool {
	for _, t := range e.accountTables(account) {
		if e.shows(ctx, db, t) {
			return true
		}
	}
	return false
}

func nonNeg(x float64) float64 {
	if x < 0 {
		return 0
	}
	return x
}

func (e *Env) modelsView(db string) *view {
	return newView("dp_models", []*sql.Column{
		col("name", types.Text), col("db", types.Text), col("kind", types.Text), col("kernel", types.Text), col("params", types.Text),
		col("epsilon", types.Float64), col("delta", types.Float64), col("epsilon_requested", types.Float64),
		col("n", types.Int64), col("table_name", types.Text), col("creator", types.Text), col("created_at", types.DatetimeMaxPrecision),
	}, func(ctx *sql.Context) ([]sql.Row, error) {
		var rows []sql.Row
		for _, m := range e.Catalog.Models() {
			if !e.shows(ctx, db, m.Table) {
				continue
			}
			rows = append(rows, sql.Row{m.Name, m.DB(), m.Kind, m.Kernel, m.Params, m.Epsilon, m.Delta, m.RequestedEpsilon,
				m.N, m.Table, m.Creator, m.CreatedAt.UTC()})
		}
		return rows, nil
	})
}

func (e *Env) ledgerView(db string) *view {
	return newView("dp_ledger", []*sql.Column{
		col("id", types.Int64), col("time", types.DatetimeMaxPrecision), col("user", types.Text), col("table_name", types.Text),
		col("function_name", types.Text), col("epsilon", types.Float64), col("delta", types.Float64),
		col("epsilon_requested", types.Float64), col("delta_requested", types.Float64), col("status", types.Text), col("detail", types.Text),
	}, func(ctx *sql.Context) ([]sql.Row, error) {
		// Failure details may depend on the data: owners only.
		if !e.Catalog.IsOwner(UserOf(ctx)) {
			return nil, fmt.Errorf("dp_ledger is readable by data owners only")
		}
		entries, err := e.Budget.Ledger()
		if err != nil {
			return nil, fmt.Errorf("dp_ledger: %w", err)
		}
		rows := make([]sql.Row, 0, len(entries))
		for _, l := range entries {
			if !e.showsAccount(ctx, db, l.Table) {
				continue
			}
			rows = append(rows, sql.Row{int64(l.ID), l.Time.UTC(), l.User, l.Table, l.Function, l.Epsilon, l.Delta,
				l.RequestedEpsilon, l.RequestedDelta, l.Status, l.Detail})
		}
		return rows, nil
	})
}

func (e *Env) columnsView(db string) *view {
	return newView("dp_columns", []*sql.Column{
		col("table_name", types.Text), col("column_name", types.Text), col("lower_bound", types.Float64),
		col("upper_bound", types.Float64), col("labels", types.Text), col("clip", types.Boolean), col("transform", types.Text),
	}, func(ctx *sql.Context) ([]sql.Row, error) {
		var rows []sql.Row
		for _, t := range e.Catalog.Tables() {
			if !e.shows(ctx, db, t.Name) {
				continue
			}
			// clip: rows may hold values outside the bounds (every DP read
			// clips); transform: applied by DP reads before the bounds.
			for c, b := range t.Bounds {
				rows = append(rows, sql.Row{t.Name, c, b.Lo, b.Hi, nil, t.Clip[c], transformName(t.Transforms[c])})
			}
			for c, l := range t.Labels {
				js, _ := json.Marshal(l)
				rows = append(rows, sql.Row{t.Name, c, nil, nil, string(js), nil, nil})
			}
			for c, tf := range t.Transforms {
				if _, ok := t.Bounds[c]; !ok {
					rows = append(rows, sql.Row{t.Name, c, nil, nil, nil, nil, tf})
				}
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

func transformName(tf string) string {
	if tf == "" {
		return "identity"
	}
	return tf
}
