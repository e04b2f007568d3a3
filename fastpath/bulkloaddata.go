package fastpath

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unsafe"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
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
// applies (strconv.ParseFloat after trimming blanks; fastfloat.go), and likewise a
// BIGINT field of a column without AUTO_INCREMENT (strconv.ParseInt after
// trimming blanks and tabs, the conversion's first try), and only when that
// succeeds: a field it refuses stays a string and fails exactly as before.
// Rows are cut from slabs of slabRows rows (one allocation per slab), and
// the numbers are boxed from slabs too (numslab.go).

// fastLoadEligible reports whether ld can be read by fastLoadData.
func fastLoadEligible(ld *plan.LoadData) bool {
	// [OPTIONALLY] ENCLOSED BY one character is read here (splitLoadFields);
	// go-mysql-server's reader refuses unenclosed fields (issue 29).
	if !ld.Local || ld.LinesStartingBy != "" || len(ld.FieldsEnclosedBy) > 1 || len(ld.FieldsEscapedBy) > 1 || ld.FieldsTerminatedBy == "" || ld.LinesTerminatedBy == "" {
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
	}
	if n.FieldsEnclosedBy != "" {
		it.encl = n.FieldsEnclosedBy[0]
	}
	if n.FieldsEscapedBy != "" {
		it.esc = n.FieldsEscapedBy[0]
	}
	it.isString = make([]bool, len(n.DestSch))
	it.kind = make([]exactKind, len(n.DestSch))
	exact := exactKinds(n.DestSch)
	it.borrow = true
	for i, c := range n.DestSch {
		_, it.isString[i] = c.Type.(sql.StringType)
		if f.typed && !c.AutoIncrement {
			it.kind[i] = exact[i]
		}
		if it.kind[i] == exactNone {
			it.borrow = false
		}
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
	term          string
	encl, esc     byte // 0: none
	isString      []bool
	// kind: parse the column's fields as DOUBLE or BIGINT here.
	kind []exactKind
	// borrow: every column is parsed here, so lines are read without a
	// copy (a field kept as a string is copied by value).
	borrow bool
	fields []string
	parsed []loadField
	set    []bool
	// slab: rows are cut from it, a block at a time; nums holds the
	// parsed numbers the rows point to.
	slab     []any
	nums     numSlab
	scanDone bool // the scanner failed
	pipe     *rowPipe
}

// Next returns the rows and errors of the file, parsed ahead by a
// producer goroutine (bulkpipe.go).
func (l *fastLoadIter) Next(ctx *sql.Context) (sql.Row, error) {
	if l.pipe == nil {
		l.pipe = newRowPipe("LOAD DATA: parsing the file", loadChunkRows, func() (sql.Row, error, bool) {
			row, err := l.next()
			return row, err, err == io.EOF || err != nil && l.scanDone
		})
	}
	return l.pipe.Next(ctx)
}

// loadChunkRows is the lines per chunk of the producer.
const loadChunkRows = 256

// next is the synchronous iterator (go-mysql-server's loadDataIter.Next
// without the literals); scanDone is set with the scanner's error.
func (l *fastLoadIter) next() (sql.Row, error) {
	for ; l.ignoreNum > 0 && l.scanner.Scan(); l.ignoreNum-- {
	}
	if l.ignoreNum > 0 {
		l.ignoreNum = 0
		if err := l.scanner.Err(); err != nil {
			l.scanDone = true
			return nil, err
		}
	}
	for {
		if !l.scanner.Scan() {
			if err := l.scanner.Err(); err != nil {
				l.scanDone = true
				return nil, err
			}
			return nil, io.EOF
		}
		var line string
		if l.borrow {
			// Valid until the next Scan: value copies what it keeps.
			if b := l.scanner.Bytes(); len(b) > 0 {
				line = unsafe.String(&b[0], len(b))
			}
		} else {
			line = l.scanner.Text()
		}
		if line == "" {
			continue // loadDataIter skips empty lines
		}
		return l.parse(line)
	}
}

// parse is loadDataIter.parseFields followed by the literals' evaluation.
func (l *fastLoadIter) parse(line string) (sql.Row, error) {
	// A line without the escape character and no enclosure splits on the
	// terminator alone; otherwise MySQL's rules (splitLoadFields).
	fields := l.parsed[:0]
	if l.encl == 0 && (l.esc == 0 || strings.IndexByte(line, l.esc) < 0) {
		l.fields = splitInto(l.fields[:0], line, l.term)
		for _, f := range l.fields {
			fields = append(fields, loadField{s: f, null: f == "NULL"})
		}
	} else {
		fields = splitLoadFields(fields, line, l.term, l.encl, l.esc)
	}
	l.parsed = fields
	w := len(l.destSch)
	if len(l.slab) < w {
		l.slab = make([]any, w*slabRows)
	}
	row := sql.Row(l.slab[:w:w])
	l.slab = l.slab[w:]
	if l.set == nil {
		l.set = make([]bool, w)
	}
	set := l.set
	clear(set)
	for fieldIdx, exprIdx := 0, 0; fieldIdx < len(fields) && fieldIdx < l.nUserVars; fieldIdx++ {
		if exprIdx >= len(row) {
			continue
		}
		field, null := fields[fieldIdx].s, fields[fieldIdx].null
		set[exprIdx] = true
		switch {
		case null:
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
	switch l.kind[i] {
	case exactFloat64:
		if f, err := parseFloat(trimCut(field, " \t\n\r")); err == nil {
			return l.nums.float(f)
		}
	case exactInt64:
		// convertToInt64's first parse (intCutSet is " \t").
		if n, err := strconv.ParseInt(trimCut(field, " \t"), 10, 64); err == nil {
			return l.nums.int(n)
		}
	}
	if l.borrow {
		return strings.Clone(field)
	}
	return field
}

// trimCut is strings.Trim(s, cut) without building the cut set when s
// has nothing to trim (the common case).
func trimCut(s, cut string) string {
	if s == "" || strings.IndexByte(cut, s[0]) < 0 && strings.IndexByte(cut, s[len(s)-1]) < 0 {
		return s
	}
	return strings.Trim(s, cut)
}

// slabRows is the rows per allocation of row storage.
const slabRows = 256

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

// Close stops the producer: closing the reader (an io.Pipe fed by vitess,
// which then drains the rest of the file from the client) ends a read the
// producer is blocked in, and Close returns after the producer.
func (l *fastLoadIter) Close(*sql.Context) error {
	if l.pipe == nil || !l.pipe.started() {
		return l.reader.Close()
	}
	l.pipe.Stop()
	err := l.reader.Close()
	l.pipe.Wait()
	return err
}
