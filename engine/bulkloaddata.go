package engine

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	sqltypes "github.com/dolthub/vitess/go/sqltypes"
)

// LOAD DATA LOCAL's rows for the bulk writer (issue 13).
//
// go-mysql-server's loadDataIter builds a literal expression per field and
// evaluates it (≈ 30 % of LOAD DATA's CPU). fastLoadData yields the same
// rows directly for the plain form: LOCAL, no user variables or SET, no
// LINES STARTING BY, no ENCLOSED BY, no column with a DEFAULT. Its field
// rules are loadDataIter's (split on the field terminator; with an escape
// character, \N is NULL, \Z and \0 are bytes 26 and 0, otherwise the escape
// character is removed; an empty field is '' for a string column, else
// NULL; "NULL" is NULL; empty lines are skipped; without a column list,
// missing trailing fields are NULL, or the NOT NULL error). Only when the
// statement has no CHECK constraint (which would see the raw string) is a
// DOUBLE field parsed here, with the parse go-mysql-server's conversion
// applies (strconv.ParseFloat after trimming blanks), and only when that
// succeeds: a field it refuses stays a string and fails exactly as before.

// fastLoadEligible reports whether ld can be read by fastLoadData.
func fastLoadEligible(ld *plan.LoadData) bool {
	if !ld.Local || ld.LinesStartingBy != "" || ld.FieldsEnclosedBy != "" || ld.FieldsTerminatedBy == "" || ld.LinesTerminatedBy == "" {
		return false
	}
	for _, v := range ld.UserVars {
		if v != nil {
			return false
		}
	}
	for _, e := range ld.SetExprs {
		if e != nil {
			return false
		}
	}
	for _, c := range ld.DestSch {
		if c.Default != nil {
			return false
		}
	}
	return len(ld.DestSch) > 0
}

// fastLoadData replaces a *plan.LoadData in the bulk writer's source.
type fastLoadData struct {
	ld *plan.LoadData
	// typed: parse DOUBLE fields here (no CHECK constraint sees them).
	typed bool
}

var _ sql.ExecSourceRel = (*fastLoadData)(nil)

func (f *fastLoadData) Resolved() bool       { return f.ld.Resolved() }
func (f *fastLoadData) String() string       { return f.ld.String() }
func (f *fastLoadData) Schema() sql.Schema   { return f.ld.Schema() }
func (f *fastLoadData) Children() []sql.Node { return nil }
func (f *fastLoadData) IsReadOnly() bool     { return false }
func (f *fastLoadData) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(f, len(children), 0)
	}
	return f, nil
}

func (f *fastLoadData) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	n := f.ld
	// As go-mysql-server's buildLoadData for LOCAL.
	_, localInfile, ok := sql.SystemVariables.GetGlobal("local_infile")
	if !ok {
		return nil, fmt.Errorf("error: local_infile variable was not found")
	}
	if localInfile.(int8) == 0 {
		return nil, fmt.Errorf("local_infile needs to be set to 1 to use LOCAL")
	}
	reader, err := ctx.LoadInfile(n.File)
	if err != nil {
		return nil, err
	}
	scanner := bufio.NewScanner(reader)
	scanner.Buffer(nil, int(types.LongTextBlobMax))
	scanner.Split(n.SplitLines)

	sch := n.Schema()
	source := sch[0].Source
	colNames := n.ColNames
	if len(colNames) == 0 {
		colNames = make([]string, len(sch))
		for i, col := range sch {
			colNames[i] = col.Name
		}
	}
	fieldToColMap := make([]int, len(n.UserVars))
	for fieldIdx, colIdx := 0, 0; fieldIdx < len(n.UserVars) && colIdx < len(colNames); fieldIdx++ {
		fieldToColMap[fieldIdx] = sch.IndexOf(colNames[colIdx], source)
		colIdx++
	}
	it := &fastLoadIter{
		reader:        reader,
		scanner:       scanner,
		destSch:       n.DestSch,
		colCount:      len(n.ColNames),
		fieldToColMap: fieldToColMap,
		nUserVars:     len(n.UserVars),
		ignoreNum:     n.IgnoreNum,
		term:          n.FieldsTerminatedBy,
		esc:           n.FieldsEscapedBy,
	}
	it.isString = make([]bool, len(n.DestSch))
	it.isDouble = make([]bool, len(n.DestSch))
	for i, c := range n.DestSch {
		_, it.isString[i] = c.Type.(sql.StringType)
		it.isDouble[i] = f.typed && c.Type.Type() == sqltypes.Float64
	}
	return it, nil
}

