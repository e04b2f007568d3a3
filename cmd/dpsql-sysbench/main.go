package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/sirupsen/logrus"

	"github.com/dpsql/dpsql/engine"
	"github.com/dpsql/dpsql/server"
)

type target struct {
	name, host string
	port       int
	user, pw   string
	pid        int // server process (0: this process, where dpsql runs)
}

type result struct {
	tps, qps float64
	perCPU   float64 // transactions per CPU second of the server process
	ignored  int
	errs     string
}

func main() {
	dur := flag.Int("time", 20, "seconds per run")
	size := flag.Int("table-size", 10000, "rows of sbtest1")
	threadList := flag.String("threads", "1,8", "thread counts")
	runs := flag.Int("runs", 3, "runs per test and thread count (medians are reported)")
	bulk := flag.Int("bulk", 0, "instead of sysbench, load this many rows × 20 DOUBLE over the wire (multi-row INSERT and LOAD DATA LOCAL INFILE)")
	bulkPaths := flag.String("bulk-paths", "insert,load", "with -bulk, the paths to time (insert, load); the others only fill their table")
	bulkBatch := flag.Int("bulk-batch", 1000, "rows per INSERT statement with -bulk")
	tests := flag.String("tests", "oltp_point_select,oltp_read_write,oltp_insert", "sysbench tests")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of dpsql (in-process) to this file")
	noWAL := flag.Bool("nowal", false, "open dpsql without its write-ahead log (bbolt's own durable commit), for comparisons")
	mutexProfile := flag.String("mutexprofile", "", "write a mutex contention profile of dpsql to this file")
	flag.Parse()
	logrus.SetLevel(logrus.WarnLevel)

	tmp, err := os.MkdirTemp("", "dpsql-sysbench")
	check(err)
	defer os.RemoveAll(tmp)

	// dpsql
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	server.TuneRuntime() // as the server sets it (cmd/dpsql)
	e, err := engine.Open(engine.Options{DataDir: filepath.Join(tmp, "dpsql"), RootPassword: "bench", Log: log, DisableWAL: *noWAL})
	check(err)
	defer e.Close()
	srv, err := e.NewServer("127.0.0.1:0")
	check(err)
	go srv.Serve()
	defer srv.Close()
	_, dport, _ := net.SplitHostPort(srv.Addr())
	dp, _ := strconv.Atoi(dport)
	dpsql := target{"dpsql", "127.0.0.1", dp, "root", "bench", 0}

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}

	if *mutexProfile != "" {
		runtime.SetMutexProfileFraction(5)
		runtime.SetBlockProfileRate(10000)
		defer func() {
			for _, k := range []string{"mutex", "block"} {
				f, err := os.Create(*mutexProfile + "." + k)
				check(err)
				check(pprof.Lookup(k).WriteTo(f, 0))
				f.Close()
			}
		}()
	}

	// MariaDB
	maria, stop, err := startMariaDB(filepath.Join(tmp, "mariadb"))
	check(err)
	defer stop()

	if *bulk > 0 {
		bulkMain(dpsql, maria, tmp, *bulk, *bulkBatch, *runs, *bulkPaths)
		return
	}

	var threads []int
	for _, s := range strings.Split(*threadList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		check(err)
		threads = append(threads, n)
	}
	fmt.Printf("# sysbench: dpsql vs MariaDB %s (%s, table-size %d, %d s per run, median of %d runs; load average at start: %s)\n\n",
		mariaVersion(), time.Now().UTC().Format(time.RFC3339), *size, *dur, *runs, loadAvg())
	fmt.Println("| test | threads | dpsql TPS | MariaDB TPS | ratio | dpsql runs | MariaDB runs | dpsql txn/CPU-s | MariaDB txn/CPU-s | ratio per CPU | dpsql ignored errors (1213 retries) | MariaDB ignored errors | errors |")
	fmt.Println("|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---|")
	for _, test := range strings.Split(*tests, ",") {
		for _, n := range threads {
			// The two servers alternate, run by run, so that both see
			// the same load from the rest of the machine.
			var tps, per [2][]float64
			var ignored [2]int
			var errs []string
			for r := 0; r < *runs; r++ {
				for i, t := range []target{dpsql, maria} {
					res := runSysbench(t, test, n, *size, *dur)
					tps[i] = append(tps[i], res.tps)
					per[i] = append(per[i], res.perCPU)
					ignored[i] += res.ignored
					if res.errs != "" {
						errs = append(errs, res.errs)
					}
				}
			}
			md, mm := median(tps[0]), median(tps[1])
			pd, pm := median(per[0]), median(per[1])
			fmt.Printf("| %s | %d | %.1f | %.1f | %.0f %% | %s | %s | %.0f | %.0f | %.0f %% | %d | %d | %s |\n", test, n, md, mm,
				100*md/max(mm, 1e-9), joinF(tps[0]), joinF(tps[1]), pd, pm, 100*pd/max(pm, 1e-9), ignored[0], ignored[1], strings.Join(errs, "; "))
		}
	}
	fmt.Printf("\nload average at the end: %s\n", loadAvg())
	// h/lock (issue 13): dpsql's row lock activity over all runs.
	lc := e.Store.LockCounters()
	fmt.Printf("dpsql row locks over all runs: %d waits, %d deadlocks, %d wait timeouts, %d statement restarts\n", lc.Waits, lc.Deadlocks, lc.Timeouts, lc.Restarts)
}

