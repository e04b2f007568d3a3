package main

import (
	"bufio"
	"database/sql"
	_ "embed"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dpsql/dpsql/engine"
	"github.com/dpsql/dpsql/internal/bigmem"
	"github.com/dpsql/dpsql/noise"
	"github.com/dpsql/dpsql/store"
)

//go:embed sklearn_fit.py
var sklearnFit string

// trainCase times DP_TRAIN logreg, lda and gnb on n × 20 against
// scikit-learn's LogisticRegression fit on the same rows (a Python process
// started once, fed the same CSV) and against SELECT SUM(c1), …, SUM(c20),
// in interleaved rounds: one run of each per round, so that load from other
// jobs hits them alike. It prints per-query medians and the median of the
// per-round ratios (issue 28 item 5).
func trainCase(e *engine.Engine, db *sql.DB, n, reps int, python, opts, runs, cpuprofile string) {
	const d = 20
	dir, err := os.MkdirTemp("", "dpsql-bench-train")
	check(err)
	defer os.RemoveAll(dir)
	csvPath := filepath.Join(dir, "c20.csv")
	t0 := time.Now()
	loadLogistic(e, "c20", csvPath, n, d)
	fmt.Printf("| bulk load %d × %d DOUBLE + label | %.1f s | — | — |\n", n, d, time.Since(t0).Seconds())
	for j := 1; j <= d; j++ {
		mustExec(db, fmt.Sprintf("CALL dp_bounds('c20', 'c%d', -1, 1)", j))
	}
	mustExec(db, "CALL dp_labels('c20', 'label', '0,1')")
	mustExec(db, "CALL dp_protect('c20', 1000000, 0.5)")

	want := map[string]bool{}
	for _, r := range strings.Split(runs, ",") {
		want[strings.TrimSpace(r)] = true
	}
	if !want["sklearn"] {
		python = ""
	}
	var sk *sklearnProc
	if python != "" {
		sk, err = startSklearn(python, csvPath)
		check(err)
		defer sk.close()
	}
	o := "delta=1e-6"
	if opts != "" {
		o += "; " + opts
	}
	sums := make([]string, d)
	for j := range sums {
		sums[j] = fmt.Sprintf("SUM(c%d)", j+1)
	}
	type query struct {
		name string
		run  func() time.Duration
	}
	timeQuery := func(q string) func() time.Duration {
		return func() time.Duration {
			t0 := time.Now()
			rows, err := db.Query(q)
			check(err)
			cols, err := rows.Columns()
			check(err)
			vals := make([]any, len(cols))
			for i := range vals {
				vals[i] = new(sql.RawBytes)
			}
			for rows.Next() {
				check(rows.Scan(vals...))
			}
			check(rows.Err())
			check(rows.Close())
			return time.Since(t0)
		}
	}
	qs := []query{
		{"logreg", timeQuery(fmt.Sprintf("SELECT DP_TRAIN('c20', 1, 'logreg', '%s')", o))},
		{"lda", timeQuery(fmt.Sprintf("SELECT DP_TRAIN('c20', 1, 'lda', '%s')", o))},
		{"gnb", timeQuery(fmt.Sprintf("SELECT DP_TRAIN('c20', 1, 'gnb', '%s')", o))},
		{"sum", timeQuery("SELECT " + strings.Join(sums, ", ") + " FROM c20")},
	}
	if sk != nil {
		qs = append(qs, query{"sklearn", sk.fit})
	}
	kept := qs[:0]
	for _, q := range qs {
		if want[q.name] {
			kept = append(kept, q)
		}
	}
	qs = kept
	if len(qs) == 0 {
		check(fmt.Errorf("-train-runs %q names no query of case train", runs))
	}
	qs[len(qs)-1].run() // warm-up (page cache, Python's BLAS)
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	times := map[string][]time.Duration{}
	for r := 0; r < reps; r++ {
		var line []string
		for _, q := range qs {
			cpu0, flt0 := bigmem.Usage()
			el := q.run()
			cpu1, flt1 := bigmem.Usage()
			times[q.name] = append(times[q.name], el)
			// CPU seconds and minor page faults of this process (sklearn's
			// are its own process's: not counted).
			line = append(line, fmt.Sprintf("%s %.2fs (cpu %.2fs, %d minflt)", q.name, el.Seconds(), (cpu1-cpu0).Seconds(), flt1-flt0))
		}
		fmt.Fprintf(os.Stderr, "round %d: %s\n", r+1, strings.Join(line, ", "))
	}
	roundRatio := func(a, b string) float64 {
		var rs []float64
		for i := range times[a] {
			rs = append(rs, ratio(times[a][i], times[b][i]))
		}
		return medianFloat(rs)
	}
	row := func(what, a, b string) {
		if len(times[a]) == 0 || len(times[b]) == 0 {
			return
		}
		fmt.Printf("| %s | %v | %v | %.2f× (per-round median %.2f×) |\n", what, median(times[a]), median(times[b]),
			ratio(median(times[a]), median(times[b])), roundRatio(a, b))
	}
	if sk != nil {
		row(fmt.Sprintf("DP_TRAIN logreg vs sklearn LogisticRegression().fit, %d × %d", n, d), "logreg", "sklearn")
	}
	row(fmt.Sprintf("DP_TRAIN logreg vs SELECT SUM(c1..c%d), %d × %d", d, n, d), "logreg", "sum")
	row(fmt.Sprintf("DP_TRAIN lda vs SELECT SUM(c1..c%d), %d × %d", d, n, d), "lda", "sum")
	row(fmt.Sprintf("DP_TRAIN gnb vs SELECT SUM(c1..c%d), %d × %d", d, n, d), "gnb", "sum")
	if sk != nil {
		fmt.Printf("\nsklearn: %s\n", sk.last)
	}
}

