package main

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
)

// Kinds. auto_pure is DP_TRAIN(t, ε, 'auto') on a table without a δ budget
// (pure ε); every other kind runs on a table with δ_total = tableDelta.
const (
	kindAutoPure = "auto_pure"
	tableDelta   = 1e-5
	// kindAutoBalanced is DP_TRAIN(t, ε, 'auto', 'objective=balanced')
	// (issue 28); classification cells also record the balanced accuracy
	// (metric balanced_accuracy, one more row per run).
	kindAutoBalanced = "auto_balanced"
)

var (
	classKinds = []string{"auto", kindAutoPure, kindAutoBalanced, "lda", "qda", "gnb", "logreg", "svm", "lmgc"}
	regKinds   = []string{"auto", kindAutoPure, "linreg", "lsq"}
	// slowKinds get -slow-runs runs at n ≥ the given n (the page says so):
	// one lmgc call at n = 10⁴ takes minutes on the shared machine.
	slowKinds = map[string]int{"svm": 100000, "lmgc": 10000, "logreg": 100000}
	phases    = []map[string]bool{
		{"auto": true, kindAutoPure: true, kindAutoBalanced: true},
		{"lda": true, "qda": true, "gnb": true, "linreg": true, "lsq": true},
		{"logreg": true, "svm": true},
		{"lmgc": true},
	}
)

var csvHeader = []string{"rev", "set", "family", "n", "d", "k", "kind", "budget_delta", "eps", "run", "metric",
	"value", "seconds", "model_kind", "eps_charged", "delta_charged", "error"}

type options struct {
	repo, data, work, out string
	sets, kinds, eps      []string
	runs, slowRuns        int
	timeout               time.Duration
	train, baselines      bool
	report                bool
	python                string
}

func main() {
	var o options
	var sets, kinds, eps string
	flag.StringVar(&o.repo, "repo", ".", "repository root (testdata/, docs/results/)")
	flag.StringVar(&o.data, "data", "", "shared data directory (default: <repo>/../shared/data)")
	flag.StringVar(&o.work, "work", filepath.Join(os.TempDir(), "dpsql-accuracy"), "work directory (engine data, splits; reused to resume)")
	flag.StringVar(&o.out, "out", "", "results directory (default: <repo>/docs/results)")
	flag.StringVar(&sets, "sets", "all", "comma list of set names, or all / shared / synthetic (see -list)")
	flag.StringVar(&kinds, "kinds", "all", "comma list of kinds (auto, auto_pure, lda, qda, gnb, logreg, svm, lmgc, linreg, lsq)")
	flag.StringVar(&eps, "eps", "0.1,1,10", "comma list of ε")
	flag.IntVar(&o.runs, "runs", 10, "runs per cell")
	flag.IntVar(&o.slowRuns, "slow-runs", 3, "runs per cell for logreg and svm at n ≥ 100000 and lmgc at n ≥ 10000")
	flag.DurationVar(&o.timeout, "call-timeout", 4*time.Minute, "give up a call after this long (the cell and the kind's other ε on that set are recorded as timed out); 0: no limit")
	flag.BoolVar(&o.train, "train", true, "run the private trainings")
	flag.BoolVar(&o.baselines, "baselines", true, "run the non-private scikit-learn baselines")
	flag.BoolVar(&o.report, "report", true, "regenerate accuracy.md and accuracy.png")
	flag.StringVar(&o.python, "python", "/usr/bin/python3", "python with scikit-learn, pandas and matplotlib")
	flag.StringVar(&extDir, "ext", "", "directory of external sets: NAME.csv (header row, label last) declared in DIR/catalog.json (format of testdata/demo_catalog.json); select them as ext:NAME (table and result name ext_NAME)")
	list := flag.Bool("list", false, "list the set names and exit")
	flag.Parse()
	if *list {
		fmt.Println(strings.Join(allSetNames(), "\n"))
		return
	}
	if o.data == "" {
		o.data = filepath.Join(o.repo, "..", "shared", "data")
	}
	if o.out == "" {
		o.out = filepath.Join(o.repo, "docs", "results")
	}
	o.sets = selectSets(sets)
	o.kinds = splitList(kinds)
	o.eps = splitList(eps)
	log := logrus.New()
	log.SetLevel(logrus.InfoLevel)
	// The engine's and mechanisms' own progress lines go to the standard
	// logger; keep only its warnings.
	logrus.SetLevel(logrus.WarnLevel)
	if err := run(o, log); err != nil {
		log.Fatal(err)
	}
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func selectSets(s string) []string {
	var out []string
	for _, p := range splitList(s) {
		switch p {
		case "all":
			out = append(out, allSetNames()...)
		case "shared":
			for _, x := range sharedSets {
				out = append(out, x.name)
			}
		case "synthetic":
			for _, n := range allSetNames() {
				if strings.HasPrefix(n, "syn_") {
					out = append(out, n)
				}
			}
		default:
			out = append(out, p)
		}
	}
	return out
}

// codeDirs are the paths whose content decides what the benchmark
// measures; the tool, docs and tests are not among them.
var codeDirs = []string{"audit", "budget", "catalog", "engine", "functions", "mechanism", "noise", "go.mod", "go.sum"}

// gitRev identifies the code measured: a hash of the committed trees of
// codeDirs ("+dirty" if they have uncommitted changes). Rows of another
// revision are not counted as done, so a re-run after a merge that changes
// the server measures everything again, while commits to the tool or the
// docs do not.
func gitRev(repo string) string {
	args := []string{"-C", repo, "rev-parse"}
	for _, d := range codeDirs {
		args = append(args, "HEAD:"+d)
	}
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return "unknown"
	}
	rev := fmt.Sprintf("%x", sha256.Sum256(out))[:10]
	st, err := exec.Command("git", append([]string{"-C", repo, "status", "--porcelain", "--untracked-files=no", "--"}, codeDirs...)...).Output()
	if err == nil && len(st) > 0 {
		rev += "+dirty"
	}
	return rev
}

