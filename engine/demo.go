package engine

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/guard"
	"github.com/dpsql/dpsql/store"
)

// Exec runs one statement as user and drains its result.
func (e *Engine) Exec(ctx *sql.Context, query string) ([]sql.Row, error) {
	_, it, _, err := e.SQL.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	return sql.RowIterToRows(ctx, it)
}

// ImportCSVFile bulk-loads a CSV file (header row) into db.table, creating
// the table if needed. Rows of a table with declared bounds or label domains
// are validated like owner writes.
func (e *Engine) ImportCSVFile(target, path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("open csv: %w", err)
	}
	defer f.Close()
	return e.importCSV(target, f)
}

// importName is what dpsql import accepts as a database or table name:
// the identifiers DP functions accept (letters, digits, _ and $, 1–64).
var importName = regexp.MustCompile(`^[A-Za-z0-9_$]{1,64}$`)

// checkImportTarget refuses names the SQL path would refuse or that cannot
// be used afterwards: dots, quotes, semicolons, control characters, the
// reserved dpsql view names and the system databases.
func checkImportTarget(target string) (db, table string, err error) {
	db, table, ok := strings.Cut(target, ".")
	if !ok || db == "" || table == "" {
		return "", "", fmt.Errorf("table must be written as db.table, got %s", strconv.QuoteToASCII(short(target)))
	}
	for _, n := range []string{db, table} {
		if !importName.MatchString(n) {
			return "", "", fmt.Errorf("invalid name %s in %s: database and table names are 1–64 letters, digits, _ or $", strconv.QuoteToASCII(short(n)), strconv.QuoteToASCII(short(target)))
		}
	}
	for _, sys := range []string{functions.SystemDatabase, "mysql", "information_schema", "performance_schema", "sys"} {
		if strings.EqualFold(db, sys) {
			return "", "", fmt.Errorf("database %s is reserved", db)
		}
	}
	for _, v := range functions.ViewNames {
		if strings.EqualFold(v, table) {
			return "", "", fmt.Errorf("table name %s is reserved for the dpsql view of the same name", table)
		}
	}
	return db, table, nil
}

