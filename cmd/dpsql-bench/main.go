package main

import (
	"database/sql"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/sirupsen/logrus"

	"github.com/dpsql/dpsql/engine"
	"github.com/dpsql/dpsql/noise"
	"github.com/dpsql/dpsql/server"
	"github.com/dpsql/dpsql/store"
)

func main() {
	rows := flag.Int("rows", 1_000_000, "rows of the 10- and 20-column tables")
	svmRows := flag.Int("svm-rows", 200_000, "rows of the SVM table")
	reps := flag.Int("reps", 5, "repetitions of each timed query")
	cases := flag.String("cases", "load,mean,lsq,svm", "comma-separated cases to run (train: DP_TRAIN logreg/lda/gnb vs sklearn and SUM)")
	trainRows := flag.Int("train-rows", 1_000_000, "rows of the 20-column classification table of case train")
	python := flag.String("python", "/usr/bin/python3", "python with scikit-learn for case train (empty: no sklearn reference)")
	trainOpts := flag.String("train-options", "", "options string appended to each DP_TRAIN of case train")
	trainRuns := flag.String("train-runs", "logreg,lda,gnb,sum,sklearn", "queries of case train, in round order (a profile of one kind: -train-runs logreg)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed queries to this file")
	flag.Parse()
	logrus.SetLevel(logrus.WarnLevel)
	dir, err := os.MkdirTemp("", "dpsql-bench")
	check(err)
	defer os.RemoveAll(dir)
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	server.TuneRuntime() // as the server sets it (cmd/dpsql)
	e, err := engine.Open(engine.Options{DataDir: dir, RootPassword: "bench", Log: log})
	check(err)
	defer e.Close()
	srv, err := e.NewServer("127.0.0.1:0")
	check(err)
	go srv.Serve()
	defer srv.Close()
	db := connect(srv.Addr())
	mustExec(db, "CREATE DATABASE bench")
	mustExec(db, "USE bench")
	want := map[string]bool{}
	for _, c := range strings.Split(*cases, ",") {
		want[strings.TrimSpace(c)] = true
	}
	fmt.Printf("# dpsql-bench (%d rows, %d reps, %s)\n\n", *rows, *reps, time.Now().UTC().Format(time.RFC3339))
	fmt.Println("| case | dpsql | reference | ratio (median) |")
	fmt.Println("|---|---|---|---|")

	if want["load"] || want["mean"] {
		t0 := time.Now()
		load(e, "t10", *rows, 10, false)
		el := time.Since(t0)
		fmt.Printf("| bulk load %d × 10 DOUBLE (import, durable) | %.0f rows/s | — | — |\n", *rows, float64(*rows)/el.Seconds())
	}
	if want["mean"] {
		declare(db, "t10", 10, false)
		dp, ref := pair(db, *reps, "SELECT DP_MEAN('t10', 'c1', 1)", "SELECT AVG(c1) FROM t10")
		fmt.Printf("| DP_MEAN vs SELECT AVG(c1), %d rows | %v | %v | %.2f× |\n", *rows, dp, ref, ratio(dp, ref))
	}
	if want["lsq"] {
		load(e, "t20", *rows, 20, true)
		declare(db, "t20", 20, true)
		if *cpuprofile != "" {
			f, err := os.Create(*cpuprofile)
			check(err)
			check(pprof.StartCPUProfile(f))
			defer pprof.StopCPUProfile()
		}
		dp, ref := pair(db, *reps, "SELECT DP_LSQ('t20', 1, 'linear', 'label=y')", "SELECT SUM(c1) FROM t20")
		fmt.Printf("| DP_LSQ linear vs SELECT SUM(c1), %d × 20 | %v | %v | %.2f× |\n", *rows, dp, ref, ratio(dp, ref))
	}
	if want["train"] {
		trainCase(e, db, *trainRows, *reps, *python, *trainOpts, *trainRuns, *cpuprofile)
	}
	if want["svm"] {
		load(e, "s20", *svmRows, 20, false)
		declare(db, "s20", 20, false)
		mustExec(db, "CALL dp_labels('s20', 'label', '0,1')")
		var ts []time.Duration
		for i := 0; i < *reps; i++ {
			t0 := time.Now()
			var name string
			check(db.QueryRow("SELECT DP_SVM_TRAIN('s20', 1, 'rbf', 'dim=256; label=label')").Scan(&name))
			ts = append(ts, time.Since(t0))
		}
		fmt.Printf("| DP_SVM_TRAIN rbf dim=256, %d × 20 | %v | (sklearn: docs/results/svm.md) | — |\n", *svmRows, median(ts))
	}
}

// load imports n synthetic rows with d DOUBLE columns c1..cd (plus y or a
// 0/1 label) through the bulk path.
func load(e *engine.Engine, table string, n, d int, regression bool) {
	pr, pw := io.Pipe()
	go func() {
		var b strings.Builder
		for j := 1; j <= d; j++ {
			fmt.Fprintf(&b, "c%d,", j)
		}
		if regression {
			b.WriteString("y\n")
		} else {
			b.WriteString("label\n")
		}
		pw.Write([]byte(b.String()))
		buf := make([]byte, 0, 1<<16)
		x := make([]float64, d)
		for i := 0; i < n; i++ {
			s := 0.0
			for j := range x {
				x[j] = 2*noise.Uniform() - 1
				s += x[j] * float64(j%3-1)
				buf = strconv.AppendFloat(buf, x[j], 'g', 6, 64)
				buf = append(buf, ',')
			}
			if regression {
				buf = strconv.AppendFloat(buf, math.Max(-5, math.Min(5, s+0.1*noise.Normal())), 'g', 6, 64)
			} else if math.Sin(3*x[0])+x[1]*x[2] > 0 {
				buf = append(buf, '1')
			} else {
				buf = append(buf, '0')
			}
			buf = append(buf, '\n')
			if len(buf) > 1<<15 {
				pw.Write(buf)
				buf = buf[:0]
			}
		}
		pw.Write(buf)
		pw.Close()
	}()
	_, err := e.Store.ImportCSV("bench", table, pr, store.ImportOptions{})
	check(err)
}

func declare(db *sql.DB, table string, d int, regression bool) {
	for j := 1; j <= d; j++ {
		mustExec(db, fmt.Sprintf("CALL dp_bounds('%s', 'c%d', -1, 1)", table, j))
	}
	if regression {
		mustExec(db, fmt.Sprintf("CALL dp_bounds('%s', 'y', -5, 5)", table))
	}
	mustExec(db, fmt.Sprintf("CALL dp_protect('%s', 1000000, 0.5)", table))
}

// pair times dp and ref alternately and returns the medians.
func pair(db *sql.DB, reps int, dp, ref string) (time.Duration, time.Duration) {
	var a, b []time.Duration
	run := func(q string) time.Duration {
		t0 := time.Now()
		var s string
		check(db.QueryRow(q).Scan(&s))
		return time.Since(t0)
	}
	run(ref) // warm the page cache once
	for i := 0; i < reps; i++ {
		a = append(a, run(dp))
		b = append(b, run(ref))
	}
	return median(a), median(b)
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2].Round(time.Millisecond)
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func connect(addr string) *sql.DB {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", "bench", "tcp", addr
	conn, err := mysql.NewConnector(cfg)
	check(err)
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	return db
}

func mustExec(db *sql.DB, q string) {
	if _, err := db.Exec(q); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", q, err)
		os.Exit(1)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "dpsql-bench:", err)
		os.Exit(1)
	}
}
