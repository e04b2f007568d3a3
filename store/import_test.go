package store

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// referenceCSV parses a numeric CSV with encoding/csv: header and columns.
func referenceCSV(t *testing.T, path string) ([]string, [][]float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	cols := make([][]float64, len(recs[0]))
	for _, r := range recs[1:] {
		for j, v := range r {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			cols[j] = append(cols[j], x)
		}
	}
	return recs[0], cols
}

func TestImportBreastCancer(t *testing.T) {
	const path = "../testdata/breast_cancer.csv"
	header, ref := referenceCSV(t, path)
	h := newHarness(t)
	h.setupDB()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := h.s.ImportCSV("db", "bc", f, ImportOptions{BatchRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(ref[0])) || n != 569 {
		t.Fatalf("imported %d rows, file has %d", n, len(ref[0]))
	}
	sch, err := h.s.TableSchema("db", "bc")
	if err != nil {
		t.Fatal(err)
	}
	for j, c := range sch {
		want := types.Float64
		if j == len(sch)-1 {
			want = types.Int64 // the 0/1 label
		}
		if c.Name != header[j] || !c.Type.Equals(want) || !c.Nullable {
			t.Errorf("column %d: %s %s, want %s %s", j, c.Name, c.Type, header[j], want)
		}
	}
	h.reopen()
	h.ctx.SetCurrentDatabase("db")
	// Direct scan and SQL agree with an independent parse, value by value.
	i := 0
	_, err = h.s.ScanFloats("db", "bc", header, func(row []float64) error {
		for j := range row {
			if row[j] != ref[j][i] {
				return fmt.Errorf("row %d column %s: %v, want %v", i, header[j], row[j], ref[j][i])
			}
		}
		i++
		return nil
	})
	if err != nil || i != 569 {
		t.Fatal(i, err)
	}
	for _, j := range []int{0, 3, 29, 30} {
		var sum float64
		for _, x := range ref[j] {
			sum += x
		}
		rows := h.mustQuery(fmt.Sprintf("SELECT AVG(%s), COUNT(*) FROM bc", header[j]))
		got, _ := strconv.ParseFloat(fmt.Sprint(rows[0][0]), 64)
		if math.Abs(got-sum/569) > 1e-9*math.Abs(sum/569) || fmt.Sprint(rows[0][1]) != "569" {
			t.Errorf("AVG(%s) = %v (count %v), want %v", header[j], rows[0][0], rows[0][1], sum/569)
		}
	}
	expectRows(t, h, "SELECT table_rows, data_length FROM information_schema.tables WHERE table_name = 'bc'", "569,0")
}

func TestImportValidateAndAtomicity(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	data := "x,label\n1.5,a\n2.5,b\n99,c\n"
	bounded := func(row sql.Row) error {
		if v := row[0].(float64); v > 10 {
			return fmt.Errorf("x = %v outside the declared bounds", v)
		}
		return nil
	}
	// A refused row: nothing imported, and the table the import created is gone.
	if _, err := h.s.ImportCSV("db", "v", strings.NewReader(data), ImportOptions{Validate: bounded, BatchRows: 1}); err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Fatalf("Validate refusal: %v", err)
	}
	if h.s.HasTable("db", "v") {
		t.Error("failed import left its table behind")
	}
	// Into an existing table with a primary key.
	h.mustQuery("CREATE TABLE p (id INT PRIMARY KEY, x DOUBLE NOT NULL, note TEXT)")
	h.mustQuery("INSERT INTO p VALUES (1, 1, 'keep')")
	for _, bad := range []string{
		"id,x\n2,1\n3,2\n1,5\n",    // duplicate of a committed row
		"id,x\n2,1\n3,2\n2,5\n",    // duplicate inside the file
		"id,x\n4,1\n5,\n",          // NULL into NOT NULL
		"id,x\n4,1\n5,abc\n",       // not a number
		"id,x,nope\n4,1,2\n",       // unknown column
		"id\n4\n",                  // NOT NULL column missing
		"id,x\n4,1,7\n",            // ragged
		"id,x\n4,\"1\n",            // unterminated quote
		"id,x\n4,1e400\n",          // out of range
		"id,x\n99999999999999,1\n", // INT overflow
	} {
		if _, err := h.s.ImportCSV("db", "p", strings.NewReader(bad), ImportOptions{BatchRows: 1}); err == nil {
			t.Errorf("import of %q succeeded", bad)
		}
		expectRows(t, h, "SELECT id, x, note FROM p", "1,1,keep")
	}
	n, err := h.s.ImportCSV("db", "p", strings.NewReader("X,ID,note\n2.5,3,\"a, \"\"quoted\"\"\nnote\"\n-1,2,\\N\r\n"), ImportOptions{BatchRows: 1})
	if err != nil || n != 2 {
		t.Fatal(n, err)
	}
	h.reopen()
	h.ctx.SetCurrentDatabase("db")
	expectRows(t, h, "SELECT id, x, note FROM p", "1,1,keep; 2,-1,<nil>; 3,2.5,a, \"quoted\"\nnote")
	if c, _ := h.s.RowCount("db", "p"); c != 3 {
		t.Errorf("RowCount = %d", c)
	}
}