func short(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// maxImportError bounds the length of an import error: a field of many
// megabytes must not come back as an error message of many megabytes.
const maxImportError = 1024

func (e *Engine) importCSV(target string, r io.Reader) (int64, error) {
	db, table, err := checkImportTarget(target)
	if err != nil {
		return 0, err
	}
	ctx := e.NewContext("root")
	if !e.SQL.Analyzer.Catalog.HasDatabase(ctx, db) {
		if _, err := e.Exec(ctx, "CREATE DATABASE `"+db+"`"); err != nil {
			return 0, fmt.Errorf("create database %s: %w", db, err)
		}
	}
	g := guard.New(e.Catalog, e.Store, e.Env)
	key := catalog.Key(db, table)
	if _, err := e.Store.TableSchema(db, table); err != nil {
		// issue 13: a new table whose name has a budget account is protected.
		if err := g.ProtectOnCreate(ctx, key); err != nil {
			return 0, err
		}
	}
	opt := store.ImportOptions{Validate: func(row sql.Row) error {
		t, ok := e.Catalog.Table(key)
		if !ok {
			return nil
		}
		return g.ValidateRow(db, table, t, row)
	}}
	n, err := e.Store.ImportCSV(db, table, r, opt)
	if err != nil {
		if msg := err.Error(); len(msg) > maxImportError {
			return n, fmt.Errorf("import into %s: %s… (error cut at %d bytes)", target, strings.ToValidUTF8(msg[:maxImportError], ""), maxImportError)
		}
		return n, fmt.Errorf("import into %s: %w", target, err)
	}
	return n, nil
}

// demoCatalog is testdata/demo_catalog.json: the ASSUMED public bounds and
// label domains of the sample datasets, written down once (not computed
// from the rows at run time).
type demoCatalog map[string]struct {
	Bounds map[string][2]float64 `json:"bounds"`
	Label  *struct {
		Column string   `json:"column"`
		Domain []string `json:"domain"`
	} `json:"label"`
}

// Demo budgets per table.
const (
	DemoEpsilon = 10.0
	DemoDelta   = 1e-5
)

// LoadDemo loads the sample datasets into database demo on first use: each
// dataset split 4:1 into <name> and <name>_test (every fifth row), both
// protected, with the assumed bounds and label domains declared; a
// synthetic shop customers ← orders protected as the privacy unit
// demo.customer (loadDemoShop); a public table new_flowers for DP_PREDICT;
// and an analyst account
// analyst/analyst with SELECT, INSERT, CREATE and EXECUTE on demo.
func (e *Engine) LoadDemo(dir string) error {
	ctx := e.NewContext("root")
	if e.SQL.Analyzer.Catalog.HasDatabase(ctx, "demo") {
		e.Log.Info("demo database already present; not reloading")
		return nil
	}
	raw, err := os.ReadFile(filepath.Join(dir, "demo_catalog.json"))
	if err != nil {
		return fmt.Errorf("read demo catalog: %w", err)
	}
	var dc demoCatalog
	if err := json.Unmarshal(raw, &dc); err != nil {
		return fmt.Errorf("decode demo catalog: %w", err)
	}
	if _, err := e.Exec(ctx, "CREATE DATABASE demo"); err != nil {
		return err
	}
	for _, name := range []string{"breast_cancer", "diabetes", "iris", "wine", "digits"} {
		spec, ok := dc[name]
		if !ok {
			return fmt.Errorf("demo catalog has no entry for %s", name)
		}
		train, test, err := splitCSV(filepath.Join(dir, name+".csv"))
		if err != nil {
			return err
		}
		for _, part := range []struct {
			table string
			data  []byte
		}{{name, train}, {name + "_test", test}} {
			n, err := e.importCSV("demo."+part.table, bytes.NewReader(part.data))
			if err != nil {
				return err
			}
			key := catalog.Key("demo", part.table)
			for col, b := range spec.Bounds {
				if err := e.Catalog.SetBounds(key, col, b[0], b[1]); err != nil {
					return fmt.Errorf("demo bounds %s.%s: %w", key, col, err)
				}
			}
			if spec.Label != nil {
				if err := e.Catalog.SetLabels(key, spec.Label.Column, spec.Label.Domain); err != nil {
					return err
				}
			}
			if err := e.Catalog.SetProtected(key, true); err != nil {
				return err
			}
			if err := e.Budget.Protect(key, DemoEpsilon, DemoDelta, budget.Basic); err != nil {
				return err
			}
			e.Log.WithFields(map[string]any{"table": key, "rows": n}).Info("demo table loaded and protected")
		}
	}
	if err := e.loadDemoShop(ctx); err != nil {
		return err
	}
	for _, q := range []string{
		"CREATE TABLE demo.new_flowers (id INT PRIMARY KEY, sepal_length_cm DOUBLE, sepal_width_cm DOUBLE, petal_length_cm DOUBLE, petal_width_cm DOUBLE)",
		"INSERT INTO demo.new_flowers VALUES (1, 5.0, 3.4, 1.5, 0.2), (2, 6.0, 2.8, 4.5, 1.4), (3, 6.8, 3.1, 5.8, 2.2)",
		"CREATE USER IF NOT EXISTS 'analyst'@'%' IDENTIFIED BY 'analyst'",
		"GRANT SELECT, INSERT, CREATE, EXECUTE ON demo.* TO 'analyst'@'%'",
	} {
		if _, err := e.Exec(ctx, q); err != nil {
			return fmt.Errorf("demo setup %q: %w", q, err)
		}
	}
	return nil
}

// Demo shop: customers ← orders (issue 27), a privacy unit demo.customer
// over both tables. The rows are synthetic and deterministic (no RNG): a
// formula gives every customer 1–5 orders and every 101st one 40.
const (
	demoCustomers  = 2000
	demoHeavyEvery = 101 // customers 7, 108, 209, … (all regions) have demoHeavy orders
	demoHeavy      = 40
)

// loadDemoShop creates demo.customers (id, region) and demo.orders (id,
// customer_id → customers.id, amount in [5, 495]), declares region's domain,
// amount's bounds [0, 500] and the unit demo.customer on customers.id
// (orders inherits it through its foreign key), and protects the unit with
// the demo budget.
func (e *Engine) loadDemoShop(ctx *sql.Context) error {
	regions := []string{"north", "south", "east", "west"}
	var cs, os []string
	o := 0
	for c := 0; c < demoCustomers; c++ {
		cs = append(cs, fmt.Sprintf("(%d,'%s')", c, regions[c%len(regions)]))
		n := 1 + (c*7919)%5
		if c%demoHeavyEvery == 7 {
			n = demoHeavy
		}
		for i := 0; i < n; i++ {
			os = append(os, fmt.Sprintf("(%d,%d,%d)", o, c, 5+(o*7919)%491))
			o++
		}
	}
	stmts := []string{
		"CREATE TABLE demo.customers (id INT PRIMARY KEY, region VARCHAR(8) NOT NULL)",
		"CREATE TABLE demo.orders (id INT PRIMARY KEY, customer_id INT NOT NULL, amount DOUBLE NOT NULL, FOREIGN KEY (customer_id) REFERENCES demo.customers(id))",
		"INSERT INTO demo.customers VALUES " + strings.Join(cs, ","),
	}
	for len(os) > 0 {
		k := min(len(os), 2000)
		stmts = append(stmts, "INSERT INTO demo.orders VALUES "+strings.Join(os[:k], ","))
		os = os[k:]
	}
	stmts = append(stmts,
		"CALL dp_domain('demo.customers', 'region', 'north,south,east,west')",
		"CALL dp_bounds('demo.orders', 'amount', 0, 500)",
		"CALL dp_privacy_unit('demo.customers', 'id', 'customer')",
		fmt.Sprintf("CALL dp_protect('demo.customers', %v, %v)", DemoEpsilon, DemoDelta),
	)
	for _, q := range stmts {
		if _, err := e.Exec(ctx, q); err != nil {
			return fmt.Errorf("demo shop %q: %w", short(q), err)
		}
	}
	e.Log.WithFields(map[string]any{"tables": "demo.customers, demo.orders", "customers": demoCustomers, "orders": o}).Info("demo shop loaded, unit demo.customer protected")
	return nil
}

// splitCSV splits a CSV file 4:1 (every fifth data row to the test part).
func splitCSV(path string) (train, test []byte, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 {
		return nil, nil, fmt.Errorf("read %s: %v", path, err)
	}
	var a, b bytes.Buffer
	wa, wb := csv.NewWriter(&a), csv.NewWriter(&b)
	_ = wa.Write(recs[0])
	_ = wb.Write(recs[0])
	for i, r := range recs[1:] {
		if i%5 == 4 {
			_ = wb.Write(r)
		} else {
			_ = wa.Write(r)
		}
	}
	wa.Flush()
	wb.Flush()
	return a.Bytes(), b.Bytes(), nil
}
