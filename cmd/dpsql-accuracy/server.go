package main

import (
	"context"
	gosql "database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/sirupsen/logrus"
	bolt "go.etcd.io/bbolt"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/engine"
	"github.com/dpsql/dpsql/mechanism"
	dpserver "github.com/dpsql/dpsql/server"
)

const (
	benchDB   = "bench"
	benchUser = "bench"
	benchPW   = "bench-analyst"
	rootPW    = "bench-root"
	// tableEpsilon is the ε total of every call's fresh table budget; it
	// only has to admit the call (ε ≤ 10).
	tableEpsilon = 100
)

// server is an in-process dpsql with its wire-protocol listener on
// loopback; every training call goes over the wire as the analyst would
// send it.
type server struct {
	e    *engine.Engine
	srv  *dpserver.Server
	db   *gosql.DB
	work string
	seq  int
}

func openServer(work string, log logrus.FieldLogger) (*server, error) {
	e, err := engine.Open(engine.Options{DataDir: filepath.Join(work, "engine"), RootPassword: rootPW, Log: log})
	if err != nil {
		return nil, fmt.Errorf("open engine: %w", err)
	}
	ctx := e.NewContext("root")
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS " + benchDB,
		fmt.Sprintf("CREATE USER IF NOT EXISTS '%s'@'%%' IDENTIFIED BY '%s'", benchUser, benchPW),
		fmt.Sprintf("GRANT SELECT, EXECUTE ON %s.* TO '%s'@'%%'", benchDB, benchUser),
	} {
		if _, err := e.Exec(ctx, q); err != nil {
			e.Close()
			return nil, fmt.Errorf("setup %q: %w", q, err)
		}
	}
	srv, err := e.NewServer("127.0.0.1:0")
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("listen: %w", err)
	}
	go func() { _ = srv.Serve() }()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = benchUser, benchPW, "tcp", srv.Addr(), benchDB
	cfg.AllowNativePasswords = true
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		srv.Close()
		e.Close()
		return nil, fmt.Errorf("connector: %w", err)
	}
	db := gosql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	if err := db.Ping(); err != nil {
		srv.Close()
		e.Close()
		return nil, fmt.Errorf("connect over the wire: %w", err)
	}
	return &server{e: e, srv: srv, db: db, work: work}, nil
}

func (s *server) close() {
	s.db.Close()
	s.srv.Close()
	s.e.Close()
}

// ensureTable imports the training split as the protected table
// bench.<set> with the set's declared bounds and label domain (once; later
// runs of the tool reuse it).
func (s *server) ensureTable(ds *dataset, trainCSV string) error {
	key := catalog.Key(benchDB, ds.name)
	if s.e.Store.HasTable(benchDB, ds.name) {
		n, err := s.e.Store.RowCount(benchDB, ds.name)
		if err != nil {
			return fmt.Errorf("row count of %s: %w", key, err)
		}
		if int(n) == ds.n() {
			return nil
		}
		return fmt.Errorf("table %s has %d rows, the set has %d: remove the work directory %s", key, n, ds.n(), s.work)
	}
	if _, err := s.e.ImportCSVFile(key, trainCSV); err != nil {
		return err
	}
	for j, f := range ds.features {
		if err := s.e.Catalog.SetBounds(key, f, ds.lo[j], ds.hi[j]); err != nil {
			return fmt.Errorf("bounds %s.%s: %w", key, f, err)
		}
	}
	if ds.classify {
		if err := s.e.Catalog.SetLabels(key, ds.label, ds.classes); err != nil {
			return fmt.Errorf("labels %s: %w", key, err)
		}
	} else if err := s.e.Catalog.SetBounds(key, ds.label, ds.labelLo, ds.labelHi); err != nil {
		return fmt.Errorf("label bounds %s: %w", key, err)
	}
	return s.e.Catalog.SetProtected(key, true)
}

// freshBudget gives table key a new budget (tableEpsilon, δ_total) in an
// accountant of its own and installs it, so that each call is a first
// default call on a newly protected table: the default δ is derived from
// δ_total exactly as for an owner's table, and thousands of calls do not
// exhaust one budget. It returns the function that removes it again.
func (s *server) freshBudget(key string, deltaTotal float64) (func(), error) {
	s.seq++
	path := filepath.Join(s.work, fmt.Sprintf("budget-%d.db", s.seq))
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, NoSync: true})
	if err != nil {
		return nil, fmt.Errorf("open budget file: %w", err)
	}
	acct, err := budget.Open(db)
	if err == nil {
		err = acct.Protect(key, tableEpsilon, deltaTotal, budget.Basic)
	}
	if err != nil {
		db.Close()
		os.Remove(path)
		return nil, fmt.Errorf("fresh budget: %w", err)
	}
	old := s.e.Env.Budget
	s.e.Env.Budget, s.e.Budget = acct, acct
	return func() {
		s.e.Env.Budget, s.e.Budget = old, old
		db.Close()
		os.Remove(path)
	}, nil
}

// outcome is one training call and its evaluation on the test split.
type outcome struct {
	value        float64 // test accuracy or RMSE
	seconds      float64 // wall time of the DP_TRAIN statement
	modelKind    string  // the trained kind (what auto chose)
	epsCharged   float64
	deltaCharged float64
	params       string
	balanced     float64 // classification: mean per-class recall on the test split
	err          string
	timedOut     bool
}

