package store

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	bolt "go.etcd.io/bbolt"
)

// Benchmarks (run with: go test ./store/ -run '^$' -bench . -benchtime 1x):
// a durable import of 1M rows × 10 DOUBLE columns, the DP functions' direct
// scan of that table, and the engine's SELECT AVG over it.

const benchRows = 1_000_000

// genCSV streams benchRows rows of 10 floats c1..c10, deterministic.
func genCSV(n int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 1<<20)
		w.WriteString("c1,c2,c3,c4,c5,c6,c7,c8,c9,c10\n")
		var buf []byte
		x := uint64(88172645463325252)
		for i := 0; i < n; i++ {
			buf = buf[:0]
			for j := 0; j < 10; j++ {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				if j > 0 {
					buf = append(buf, ',')
				}
				buf = strconv.AppendFloat(buf, float64(x%2000000)/1000-1000, 'f', -1, 64)
			}
			buf = append(buf, '\n')
			w.Write(buf)
		}
		w.Flush()
		pw.Close()
	}()
	return pr
}

func openBenchStore(b *testing.B, dir string) (*bolt.DB, *Store) {
	db, err := bolt.Open(filepath.Join(dir, "bench.db"), 0o600, &bolt.Options{InitialMmapSize: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	s, err := Open(db)
	if err != nil {
		b.Fatal(err)
	}
	if !s.Provider().HasDatabase(nil, "bench") {
		if err := s.CreateDatabase("bench"); err != nil {
			b.Fatal(err)
		}
	}
	return db, s
}

var (
	csvOnce sync.Once
	csvPath string
	csvErr  error
)

// benchCSV writes the 1M-row CSV once (the import benchmark must not time
// its generation); TestMain removes it.
func benchCSV(b *testing.B) string {
	csvOnce.Do(func() {
		var f *os.File
		if f, csvErr = os.CreateTemp("", "dpsql-bench-*.csv"); csvErr != nil {
			return
		}
		csvPath = f.Name()
		if _, csvErr = io.Copy(f, genCSV(benchRows)); csvErr == nil {
			csvErr = f.Close()
		}
	})
	if csvErr != nil {
		b.Fatal(csvErr)
	}
	return csvPath
}

func BenchmarkImport1M(b *testing.B) {
	path := benchCSV(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		db, s := openBenchStore(b, dir)
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		n, err := s.ImportCSV("bench", "t", f, ImportOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if n != benchRows {
			b.Fatalf("imported %d rows", n)
		}
		b.StopTimer()
		f.Close()
		db.Close()
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixtureDB   *bolt.DB
	fixtureS    *Store
	fixtureErr  error
)

// fixture is the 1M-row table shared by the scan benchmarks; TestMain
// removes it.
func fixture(b *testing.B) *Store {
	fixtureOnce.Do(func() {
		fixtureDir, fixtureErr = os.MkdirTemp("", "dpsql-store-bench")
		if fixtureErr != nil {
			return
		}
		fixtureDB, fixtureS = openBenchStore(b, fixtureDir)
		_, fixtureErr = fixtureS.ImportCSV("bench", "t", genCSV(benchRows), ImportOptions{})
	})
	if fixtureErr != nil {
		b.Fatal(fixtureErr)
	}
	return fixtureS
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDB != nil {
		fixtureDB.Close()
	}
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	if csvPath != "" {
		os.Remove(csvPath)
	}
	os.Exit(code)
}

func BenchmarkScanFloats1M(b *testing.B) {
	s := fixture(b)
	cols := []string{"c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10"}
	b.ResetTimer()
	var sum float64
	for i := 0; i < b.N; i++ {
		n, err := s.ScanFloats("bench", "t", cols, func(row []float64) error {
			sum += row[0] + row[9]
			return nil
		})
		if err != nil || n != benchRows {
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	if math.IsNaN(sum) {
		b.Fatal("NaN")
	}
}

func BenchmarkScanFloatsOneColumn1M(b *testing.B) {
	s := fixture(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n, err := s.ScanFloats("bench", "t", []string{"c1"}, func(row []float64) error { return nil })
		if err != nil || n != benchRows {
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkSelectAvg1M(b *testing.B) {
	s := fixture(b)
	e := sqle.NewDefault(s.Provider())
	ctx := sql.NewContext(context.Background(), sql.WithSession(sql.NewBaseSession()))
	ctx.SetCurrentDatabase("bench")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, it, _, err := e.Query(ctx, "SELECT AVG(c1) FROM t")
		if err != nil {
			b.Fatal(err)
		}
		rows, err := sql.RowIterToRows(ctx, it)
		if err != nil || len(rows) != 1 {
			b.Fatal(rows, err)
		}
		if i == 0 {
			b.Logf("AVG(c1) = %v", rows[0][0])
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkInsertSQL10k: multi-row INSERT statements of 1000 rows through the
// engine into a table with a primary key (10k rows per iteration).
func BenchmarkInsertSQL10k(b *testing.B) {
	h := newHarness(b)
	h.setupDB()
	h.mustQuery("CREATE TABLE t (id BIGINT PRIMARY KEY, c1 DOUBLE, c2 DOUBLE, c3 DOUBLE, c4 DOUBLE, c5 DOUBLE)")
	next := 0
	stmt := func() string {
		var sb strings.Builder
		sb.WriteString("INSERT INTO t VALUES ")
		for i := 0; i < 1000; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d,%d.5,1,2,3,4)", next, next%97)
			next++
		}
		return sb.String()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := 0; j < 10; j++ {
			b.StopTimer()
			q := stmt()
			b.StartTimer()
			h.mustQuery(q)
		}
	}
	b.ReportMetric(float64(10000*b.N)/b.Elapsed().Seconds(), "rows/s")
}