// cpuSeconds is the user+system CPU time used so far by t's server
// process: the machine is shared, so work per CPU second compares the two
// servers independently of how much CPU each got.
func cpuSeconds(t target) float64 {
	if t.pid == 0 {
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
			return 0
		}
		return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", t.pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which ends with ")"): utime and
	// stime are the 12th and 13th, in clock ticks (100 per second).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (u + st) / 100
}

func median(x []float64) float64 {
	s := append([]float64{}, x...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func joinF(x []float64) string {
	parts := make([]string, len(x))
	for i, v := range x {
		parts[i] = strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strings.Join(parts, ", ")
}

// loadAvg is the 1, 5 and 15 minute load averages (other processes share
// the CPUs).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func mariaVersion() string {
	out, _ := exec.Command("mariadbd", "--version").Output()
	f := strings.Fields(string(out))
	if len(f) >= 3 {
		return f[2]
	}
	return "?"
}

// startMariaDB initialises and starts a private server on a free loopback
// port; root has no password and may connect over TCP.
func startMariaDB(dir string) (target, func(), error) {
	check(os.MkdirAll(dir, 0o755))
	init := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+dir, "--user=root",
		"--auth-root-authentication-method=normal", "--skip-test-db")
	if out, err := init.CombinedOutput(); err != nil {
		return target{}, nil, fmt.Errorf("mariadb-install-db: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return target{}, nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("mariadbd", "--no-defaults", "--datadir="+dir, "--user=root",
		"--socket="+filepath.Join(dir, "mysqld.sock"), "--pid-file="+filepath.Join(dir, "mysqld.pid"),
		"--bind-address=127.0.0.1", fmt.Sprintf("--port=%d", port), "--max-connections=200",
		"--log-error="+filepath.Join(dir, "error.log"))
	if err := cmd.Start(); err != nil {
		return target{}, nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
	}
	t := target{"mariadb", "127.0.0.1", port, "root", "", cmd.Process.Pid}
	deadline := time.Now().Add(60 * time.Second)
	for {
		db, err := open(t, "")
		if err == nil {
			err = db.Ping()
			db.Close()
		}
		if err == nil {
			return t, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return target{}, nil, fmt.Errorf("MariaDB did not start: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func open(t target, db string) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = t.user, t.pw, "tcp", fmt.Sprintf("%s:%d", t.host, t.port), db
	cfg.AllowNativePasswords = true
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

var (
	reTxns    = regexp.MustCompile(`transactions:\s+(\d+)`)
	reTPS     = regexp.MustCompile(`transactions:\s+\d+\s+\(([\d.]+) per sec`)
	reQPS     = regexp.MustCompile(`queries:\s+\d+\s+\(([\d.]+) per sec`)
	reIgnored = regexp.MustCompile(`ignored errors:\s+(\d+)`)
)

// runSysbench prepares a fresh sbtest database, runs the test and cleans up.
func runSysbench(t target, test string, threads, size, dur int) result {
	db, err := open(t, "")
	check(err)
	_, _ = db.Exec("DROP DATABASE IF EXISTS sbtest")
	_, err = db.Exec("CREATE DATABASE sbtest")
	check(err)
	db.Close()
	args := []string{test, "--db-driver=mysql", "--mysql-host=" + t.host, fmt.Sprintf("--mysql-port=%d", t.port),
		"--mysql-user=" + t.user, "--mysql-password=" + t.pw, "--mysql-db=sbtest", "--tables=1",
		fmt.Sprintf("--table-size=%d", size)}
	if out, err := sysbench(append(args, "prepare"), 0); err != nil {
		return result{errs: fmt.Sprintf("%s prepare failed: %v %s", t.name, err, lastLine(out))}
	}
	cpu0 := cpuSeconds(t)
	out, err := sysbench(append(args, fmt.Sprintf("--threads=%d", threads), fmt.Sprintf("--time=%d", dur), "run"), dur)
	cpu := cpuSeconds(t) - cpu0
	var r result
	if m := reTxns.FindSubmatch(out); m != nil && cpu > 0 {
		n, _ := strconv.ParseFloat(string(m[1]), 64)
		r.perCPU = n / cpu
	}
	if m := reTPS.FindSubmatch(out); m != nil {
		r.tps, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	if m := reQPS.FindSubmatch(out); m != nil {
		r.qps, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	if m := reIgnored.FindSubmatch(out); m != nil {
		r.ignored, _ = strconv.Atoi(string(m[1]))
	}
	if err != nil || bytes.Contains(out, []byte("FATAL")) {
		r.errs = fmt.Sprintf("%s: %v %s", t.name, err, firstFatal(out))
	}
	_, _ = sysbench(append(args, "cleanup"), 0)
	return r
}

func sysbench(args []string, dur int) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(dur+600)*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "sysbench", args...).CombinedOutput()
}

func firstFatal(out []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if strings.Contains(sc.Text(), "FATAL") {
			return sc.Text()
		}
	}
	return ""
}

func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

func check(err error) {
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			fmt.Fprintln(os.Stderr, string(ee.Stderr))
		}
		fmt.Fprintln(os.Stderr, "dpsql-sysbench:", err)
		os.Exit(1)
	}
}