func run(o options, log *logrus.Logger) error {
	splits := filepath.Join(o.work, "splits")
	if err := os.MkdirAll(splits, 0o755); err != nil {
		return fmt.Errorf("work dir: %w", err)
	}
	rev := gitRev(o.repo)
	resPath := filepath.Join(o.out, "accuracy.csv")
	done, err := readDone(resPath, rev)
	if err != nil {
		return err
	}
	var srv *server
	if o.train {
		quiet := logrus.New()
		quiet.SetLevel(logrus.WarnLevel)
		if srv, err = openServer(o.work, quiet); err != nil {
			return err
		}
		defer srv.close()
	}
	w, f, err := openAppend(resPath)
	if err != nil {
		return err
	}
	defer f.Close()
	var metas []map[string]any
	var loaded []*dataset
	for _, name := range o.sets {
		ds, err := loadSet(name, o.data, o.repo)
		if err != nil {
			return err
		}
		metas = append(metas, ds.meta())
		train, _, err := ds.writeSplit(splits)
		if err != nil {
			return err
		}
		mj, _ := json.Marshal(ds.meta())
		if err := os.WriteFile(filepath.Join(splits, name+".json"), mj, 0o644); err != nil {
			return fmt.Errorf("write meta: %w", err)
		}
		if o.train {
			if err := srv.ensureTable(ds, train); err != nil {
				return err
			}
			// The rows live in the server and the split files now; keep
			// only the test split in memory.
			ds.trainX, ds.trainC, ds.trainY = nil, nil, nil
			loaded = append(loaded, ds)
		}
	}
	if err := writeSets(filepath.Join(o.out, "accuracy_sets.csv"), metas); err != nil {
		return err
	}
	// Phases: the default auto call everywhere first (the goals), then the
	// cheap one-pass kinds, then the iterative ones, lmgc last.
	for _, phase := range phases {
		for _, ds := range loaded {
			kinds := regKinds
			if ds.classify {
				kinds = classKinds
			}
			for _, kind := range kinds {
				if !phase[kind] || !wanted(o.kinds, kind) {
					continue
				}
				timedOut := ""
				for _, es := range o.eps {
					eps, err := strconv.ParseFloat(es, 64)
					if err != nil {
						return fmt.Errorf("bad ε %q", es)
					}
					runs := o.runs
					if ds.rows >= 10000 {
						k := kind
						if kind == "auto" || kind == kindAutoPure || kind == kindAutoBalanced {
							// auto counts as the kind it would train
							// (asked with dry_run, which spends nothing).
							if k, err = srv.autoKind(ds, kind, eps); err != nil {
								return err
							}
						}
						if from, ok := slowKinds[k]; ok && ds.rows >= from {
							runs = min(runs, o.slowRuns)
						}
					}
					if timedOut, err = runCell(srv, w, ds, kind, eps, runs, done, rev, o.timeout, timedOut, log); err != nil {
						return err
					}
				}
			}
		}
	}
	if o.baselines {
		if err := python(o, log, filepath.Join(o.repo, "docs", "results", "accuracy_baselines.py"), splits, filepath.Join(o.out, "accuracy_baselines.csv")); err != nil {
			return err
		}
	}
	if o.report {
		if err := python(o, log, filepath.Join(o.repo, "docs", "results", "accuracy_report.py"), o.out); err != nil {
			return err
		}
	}
	return nil
}

func wanted(list []string, kind string) bool {
	for _, k := range list {
		if k == "all" || k == kind {
			return true
		}
	}
	return false
}

func cellKey(set, kind string, eps float64) string {
	return set + "|" + kind + "|" + strconv.FormatFloat(eps, 'g', -1, 64)
}

