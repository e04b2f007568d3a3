package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/engine"
	"github.com/dpsql/dpsql/server"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "import":
		err = importCSV(os.Args[2:])
	case "-h", "--help", "help":
		usage()
		return
	default:
		fmt.Fprintf(os.Stderr, "dpsql: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dpsql:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  dpsql serve  [--data-dir DIR] [--listen HOST:PORT] [--demo] [--demo-data DIR] [--log-format text|json] [--log-level LEVEL]
               [--max-release-memory SIZE] [--answer-cache-entries N] [--tls-cert FILE --tls-key FILE [--require-secure-transport]]
               [--backend embedded|mysql --backend-dsn 'USER:PW@tcp(HOST:PORT)/']   (or DPSQL_BACKEND_DSN)
  dpsql import --data-dir DIR --table DB.TABLE --csv FILE
`)
}

// logger configures logrus's standard logger (go-mysql-server logs through
// it too, so both follow --log-format) and returns it.
func logger(format, level string) (*logrus.Logger, error) {
	log := logrus.StandardLogger()
	log.SetOutput(os.Stderr)
	switch format {
	case "text":
		log.SetFormatter(&logrus.TextFormatter{FullTimestamp: true})
	case "json":
		log.SetFormatter(&logrus.JSONFormatter{})
	default:
		return nil, fmt.Errorf("--log-format must be text or json, got %q", format)
	}
	lv, err := logrus.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	log.SetLevel(lv)
	return log, nil
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	dataDir := fs.String("data-dir", "dpsql-data", "directory holding the database file")
	listen := fs.String("listen", "127.0.0.1:3306", "address to listen on")
	demo := fs.Bool("demo", false, "on first start, load the sample datasets as protected tables in database demo")
	demoData := fs.String("demo-data", "testdata", "directory with the sample CSVs and demo_catalog.json")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	logLevel := fs.String("log-level", "info", "log level")
	maxMem := fs.String("max-release-memory", "", fmt.Sprintf("memory releases may use, e.g. 8GiB; one release whose public estimate exceeds it is refused before any charge, and releases wait for each other beyond it (default %.0f%% of RAM; 0 = no limit)", server.ReleaseMemoryFraction*100))
	tlsCert := fs.String("tls-cert", "", "PEM certificate (chain) for TLS connections")
	tlsKey := fs.String("tls-key", "", "PEM private key of --tls-cert")
	cacheEntries := fs.Int("answer-cache-entries", catalog.DefaultAnswerCacheEntries, "DP aggregate answers kept in the answer cache (oldest evicted first; an evicted answer makes the next identical query a new, charged release)")
	requireTLS := fs.Bool("require-secure-transport", false, "refuse logins over connections without TLS (needs --tls-cert and --tls-key)")
	backend := fs.String("backend", "embedded", "where tables attached with dp_attach live: embedded (none) or mysql (a MariaDB/MySQL server or Spider head, docs/scale-out.md)")
	backendDSN := fs.String("backend-dsn", "", "go-sql-driver/mysql DSN of the mysql backend, e.g. 'dpsql:pw@tcp(127.0.0.1:3307)/' (default $DPSQL_BACKEND_DSN, which keeps the password out of ps)")
	useWAL := fs.Bool("wal", true, "write-ahead log dpsql.wal beside dpsql.db: one log fdatasync per group commit instead of bbolt's two (docs/sql.md, Durability); false: bbolt's own durable commit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dsn := *backendDSN
	if dsn == "" {
		dsn = os.Getenv("DPSQL_BACKEND_DSN")
	}
	switch *backend {
	case "embedded":
		if dsn != "" && *backendDSN != "" {
			return errors.New("--backend-dsn needs --backend mysql")
		}
		dsn = ""
	case "mysql":
		if dsn == "" {
			return errors.New("--backend mysql needs --backend-dsn or DPSQL_BACKEND_DSN")
		}
	default:
		return fmt.Errorf("--backend must be embedded or mysql, got %q", *backend)
	}
	log, err := logger(*logFormat, *logLevel)
	if err != nil {
		return err
	}
	var mem int64
	if *maxMem != "" {
		if mem, err = server.ParseBytes(*maxMem); err != nil {
			return fmt.Errorf("--max-release-memory: %q is not a size such as 8GiB or 512MiB", *maxMem)
		}
		if mem == 0 {
			mem = -1 // explicit 0: no limit
		}
	}
	var sopt server.Options
	if (*tlsCert == "") != (*tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if *tlsCert != "" {
		if sopt.TLS, err = server.LoadTLS(*tlsCert, *tlsKey); err != nil {
			return err
		}
	}
	sopt.RequireSecureTransport = *requireTLS
	if sopt.RequireSecureTransport && sopt.TLS == nil {
		return errors.New("--require-secure-transport needs --tls-cert and --tls-key")
	}
	gcPercent, memLimit := server.TuneRuntime()
	log.WithFields(logrus.Fields{"gc_percent": gcPercent, "soft_memory_limit": memLimit}).Debug("go runtime (GOGC / GOMEMLIMIT override)")
	e, err := engine.Open(engine.Options{DataDir: *dataDir, RootPassword: os.Getenv("DPSQL_ROOT_PASSWORD"), Log: log, MaxReleaseMemory: mem, AnswerCacheEntries: *cacheEntries, BackendDSN: dsn, DisableWAL: !*useWAL})
	if err != nil {
		return err
	}
	defer e.Close()
	if e.GeneratedRootPassword != "" {
		// Printed once, on stdout, never logged.
		fmt.Printf("dpsql: created account root with generated password: %s\n", e.GeneratedRootPassword)
	}
	if rootPasswordDiffers(e, os.Getenv("DPSQL_ROOT_PASSWORD")) {
		fmt.Fprintf(os.Stderr, rootPasswordWarning, *dataDir)
		log.WithField("data_dir", *dataDir).Warn("DPSQL_ROOT_PASSWORD differs from root's password in the data directory; root keeps its password")
	}
	if *demo {
		// The first start loads and protects every demo table (a few
		// seconds to a minute); later starts find them in place.
		log.Info("loading the demo datasets (database demo) if missing")
		t0 := time.Now()
		if err := e.LoadDemo(*demoData); err != nil {
			return fmt.Errorf("load demo data: %w", err)
		}
		log.WithField("seconds", time.Since(t0).Round(100*time.Millisecond).Seconds()).Info("demo datasets ready")
	}
	srv, err := e.NewServerWithOptions(*listen, sopt)
	if err != nil {
		return err
	}
	log.WithFields(logrus.Fields{"addr": srv.Addr(), "data_dir": *dataDir, "tls": sopt.TLS != nil,
		"require_secure_transport": sopt.RequireSecureTransport, "max_release_memory": e.Env.MaxReleaseMemory}).Info("dpsql listening")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve() }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case s := <-sig:
		log.WithField("signal", s.String()).Info("shutting down")
		if err := srv.Close(); err != nil {
			log.WithError(err).Warn("close server")
		}
		<-errc
		return nil
	case err := <-errc:
		return err
	}
}

func importCSV(args []string) error {
	fs := flag.NewFlagSet("import", flag.ExitOnError)
	dataDir := fs.String("data-dir", "dpsql-data", "directory holding the database file (the server must not be running)")
	table := fs.String("table", "", "target table as db.table (created if missing)")
	csvPath := fs.String("csv", "", "CSV file with a header row")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *table == "" || *csvPath == "" {
		return errors.New("import needs --table and --csv")
	}
	log, _ := logger("text", "info")
	e, err := engine.Open(engine.Options{DataDir: *dataDir, RootPassword: os.Getenv("DPSQL_ROOT_PASSWORD"), Log: log})
	if err != nil {
		return err
	}
	defer e.Close()
	if e.GeneratedRootPassword != "" {
		fmt.Printf("dpsql: created account root with generated password: %s\n", e.GeneratedRootPassword)
		fmt.Fprintf(os.Stderr, "dpsql: DPSQL_ROOT_PASSWORD was not set, so root got the generated password above; a later serve keeps it whatever DPSQL_ROOT_PASSWORD says\n")
	}
	if rootPasswordDiffers(e, os.Getenv("DPSQL_ROOT_PASSWORD")) {
		fmt.Fprintf(os.Stderr, rootPasswordWarning, *dataDir)
	}
	n, err := e.ImportCSVFile(*table, *csvPath)
	if err != nil {
		return err
	}
	fmt.Printf("imported %d rows into %s\n", n, *table)
	return nil
}
