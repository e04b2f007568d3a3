package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportValidatesDeclaredBounds: the bulk path creates tables, and rows
// of a table with declared bounds are validated like owner INSERTs.
func TestImportValidatesDeclaredBounds(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	csv := filepath.Join(t.TempDir(), "iris.csv")
	src, err := os.ReadFile("../testdata/iris.csv")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(csv, src, 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := ts.e.ImportCSVFile("lab.iris", csv)
	if err != nil || n != 150 {
		t.Fatalf("import: %d rows, %v", n, err)
	}
	root := ts.connect("root", rootPW, "lab")
	if c := queryFloat(t, root, "SELECT COUNT(*) FROM iris"); c != 150 {
		t.Fatalf("count %v", c)
	}
	mustExec(t, root, "CALL dp_bounds('iris', 'petal_length_cm', 0, 10)")
	mustExec(t, root, "CALL dp_protect('iris', 1, 0)")
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("sepal_length_cm,sepal_width_cm,petal_length_cm,petal_width_cm,species\n5,3,99,1,setosa\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.e.ImportCSVFile("lab.iris", bad); err == nil || !strings.Contains(err.Error(), "outside its declared bounds") {
		t.Fatalf("out-of-bounds import: %v", err)
	}
	if c := queryFloat(t, root, "SELECT COUNT(*) FROM iris"); c != 150 {
		t.Fatalf("failed import changed the table: %v rows", c)
	}
	if _, err := ts.e.ImportCSVFile("nodot", bad); err == nil {
		t.Fatal("table without database accepted")
	}
}
