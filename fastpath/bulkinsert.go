package fastpath

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/shopspring/decimal"

	"github.com/dpsql/dpsql/store"
)

// Fast multi-row INSERT (issue 13).
//
// go-mysql-server parses, plans and analyses every literal of a multi-row
// INSERT … VALUES as an expression (≈ 150 µs of CPU per 20-column row), far
// more than the store needs to write the row. For a statement of the plain
// form
//
//	INSERT INTO tbl [(col, …)] VALUES (lit, …), (lit, …), …
//
// whose literals are all numbers, simple quoted strings or NULL, the parser
// wrapper below hands the engine the equivalent
//
//	INSERT INTO tbl [(col, …)] SELECT * FROM dp_insert_values('<tuples>', '<kinds>')
//
// instead: a statement of one short literal, which the engine plans in the
// usual way (privileges, the guard's refusals, defaults, AUTO_INCREMENT,
// triggers, foreign keys, CHECK constraints and the insert iterator's type
// coercion, NOT NULL and duplicate-key checks all stay go-mysql-server's and
// the store's), and whose table function streams the tuples' values, built
// exactly as the planner builds the literals (ConvertVal: integers as the
// smallest fitting integer type, decimals as DECIMAL, exponents as DOUBLE,
// a leading minus as UnaryMinus). Only for a DOUBLE or FLOAT target column
// is a decimal literal read directly as the float64 it rounds to, which is
// the value the DECIMAL literal converts to (both correctly rounded).
// Anything else — other literal forms, expressions, DEFAULT, placeholders,
// comments, double quotes, backslash escapes, a tuple of the wrong width,
// IGNORE, ON DUPLICATE KEY UPDATE, an explicit AUTO_INCREMENT column (whose
// LAST_INSERT_ID rule go-mysql-server applies to VALUES only), a table the
// store does not hold — takes the ordinary path, which then answers
// exactly as before.

const insertValuesTFName = "dp_insert_values"

// bulkInsertMinBytes: shorter statements take the ordinary path (the
// rewrite pays off for large statements only). A variable for tests.
var bulkInsertMinBytes atomic.Int64

func init() { bulkInsertMinBytes.Store(4096) }

// bulkRewrites counts the statements rewritten (tests check the fast path
// was taken).
var bulkRewrites atomic.Int64

// bulkMarker is replaced by the tuples in the rewritten statement's AST.
const bulkMarker = "dpsql-bulk-values-marker"

var insertHead = regexp.MustCompile("(?is)^\\s*insert\\s+into\\s+((?:`[^`]+`|[a-z0-9_$]+)(?:\\s*\\.\\s*(?:`[^`]+`|[a-z0-9_$]+))?)\\s*(\\([^()'\"`;]*\\))?\\s*values?\\s*\\(")

// bulkParser wraps the engine's parser with the rewrite.
type bulkParser struct {
	sql.Parser
	st *store.Store
}

func (p bulkParser) Parse(ctx *sql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	if int64(len(query)) >= bulkInsertMinBytes.Load() {
		if st, ok := p.rewriteInsert(ctx, query); ok {
			return st, query, "", nil
		}
	}
	return p.Parser.Parse(ctx, query, multi)
}

func (p bulkParser) ParseWithOptions(ctx context.Context, query string, delim rune, multi bool, o ast.ParserOptions) (ast.Statement, string, string, error) {
	if sctx, ok := ctx.(*sql.Context); ok && delim == ';' && int64(len(query)) >= bulkInsertMinBytes.Load() {
		if st, ok := p.rewriteInsert(sctx, query); ok {
			return st, query, "", nil
		}
	}
	return p.Parser.ParseWithOptions(ctx, query, delim, multi, o)
}