type fastLoadIter struct {
	reader        io.ReadCloser
	scanner       *bufio.Scanner
	destSch       sql.Schema
	colCount      int
	fieldToColMap []int
	nUserVars     int
	ignoreNum     int64
	term, esc     string
	isString      []bool
	isDouble      []bool
	fields        []string
}

func (l *fastLoadIter) Next(ctx *sql.Context) (sql.Row, error) {
	for ; l.ignoreNum > 0 && l.scanner.Scan(); l.ignoreNum-- {
		if err := l.scanner.Err(); err != nil {
			l.reader.Close()
			return nil, err
		}
	}
	for {
		if !l.scanner.Scan() {
			if err := l.scanner.Err(); err != nil {
				return nil, err
			}
			return nil, io.EOF
		}
		line := l.scanner.Text()
		if line == "" {
			continue // loadDataIter skips empty lines
		}
		return l.parse(line)
	}
}

// parse is loadDataIter.parseFields followed by the literals' evaluation.
func (l *fastLoadIter) parse(line string) (sql.Row, error) {
	l.fields = splitInto(l.fields[:0], line, l.term)
	fields := l.fields
	row := make(sql.Row, len(l.destSch))
	set := make([]bool, len(l.destSch))
	for fieldIdx, exprIdx := 0, 0; fieldIdx < len(fields) && fieldIdx < l.nUserVars; fieldIdx++ {
		if exprIdx >= len(row) {
			continue
		}
		field := fields[fieldIdx]
		null := false
		if l.esc != "" {
			switch field {
			case "\\N":
				null = true
			case "\\Z":
				field = "\x1a"
			case "\\0":
				field = "\x00"
			default:
				if strings.Contains(field, l.esc) {
					field = strings.ReplaceAll(field, l.esc, "")
				}
			}
		}
		set[exprIdx] = true
		switch {
		case null || field == "NULL":
			row[exprIdx] = nil
		case field == "":
			if l.isString[l.fieldToColMap[fieldIdx]] {
				row[exprIdx] = ""
			} else {
				row[exprIdx] = nil // no DEFAULT (fastLoadEligible)
			}
		default:
			row[exprIdx] = l.value(exprIdx, field)
		}
		exprIdx++
	}
	if l.colCount == 0 {
		for i, ok := range set {
			if ok {
				continue
			}
			col := l.destSch[i]
			if !col.Nullable && !col.AutoIncrement {
				return nil, sql.ErrInsertIntoNonNullableDefaultNullColumn.New(col.Name)
			}
		}
	}
	return row, nil
}

// value is a field's value: the string, or for a DOUBLE column the number
// go-mysql-server's conversion would make of it, when it makes one.
func (l *fastLoadIter) value(i int, field string) any {
	if l.isDouble[i] {
		if f, err := strconv.ParseFloat(strings.Trim(field, " \t\n\r"), 64); err == nil {
			return f
		}
	}
	return field
}

// splitInto is strings.Split into a reused slice.
func splitInto(dst []string, s, sep string) []string {
	if len(sep) == 1 {
		c := sep[0]
		for {
			i := strings.IndexByte(s, c)
			if i < 0 {
				return append(dst, s)
			}
			dst = append(dst, s[:i])
			s = s[i+1:]
		}
	}
	return append(dst, strings.Split(s, sep)...)
}

func (l *fastLoadIter) Close(*sql.Context) error { return l.reader.Close() }
