package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// A grouped DP join at the person level against the same join without
// privacy, both over the wire on one dpsql server (issue 27):
//
//	go test ./engine -run '^$' -bench 'BenchmarkShopJoin' -benchtime 3x
//
// 10⁵ customers in 10 regions, 10⁶ orders (1–19 per customer, 10 on
// average). UNITS_BENCH_CUSTOMERS overrides the customer count. Results:
// docs/results/units.md.

var shopBench struct {
	sync.Once
	root *sql.DB
	ana  *sql.Conn
	err  error
}

func shopBenchSetup(b *testing.B) (*sql.DB, *sql.Conn) {
	shopBench.Do(func() {
		customers := 100_000
		if v := os.Getenv("UNITS_BENCH_CUSTOMERS"); v != "" {
			fmt.Sscan(v, &customers)
		}
		dir, err := os.MkdirTemp("", "units-bench")
		if err != nil {
			shopBench.err = err
			return
		}
		keep := &testing.T{} // shared by both benchmarks, not tied to one b's cleanup
		ts := startServer(keep, dir)
		if _, err := ts.connect("root", rootPW, "").Exec("CREATE DATABASE shopb"); err != nil {
			shopBench.err = err
			return
		}
		root := connectAddr(keep, ts.srv.Addr(), "root", rootPW, "shopb")
		var cs, ords strings.Builder
		o := 0
		for c := 0; c < customers; c++ {
			fmt.Fprintf(&cs, "%d,r%d\n", c, c%10)
			// Deterministic pseudo-random 1–19 orders per customer.
			h := uint64(c)*0x9E3779B97F4A7C15 + 7
			for k := uint64(0); k < 1+h>>40%19; k++ {
				fmt.Fprintf(&ords, "%d,%d,%d.%02d\n", o, c, (h>>8+k)%100, k)
				o++
			}
		}
		mysql.RegisterReaderHandler("shopb_c", func() io.Reader { return strings.NewReader(cs.String()) })
		mysql.RegisterReaderHandler("shopb_o", func() io.Reader { return strings.NewReader(ords.String()) })
		for _, q := range []string{
			"CREATE TABLE customers (id INT PRIMARY KEY, region VARCHAR(16))",
			"CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT, amount DOUBLE, FOREIGN KEY (customer_id) REFERENCES customers(id))",
			"LOAD DATA LOCAL INFILE 'Reader::shopb_c' INTO TABLE customers FIELDS TERMINATED BY ','",
			"LOAD DATA LOCAL INFILE 'Reader::shopb_o' INTO TABLE orders FIELDS TERMINATED BY ','",
			"CALL dp_bounds('orders', 'amount', 0, 100)",
			"CALL dp_domain('customers', 'region', 'r0,r1,r2,r3,r4,r5,r6,r7,r8,r9')",
			"CALL dp_privacy_unit('customers', 'id', 'customer')",
			"CALL dp_protect('customers', 1000000, 0)",
			"CREATE USER IF NOT EXISTS 'ana'@'%' IDENTIFIED BY 'ana-pw'",
			"GRANT SELECT ON shopb.* TO 'ana'@'%'",
		} {
			if _, err := root.Exec(q); err != nil {
				shopBench.err = fmt.Errorf("%s: %w", short(q), err)
				return
			}
		}
		var n int
		if err := root.QueryRow("SELECT COUNT(*) FROM orders").Scan(&n); err != nil || n != o {
			shopBench.err = fmt.Errorf("orders loaded: %d of %d (%v)", n, o, err)
			return
		}
		ana, err := connectAddr(keep, ts.srv.Addr(), "ana", "ana-pw", "shopb").Conn(context.Background())
		if err == nil {
			_, err = ana.ExecContext(context.Background(), "SET SESSION dp_epsilon = 1")
		}
		shopBench.root, shopBench.ana, shopBench.err = root, ana, err
	})
	if shopBench.err != nil {
		b.Fatal(shopBench.err)
	}
	return shopBench.root, shopBench.ana
}

// shopJoin differs per iteration in a literal that selects every row, so
// that the DP side is never answered from its cache.
const shopJoin = "SELECT c.region, COUNT(*), SUM(o.amount) FROM orders o JOIN customers c ON o.customer_id = c.id WHERE o.amount > -%d GROUP BY c.region"

// shopJoinSeq numbers the queries across every run of the benchmarks (-count).
var shopJoinSeq atomic.Int64

func benchShopJoin(b *testing.B, q querier) {
	for i := 0; i < b.N; i++ {
		rows, err := q.QueryContext(context.Background(), fmt.Sprintf(shopJoin, shopJoinSeq.Add(1)))
		if err != nil {
			b.Fatal(err)
		}
		groups := 0
		for rows.Next() {
			groups++
		}
		if err := rows.Err(); err != nil {
			b.Fatal(err)
		}
		rows.Close()
		if groups != 10 {
			b.Fatalf("%d groups, want 10", groups)
		}
	}
}

func BenchmarkShopJoinDP(b *testing.B) {
	_, ana := shopBenchSetup(b)
	b.ResetTimer()
	benchShopJoin(b, ana)
}

func BenchmarkShopJoinPlain(b *testing.B) {
	root, _ := shopBenchSetup(b)
	b.ResetTimer()
	benchShopJoin(b, root)
}