// loadLogistic imports n rows of d DOUBLE features uniform on [−1, 1] and a
// 0/1 label drawn from a logistic model, and writes the same rows to a CSV
// file for the reference.
func loadLogistic(e *engine.Engine, table, csvPath string, n, d int) {
	f, err := os.Create(csvPath)
	check(err)
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	pr, pw := io.Pipe()
	out := io.MultiWriter(pw, w)
	go func() {
		var b strings.Builder
		for j := 1; j <= d; j++ {
			fmt.Fprintf(&b, "c%d,", j)
		}
		b.WriteString("label\n")
		out.Write([]byte(b.String()))
		buf := make([]byte, 0, 1<<16)
		for i := 0; i < n; i++ {
			s := 0.0
			for j := 0; j < d; j++ {
				x := 2*noise.Uniform() - 1
				s += x * float64(j%5-2) * 0.5
				buf = strconv.AppendFloat(buf, x, 'g', 6, 64)
				buf = append(buf, ',')
			}
			if noise.Uniform() < 1/(1+math.Exp(-s)) {
				buf = append(buf, '1')
			} else {
				buf = append(buf, '0')
			}
			buf = append(buf, '\n')
			if len(buf) > 1<<15 {
				out.Write(buf)
				buf = buf[:0]
			}
		}
		out.Write(buf)
		pw.Close()
	}()
	_, err = e.Store.ImportCSV("bench", table, pr, store.ImportOptions{})
	check(err)
	check(w.Flush())
}

// sklearnProc is the Python reference process.
type sklearnProc struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	last string
}

func startSklearn(python, csvPath string) (*sklearnProc, error) {
	cmd := exec.Command(python, "-c", sklearnFit, csvPath)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", python, err)
	}
	p := &sklearnProc{cmd: cmd, in: in, out: bufio.NewScanner(outp)}
	if !p.out.Scan() || !strings.HasPrefix(p.out.Text(), "ready") {
		return nil, fmt.Errorf("sklearn reference did not start: %q", p.out.Text())
	}
	fmt.Fprintf(os.Stderr, "sklearn reference: %s\n", p.out.Text())
	return p, nil
}

// fit times one fit inside Python (the process's own clock: no pipe or
// interpreter start-up is counted).
func (p *sklearnProc) fit() time.Duration {
	_, err := io.WriteString(p.in, "fit\n")
	check(err)
	if !p.out.Scan() {
		check(fmt.Errorf("sklearn reference exited"))
	}
	p.last = p.out.Text()
	sec, err := strconv.ParseFloat(strings.Fields(p.last)[0], 64)
	check(err)
	return time.Duration(sec * float64(time.Second))
}

func (p *sklearnProc) close() {
	p.in.Close()
	p.cmd.Wait()
}

func medianFloat(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