// runCell runs the missing runs of one (set, kind, ε) cell. timedOut, if
// not empty, says that a call of this kind on this set already exceeded the
// timeout: the cell is recorded as skipped instead. It returns the timeout
// message if this cell timed out.
func runCell(srv *server, w *csv.Writer, ds *dataset, kind string, eps float64, runs int, done map[string]int, rev string,
	timeout time.Duration, timedOut string, log *logrus.Logger) (string, error) {
	key := cellKey(ds.name, kind, eps)
	sqlKind, budgetDelta := kind, tableDelta
	if kind == kindAutoPure {
		sqlKind, budgetDelta = "auto", 0
	}
	opts := ""
	if kind == kindAutoBalanced {
		sqlKind, opts = "auto", "objective=balanced"
	}
	metric := "rmse"
	if ds.classify {
		metric = "accuracy"
	}
	for r := done[key]; r < runs; r++ {
		var out outcome
		if timedOut != "" {
			out = outcome{value: math.NaN(), err: timedOut}
		} else {
			var err error
			if out, err = srv.train(ds, sqlKind, opts, eps, budgetDelta, timeout); err != nil {
				return "", fmt.Errorf("%s %s ε=%g run %d: %w", ds.name, kind, eps, r, err)
			}
		}
		rec := []string{rev, ds.name, ds.family, strconv.Itoa(ds.rows), strconv.Itoa(ds.dim()), strconv.Itoa(len(ds.classes)),
			kind, fmtFloat(budgetDelta), fmtFloat(eps), strconv.Itoa(r), metric, strconv.FormatFloat(out.value, 'g', 6, 64),
			strconv.FormatFloat(out.seconds, 'g', 4, 64), out.modelKind, fmtFloat(out.epsCharged), fmtFloat(out.deltaCharged), oneLine(out.err)}
		if err := w.Write(rec); err != nil {
			return "", fmt.Errorf("write result: %w", err)
		}
		if ds.classify && out.err == "" {
			bal := append([]string(nil), rec...)
			bal[10], bal[11] = "balanced_accuracy", strconv.FormatFloat(out.balanced, 'g', 6, 64)
			if err := w.Write(bal); err != nil {
				return "", fmt.Errorf("write result: %w", err)
			}
		}
		w.Flush()
		if err := w.Error(); err != nil {
			return "", fmt.Errorf("write result: %w", err)
		}
		done[key] = r + 1
		l := log.WithFields(logrus.Fields{"set": ds.name, "kind": kind, "eps": eps, "run": r, metric: out.value, "s": fmt.Sprintf("%.2f", out.seconds)})
		if out.modelKind != "" && out.modelKind != sqlKind {
			l = l.WithField("trained", out.modelKind)
		}
		if out.err == "" {
			l.Info("trained")
			continue
		}
		l.WithField("error", out.err).Warn("no model")
		// A refusal depends on public inputs only, and a timeout would
		// repeat: one call records the cell.
		for rr := r + 1; rr < runs; rr++ {
			rec[9] = strconv.Itoa(rr)
			_ = w.Write(rec)
		}
		w.Flush()
		done[key] = runs
		if out.timedOut {
			return fmt.Sprintf("skipped: a call of this kind on this set (ε=%g) gave no answer within %v", eps, timeout), w.Error()
		}
		return timedOut, w.Error()
	}
	return timedOut, nil
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// readDone counts the finished runs of each cell at revision rev. Rows of
// other revisions stay in the file: the page shows, per cell, the newest
// revision measured and marks cells not measured at the newest one.
func readDone(path, rev string) (map[string]int, error) {
	done := map[string]int{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return done, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	for i, r := range recs {
		if i == 0 || r[0] != rev {
			continue
		}
		if r[10] == "balanced_accuracy" {
			continue // the second row of a classification run
		}
		eps, _ := strconv.ParseFloat(r[8], 64)
		done[cellKey(r[1], r[6], eps)]++
	}
	return done, nil
}

func writeAll(path string, recs [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	w := csv.NewWriter(f)
	_ = w.WriteAll(recs)
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func openAppend(path string) (*csv.Writer, *os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	w := csv.NewWriter(f)
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		_ = w.Write(csvHeader)
		w.Flush()
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, nil, err
	}
	return w, f, nil
}

// writeSets merges the sets' public descriptions into accuracy_sets.csv.
func writeSets(path string, metas []map[string]any) error {
	rows := map[string][]string{}
	var order []string
	if f, err := os.Open(path); err == nil {
		recs, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err == nil && len(recs) > 1 {
			for _, r := range recs[1:] {
				rows[r[0]] = r
				order = append(order, r[0])
			}
		}
	}
	for _, m := range metas {
		name := m["name"].(string)
		if _, ok := rows[name]; !ok {
			order = append(order, name)
		}
		rows[name] = []string{name, m["family"].(string), fmt.Sprint(m["n"]), fmt.Sprint(m["d"]), fmt.Sprint(m["k"]),
			fmt.Sprint(m["n_test"]), m["declared"].(string)}
	}
	recs := [][]string{{"set", "family", "n", "d", "k", "n_test", "declared"}}
	for _, n := range order {
		recs = append(recs, rows[n])
	}
	return writeAll(path, recs)
}

func python(o options, log *logrus.Logger, args ...string) error {
	cmd := exec.Command(o.python, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	log.WithField("cmd", strings.Join(cmd.Args, " ")).Info("running")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	return nil
}