// rewriteInsert returns the rewritten statement, or false for the ordinary
// path.
func (p bulkParser) rewriteInsert(ctx *sql.Context, query string) (ast.Statement, bool) {
	// The table function resolves in the current database.
	if cur := ctx.GetCurrentDatabase(); cur == "" || !p.st.HasDatabase(cur) {
		return nil, false
	}
	m := insertHead.FindStringSubmatchIndex(query)
	if m == nil {
		return nil, false
	}
	tuples := query[m[1]-1:]
	width, end, ok := scanTuples(tuples)
	if !ok {
		return nil, false
	}
	tuples = tuples[:end]
	name := query[m[2]:m[3]]
	var cols []string
	if m[4] >= 0 {
		for _, c := range strings.Split(query[m[4]+1:m[5]-1], ",") {
			c = strings.TrimSpace(c)
			if c == "" {
				return nil, false
			}
			cols = append(cols, c)
		}
	}
	kinds, ok := p.kinds(ctx, name, cols, width)
	if !ok {
		return nil, false
	}
	head := query[:m[1]-1]
	// Cut the VALUES keyword from the head.
	kw := strings.LastIndexAny(strings.ToLower(head), "v")
	if kw < 0 {
		return nil, false
	}
	rewritten := head[:kw] + " SELECT * FROM " + insertValuesTFName + "('" + bulkMarker + "', '" + kinds + "')"
	st, _, rest, err := p.Parser.Parse(ctx, rewritten, false)
	if err != nil || rest != "" {
		return nil, false
	}
	ins, ok := st.(*ast.Insert)
	if !ok || ins.Ignore != "" || len(ins.OnDup) > 0 {
		return nil, false
	}
	found := 0
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if v, ok := n.(*ast.SQLVal); ok && v.Type == ast.StrVal && string(v.Val) == bulkMarker {
			v.Val = []byte(tuples)
			found++
		}
		return true, nil
	}, ins)
	if found != 1 {
		return nil, false
	}
	bulkRewrites.Add(1)
	return ins, true
}

// kinds describes the target columns: 'f' for a DOUBLE or FLOAT column, 'g'
// for any other; false when the table is not the store's or has an
// explicit AUTO_INCREMENT column.
func (p bulkParser) kinds(ctx *sql.Context, name string, cols []string, width int) (string, bool) {
	db, tbl := ctx.GetCurrentDatabase(), ""
	switch parts := splitQualified(name); len(parts) {
	case 1:
		tbl = parts[0]
	case 2:
		db, tbl = parts[0], parts[1]
	default:
		return "", false
	}
	if db == "" || tbl == "" {
		return "", false
	}
	sch, err := p.st.TableSchema(db, tbl)
	if err != nil {
		return "", false
	}
	var target sql.Schema
	if cols == nil {
		target = sch
	} else {
		for _, c := range cols {
			i := sch.IndexOfColName(c)
			if i < 0 {
				return "", false
			}
			target = append(target, sch[i])
		}
	}
	if len(target) != width {
		return "", false
	}
	var b strings.Builder
	for _, c := range target {
		if c.AutoIncrement || c.Generated != nil {
			return "", false
		}
		switch c.Type.Type() {
		case types.Float64.Type(), types.Float32.Type():
			b.WriteByte('f')
		default:
			b.WriteByte('g')
		}
	}
	return b.String(), true
}

func splitQualified(name string) []string {
	var parts []string
	for len(name) > 0 {
		name = strings.TrimSpace(name)
		if strings.HasPrefix(name, "`") {
			j := strings.Index(name[1:], "`")
			if j < 0 {
				return nil
			}
			parts = append(parts, name[1:1+j])
			name = strings.TrimSpace(name[2+j:])
		} else {
			j := strings.IndexAny(name, ". ")
			if j < 0 {
				j = len(name)
			}
			parts = append(parts, name[:j])
			name = strings.TrimSpace(name[j:])
		}
		if strings.HasPrefix(name, ".") {
			name = name[1:]
		} else if name != "" {
			return nil
		}
	}
	return parts
}

// Literal scanning. A tuple list is "(v, …), (v, …), …" with optional
// whitespace, then optional ';' and whitespace to the end.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

type litKind uint8

const (
	litNull litKind = iota
	litInt
	litDec // decimal point, no exponent
	litExp // exponent
	litStr
)