func TestImportSchemaAndTypes(t *testing.T) {
	h := newHarness(t)
	h.setupDB()
	sch := sql.Schema{
		{Name: "id", Type: types.Int64, PrimaryKey: true, AutoIncrement: true},
		{Name: "when", Type: types.Datetime, Nullable: true},
		{Name: "amount", Type: types.MustCreateDecimalType(10, 2), Nullable: true},
		{Name: "flag", Type: types.Boolean, Nullable: true},
		{Name: "name", Type: types.Text, Nullable: true},
	}
	csvData := "when,amount,flag,name\n2024-01-02 03:04:05,12.5,1,ann\n,,,\n2023-12-31 00:00:00,-3,0,\"b,c\"\n"
	n, err := h.s.ImportCSV("db", "typed", strings.NewReader(csvData), ImportOptions{Schema: sch})
	if err != nil || n != 3 {
		t.Fatal(n, err)
	}
	expectRows(t, h, "SELECT id, `when`, amount, flag, name FROM typed",
		"1,2024-01-02 03:04:05 +0000 UTC,12.5,1,ann; 2,<nil>,<nil>,<nil>,; 3,2023-12-31 00:00:00 +0000 UTC,-3,0,b,c")
	h.mustQuery("INSERT INTO typed (name) VALUES ('next')")
	expectRows(t, h, "SELECT id FROM typed WHERE name = 'next'", "4")
	// Inference: integers, floats, text.
	n, err = h.s.ImportCSV("db", "inf", strings.NewReader("\ufeffa,b,c,d\n1,1.5,x,\n-2,3,y,\n"), ImportOptions{})
	if err != nil || n != 2 {
		t.Fatal(n, err)
	}
	got, _ := h.s.TableSchema("db", "inf")
	if got[0].Name != "a" {
		t.Errorf("byte order mark kept in column name %q", got[0].Name)
	}
	for j, want := range []sql.Type{types.Int64, types.Float64, types.Text, types.Text} {
		if !got[j].Type.Equals(want) {
			t.Errorf("column %s inferred %s, want %s", got[j].Name, got[j].Type, want)
		}
	}
	if _, err := h.s.ImportCSV("db", "empty", strings.NewReader(""), ImportOptions{}); err == nil {
		t.Error("empty input accepted")
	}
}

func TestCSVReader(t *testing.T) {
	in := "a,b,c\n" +
		"1,,3\n" +
		"\"x,y\",\"he said \"\"hi\"\"\",\"multi\nline\"\r\n" +
		"\n" +
		"\"\",last,\n" +
		"q,\"\",\"z\""
	want := [][]string{{"a", "b", "c"}, {"1", "", "3"}, {"x,y", `he said "hi"`, "multi\nline"}, {"", "last", ""}, {"q", "", "z"}}
	cr := newCSVReader(strings.NewReader(in), ',')
	for i, w := range want {
		rec, err := cr.read()
		if err != nil {
			t.Fatal(i, err)
		}
		var got []string
		for _, f := range rec {
			got = append(got, string(f))
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", w) {
			t.Errorf("record %d: %q, want %q", i, got, w)
		}
	}
	if _, err := cr.read(); err != io.EOF {
		t.Errorf("after last record: %v", err)
	}
	for _, bad := range []string{"\"abc\n", "\"a\"b,c\n"} {
		if _, err := newCSVReader(strings.NewReader(bad), ',').read(); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
