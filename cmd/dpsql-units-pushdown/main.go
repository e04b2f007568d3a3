// Command dpsql-units-pushdown measures the person-level pushdown (issue 27
// item 6, docs/results/units.md): person-level releases over a shop held
// in MariaDB (customers(id, region) ← orders(id, customer_id, amount)),
// computed by the compiler (dpquery/rel) with the per-(person, group)
// aggregation pushed to MariaDB, against the same plan streaming the rows
// (the backend seen only through ScanValues), and the same non-private
// query run by MariaDB alone. It creates the tables in database -db of
// the server at -dsn (from MariaDB's Sequence engine), reports medians of
// -reps runs, and drops the database at the end unless -keep.
//
//	go run ./cmd/dpsql-units-pushdown -dsn 'user:pw@tcp(127.0.0.1:3306)/' -customers 100000 -orders 1000000
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/sirupsen/logrus"
	bolt "go.etcd.io/bbolt"

	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/dpquery/rel"
	"github.com/dpsql/dpsql/mechanism/bound"
	"github.com/dpsql/dpsql/mysqlstore"
)

// meta is the shop's public catalog; columns from the backend.
type meta struct {
	entries map[string]catalog.Table
	b       *mysqlstore.Backend
}

func (m meta) Table(key string) (catalog.Table, bool)     { e, ok := m.entries[key]; return e, ok }
func (m meta) Columns(db, table string) ([]string, error) { return rel.ColumnNames(m.b, db, table) }

// streamOnly hides the backend's pushdown: the compiler streams rows.
type streamOnly struct{ b *mysqlstore.Backend }

