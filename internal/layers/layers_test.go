package layers

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/dpsql/dpsql/"

// floors is docs/architecture.md's table: a package imports only packages
// on lower floors. A new package must be added here (and to the doc).
var floors = map[string]int{
	"wal": 0, "noise": 0, "audit": 0, "internal/syntest": 0, "internal/layers": 0, "internal/bigmem": 0,
	"explain": 0, "sqlcompat": 0, "dpquery/eval": 0, "dpquery/syntax": 0, "store/gmstest": 0,
	"budget": 1, "catalog": 1, "store": 1, "audit/internal/powercurve": 1,
	"mechanism":     2,
	"mechanism/agg": 3, "mechanism/amp": 3, "mechanism/box": 3, "mechanism/gauss": 3, "mechanism/svm": 3,
	"mechanism/linreg": 4, "mechanism/lmgc": 4, "mechanism/logreg": 4, "mechanism/lsq": 4, "mechanism/bound": 4,
	"mechanism/auto": 5, "mechanism/selection": 5,
	"functions": 6,
	"guard":     7, "dpquery/rel": 7, "mysqlstore": 7,
	"dpquery": 8, "dump": 8, "fastpath": 8, "scaleout": 8,
	"server": 9,
	"engine": 10,
	"cmd/*":  11,
}

// sqlFree may not import anything that parses or runs SQL: the privacy
// core and the mechanisms.
var sqlFree = []string{"noise", "budget", "catalog", "audit", "mechanism"}

var sqlImports = []string{"github.com/dolthub/", "vitess.io/", "database/sql", "github.com/go-sql-driver/"}

type pkg struct {
	ImportPath string
	Dir        string
	Name       string
	Imports    []string
}

func floorOf(p string) (int, bool) {
	if strings.HasPrefix(p, "cmd/") {
		f, ok := floors["cmd/*"]
		return f, ok
	}
	f, ok := floors[p]
	return f, ok
}

func TestFloors(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(p.ImportPath, module)
		if strings.HasPrefix(rel, "third_party/") {
			continue
		}
		seen++
		f, ok := floorOf(rel)
		if !ok {
			t.Errorf("%s has no floor: add it to floors here and to docs/architecture.md", rel)
			continue
		}
		if p.Name != "main" {
			if _, err := os.Stat(filepath.Join(p.Dir, "doc.go")); err != nil {
				t.Errorf("%s has no doc.go saying what it owns and may not import", rel)
			}
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			irel := strings.TrimPrefix(imp, module)
			if strings.HasPrefix(irel, "third_party/") {
				continue
			}
			g, ok := floorOf(irel)
			if ok && g >= f {
				t.Errorf("%s (floor %d) imports %s (floor %d): imports must point down", rel, f, irel, g)
			}
		}
		for _, core := range sqlFree {
			if rel != core && !strings.HasPrefix(rel, core+"/") {
				continue
			}
			for _, imp := range p.Imports {
				for _, s := range sqlImports {
					if strings.HasPrefix(imp, s) {
						t.Errorf("%s is in the SQL-free core but imports %s", rel, imp)
					}
				}
			}
		}
	}
	if seen < 40 {
		t.Fatalf("go list saw %d packages; the check would prove nothing", seen)
	}
}