// scanLit reads one literal at s[i:]; it returns its kind, the text (the
// string's content unescaped for litStr), the index after it and ok.
func scanLit(s string, i int) (litKind, string, int, bool) {
	if i >= len(s) {
		return 0, "", i, false
	}
	switch c := s[i]; {
	case c == '\'':
		var b []byte // only when the string has doubled quotes
		start := i + 1
		j := start
		for j < len(s) {
			switch s[j] {
			case '\\':
				return 0, "", i, false // escapes depend on sql_mode: ordinary path
			case '\'':
				if j+1 < len(s) && s[j+1] == '\'' {
					if b == nil {
						b = make([]byte, 0, j-start+16)
					}
					b = append(b, s[start:j+1]...)
					j += 2
					start = j
					continue
				}
				if b != nil {
					return litStr, string(append(b, s[start:j]...)), j + 1, true
				}
				return litStr, s[start:j], j + 1, true
			default:
				j++
			}
		}
		return 0, "", i, false
	case c == 'n' || c == 'N':
		if i+4 <= len(s) && strings.EqualFold(s[i:i+4], "null") && (i+4 == len(s) || !isIdentByte(s[i+4])) {
			return litNull, "", i + 4, true
		}
		return 0, "", i, false
	case c == '-' || c == '.' || c >= '0' && c <= '9':
		j := i
		if s[j] == '-' {
			j++
		}
		digits, dot, exp := 0, false, false
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
			digits++
		}
		if j < len(s) && s[j] == '.' {
			dot = true
			j++
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
				digits++
			}
		}
		if digits == 0 {
			return 0, "", i, false
		}
		if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
			exp = true
			j++
			if j < len(s) && (s[j] == '+' || s[j] == '-') {
				j++
			}
			ed := 0
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
				ed++
			}
			if ed == 0 {
				return 0, "", i, false
			}
		}
		if j < len(s) && isIdentByte(s[j]) {
			return 0, "", i, false
		}
		switch {
		case exp:
			return litExp, s[i:j], j, true
		case dot:
			return litDec, s[i:j], j, true
		}
		return litInt, s[i:j], j, true
	}
	return 0, "", i, false
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// scanTuples validates a tuple list and returns the common width and the
// end of the last tuple; false if any tuple is malformed or of another width.
func scanTuples(s string) (width, end int, ok bool) {
	i, width := 0, -1
	for {
		n, j, ok := scanTuple(s, i, nil)
		if !ok || width >= 0 && n != width || n == 0 {
			return 0, 0, false
		}
		width, end = n, j
		i = skipSpace(s, j)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
			continue
		}
		if i < len(s) && s[i] == ';' {
			i = skipSpace(s, i+1)
		}
		return width, end, i == len(s)
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// scanTuple reads "(v, …)" at s[i:], calling fn for every literal when set.
func scanTuple(s string, i int, fn func(k litKind, text string) error) (n, end int, ok bool) {
	if i >= len(s) || s[i] != '(' {
		return 0, i, false
	}
	i = skipSpace(s, i+1)
	for {
		k, text, j, ok := scanLit(s, i)
		if !ok {
			return 0, i, false
		}
		if fn != nil {
			if err := fn(k, text); err != nil {
				return 0, i, false
			}
		}
		n++
		i = skipSpace(s, j)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
			continue
		}
		if i < len(s) && s[i] == ')' {
			return n, i + 1, true
		}
		return 0, i, false
	}
}

// litValue builds the value go-mysql-server's planner gives the literal
// (see the file comment); kind is the target column's.
// Floats are boxed from nums (nil: one allocation each, numslab.go).
func litValue(ctx *sql.Context, k litKind, text string, kind byte, nums *numSlab) (any, error) {
	switch k {
	case litNull:
		return nil, nil
	case litStr:
		return text, nil
	case litInt:
		return intLiteral(ctx, text)
	case litExp:
		neg := text[0] == '-'
		if neg {
			text = text[1:]
		}
		f, err := parseFloat(text)
		if err != nil {
			return nil, err
		}
		if neg {
			f = -f
		}
		return nums.float(f), nil
	}
	// litDec
	if kind == 'f' {
		f, err := parseFloat(text)
		if err != nil {
			return nil, err
		}
		if f == 0 {
			f = 0 // DECIMAL has no negative zero
		}
		return nums.float(f), nil
	}
	neg := text[0] == '-'
	if neg {
		text = text[1:]
	}
	var v any
	p, sc := expression.GetDecimalPrecisionAndScale(strings.ToLower(text))
	if dt, err := types.CreateDecimalType(p, sc); err != nil {
		v = text
	} else if dv, _, err := dt.Convert(ctx, strings.ToLower(text)); err != nil {
		v = text
	} else {
		v = dv
	}
	if !neg {
		return v, nil
	}
	return unaryMinus(ctx, v)
}

