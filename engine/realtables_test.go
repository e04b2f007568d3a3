package engine_test

import (
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// Issue 28: DP_TRAIN on tables loaded as they come — text categorical
// columns with NULLs — over the wire, against the same data one-hot encoded
// by hand.

// sharedDataDir is ../shared/data beside the repository (or
// $DPSQL_SHARED_DATA), where house_votes.csv and income.csv live.
func sharedDataDir() string {
	if d := os.Getenv("DPSQL_SHARED_DATA"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "shared", "data")
}

// rawTable is a CSV as R's write.csv writes it: header, every field text,
// empty = missing (NULL).
type rawTable struct {
	cols []string
	rows [][]*string // nil = NULL
}

func readRawCSV(t testing.TB, name string) rawTable {
	t.Helper()
	f, err := os.Open(filepath.Join(sharedDataDir(), name))
	if err != nil {
		t.Fatalf("open %s (shared data set; set DPSQL_SHARED_DATA): %v", name, err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	rt := rawTable{cols: recs[0]}
	for _, r := range recs[1:] {
		row := make([]*string, len(r))
		for j := range r {
			if r[j] != "" {
				v := r[j]
				row[j] = &v
			}
		}
		rt.rows = append(rt.rows, row)
	}
	return rt
}

// levels are the distinct non-NULL values of column j in file order of
// first appearance, sorted: the owner's declared domain (the data sets'
// codebooks list exactly these levels; declared before any query).
func (rt rawTable) levels(j int) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rt.rows {
		if r[j] != nil && !seen[*r[j]] {
			seen[*r[j]] = true
			out = append(out, *r[j])
		}
	}
	sort.Strings(out)
	return out
}

// split: every fifth row (public rule) is test.
func (rt rawTable) split() (train, test [][]*string) {
	for i, r := range rt.rows {
		if i%5 == 4 {
			test = append(test, r)
		} else {
			train = append(train, r)
		}
	}
	return train, test
}

func sqlText(v *string) string {
	if v == nil {
		return "NULL"
	}
	return "'" + strings.ReplaceAll(*v, "'", "''") + "'"
}

// insertRawRows inserts rows (already rendered as SQL tuples) in batches.
func insertRawRows(t testing.TB, db *sql.DB, table string, tuples []string) {
	t.Helper()
	for i := 0; i < len(tuples); i += 500 {
		j := min(i+500, len(tuples))
		mustExec(t, db, "INSERT INTO "+table+" VALUES "+strings.Join(tuples[i:j], ","))
	}
}

// createSplit creates <name> (the training split) and <name>_test with
// columns defs and inserts each row as the SQL literals enc gives.
func createSplit(t testing.TB, root *sql.DB, rt rawTable, name string, defs []string, enc func([]*string) []string) {
	t.Helper()
	train, test := rt.split()
	for _, tbl := range []string{name, name + "_test"} {
		mustExec(t, root, "CREATE TABLE "+tbl+" ("+strings.Join(defs, ", ")+")")
		rows := train
		if tbl != name {
			rows = test
		}
		tuples := make([]string, len(rows))
		for i, r := range rows {
			tuples[i] = "(" + strings.Join(enc(r), ",") + ")"
		}
		insertRawRows(t, root, tbl, tuples)
	}
}

// loadRaw creates <name> (protected, the training split) and <name>_test
// (public) with every column TEXT as it comes, declares dp_domain on every
// feature and dp_labels on the label (the last column).
func loadRaw(t testing.TB, root *sql.DB, rt rawTable, name string) {
	t.Helper()
	defs := make([]string, len(rt.cols))
	for j, c := range rt.cols {
		defs[j] = c + " VARCHAR(64)"
	}
	createSplit(t, root, rt, name, defs, func(r []*string) []string {
		vals := make([]string, len(r))
		for j := range r {
			vals[j] = sqlText(r[j])
		}
		return vals
	})
	last := len(rt.cols) - 1
	for j, c := range rt.cols {
		proc := "dp_domain"
		if j == last {
			proc = "dp_labels"
		}
		mustExec(t, root, fmt.Sprintf("CALL %s('%s', '%s', '%s')", proc, name, c, domainList(rt.levels(j))))
	}
	mustExec(t, root, fmt.Sprintf("CALL dp_protect('%s', 100, 1e-3)", name))
}

// loadHandEncoded creates <name> and <name>_test with every feature one-hot
// encoded by hand (a DOUBLE 0/1 column per level, NULL → all zeros, bounds
// [0, 1]), the way a user had to before issue 28.
func loadHandEncoded(t testing.TB, root *sql.DB, rt rawTable, name string) {
	t.Helper()
	last := len(rt.cols) - 1
	var defs, dummies []string
	lv := make([][]string, last)
	for j := 0; j < last; j++ {
		lv[j] = rt.levels(j)
		for k := range lv[j] {
			d := fmt.Sprintf("%s_%d", rt.cols[j], k)
			defs, dummies = append(defs, d+" DOUBLE"), append(dummies, d)
		}
	}
	defs = append(defs, rt.cols[last]+" VARCHAR(64)")
	createSplit(t, root, rt, name, defs, func(r []*string) []string {
		var vals []string
		for j := 0; j < last; j++ {
			for _, l := range lv[j] {
				v := "0"
				if r[j] != nil && *r[j] == l {
					v = "1"
				}
				vals = append(vals, v)
			}
		}
		return append(vals, sqlText(r[last]))
	})
	for _, d := range dummies {
		mustExec(t, root, fmt.Sprintf("CALL dp_bounds('%s', '%s', 0, 1)", name, d))
	}
	mustExec(t, root, fmt.Sprintf("CALL dp_labels('%s', '%s', '%s')", name, rt.cols[last], domainList(rt.levels(last))))
	mustExec(t, root, fmt.Sprintf("CALL dp_protect('%s', 100, 1e-3)", name))
}

// TestDPTrainRawTables: house_votes (16 y/n votes with NULLs, binary) and
// income (13 text columns with NULLs, 9 classes) loaded as text. The
// default DP_TRAIN uses every categorical column without hand encoding,
// DP_PREDICT scores the raw test columns (NULLs included), DP_EVALUATE on
// the public test table is exact and free and agrees with DP_PREDICT, and
// the mean accuracy at ε = 1 is at least that of the same default call on
// the hand-encoded table (within the runs' standard error).
func TestDPTrainRawTables(t *testing.T) {
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE rt")
	root := ts.connect("root", rootPW, "rt")
	mustExec(t, root, "CREATE USER IF NOT EXISTS 'ana'@'%' IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "GRANT SELECT, EXECUTE ON rt.* TO 'ana'@'%'")
	ana := ts.connect("ana", "ana-pw", "rt")
	runs := 4
	if v, err := strconv.Atoi(os.Getenv("REALTABLES_RUNS")); err == nil && v > 1 {
		runs = v // more runs for docs/results/realtables.md
	}
	for _, set := range []struct {
		file, name string
		minAcc     float64 // sanity floor: well above the majority rate
		imbalanced bool    // objective=balanced must raise the balanced accuracy
	}{
		{"house_votes.csv", "votes", 0.8, false},
		{"income.csv", "income", 0.2, true},
	} {
		rt := readRawCSV(t, set.file)
		loadRaw(t, root, rt, set.name)
		loadHandEncoded(t, root, rt, set.name+"_hot")
		last := len(rt.cols) - 1

		// The dry run: every column is an input, none unused, and the
		// inputs are the raw columns with their domains.
		var plan struct {
			Inputs []struct {
				Column, Encoding string
				Levels           []string
				NullLevel        bool `json:"null_level"`
			}
			Unused   []any
			Label    string
			Features []string
		}
		js := queryString(t, ana, fmt.Sprintf("SELECT DP_TRAIN('%s', 1, 'auto', 'dry_run=1')", set.name))
		if err := json.Unmarshal([]byte(js), &plan); err != nil {
			t.Fatalf("%s dry run: %v: %s", set.name, err, js)
		}
		if plan.Label != rt.cols[last] || len(plan.Inputs) != last || len(plan.Unused) != 0 {
			t.Fatalf("%s dry run: label %q, %d inputs, unused %v; want %s, %d, none", set.name, plan.Label, len(plan.Inputs), plan.Unused, rt.cols[last], last)
		}
		width := 0
		for j, in := range plan.Inputs {
			if in.Column != rt.cols[j] || in.Encoding != "onehot" || in.NullLevel || strings.Join(in.Levels, ",") != strings.Join(rt.levels(j), ",") {
				t.Fatalf("%s input %d: %+v", set.name, j, in)
			}
			width += len(in.Levels) // NULL: the all-zeros block
		}
		if len(plan.Features) != width {
			t.Fatalf("%s: %d encoded features, want %d", set.name, len(plan.Features), width)
		}

		cols := strings.Join(rt.cols[:last], ", ")
		var raw, hot, rawBal, balBal []float64
		for r := 0; r < runs; r++ {
			m := queryString(t, ana, fmt.Sprintf("SELECT DP_TRAIN('%s', 1)", set.name))
			acc := queryFloat(t, ana, fmt.Sprintf("SELECT DP_EVALUATE('%s', '%s_test', 1)", m, set.name))
			// DP_PREDICT on the raw test columns, NULLs included.
			agree, bal := predictScores(t, ana, m, cols, rt.cols[last], set.name+"_test")
			if math.Abs(agree-acc) > 1e-9 {
				t.Fatalf("%s: DP_PREDICT accuracy %v, DP_EVALUATE on the public test table %v", set.name, agree, acc)
			}
			raw, rawBal = append(raw, acc), append(rawBal, bal)
			h := queryString(t, ana, fmt.Sprintf("SELECT DP_TRAIN('%s_hot', 1)", set.name))
			hot = append(hot, queryFloat(t, ana, fmt.Sprintf("SELECT DP_EVALUATE('%s', '%s_hot_test', 1)", h, set.name)))
			b := queryString(t, ana, fmt.Sprintf("SELECT DP_TRAIN('%s', 1, 'auto', 'objective=balanced')", set.name))
			_, bal = predictScores(t, ana, b, cols, rt.cols[last], set.name+"_test")
			balBal = append(balBal, bal)
		}
		mr, sr := meanSD(raw)
		mh, sh := meanSD(hot)
		mrb, srb := meanSD(rawBal)
		mbb, sbb := meanSD(balBal)
		t.Logf("%s ε=1 (%d runs): default DP_TRAIN on the raw table %.3f ± %.3f (balanced accuracy %.3f ± %.3f), on the hand one-hot table %.3f ± %.3f; objective=balanced: balanced accuracy %.3f ± %.3f",
			set.name, runs, mr, sr, mrb, srb, mh, sh, mbb, sbb)
		// With a handful of runs the two means are within each other's noise
		// on income (0.248 vs 0.249 once under -race): the test fails when
		// balanced is worse beyond 2 standard errors; that it is better is
		// measured with 10 runs in docs/results/realtables.md. 3 standard
		// errors, not 2: with 4 runs the standard deviations are themselves
		// noisy (Student's t with ~6 degrees of freedom exceeds 2 in 5 % of
		// runs, 3 in 1.2 %), and CI runs this test twice.
		if seb := math.Sqrt((srb*srb + sbb*sbb) / float64(runs)); set.imbalanced && mbb < mrb-3*seb {
			t.Fatalf("%s: objective=balanced balanced accuracy %.3f below the default's %.3f by more than noise (se %.3f)", set.name, mbb, mrb, seb)
		}
		if mr < set.minAcc {
			t.Fatalf("%s: mean accuracy %.3f below %.2f", set.name, mr, set.minAcc)
		}
		se := math.Sqrt((sr*sr + sh*sh) / float64(runs))
		if mr < mh-3*se-0.01 {
			t.Fatalf("%s: raw-table accuracy %.3f below hand one-hot %.3f by more than noise (se %.3f)", set.name, mr, mh, se)
		}
		// Scoring a public test table spends nothing.
		if s := spent(t, ana, "rt."+set.name); math.Abs(s-float64(2*runs)) > 1e-9 {
			t.Fatalf("%s: spent ε %v after %d trainings at ε = 1, want %d (evaluations on public tables are free)", set.name, s, 2*runs, 2*runs)
		}
	}
}

// domainList renders a domain for dp_domain / dp_labels: comma-separated,
// or the JSON form when a level holds a comma.
func domainList(levels []string) string {
	for _, l := range levels {
		if strings.Contains(l, ",") {
			js, _ := json.Marshal(levels)
			return strings.ReplaceAll(string(js), "'", "''")
		}
	}
	return strings.Join(levels, ",")
}

// predictScores are the accuracy and the balanced accuracy (mean recall
// over the classes present) of DP_PREDICT on a public test table.
func predictScores(t testing.TB, db *sql.DB, model, cols, label, table string) (acc, bal float64) {
	t.Helper()
	hit := fmt.Sprintf("CASE WHEN DP_PREDICT('%s', %s) = %s THEN 1 ELSE 0 END", model, cols, label)
	acc = queryFloat(t, db, fmt.Sprintf("SELECT AVG(%s) FROM %s", hit, table))
	bal = queryFloat(t, db, fmt.Sprintf("SELECT AVG(r) FROM (SELECT %s AS c, AVG(%s) AS r FROM %s GROUP BY %s) AS s", label, hit, table, label))
	return acc, bal
}

func meanSD(v []float64) (float64, float64) {
	var m float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	var s float64
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	if len(v) > 1 {
		s /= float64(len(v) - 1)
	}
	return m, math.Sqrt(s)
}

// TestDPTrainCategoricalKinds: a table with a primary key, a numeric column
// with NULLs, a text categorical column with NULLs, an undeclared column
// and a label. Every kind trains on it (categorical one-hot, NULL level,
// numeric fill, missing=indicator); the unused columns are named in the
// dry run and in SHOW WARNINGS; dp_domain columns are not label
// candidates; dp_domain accepts NULLs and names itself when refusing.
func TestDPTrainCategoricalKinds(t *testing.T) {
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE ct")
	root := ts.connect("root", rootPW, "ct")
	mustExec(t, root, "CREATE TABLE t (id INT PRIMARY KEY, x DOUBLE, colour VARCHAR(8), note VARCHAR(20), y DOUBLE, cls VARCHAR(4))")
	colours := []string{"red", "green", "blue"}
	var tuples []string
	for i := 0; i < 600; i++ {
		x := fmt.Sprintf("%d", i%10)
		if i%7 == 0 {
			x = "NULL"
		}
		c := "'" + colours[i%3] + "'"
		if i%11 == 0 {
			c = "NULL"
		}
		cls := "'a'"
		if i%3 == 0 {
			cls = "'b'"
		}
		tuples = append(tuples, fmt.Sprintf("(%d, %s, %s, 'n%d', %d, %s)", i, x, c, i, i%5, cls))
	}
	insertRawRows(t, root, "t", tuples)
	mustExec(t, root, "CREATE TABLE t_test AS SELECT * FROM t WHERE id < 100")
	mustExec(t, root, "CALL dp_bounds('t', 'x', 0, 10)")
	mustExec(t, root, "CALL dp_bounds('t', 'y', 0, 5)")
	// NULLs are not outside a domain (200 blue rows, 18 of them NULL: 182
	// counted); a value outside it is, and the
	// message names the procedure called.
	wantErr(t, root, "CALL dp_domain('t', 'colour', 'red,green')", "dp_domain: 182 existing rows", "outside the declared domain")
	mustExec(t, root, "CALL dp_domain('t', 'colour', 'red,green,blue')")
	mustExec(t, root, "CALL dp_protect('t', 1000, 1e-2)")
	mustExec(t, root, "CREATE USER IF NOT EXISTS 'ana'@'%' IDENTIFIED BY 'ana-pw'")
	mustExec(t, root, "GRANT SELECT, EXECUTE ON ct.* TO 'ana'@'%'")
	ana := ts.connect("ana", "ana-pw", "ct")
	calls := func() float64 {
		return queryFloat(t, ana, "SELECT my_default_delta_calls FROM dp_budget WHERE table_name = 'ct.t'")
	}
	if c := calls(); c != 10 {
		t.Fatalf("dp_budget: %v default-δ calls left on a fresh δ budget, want 10", c)
	}

	// Only a dp_domain column: no label candidate for classification;
	// auto trains a regression on y with colour as a feature.
	wantErr(t, ana, "SELECT DP_TRAIN('t', 1, 'lda')", "0 columns of ct.t are declared as labels")
	var plan struct {
		Kind     string
		Label    string
		Features []string
		Unused   []struct{ Column, Reason string }
	}
	js := queryString(t, ana, "SELECT DP_TRAIN('t', 1, 'auto', 'dry_run=1')")
	if err := json.Unmarshal([]byte(js), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Kind != "linreg" || plan.Label != "y" || strings.Join(plan.Features, ",") != "x,colour=red,colour=green,colour=blue" {
		t.Fatalf("regression plan: %s", js)
	}
	unused := map[string]string{}
	for _, u := range plan.Unused {
		unused[u.Column] = u.Reason
	}
	if len(unused) != 3 || !strings.Contains(unused["id"], "primary key") || !strings.Contains(unused["note"], "no declared bounds") || !strings.Contains(unused["cls"], "no declared bounds") {
		t.Fatalf("unused columns %v", unused)
	}

	mustExec(t, root, "CALL dp_labels('t', 'cls', 'a,b')")
	// The real call names the unused columns in SHOW WARNINGS.
	conn, err := ana.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var m string
	if err := conn.QueryRowContext(t.Context(), "SELECT DP_TRAIN('t', 1, 'logreg', 'model=w1')").Scan(&m); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(t.Context(), "SHOW WARNINGS")
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	for _, r := range scanAll(t, rows) {
		warned = append(warned, r[2].String)
	}
	all := strings.Join(warned, "\n")
	for _, c := range []string{"column id", "column note"} {
		if !strings.Contains(all, c) {
			t.Fatalf("SHOW WARNINGS after DP_TRAIN does not name %s: %q", c, all)
		}
	}

	for _, k := range []string{"lda", "qda", "gnb", "logreg", "svm", "lmgc"} {
		for _, opt := range []string{"", "missing=indicator"} {
			name := queryString(t, ana, fmt.Sprintf("SELECT DP_TRAIN('t', 1, '%s', '%s')", k, opt))
			var mj struct {
				Inputs []struct {
					Column, Encoding string
					Indicator        bool `json:"missing_indicator"`
				}
			}
			if err := json.Unmarshal([]byte(queryString(t, ana, "SELECT DP_MODEL_JSON('"+name+"')")), &mj); err != nil {
				t.Fatal(err)
			}
			if len(mj.Inputs) != 3 || mj.Inputs[0].Column != "x" || mj.Inputs[1].Column != "colour" || mj.Inputs[1].Encoding != "onehot" || mj.Inputs[2].Column != "y" || mj.Inputs[0].Indicator != (opt != "") {
				t.Fatalf("%s %s inputs %+v", k, opt, mj.Inputs)
			}
			// Raw values, NULLs included, in the inputs' order.
			for _, q := range []string{"3, 'red', 1", "NULL, NULL, NULL", "3, 'purple', 2"} {
				if c := queryString(t, ana, fmt.Sprintf("SELECT DP_PREDICT('%s', %s)", name, q)); c != "a" && c != "b" {
					t.Fatalf("%s predicted %q for (%s)", k, c, q)
				}
			}
			acc := queryFloat(t, ana, fmt.Sprintf("SELECT DP_EVALUATE('%s', 't_test', 1)", name))
			if acc < 0 || acc > 1 {
				t.Fatalf("%s accuracy %v", k, acc)
			}
		}
	}
	for _, k := range []string{"linreg", "lsq"} {
		name := queryString(t, ana, fmt.Sprintf("SELECT DP_TRAIN('t', 1, '%s', 'label=y; features=x,colour')", k))
		if v := queryString(t, ana, fmt.Sprintf("SELECT DP_PREDICT('%s', NULL, 'blue')", name)); v == "" {
			t.Fatalf("%s: empty prediction", k)
		}
		if r := queryFloat(t, ana, fmt.Sprintf("SELECT DP_EVALUATE('%s', 't_test', 1)", name)); !(r >= 0) {
			t.Fatalf("%s rmse %v", k, r)
		}
	}
	// More than ten default calls ran: the later ones at δ = 0, none
	// refused, and dp_budget says no default-δ call is left.
	if c := calls(); c != 0 {
		t.Fatalf("dp_budget: %v default-δ calls left, want 0", c)
	}
	// The same through the papers' own functions.
	queryString(t, ana, "SELECT DP_SVM_TRAIN('t', 1, 'linear', '')")
	queryString(t, ana, "SELECT DP_LMGC_TRAIN('t', 1, '')")
	queryString(t, ana, "SELECT DP_LSQ('t', 1, 'linear', 'label=y; features=x,colour')")
}

// TestRawCSVEmptyFields: a CSV export as R's write.csv (or a JSON → CSV
// export) writes it — text quoted, a missing value an empty field — loaded
// with LOAD DATA LOCAL … OPTIONALLY ENCLOSED BY '"'. An empty field of a text
// column reads as ” (as in MySQL), which no domain can hold: dp_domain
// refuses, counts the empty strings apart from other stray values (named),
// and says how to make them NULL; after the owner's NULLIF (and mapping a
// stray missing-value code) the declaration is accepted and DP_TRAIN treats
// them as NULL.
func TestRawCSVEmptyFields(t *testing.T) {
	ts := startServer(t, t.TempDir())
	mustExec(t, ts.connect("root", rootPW, ""), "CREATE DATABASE rawcsv")
	root := ts.connect("root", rootPW, "rawcsv")
	var b strings.Builder
	b.WriteString("\"island\",\"mass\",\"sex\",\"species\"\n")
	for i := 0; i < 300; i++ {
		isl, sex, mass := []string{`"Biscoe"`, `"Dream"`, ``}[i%3], []string{`"MALE"`, `"FEMALE"`, ``, `"."`}[i%4], fmt.Sprint(3000+i*5)
		if i%10 == 0 {
			mass = ""
		}
		fmt.Fprintf(&b, "%s,%s,%s,%s\n", isl, mass, sex, []string{`"Adelie"`, `"Gentoo"`}[i%2])
	}
	mysql.RegisterReaderHandler("rawcsv", func() io.Reader { return strings.NewReader(b.String()) })
	defer mysql.DeregisterReaderHandler("rawcsv")
	mustExec(t, root, "CREATE TABLE p (island VARCHAR(20), mass DOUBLE, sex VARCHAR(10), species VARCHAR(10))")
	mustExec(t, root, `LOAD DATA LOCAL INFILE 'Reader::rawcsv' INTO TABLE p FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' IGNORE 1 LINES`)
	if n := queryFloat(t, root, "SELECT COUNT(*) FROM p WHERE mass IS NULL"); n != 30 {
		t.Fatalf("%v NULL masses, want 30 (an empty numeric field is NULL)", n)
	}
	wantErr(t, root, "CALL dp_domain('p', 'island', 'Biscoe,Dream')", "100 existing rows", "100 of them are empty strings",
		"UPDATE p SET island = NULLIF(island, '')")
	err := wantErr(t, root, "CALL dp_domain('p', 'sex', 'FEMALE,MALE')", "150 existing rows", `e.g. ["."]`, "75 of them are empty strings")
	if strings.Contains(err.Error(), "MALE\"") {
		t.Fatalf("a declared level named as outside the domain: %v", err)
	}
	mustExec(t, root, "UPDATE p SET island = NULLIF(island, ''), sex = NULLIF(NULLIF(sex, ''), '.')")
	mustExec(t, root, "CALL dp_domain('p', 'island', 'Biscoe,Dream')")
	mustExec(t, root, "CALL dp_domain('p', 'sex', 'FEMALE,MALE')")
	mustExec(t, root, "CALL dp_bounds('p', 'mass', 2000, 7000)")
	mustExec(t, root, "CALL dp_labels('p', 'species', 'Adelie,Gentoo')")
	mustExec(t, root, "CALL dp_protect('p', 10, 1e-5)")
	js := queryString(t, root, "SELECT DP_TRAIN('p', 1, 'auto', 'dry_run=1')")
	var plan struct{ Features []string }
	if err := json.Unmarshal([]byte(js), &plan); err != nil || strings.Join(plan.Features, ",") != "island=Biscoe,island=Dream,mass,sex=FEMALE,sex=MALE" {
		t.Fatalf("dry run after NULLIF (%v): %s", err, js)
	}
}
