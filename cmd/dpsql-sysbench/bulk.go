package main

import (
	"bufio"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Bulk loading over the wire (-bulk ROWS): a CSV of ROWS × 20 DOUBLE
// columns (deterministic pseudo-random values, public benchmark data) is
// loaded into each server by multi-row INSERT statements and by LOAD DATA
// LOCAL INFILE, one connection, the way a client tool loads a file.

const bulkCols = 20

// writeBulkCSV writes the benchmark file (no header) and returns its path.
func writeBulkCSV(dir string, rows int) string {
	path := filepath.Join(dir, "bulk.csv")
	f, err := os.Create(path)
	check(err)
	w := bufio.NewWriterSize(f, 1<<20)
	r := splitmix64(1)
	buf := make([]byte, 0, 512)
	for i := 0; i < rows; i++ {
		buf = strconv.AppendInt(buf[:0], int64(i+1), 10)
		for c := 0; c < bulkCols; c++ {
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, r.float64()*2000-1000, 'g', 10, 64)
		}
		buf = append(buf, '\n')
		_, err = w.Write(buf)
		check(err)
	}
	check(w.Flush())
	check(f.Close())
	return path
}

func bulkTableDDL(table string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (id BIGINT PRIMARY KEY", table)
	for c := 1; c <= bulkCols; c++ {
		fmt.Fprintf(&b, ", c%d DOUBLE", c)
	}
	b.WriteString(")")
	return b.String()
}

type bulkResult struct {
	insert, load       float64 // rows/s
	insertCPU, loadCPU float64 // rows per CPU second of the server process
	// CPU seconds of this process during each path: dpsql's server and the
	// client for dpsql, the client alone for MariaDB.
	insertSelf, loadSelf float64
	errs                 string
}

// runBulk loads the file into t twice (multi-row INSERT of batch rows per
// statement, then LOAD DATA LOCAL INFILE into a second table) and checks the
// row counts.
func runBulk(t target, path string, rows, batch int, paths string) bulkResult {
	var res bulkResult
	db, err := open(t, "")
	check(err)
	defer func() { db.Close() }()
	db.SetMaxOpenConns(1)
	for _, q := range []string{"DROP DATABASE IF EXISTS bulk", "CREATE DATABASE bulk", bulkTableDDL("bulk.ins"), bulkTableDDL("bulk.ld")} {
		_, err := db.Exec(q)
		check(err)
	}
	// Load with bulk as the current database, as a client tool does
	// (mariadb DB, mysqlimport, a restore's USE).
	db.Close()
	db, err = open(t, "bulk")
	check(err)
	db.SetMaxOpenConns(1)
	if !strings.Contains(paths, "insert") {
		// Skipped path: fill the table so the row count check holds.
		res.insert, res.insertCPU = 0, 0
		if err := loadFile(db, path, "bulk.ins"); err != nil {
			res.errs = fmt.Sprintf("%s LOAD DATA (fill): %v", t.name, err)
		}
		return loadPath(db, t, path, rows, paths, res)
	}
	// Multi-row INSERT.
	f, err := os.Open(path)
	check(err)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var stmt strings.Builder
	n := 0
	start, cpu0, self0 := time.Now(), cpuSeconds(t), cpuSeconds(target{})
	flush := func() error {
		if n == 0 {
			return nil
		}
		_, err := db.Exec(stmt.String())
		stmt.Reset()
		n = 0
		return err
	}
	for sc.Scan() {
		if n == 0 {
			stmt.Grow(batch * (len(sc.Bytes()) + 8))
			stmt.WriteString("INSERT INTO bulk.ins VALUES ")
		} else {
			stmt.WriteByte(',')
		}
		stmt.WriteByte('(')
		stmt.Write(sc.Bytes())
		stmt.WriteByte(')')
		n++
		if n == batch {
			if err := flush(); err != nil {
				res.errs = fmt.Sprintf("%s INSERT: %v", t.name, err)
				break
			}
		}
	}
	if res.errs == "" {
		if err := flush(); err != nil {
			res.errs = fmt.Sprintf("%s INSERT: %v", t.name, err)
		}
	}
	f.Close()
	res.insert = float64(rows) / time.Since(start).Seconds()
	res.insertCPU = float64(rows) / (cpuSeconds(t) - cpu0)
	res.insertSelf = cpuSeconds(target{}) - self0
	return loadPath(db, t, path, rows, paths, res)
}

// loadFile runs LOAD DATA LOCAL INFILE of path into table.
func loadFile(db *sql.DB, path, table string) error {
	mysql.RegisterReaderHandler("bulk", func() io.Reader {
		f, err := os.Open(path)
		check(err)
		return bufio.NewReaderSize(f, 1<<20)
	})
	defer mysql.DeregisterReaderHandler("bulk")
	_, err := db.Exec("LOAD DATA LOCAL INFILE 'Reader::bulk' INTO TABLE " + table + " FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\n'")
	return err
}

// loadPath times LOAD DATA LOCAL INFILE (unless paths leaves it out), then
// checks the row counts and drops the database.
func loadPath(db *sql.DB, t target, path string, rows int, paths string, res bulkResult) bulkResult {
	if strings.Contains(paths, "load") {
		start, cpu0, self0 := time.Now(), cpuSeconds(t), cpuSeconds(target{})
		if err := loadFile(db, path, "bulk.ld"); err != nil {
			res.errs += fmt.Sprintf(" %s LOAD DATA: %v", t.name, err)
		}
		res.load = float64(rows) / time.Since(start).Seconds()
		res.loadCPU = float64(rows) / (cpuSeconds(t) - cpu0)
		res.loadSelf = cpuSeconds(target{}) - self0
	} else if err := loadFile(db, path, "bulk.ld"); err != nil {
		res.errs += fmt.Sprintf(" %s LOAD DATA (fill): %v", t.name, err)
	}
	for _, tb := range []string{"bulk.ins", "bulk.ld"} {
		var c int
		if err := db.QueryRow("SELECT COUNT(*) FROM " + tb).Scan(&c); err != nil || c != rows {
			res.errs += fmt.Sprintf(" %s %s: %d rows (%v)", t.name, tb, c, err)
		}
	}
	_, _ = db.Exec("DROP DATABASE bulk")
	return res
}

func bulkMain(dpsql, maria target, tmp string, rows, batch, runs int, paths string) {
	path := writeBulkCSV(tmp, rows)
	st, err := os.Stat(path)
	check(err)
	fmt.Printf("# bulk load over the wire: %d rows × %d DOUBLE (+ BIGINT key), %.0f MB CSV, INSERT of %d rows per statement, %d runs, MariaDB %s (%s; load average at start: %s)\n\n",
		rows, bulkCols, float64(st.Size())/1e6, batch, runs, mariaVersion(), time.Now().UTC().Format(time.RFC3339), loadAvg())
	fmt.Println("| path | dpsql rows/s | MariaDB rows/s | ratio | dpsql runs | MariaDB runs | dpsql rows/CPU-s | dpsql server rows/CPU-s | MariaDB rows/CPU-s | ratio per CPU | errors |")
	fmt.Println("|---|---:|---:|---:|---|---|---:|---:|---:|---:|---|")
	var ins, ld, insC, ldC, insS, ldS [2][]float64
	var errs []string
	for r := 0; r < runs; r++ {
		for i, t := range []target{dpsql, maria} {
			res := runBulk(t, path, rows, batch, paths)
			ins[i] = append(ins[i], res.insert)
			ld[i] = append(ld[i], res.load)
			insC[i] = append(insC[i], res.insertCPU)
			ldC[i] = append(ldC[i], res.loadCPU)
			insS[i] = append(insS[i], res.insertSelf)
			ldS[i] = append(ldS[i], res.loadSelf)
			if res.errs != "" {
				errs = append(errs, strings.TrimSpace(res.errs))
			}
		}
	}
	for _, p := range []struct {
		name string
		v, c [2][]float64
		self [2][]float64
	}{{"multi-row INSERT", ins, insC, insS}, {"LOAD DATA LOCAL INFILE", ld, ldC, ldS}} {
		d, m := median(p.v[0]), median(p.v[1])
		dc, mc := median(p.c[0]), median(p.c[1])
		// dpsql runs in this process beside the client: its server CPU is
		// estimated as this process's CPU during the dpsql run minus the
		// client's CPU during the MariaDB run of the same round.
		var srv []float64
		for r := range p.self[0] {
			srv = append(srv, float64(rows)/max(p.self[0][r]-p.self[1][r], 1e-9))
		}
		ds := median(srv)
		fmt.Printf("| %s | %.0f | %.0f | %.2f | %s | %s | %.0f | %.0f | %.0f | %.2f | %s |\n", p.name, d, m, d/max(m, 1e-9), joinF(p.v[0]), joinF(p.v[1]),
			dc, ds, mc, ds/max(mc, 1e-9), strings.Join(errs, "; "))
	}
	fmt.Printf("\nload average at the end: %s\n", loadAvg())
}

// splitmix64 is a tiny deterministic generator for the benchmark values.
type splitmix64 uint64

func (x *splitmix64) float64() float64 {
	*x += 0x9e3779b97f4a7c15
	z := uint64(*x)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}