// intLiteral mirrors the planner's convertInt (vitess folds a leading minus
// into the integer literal).
func intLiteral(ctx *sql.Context, value string) (any, error) {
	// One parse, then the first of the planner's tries that holds it (the
	// same type as trying each in turn).
	if v, err := strconv.ParseInt(value, 10, 64); err == nil {
		switch {
		case v >= math.MinInt8 && v <= math.MaxInt8:
			return int8(v), nil
		case v >= 0 && v <= math.MaxUint8:
			return uint8(v), nil
		case v >= math.MinInt16 && v <= math.MaxInt16:
			return int16(v), nil
		case v >= 0 && v <= math.MaxUint16:
			return uint16(v), nil
		case v >= math.MinInt32 && v <= math.MaxInt32:
			return int32(v), nil
		case v >= 0 && v <= math.MaxUint32:
			return uint32(v), nil
		}
		return v, nil
	}
	if v, err := strconv.ParseInt(value, 10, 8); err == nil {
		return int8(v), nil
	}
	if v, err := strconv.ParseUint(value, 10, 8); err == nil {
		return uint8(v), nil
	}
	if v, err := strconv.ParseInt(value, 10, 16); err == nil {
		return int16(v), nil
	}
	if v, err := strconv.ParseUint(value, 10, 16); err == nil {
		return uint16(v), nil
	}
	if v, err := strconv.ParseInt(value, 10, 32); err == nil {
		return int32(v), nil
	}
	if v, err := strconv.ParseUint(value, 10, 32); err == nil {
		return uint32(v), nil
	}
	if v, err := strconv.ParseInt(value, 10, 64); err == nil {
		return v, nil
	}
	if v, err := strconv.ParseUint(value, 10, 64); err == nil {
		return v, nil
	}
	if d, _, err := types.InternalDecimalType.Convert(ctx, value); err == nil {
		return d, nil
	}
	return nil, fmt.Errorf("could not convert %s to any numerical type", value)
}

func unaryMinus(ctx *sql.Context, v any) (any, error) {
	switch x := v.(type) {
	case decimal.Decimal:
		return x.Neg(), nil
	case string:
		return expression.NewUnaryMinus(expression.NewLiteral(x, types.LongText)).Eval(ctx, nil)
	}
	return nil, errors.New("unexpected literal")
}

// insertValuesTF is the table function dp_insert_values('<tuples>',
// '<kinds>'): the tuples' values as rows, one column per kind.
type insertValuesTF struct {
	db   sql.Database
	args []sql.Expression
	sch  sql.Schema
	// pipe: parse ahead in a producer goroutine (set by the bulk writer,
	// which always closes its source).
	pipe bool
}

var (
	_ sql.TableFunction      = (*insertValuesTF)(nil)
	_ sql.ExecSourceRel      = (*insertValuesTF)(nil)
	_ sql.CollationCoercible = (*insertValuesTF)(nil)
)

func (t *insertValuesTF) NewInstance(ctx *sql.Context, db sql.Database, args []sql.Expression) (sql.Node, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("%s takes 2 arguments", insertValuesTFName)
	}
	kinds, err := args[1].Eval(ctx, nil)
	if err != nil {
		return nil, err
	}
	ks, ok := kinds.(string)
	if !ok || ks == "" {
		return nil, fmt.Errorf("%s: the second argument must be a non-empty string", insertValuesTFName)
	}
	sch := make(sql.Schema, len(ks))
	for i := range ks {
		sch[i] = &sql.Column{Name: "c" + strconv.Itoa(i+1), Type: types.LongText, Nullable: true, Source: insertValuesTFName}
	}
	return &insertValuesTF{db: db, args: args, sch: sch}, nil
}