func (s streamOnly) ScanValues(db, table string, cols []string, fn func(row []any) error) (int64, error) {
	return s.b.ScanValues(db, table, cols, fn)
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func main() {
	dsn := flag.String("dsn", "", "MariaDB DSN (go-sql-driver syntax), e.g. user:pw@tcp(127.0.0.1:3306)/")
	dbName := flag.String("db", "upbench", "database to create the shop in")
	customers := flag.Int("customers", 100000, "customers")
	orders := flag.Int("orders", 1000000, "orders")
	reps := flag.Int("reps", 5, "runs per variant (medians reported)")
	keep := flag.Bool("keep", false, "keep the database")
	flag.Parse()
	if *dsn == "" {
		fmt.Fprintln(os.Stderr, "-dsn is required")
		os.Exit(2)
	}
	if err := run(*dsn, *dbName, *customers, *orders, *reps, *keep); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(dsn, db string, customers, orders, reps int, keep bool) error {
	ctx := context.Background()
	conn, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer conn.Close()
	q := func(s string) error {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
		return nil
	}
	for _, s := range []string{
		"DROP DATABASE IF EXISTS " + db, "CREATE DATABASE " + db,
		"CREATE TABLE " + db + ".customers (id INT PRIMARY KEY, region VARCHAR(8)) ENGINE=InnoDB",
		"CREATE TABLE " + db + ".orders (id INT PRIMARY KEY, customer_id INT, amount DOUBLE, KEY (customer_id, amount)) ENGINE=InnoDB",
		fmt.Sprintf("INSERT INTO %s.customers SELECT seq, CONCAT('r', LPAD(seq %% 30, 2, '0')) FROM %s.seq_0_to_%d", db, db, customers-1),
		// Customer of order i: a multiplicative hash, so customers have
		// varying numbers of orders; amounts in [0.5, 500).
		fmt.Sprintf("INSERT INTO %s.orders SELECT seq, (seq * 7919 + seq DIV 7) %% %d, (seq * 37) %% 500 + 0.5 FROM %s.seq_0_to_%d", db, customers, db, orders-1),
	} {
		if err := q(s); err != nil {
			return err
		}
	}
	if !keep {
		defer func() { _ = q("DROP DATABASE IF EXISTS " + db) }()
	}
	dir, err := os.MkdirTemp("", "dpsql-units-pushdown-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bdb, err := bolt.Open(filepath.Join(dir, "meta.db"), 0o600, &bolt.Options{Timeout: time.Second, NoSync: true})
	if err != nil {
		return err
	}
	defer bdb.Close()
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	b, err := mysqlstore.Open(dsn, bdb, log)
	if err != nil {
		return err
	}
	defer b.Close()
	for _, t := range []string{"customers", "orders"} {
		if _, err := b.Attach(ctx, db, t); err != nil {
			return err
		}
	}
	var labels []string
	for r := 0; r < 30; r++ {
		labels = append(labels, fmt.Sprintf("r%02d", r))
	}
	unit := db + ".customer"
	m := meta{b: b, entries: map[string]catalog.Table{
		db + ".customers": {Name: db + ".customers", Protected: true, Labels: map[string][]string{"region": labels},
			Unit: &catalog.Member{Unit: unit, Column: "id", Explicit: true}},
		db + ".orders": {Name: db + ".orders", Protected: true, Bounds: map[string]catalog.Bound{"amount": {Lo: 0, Hi: 500}},
			Unit: &catalog.Member{Unit: unit, Column: "customer_id", Explicit: true}},
	}}
	amount := &rel.Col{Table: "o", Column: "amount"}
	queries := []struct {
		name, plain string
		q           rel.Query
	}{
		{"orders ⨝ customers GROUP BY region: COUNT, SUM (C = 10)",
			"SELECT c.region, COUNT(*), SUM(o.amount) FROM " + db + ".orders o JOIN " + db + ".customers c ON o.customer_id = c.id GROUP BY c.region",
			rel.Query{From: rel.Join{Left: rel.Scan{DB: db, Table: "orders", Alias: "o"}, Right: rel.Scan{DB: db, Table: "customers", Alias: "c"},
				LeftCol: rel.Col{Table: "o", Column: "customer_id"}, RightCol: rel.Col{Table: "c", Column: "id"}},
				GroupBy: []rel.Col{{Table: "c", Column: "region"}},
				Aggs:    []rel.Agg{{Kind: bound.Count}, {Kind: bound.Sum, Col: amount}},
				Options: rel.Options{Epsilon: 1, MaxRows: 10}}},
		{"orders: COUNT(*), AVG(amount)",
			"SELECT COUNT(*), AVG(amount) FROM " + db + ".orders",
			rel.Query{From: rel.Scan{DB: db, Table: "orders", Alias: "o"},
				Aggs:    []rel.Agg{{Kind: bound.Count}, {Kind: bound.Avg, Col: amount}},
				Options: rel.Options{Epsilon: 1}}},
	}
	fmt.Printf("MariaDB shop: %d customers, %d orders; medians of %d runs\n\n", customers, orders, reps)
	fmt.Println("| query | pushed down | streamed | streamed / pushed | MariaDB alone (non-private) | pushed / MariaDB | bytes moved pushed / streamed |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, qq := range queries {
		p, err := rel.Compile(qq.q, m)
		if err != nil {
			return err
		}
		var tp, ts, tm []time.Duration
		var bp, bs int64
		for i := 0; i < reps; i++ {
			before := b.BytesMoved()
			t0 := time.Now()
			if _, err := p.Run(b, nil); err != nil {
				return fmt.Errorf("pushed: %w", err)
			}
			tp = append(tp, time.Since(t0))
			bp = b.BytesMoved() - before
			before = b.BytesMoved()
			t0 = time.Now()
			if _, err := p.Run(streamOnly{b}, nil); err != nil {
				return fmt.Errorf("streamed: %w", err)
			}
			ts = append(ts, time.Since(t0))
			bs = b.BytesMoved() - before
			t0 = time.Now()
			rows, err := conn.QueryContext(ctx, qq.plain)
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			rows.Close()
			tm = append(tm, time.Since(t0))
		}
		mp, ms, mm := median(tp), median(ts), median(tm)
		fmt.Printf("| %s | %.2f s | %.2f s | %.1f× | %.2f s | %.1f× | %.1f MB / %.1f MB |\n", qq.name,
			mp.Seconds(), ms.Seconds(), ms.Seconds()/mp.Seconds(), mm.Seconds(), mp.Seconds()/mm.Seconds(), float64(bp)/1e6, float64(bs)/1e6)
	}
	return nil
}
