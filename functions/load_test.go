package functions

import (
	"fmt"
	"math"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/internal/bigmem"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/store"
)

// loadTable imports csv into a fresh store as db.t and returns an Env on it
// and the table's reference.
func loadTable(t testing.TB, csv string) (*Env, tableRef) {
	t.Helper()
	bdb, err := bolt.Open(filepath.Join(t.TempDir(), "rows.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bdb.Close() })
	st, err := store.Open(bdb)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateDatabase("db"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ImportCSV("db", "t", strings.NewReader(csv), store.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	sch, err := st.TableSchema("db", "t")
	if err != nil {
		t.Fatal(err)
	}
	return testEnv(t, st), tableRef{db: "db", table: "t", key: "db.t", schema: sch}
}

// chunkLoadClassification is loadClassification as it was before rows
// became views of one block (4096-row chunks, rows copied one by one): the
// reference the new loader must match exactly.
func chunkLoadClassification(e *Env, s trainSpec) ([][]float64, []int, error) {
	d := len(s.features)
	index := map[string]int{}
	for i, c := range s.classes {
		index[c] = i
	}
	var X [][]float64
	var y []int
	var backing []float64
	row := func() []float64 {
		if len(backing) < d {
			backing = make([]float64, d*4096)
		}
		r := backing[:d:d]
		backing = backing[d:]
		return r
	}
	cols := append(append([]string(nil), s.features...), s.label)
	labelIdx := s.ref.schema.IndexOfColName(s.label)
	if labelIdx >= 0 && isNumeric(s.ref.schema[labelIdx].Type) {
		_, err := e.rows(s.ref).ScanFloats(s.ref.db, s.ref.table, cols, func(v []float64) error {
			r := row()
			copy(r, v[:d])
			readRow(s.featureReads(), r)
			X = append(X, r)
			cls := 0
			if !math.IsNaN(v[d]) {
				cls = index[LabelString(v[d])]
			}
			y = append(y, cls)
			return nil
		})
		return X, y, err
	}
	_, err := e.rows(s.ref).ScanValues(s.ref.db, s.ref.table, cols, func(v []any) error {
		r := row()
		for j := 0; j < d; j++ {
			f, ok := floatOf(v[j])
			if !ok {
				f = nanValue
			}
			r[j] = f
		}
		readRow(s.featureReads(), r)
		X = append(X, r)
		cls := 0
		if v[d] != nil {
			cls = index[LabelString(v[d])]
		}
		y = append(y, cls)
		return nil
	})
	return X, y, err
}

// sameRows reports the first difference of two row sets, bit for bit (NaN
// = NULL included).
func sameRows(X, Y [][]float64) error {
	if len(X) != len(Y) {
		return fmt.Errorf("%d rows vs %d", len(X), len(Y))
	}
	for i := range X {
		if len(X[i]) != len(Y[i]) || cap(X[i]) != len(X[i]) {
			return fmt.Errorf("row %d: len %d cap %d vs len %d", i, len(X[i]), cap(X[i]), len(Y[i]))
		}
		for j := range X[i] {
			if math.Float64bits(X[i][j]) != math.Float64bits(Y[i][j]) {
				return fmt.Errorf("row %d col %d: %v vs %v", i, j, X[i][j], Y[i][j])
			}
		}
	}
	return nil
}

// classCSV is n rows of three features (NULLs, values outside the bounds,
// a log1p column, −0) and a label of the given spelling (NULL every 7th).
func classCSV(n int, label func(i int) string) string {
	var b strings.Builder
	b.WriteString("a,b,c,label\n")
	for i := range n {
		a := fmt.Sprintf("%g", float64(i%41)-20.5)
		if i%11 == 0 {
			a = ""
		}
		bv := fmt.Sprintf("%g", float64(i%13)*0.37)
		if i%17 == 3 {
			bv = "-0"
		}
		c := fmt.Sprintf("%g", float64(i%5)*1e3-1.5)
		l := label(i)
		if i%7 == 0 {
			l = ""
		}
		fmt.Fprintf(&b, "%s,%s,%s,%s\n", a, bv, c, l)
	}
	return b.String()
}

// TestLoadMatchesChunks: the rows, labels and row shapes loadClassification
// and loadRegression read into one block are exactly those of the old
// chunked loader, with the planned n equal to, below (rows beyond the
// block) and above (owners deleted since planning) the rows read, for a
// numeric and a text label.
func TestLoadMatchesChunks(t *testing.T) {
	const n = 9000 // beyond two 4096-row chunks
	reads := []catalog.Read{
		{Bound: catalog.Bound{Lo: -10, Hi: 10}, Bounded: true, Clip: true},
		{Bound: catalog.Bound{Lo: 0, Hi: 4}, Bounded: true},
		{Bound: catalog.Bound{Lo: 0, Hi: 9}, Bounded: true, Transform: mechanism.TransformLog1p, Clip: true},
	}
	for _, tc := range []struct {
		name    string
		label   func(i int) string
		classes []string
	}{
		{"numeric label", func(i int) string { return fmt.Sprint(i % 3) }, []string{"0", "1", "2"}},
		{"text label", func(i int) string { return []string{"no", "yes", "maybe"}[i%3] }, []string{"maybe", "no", "yes"}},
	} {
		e, ref := loadTable(t, classCSV(n, tc.label))
		for _, planned := range []int64{n, n - 5000, n + 3000, 0} {
			s := trainSpec{ref: ref, features: []string{"a", "b", "c"}, label: "label", classes: tc.classes, reads: reads, n: planned}
			X, y, free, err := e.loadClassification(s)
			if err != nil {
				t.Fatal(err)
			}
			X0, y0, err := chunkLoadClassification(e, s)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameRows(X, X0); err != nil {
				t.Fatalf("%s, planned n %d: %v", tc.name, planned, err)
			}
			if fmt.Sprint(y) != fmt.Sprint(y0) {
				t.Fatalf("%s, planned n %d: labels differ", tc.name, planned)
			}
			counts := make([]int, len(tc.classes))
			for _, c := range y {
				counts[c]++
			}
			if counts[0] < n/7 || counts[1] == 0 || counts[2] == 0 {
				t.Fatalf("%s: class counts %v: the labels were not read", tc.name, counts)
			}
			// The next read takes these buffers from the pool, zeroed.
			free()
		}
	}
	// Regression: the label is the fourth column, read as a number.
	e, ref := loadTable(t, classCSV(n, func(i int) string { return fmt.Sprintf("%g", float64(i%100)/8) }))
	for _, planned := range []int64{n, n - 5000, n + 3000} {
		s := trainSpec{ref: ref, features: []string{"a", "b", "c"}, label: "label", n: planned,
			reads: append(append([]catalog.Read(nil), reads...), catalog.Read{Bound: catalog.Bound{Lo: 0, Hi: 10}, Bounded: true, Clip: true})}
		X, y, err := e.loadRegression(s)
		if err != nil {
			t.Fatal(err)
		}
		// The reference: every row read and mapped one by one.
		var X0 [][]float64
		var y0 []float64
		if _, err := e.Store.ScanFloats("db", "t", []string{"a", "b", "c", "label"}, func(v []float64) error {
			readRow(s.reads, v)
			X0 = append(X0, append([]float64(nil), v[:3]...))
			y0 = append(y0, v[3])
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := sameRows(X, X0); err != nil {
			t.Fatalf("regression, planned n %d: %v", planned, err)
		}
		if err := sameRows([][]float64{y[:len(y):len(y)]}, [][]float64{y0}); err != nil {
			t.Fatalf("regression labels, planned n %d: %v", planned, err)
		}
	}
}

// BenchmarkLoadClassification1M reads 10⁶ rows × 20 DOUBLE features and a
// 0/1 label as DP_TRAIN does: "chunks" is the loader before rows became
// views of one huge-page block, "block" the loader now with its buffers
// left to the collector, "pooled" with them given back to internal/bigmem's
// pool after each read (as a DP_TRAIN release does). The memory the
// collector freed goes back to the kernel before each read (as between two
// calls; the pool's stays mapped). Huge-page
// advice stays on the addresses, so run the two in separate processes,
// alternating:
//
//	go test -c -o /tmp/functions.test ./functions
//	for i in 1 2 3; do for v in chunks block pooled; do
//	  /tmp/functions.test -test.run XXX -test.bench "LoadClassification1M/$v\$" -test.benchtime 3x
//	done; done
func BenchmarkLoadClassification1M(b *testing.B) {
	const n, d = 1_000_000, 20
	var csv strings.Builder
	for j := 1; j <= d; j++ {
		fmt.Fprintf(&csv, "c%d,", j)
	}
	csv.WriteString("label\n")
	x := uint64(88172645463325252)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			fmt.Fprintf(&csv, "%g,", float64(x%2000)/1000-1)
		}
		fmt.Fprintf(&csv, "%d\n", x%2)
	}
	e, ref := loadTable(b, csv.String())
	s := trainSpec{ref: ref, label: "label", classes: []string{"0", "1"}, n: n}
	for j := 1; j <= d; j++ {
		s.features = append(s.features, fmt.Sprintf("c%d", j))
		s.reads = append(s.reads, catalog.Read{Bound: catalog.Bound{Lo: -1, Hi: 1}, Bounded: true})
	}
	for _, v := range []struct {
		name string
		load func(*Env, trainSpec) ([][]float64, []int, error)
	}{{"chunks", chunkLoadClassification}, {"block", func(e *Env, s trainSpec) ([][]float64, []int, error) {
		X, y, _, err := e.loadClassification(s) // buffers left to the collector
		return X, y, err
	}}, {"pooled", func(e *Env, s trainSpec) ([][]float64, []int, error) {
		X, y, free, err := e.loadClassification(s)
		free() // back to the pool, zeroed: the next iteration reuses them (only len(X), len(y) are read)
		return X, y, err
	}}} {
		b.Run(v.name, func(b *testing.B) {
			var cpu time.Duration
			var flt int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				debug.FreeOSMemory()
				c0, f0 := bigmem.Usage()
				b.StartTimer()
				X, y, err := v.load(e, s)
				b.StopTimer()
				c1, f1 := bigmem.Usage()
				if err != nil || len(X) != n || len(y) != n {
					b.Fatal(len(X), err)
				}
				cpu, flt = cpu+c1-c0, flt+f1-f0
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(flt)/float64(b.N), "faults/op")
		})
	}
}

// TestClassOfNumber: the fixed-cost class lookup of a numeric label equals
// the map lookup of its LabelString (NaN = NULL: class 0) on every
// spelling a declared domain may hold and every number near them.
func TestClassOfNumber(t *testing.T) {
	spellings := []string{"0", "1", "2", "-3", "2.5", "0.1", "1e+15", "1000000000000000", "999999999999999",
		"1.0", "01", "-0", "NaN", "+Inf", "-Inf", "Inf", "abc", "1e-07", "1e+06", "1000000", "1234567.5", "9007199254740993"}
	var values []float64
	for _, c := range spellings {
		if f, err := strconv.ParseFloat(c, 64); err == nil {
			values = append(values, f, math.Nextafter(f, math.Inf(1)), math.Nextafter(f, math.Inf(-1)), -f)
		}
	}
	values = append(values, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 3, 7, 1e300)
	// Every window of domains of 1–4 spellings (a domain's classes are distinct).
	for size := 1; size <= 4; size++ {
		for start := 0; start+size <= len(spellings); start++ {
			classes := spellings[start : start+size]
			index := map[string]int{}
			for i, c := range classes {
				index[c] = i
			}
			nums := classNumbers(classes)
			for _, v := range values {
				want := 0
				if !math.IsNaN(v) {
					want = index[LabelString(v)]
				}
				if got := classOfNumber(nums, v); got != want {
					t.Fatalf("classes %q, label %v: class %d, want %d", classes, v, got, want)
				}
			}
		}
	}
}