func (t *insertValuesTF) Name() string                  { return insertValuesTFName }
func (t *insertValuesTF) Database() sql.Database        { return t.db }
func (t *insertValuesTF) Schema() sql.Schema            { return t.sch }
func (t *insertValuesTF) Children() []sql.Node          { return nil }
func (t *insertValuesTF) IsReadOnly() bool              { return true }
func (t *insertValuesTF) Expressions() []sql.Expression { return t.args }
func (t *insertValuesTF) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 7
}

func (t *insertValuesTF) Resolved() bool {
	for _, a := range t.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}

func (t *insertValuesTF) String() string { return strings.ToUpper(insertValuesTFName) + "(…)" }

func (t *insertValuesTF) WithDatabase(db sql.Database) (sql.Node, error) {
	n := *t
	n.db = db
	return &n, nil
}

func (t *insertValuesTF) WithExpressions(exprs ...sql.Expression) (sql.Node, error) {
	if len(exprs) != len(t.args) {
		return nil, sql.ErrInvalidChildrenNumber.New(t, len(exprs), len(t.args))
	}
	n := *t
	n.args = exprs
	return &n, nil
}

func (t *insertValuesTF) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(t, len(children), 0)
	}
	return t, nil
}

func (t *insertValuesTF) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	v, err := t.args[0].Eval(ctx, nil)
	if err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("%s: the first argument must be a string", insertValuesTFName)
	}
	k, _ := t.args[1].Eval(ctx, nil)
	it := &insertValuesIter{s: s, kinds: k.(string)}
	if t.pipe {
		// The tuples are parsed ahead by a producer (bulkpipe.go); an
		// error ends them (next would return it again).
		it.pipe = newRowPipe("INSERT: parsing the values", insertChunkRows, func() (sql.Row, error, bool) {
			row, err := it.next(ctx)
			return row, err, err != nil
		})
	}
	return it, nil
}

// insertChunkRows is the tuples per chunk of the producer.
const insertChunkRows = 128

type insertValuesIter struct {
	s     string
	kinds string
	i     int
	done  bool
	pipe  *rowPipe
	slab  []any // rows are cut from it
	nums  numSlab
}

func (it *insertValuesIter) Next(ctx *sql.Context) (sql.Row, error) {
	if it.pipe != nil {
		return it.pipe.Next(ctx)
	}
	return it.next(ctx)
}

// next parses the next tuple. With a pipe it runs on the producer, which
// shares ctx read-only: litValue's conversions only read it.
func (it *insertValuesIter) next(ctx *sql.Context) (sql.Row, error) {
	if it.done {
		return nil, io.EOF
	}
	w := len(it.kinds)
	if len(it.slab) < w {
		it.slab = make([]any, w*insertChunkRows)
	}
	row := sql.Row(it.slab[:w:w])
	it.slab = it.slab[w:]
	var ferr error
	col := 0
	n, end, ok := scanTuple(it.s, it.i, func(k litKind, text string) error {
		if col >= len(row) {
			return sql.ErrInsertIntoMismatchValueCount.New()
		}
		v, err := litValue(ctx, k, text, it.kinds[col], &it.nums)
		if err != nil {
			ferr = err
			return err
		}
		row[col] = v
		col++
		return nil
	})
	if ferr != nil {
		return nil, ferr
	}
	if !ok || n != len(row) {
		return nil, sql.ErrInsertIntoMismatchValueCount.New()
	}
	i := skipSpace(it.s, end)
	if i < len(it.s) && it.s[i] == ',' {
		it.i = skipSpace(it.s, i+1)
	} else {
		it.done = true
	}
	return row, nil
}

func (it *insertValuesIter) Close(*sql.Context) error {
	if it.pipe != nil {
		it.pipe.Stop()
		it.pipe.Wait()
	}
	return nil
}
