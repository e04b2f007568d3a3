package main

import (
	"database/sql"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/sirupsen/logrus"

	"github.com/dpsql/dpsql/engine"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/mechanism/linreg"
	"github.com/dpsql/dpsql/server"
	"github.com/dpsql/dpsql/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scalebench:", err)
		os.Exit(1)
	}
}

type bench struct {
	head   *sql.DB
	shards []*sql.DB
	dpsql  *sql.DB
	e      *engine.Engine
	reps   int
	warmup bool
	pids   []string
	only   []string
	// interleave: measurements are queued and run round-robin (one run
	// of each per round), so that a changing machine load hits them alike.
	interleave bool
	queue      []queued
}

type queued struct {
	what string
	fn   func() error
}

func open(addr, user, pw, db string) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, pw, "tcp", addr, db
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	p := sql.OpenDB(c)
	return p, p.Ping()
}

func run() error {
	dsn := flag.String("dsn", "", "DSN of the MariaDB/Spider head (dpsql's backend account)")
	shardList := flag.String("shards", "", "comma-separated host:port of the shards (account spider/spider), for their byte counters")
	table := flag.String("table", "dp.points", "backend table (id, x1..x20, y; values in [-1, 1])")
	d := flag.Int("d", 20, "number of features x1..xd")
	reps := flag.Int("reps", 3, "runs per measurement (median)")
	embedded := flag.Bool("embedded", false, "also import the rows into the embedded store and time it")
	lsq := flag.Bool("lsq", false, "also time DP_LSQ linear: the default call and method=output (pushed down), and on the embedded store")
	only := flag.String("only", "", "comma-separated substrings: time only the measurements whose name contains one of them")
	exact := flag.Bool("exact", false, "also time the exact DECIMAL statement (the audit reference; ≈ 30× slower)")
	warmup := flag.Bool("warmup", true, "run each measurement once before the timed runs")
	mean := flag.Bool("mean", true, "also time DP_MEAN and its statement")
	interleave := flag.Bool("interleave", false, "run the measurements round-robin (one run of each per round) instead of one after the other; ratios then survive a changing load")
	pids := flag.String("pids", "", "comma-separated pids of the backend's mariadbd processes (head and shards): their CPU time per run is reported")
	flag.Parse()
	cfg, err := mysql.ParseDSN(*dsn)
	if err != nil {
		return fmt.Errorf("--dsn: %w", err)
	}
	b := &bench{reps: *reps, warmup: *warmup, interleave: *interleave}
	if *only != "" {
		b.only = strings.Split(*only, ",")
	}
	for _, p := range strings.Split(*pids, ",") {
		if p != "" {
			b.pids = append(b.pids, p)
		}
	}
	if b.head, err = open(cfg.Addr, cfg.User, cfg.Passwd, ""); err != nil {
		return err
	}
	for _, s := range strings.Split(*shardList, ",") {
		if s == "" {
			continue
		}
		db, err := open(s, "spider", "spider", "")
		if err != nil {
			return fmt.Errorf("shard %s: %w", s, err)
		}
		b.shards = append(b.shards, db)
	}
	dir, err := os.MkdirTemp("", "scalebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	logrus.SetLevel(logrus.WarnLevel)
	server.TuneRuntime() // as the server sets it (cmd/dpsql)
	if b.e, err = engine.Open(engine.Options{DataDir: dir, RootPassword: "bench", Log: log, BackendDSN: *dsn}); err != nil {
		return err
	}
	defer b.e.Close()
	srv, err := b.e.NewServer("127.0.0.1:0")
	if err != nil {
		return err
	}
	go srv.Serve()
	defer srv.Close()
	if b.dpsql, err = open(srv.Addr(), "root", "bench", ""); err != nil {
		return err
	}
	db, name, _ := strings.Cut(*table, ".")
	feats := make([]string, *d)
	for j := range feats {
		feats[j] = fmt.Sprintf("x%d", j+1)
	}
	setup := func(t string) error {
		for _, c := range append(append([]string(nil), feats...), "y") {
			if _, err := b.dpsql.Exec(fmt.Sprintf("CALL dp_bounds('%s', '%s', -1, 1)", t, c)); err != nil {
				return err
			}
		}
		_, err := b.dpsql.Exec(fmt.Sprintf("CALL dp_protect('%s', 1e5, 0.9)", t))
		return err
	}
	if _, err := b.dpsql.Exec(fmt.Sprintf("CALL dp_attach('%s')", *table)); err != nil {
		return err
	}
	if err := setup(*table); err != nil {
		return err
	}
	var n int64
	if err := b.head.QueryRow("SELECT COUNT(*) FROM " + *table).Scan(&n); err != nil {
		return err
	}
	fmt.Printf("table %s: n = %d, d = %d, shards = %d\n\n", *table, n, *d, len(b.shards))
	fmt.Printf("load average at start: %s\n\n", loadavg())
	fmt.Println("| what | median s | backend CPU s | dpsql↔head bytes | head↔shards bytes |")
	fmt.Println("|---|---:|---:|---:|---:|")

	// The exact statement dpsql sends for DP_TRAIN linreg.
	lc := linreg.Config{Epsilon: 1, Delta: 1e-6, N: int(n), Features: feats, Lo: fill(*d, -1), Hi: fill(*d, 1), Label: "y", LabelLo: -1, LabelHi: 1,
		Bounds: linreg.BoundsPublic} // [reg] the pushed-down public map
	tr, err := linreg.Plan(lc)
	if err != nil {
		return err
	}
	mul, add, inv, icept, lnull, mid, half := tr.Map()
	lm := functions.LinearMap{Features: feats, Mul: mul, Add: add, Inv: inv, Intercept: icept,
		Label: "y", LabelLo: -1, LabelHi: 1, Mid: mid, Half: half, LabelNull: lnull}
	q, ok := b.e.Backend.LinearStatsQuery(db, name, lm, false)
	qExact, ok2 := b.e.Backend.LinearStatsQuery(db, name, lm, true)
	qOne, ok3 := b.e.Backend.LinearStatsOneStatementQuery(db, name, lm)
	if !ok || !ok2 || !ok3 {
		return fmt.Errorf("no pushdown query for %s", *table)
	}
	var naive strings.Builder
	naive.WriteString("SELECT COUNT(*)")
	cols := append(append([]string(nil), feats...), "y")
	for j := 0; j < *d; j++ {
		for k := j; k < len(cols); k++ {
			fmt.Fprintf(&naive, ", SUM(%s*%s)", cols[j], cols[k])
		}
		fmt.Fprintf(&naive, ", SUM(%s)", cols[j])
	}
	naive.WriteString(" FROM " + *table)

	b.measure("raw aggregate on MariaDB: naive unclipped DOUBLE SUM(xi*xj)", func() error { return drain(b.head, naive.String()) })
	b.measure(fmt.Sprintf("raw aggregate on MariaDB: the %d statement(s) dpsql sends (in-box split, DOUBLE sums)", len(q)), func() error { return drainAll(b.head, q) })
	b.measure("raw aggregate on MariaDB: the one clipped statement (before the in-box split)", func() error { return drain(b.head, qOne) })
	if *exact {
		b.measure("raw aggregate on MariaDB: the exact statement (clipped, DECIMAL sums)", func() error { return drainAll(b.head, qExact) })
	}
	b.measure("dpsql DP_TRAIN linreg (pushed down), through the wire", func() error {
		return drain(b.dpsql, fmt.Sprintf("SELECT DP_TRAIN('%s', 1, 'linreg', 'label=y; delta=1e-6')", *table))
	})
	meanQ := fmt.Sprintf("SELECT COUNT(*), SUM(CAST(LEAST(GREATEST(COALESCE(x1, 0e0), -1e0), 1e0) - -1e0 AS DECIMAL(65,30))) FROM %s", *table)
	if *mean {
		b.measure("raw aggregate on MariaDB: DP_MEAN's statement", func() error { return drain(b.head, meanQ) })
		b.measure("dpsql DP_MEAN (pushed down)", func() error {
			return drain(b.dpsql, fmt.Sprintf("SELECT DP_MEAN('%s', 'x1', 1)", *table))
		})
	}
	if *lsq {
		// The default call (δ > 0: centred objective perturbation at this
		// n·ε/F²): DP_MEAN's statement on y, then the statistics statement
		// lsq.PlanPush picks (the exact one when the any-order allowance
		// would cost > 2 % noise); method=output: the fast statement.
		b.measure("dpsql DP_LSQ linear default call (pushed down)", func() error {
			return drain(b.dpsql, fmt.Sprintf("SELECT DP_LSQ('%s', 1, 'linear', 'label=y; delta=1e-6')", *table))
		})
		b.measure("dpsql DP_LSQ linear method=output (pushed down)", func() error {
			return drain(b.dpsql, fmt.Sprintf("SELECT DP_LSQ('%s', 1, 'linear', 'label=y; delta=1e-6; method=output')", *table))
		})
	}
	if *embedded {
		start := time.Now()
		if err := b.importEmbedded(db, name, cols); err != nil {
			return err
		}
		fmt.Printf("| (import of the rows into the embedded store: %.1f s) | | | | |\n", time.Since(start).Seconds())
		if err := setup("emb." + name); err != nil {
			return err
		}
		b.measure("embedded store: DP_TRAIN linreg", func() error {
			return drain(b.dpsql, fmt.Sprintf("SELECT DP_TRAIN('emb.%s', 1, 'linreg', 'label=y; delta=1e-6')", name))
		})
		b.measure("embedded store: DP_MEAN", func() error {
			return drain(b.dpsql, fmt.Sprintf("SELECT DP_MEAN('emb.%s', 'x1', 1)", name))
		})
		if *lsq {
			b.measure("embedded store: DP_LSQ linear", func() error {
				return drain(b.dpsql, fmt.Sprintf("SELECT DP_LSQ('emb.%s', 1, 'linear', 'label=y; delta=1e-6')", name))
			})
		}
	}
	b.flush()
	fmt.Printf("\nload average at the end: %s\n", loadavg())
	return nil
}

func fill(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// drainAll runs the statements one after the other (not in one snapshot:
// the cost is the same).
func drainAll(db *sql.DB, qs []string) error {
	for _, q := range qs {
		if err := drain(db, q); err != nil {
			return err
		}
	}
	return nil
}

func drain(db *sql.DB, q string) error {
	rows, err := db.Query(q)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (b *bench) shardBytes() int64 {
	var total int64
	for _, s := range b.shards {
		var name string
		var v int64
		if err := s.QueryRow("SHOW GLOBAL STATUS LIKE 'Bytes_sent'").Scan(&name, &v); err == nil {
			total += v
		}
		if err := s.QueryRow("SHOW GLOBAL STATUS LIKE 'Bytes_received'").Scan(&name, &v); err == nil {
			total += v
		}
	}
	return total
}

// measure runs fn once to warm up (unless --warmup=false), then reps
// times, and prints the median.
func (b *bench) measure(what string, fn func() error) {
	if len(b.only) > 0 {
		keep := false
		for _, o := range b.only {
			keep = keep || strings.Contains(what, o)
		}
		if !keep {
			return
		}
	}
	if b.interleave {
		b.queue = append(b.queue, queued{what, fn})
		return
	}
	if b.warmup {
		if err := fn(); err != nil {
			fmt.Printf("| %s | error: %v | | | |\n", what, err)
			return
		}
	}
	var times, cpus []float64
	var moved, shard int64
	for i := 0; i < b.reps; i++ {
		m0, s0, c0 := b.e.Backend.BytesMoved(), b.shardBytes(), b.cpu()
		start := time.Now()
		if err := fn(); err != nil {
			fmt.Printf("| %s | error: %v | | | |\n", what, err)
			return
		}
		times = append(times, time.Since(start).Seconds())
		cpus = append(cpus, b.cpu()-c0)
		moved, shard = b.e.Backend.BytesMoved()-m0, b.shardBytes()-s0
	}
	sort.Float64s(times)
	sort.Float64s(cpus)
	fmt.Printf("| %s | %.3f | %.2f | %d | %d |\n", what, times[len(times)/2], cpus[len(cpus)/2], moved, shard)
}

// flush runs the queued measurements round-robin (--interleave): a
// warm-up round, then reps rounds; it prints the medians.
func (b *bench) flush() {
	if len(b.queue) == 0 {
		return
	}
	failed := make([]error, len(b.queue))
	if b.warmup {
		for i, q := range b.queue {
			failed[i] = q.fn()
		}
	}
	times, cpus := make([][]float64, len(b.queue)), make([][]float64, len(b.queue))
	moved, shard := make([]int64, len(b.queue)), make([]int64, len(b.queue))
	for r := 0; r < b.reps; r++ {
		for i, q := range b.queue {
			if failed[i] != nil {
				continue
			}
			m0, s0, c0 := b.e.Backend.BytesMoved(), b.shardBytes(), b.cpu()
			start := time.Now()
			if failed[i] = q.fn(); failed[i] != nil {
				continue
			}
			times[i] = append(times[i], time.Since(start).Seconds())
			cpus[i] = append(cpus[i], b.cpu()-c0)
			moved[i], shard[i] = b.e.Backend.BytesMoved()-m0, b.shardBytes()-s0
		}
	}
	for i, q := range b.queue {
		if failed[i] != nil {
			fmt.Printf("| %s | error: %v | | | |\n", q.what, failed[i])
			continue
		}
		sort.Float64s(times[i])
		sort.Float64s(cpus[i])
		fmt.Printf("| %s | %.3f | %.2f | %d | %d |\n", q.what, times[i][len(times[i])/2], cpus[i][len(cpus[i])/2], moved[i], shard[i])
	}
	b.queue = nil
}

// cpu returns the user + system CPU seconds of the --pids processes
// (/proc/<pid>/stat fields 14 and 15, in clock ticks of 1/100 s).
func (b *bench) cpu() float64 {
	var total float64
	for _, p := range b.pids {
		raw, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil {
			continue
		}
		s := string(raw)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			s = s[i+2:]
		}
		f := strings.Fields(s) // from field 3 (state) on
		if len(f) > 12 {
			u, _ := strconv.ParseFloat(f[11], 64)
			k, _ := strconv.ParseFloat(f[12], 64)
			total += (u + k) / 100
		}
	}
	return total
}

func loadavg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(raw))[:3], " ")
}

// importEmbedded copies the backend's rows into emb.<name> of the embedded
// store (CSV through a pipe into the owner's bulk import).
func (b *bench) importEmbedded(db, name string, cols []string) error {
	if _, err := b.dpsql.Exec("CREATE DATABASE IF NOT EXISTS emb"); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() {
		w := csv.NewWriter(pw)
		all := append([]string{"id"}, cols...)
		_ = w.Write(all)
		rec := make([]string, len(all))
		_, err := b.e.Backend.ScanFloats(db, name, all, func(row []float64) error {
			for i, v := range row {
				rec[i] = strconv.FormatFloat(v, 'g', -1, 64)
				if math.IsNaN(v) {
					rec[i] = "" // NULL
				}
			}
			return w.Write(rec)
		})
		w.Flush()
		pw.CloseWithError(err)
	}()
	_, err := b.e.Store.ImportCSV("emb", name, pr, store.ImportOptions{})
	return err
}