// train sends SELECT DP_TRAIN('<set>', ε, '<kind>') over the wire (the
// default call: no options) on a fresh table budget with δ_total, fetches
// the released model with DP_MODEL_JSON and scores it on the test split
// with the same Predict as DP_PREDICT.
func (s *server) train(ds *dataset, kind, opts string, eps, deltaTotal float64, timeout time.Duration) (outcome, error) {
	key := catalog.Key(benchDB, ds.name)
	undo, err := s.freshBudget(key, deltaTotal)
	if err != nil {
		return outcome{}, err
	}
	defer undo()
	q := fmt.Sprintf("SELECT DP_TRAIN('%s', %s, '%s')", ds.name, fmtFloat(eps), kind)
	if opts != "" {
		q = fmt.Sprintf("SELECT DP_TRAIN('%s', %s, '%s', '%s')", ds.name, fmtFloat(eps), kind, opts)
	}
	var name string
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	t0 := time.Now()
	err = s.db.QueryRowContext(ctx, q).Scan(&name)
	o := outcome{seconds: time.Since(t0).Seconds(), value: math.NaN()}
	if err != nil && ctx.Err() != nil {
		// The driver closed the connection; the server cancels the
		// query (KILL-like) and the release stays charged. Give it a
		// moment to stop before the budget is swapped back.
		o.err, o.timedOut = fmt.Sprintf("timeout: no answer within %v", timeout), true
		time.Sleep(5 * time.Second)
		return o, nil
	}
	if err != nil {
		// A refusal is a result (e.g. n below a mechanism's minimum).
		o.err = err.Error()
		return o, nil
	}
	defer func() { _ = s.e.Catalog.DropModel(benchDB, name) }()
	var js string
	if err := s.db.QueryRow(fmt.Sprintf("SELECT DP_MODEL_JSON('%s')", name)).Scan(&js); err != nil {
		return o, fmt.Errorf("DP_MODEL_JSON(%s): %w", name, err)
	}
	var rec struct {
		Kind    string          `json:"kind"`
		Params  string          `json:"params"`
		Epsilon float64         `json:"epsilon"`
		Delta   float64         `json:"delta"`
		Model   json.RawMessage `json:"model"`
	}
	if err := json.Unmarshal([]byte(js), &rec); err != nil {
		return o, fmt.Errorf("decode model json: %w", err)
	}
	var m mechanism.Model
	if err := json.Unmarshal(rec.Model, &m); err != nil {
		return o, fmt.Errorf("decode model: %w", err)
	}
	o.modelKind, o.epsCharged, o.deltaCharged, o.params = rec.Kind, rec.Epsilon, rec.Delta, rec.Params
	if o.value, err = score(&m, ds); err != nil {
		return o, err
	}
	if ds.classify {
		o.balanced = balancedScore(&m, ds)
	}
	return o, nil
}

// autoKind asks DP_TRAIN(t, ε, 'auto', 'dry_run=1') which kind the
// default call would train (nothing is read or charged).
func (s *server) autoKind(ds *dataset, kind string, eps float64) (string, error) {
	deltaTotal := tableDelta
	if kind == kindAutoPure {
		deltaTotal = 0
	}
	undo, err := s.freshBudget(catalog.Key(benchDB, ds.name), deltaTotal)
	if err != nil {
		return "", err
	}
	defer undo()
	var js string
	q := fmt.Sprintf("SELECT DP_TRAIN('%s', %s, 'auto', 'dry_run=1')", ds.name, fmtFloat(eps))
	if err := s.db.QueryRow(q).Scan(&js); err != nil {
		return "", fmt.Errorf("%s: %w", q, err)
	}
	var plan struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal([]byte(js), &plan); err != nil {
		return "", fmt.Errorf("decode dry run: %w", err)
	}
	return plan.Kind, nil
}

// score is the test accuracy (classification) or RMSE (regression) of m.
func score(m *mechanism.Model, ds *dataset) (float64, error) {
	var acc float64
	for i, x := range ds.testX {
		p, err := m.Predict(x)
		if err != nil {
			return math.NaN(), fmt.Errorf("predict: %w", err)
		}
		if ds.classify {
			if p.Class == ds.testC[i] {
				acc++
			}
		} else {
			r := p.Value - ds.testY[i]
			acc += r * r
		}
	}
	acc /= float64(len(ds.testX))
	if !ds.classify {
		acc = math.Sqrt(acc)
	}
	return acc, nil
}

// balancedScore is the balanced accuracy (mean recall over the classes
// present in the test split) of m.
func balancedScore(m *mechanism.Model, ds *dataset) float64 {
	hit, tot := map[string]float64{}, map[string]float64{}
	for i, x := range ds.testX {
		p, err := m.Predict(x)
		if err != nil {
			return math.NaN()
		}
		tot[ds.testC[i]]++
		if p.Class == ds.testC[i] {
			hit[ds.testC[i]]++
		}
	}
	var s float64
	for c, n := range tot {
		s += hit[c] / n
	}
	return s / float64(len(tot))
}

func fmtFloat(x float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%g", x), ".0")
}
