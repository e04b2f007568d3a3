package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dpsql/dpsql/wal"
	bolt "go.etcd.io/bbolt"
)

// ImportOptions configures ImportCSV.
type ImportOptions struct {
	// Schema is used to create the table when it does not exist (primary key
	// from the columns' PrimaryKey flags). When nil, columns are named by
	// the header and typed from the first InferRows rows: BIGINT if every
	// non-empty value is an integer, else DOUBLE if every one is a finite
	// number, else TEXT; all nullable, no primary key.
	Schema sql.Schema
	// Validate, when set, is called for every row (converted to the table's
	// column types, in schema order) before it is accepted; an error aborts
	// the import with nothing imported. The row is reused between calls.
	Validate func(row sql.Row) error
	// BatchRows is the number of rows written per bbolt transaction
	// (default 100000).
	BatchRows int
	// InferRows is the number of rows used for type inference (default 10000).
	InferRows int
	// Comma is the field separator (default ',').
	Comma byte
}

// ImportCSV loads CSV data with a header row into db.table, creating the
// table if needed. Field values: an empty field is NULL except in string
// columns, where it is the empty string; \N is NULL everywhere. Header names
// are matched to columns case-insensitively; columns missing from the header
// get NULL (or the next AUTO_INCREMENT value).
//
// Rows are written in batches to a staging bucket and made visible in one
// final transaction, so the import is all-or-nothing (a table it created is
// dropped again on failure) and durable when it returns. It does not call
// the SQL hooks: it is the owner's bulk path.
func (s *Store) ImportCSV(db, table string, r io.Reader, opt ImportOptions) (n int64, err error) {
	if opt.BatchRows <= 0 {
		opt.BatchRows = 100000
	}
	if opt.InferRows <= 0 {
		opt.InferRows = 10000
	}
	if opt.Comma == 0 {
		opt.Comma = ','
	}
	cr := newCSVReader(r, opt.Comma)
	hdr, err := cr.read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return 0, errors.New("import: empty input, expected a header row")
		}
		return 0, fmt.Errorf("import: reading header: %w", err)
	}
	if len(hdr) > 0 {
		hdr[0] = bytes.TrimPrefix(hdr[0], []byte("\ufeff")) // UTF-8 byte order mark
	}
	header := make([]string, len(hdr))
	for i, h := range hdr {
		header[i] = strings.TrimSpace(string(h))
		if header[i] == "" {
			return 0, fmt.Errorf("import: header column %d has no name", i+1)
		}
		if err := validColumnName(header[i]); err != nil {
			return 0, fmt.Errorf("import: header column %d: %w", i+1, err)
		}
	}

	// Records read ahead for type inference are replayed first.
	var ahead []aheadRec
	if !s.HasTable(db, table) {
		sch := opt.Schema
		if sch == nil {
			if ahead, err = readAhead(cr, len(header), opt.InferRows); err != nil {
				return 0, err
			}
			sch = inferSchema(header, ahead)
		}
		switch cerr := s.CreateTable(db, table, sql.NewPrimaryKeySchema(sch)); {
		case cerr == nil:
			// A failed import leaves no table behind.
			defer func() {
				if err != nil {
					if ts, lerr := s.lookup(db, table); lerr == nil {
						_ = s.dropTable(ts.db, table)
					}
				}
			}()
		case !sql.ErrTableAlreadyExists.Is(cerr):
			return 0, fmt.Errorf("import: %w", cerr)
		}
	}
	ts, err := s.lookup(db, table)
	if err != nil {
		return 0, fmt.Errorf("import: %w", err)
	}
	im, err := s.newImport(ts, header, opt)
	if err != nil {
		return 0, err
	}
	defer im.cleanup()

	fields := make([][]byte, len(header))
	for _, rec := range ahead {
		for i := range rec.fields {
			fields[i] = []byte(rec.fields[i])
		}
		if err := im.add(fields, rec.line); err != nil {
			return 0, err
		}
	}
	for {
		rec, err := cr.read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("import: %w", err)
		}
		if len(rec) != len(header) {
			return 0, fmt.Errorf("import: line %d: %d fields, header has %d", cr.line, len(rec), len(header))
		}
		if err := im.add(rec, cr.line); err != nil {
			return 0, err
		}
	}
	return im.finish()
}

// validColumnName refuses header names MySQL would not take as column
// names: longer than 64 characters, control characters or backticks.
func validColumnName(name string) error {
	if utf8.RuneCountInString(name) > 64 {
		return fmt.Errorf("name %s is longer than 64 characters", fieldQuote([]byte(name)))
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("name %s is not valid UTF-8", fieldQuote([]byte(name)))
	}
	for _, r := range name {
		if unicode.IsControl(r) || r == '`' {
			return fmt.Errorf("name %s contains a control character or a backtick", fieldQuote([]byte(name)))
		}
	}
	return nil
}

type aheadRec struct {
	fields []string
	line   int
}

func readAhead(cr *csvReader, width, n int) ([]aheadRec, error) {
	var out []aheadRec
	for len(out) < n {
		rec, err := cr.read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
		if len(rec) != width {
			return nil, fmt.Errorf("import: line %d: %d fields, header has %d", cr.line, len(rec), width)
		}
		r := aheadRec{fields: make([]string, len(rec)), line: cr.line}
		for i, f := range rec {
			r.fields[i] = string(f)
		}
		out = append(out, r)
	}
	return out, nil
}

func inferSchema(header []string, rows []aheadRec) sql.Schema {
	sch := make(sql.Schema, len(header))
	for j, name := range header {
		isInt, isFloat, seen := true, true, false
		for _, r := range rows {
			v := strings.TrimSpace(r.fields[j])
			if v == "" || v == `\N` {
				continue
			}
			seen = true
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				isInt = false
			}
			if f, err := strconv.ParseFloat(v, 64); err != nil || math.IsInf(f, 0) || math.IsNaN(f) || !isDecimal([]byte(v)) {
				isFloat = false
			}
		}
		var t sql.Type = types.Text
		switch {
		case seen && isInt:
			t = types.Int64
		case seen && isFloat:
			t = types.Float64
		}
		sch[j] = &sql.Column{Name: name, Type: t, Nullable: true}
	}
	return sch
}

// importer writes one ImportCSV run into its staging bucket. Parsing and
// writing are pipelined: a writer goroutine commits batch i (disk writes and
// fsync) while the caller parses batch i+1.
type importer struct {
	s       *Store
	ts      *tableState
	m       *tableMeta
	opt     ImportOptions
	ctx     *sql.Context
	id      []byte
	colOf   []int // header position → column ordinal
	row     sql.Row
	fromHdr []bool

	cur    *batch
	free   chan *batch
	work   chan *batch
	done   chan error
	werr   atomic.Pointer[error] // first writer error, for early exit
	closed bool
	staged int64 // rows in the staging bucket (writer goroutine); -1 once published
}

// batch is an arena of encoded keys and rows.
type batch struct {
	keys, vals []byte
	kOff, vOff []int
}

var importSeq atomic.Uint64

func (s *Store) newImport(ts *tableState, header []string, opt ImportOptions) (*importer, error) {
	m := ts.meta.Load()
	im := &importer{
		s: s, ts: ts, m: m, opt: opt, ctx: sql.NewEmptyContext(),
		id:      binary.BigEndian.AppendUint64(nil, importSeq.Add(1)),
		colOf:   make([]int, len(header)),
		row:     make(sql.Row, len(m.schema())),
		fromHdr: make([]bool, len(m.schema())),
		cur:     &batch{},
		free:    make(chan *batch, 1),
		work:    make(chan *batch, 1),
		done:    make(chan error, 1),
	}
	for i, h := range header {
		o, ok := m.column(h)
		if !ok {
			return nil, fmt.Errorf("import: table %s has no column %q", m.name, h)
		}
		if im.fromHdr[o] {
			return nil, fmt.Errorf("import: column %q appears twice in the header", h)
		}
		im.colOf[i] = o
		im.fromHdr[o] = true
	}
	for o, c := range m.schema() {
		if !im.fromHdr[o] && !c.Nullable && !c.AutoIncrement {
			return nil, fmt.Errorf("import: NOT NULL column %q is missing from the header", c.Name)
		}
	}
	im.free <- &batch{}
	go im.writer()
	return im, nil
}

func (im *importer) writer() {
	var err error
	for b := range im.work {
		if err == nil {
			if err = im.write(b); err != nil {
				im.werr.Store(&err)
			}
		}
		b.keys, b.vals, b.kOff, b.vOff = b.keys[:0], b.vals[:0], b.kOff[:0], b.vOff[:0]
		im.free <- b
	}
	im.done <- err
}

// stop ends the writer and returns its first error.
func (im *importer) stop() error {
	if im.closed {
		return nil
	}
	im.closed = true
	close(im.work)
	return <-im.done
}

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// isDecimal reports whether f (surrounding blanks allowed) is a plain
// decimal number: optional sign, digits with an optional fraction, optional
// exponent. Go's parsers also accept 1_000, 0x1p3, Inf and NaN, which a CSV
// number must not be.
func isDecimal(f []byte) bool {
	f = bytes.TrimSpace(f)
	i := 0
	if i < len(f) && (f[i] == '+' || f[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(f) && f[i] >= '0' && f[i] <= '9'; i++ {
		digits++
	}
	if i < len(f) && f[i] == '.' {
		i++
		for ; i < len(f) && f[i] >= '0' && f[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(f) && (f[i] == 'e' || f[i] == 'E') {
		i++
		if i < len(f) && (f[i] == '+' || f[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(f) && f[i] >= '0' && f[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(f)
}

// fieldQuote quotes a field for an error message, cut to a few dozen
// bytes: a multi-megabyte field must not become a multi-megabyte error.
func fieldQuote(f []byte) string {
	const max = 64
	if len(f) <= max {
		return strconv.Quote(string(f))
	}
	return strconv.Quote(string(f[:max])) + fmt.Sprintf("… (%d bytes)", len(f))
}

// convert parses one field for column o. Numbers take a fast path; other
// types go through the column type's Convert, as an INSERT would.
func (im *importer) convert(o int, f []byte) (any, error) {
	c := im.m.schema()[o]
	k := im.m.codec.kinds[o]
	if string(f) == `\N` {
		return nil, nil
	}
	if len(f) == 0 && k != kString && k != kBytes {
		return nil, nil
	}
	if (types.IsNumber(c.Type) || types.IsDecimal(c.Type)) && !isDecimal(f) {
		return nil, fmt.Errorf("invalid %s value %s: numbers must be plain decimals", c.Type, fieldQuote(f))
	}
	switch k {
	case kFloat64:
		v, err := strconv.ParseFloat(unsafeString(bytes.TrimSpace(f)), 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("invalid DOUBLE value %s", fieldQuote(f))
		}
		return v, nil
	case kInt64:
		if !types.IsUnsigned(c.Type) && !types.IsYear(c.Type) {
			v, err := strconv.ParseInt(unsafeString(bytes.TrimSpace(f)), 10, 64)
			if err == nil {
				return v, nil
			}
		}
	}
	v, inRange, err := c.Type.Convert(im.ctx, string(f))
	if err != nil {
		return nil, fmt.Errorf("invalid %s value %s", c.Type, fieldQuote(f))
	}
	if !inRange {
		return nil, sql.ErrValueOutOfRange.New(fieldQuote(f), c.Type)
	}
	return v, nil
}

func (im *importer) add(rec [][]byte, line int) error {
	for i := range im.row {
		im.row[i] = nil
	}
	for i, f := range rec {
		o := im.colOf[i]
		v, err := im.convert(o, f)
		if err != nil {
			return fmt.Errorf("import: line %d, column %q: %w", line, im.m.schema()[o].Name, err)
		}
		im.row[o] = v
	}
	if a := im.m.autoCol; a >= 0 {
		if im.row[a] == nil {
			im.ts.autoMu.Lock()
			v := im.ts.autoNext
			im.ts.autoNext++
			im.ts.autoMu.Unlock()
			cv, _, err := im.m.schema()[a].Type.Convert(im.ctx, v)
			if err != nil {
				return fmt.Errorf("import: line %d: AUTO_INCREMENT: %w", line, err)
			}
			im.row[a] = cv
		} else {
			im.ts.bumpAutoInc(im.row[a])
		}
	}
	if im.opt.Validate != nil {
		if err := im.opt.Validate(im.row); err != nil {
			return fmt.Errorf("import: line %d: %w", line, err)
		}
	}
	var err error
	b := im.cur
	if b.vals, err = im.m.codec.encode(im.ctx, b.vals, im.row); err != nil {
		return fmt.Errorf("import: line %d: %w", line, err)
	}
	b.vOff = append(b.vOff, len(b.vals))
	if im.m.keys == nil {
		b.keys = binary.BigEndian.AppendUint64(b.keys, im.ts.seq.Add(1)-1)
	} else if b.keys, err = im.m.keys.key(im.ctx, b.keys, im.row); err != nil {
		return fmt.Errorf("import: line %d: %w", line, err)
	}
	b.kOff = append(b.kOff, len(b.keys))
	if len(b.kOff) >= im.opt.BatchRows {
		return im.flush()
	}
	return nil
}

// flush hands the current batch to the writer and takes a free one. A
// writer error surfaces here (or at finish).
func (im *importer) flush() error {
	if len(im.cur.kOff) == 0 {
		return nil
	}
	if err := im.werr.Load(); err != nil {
		return *err
	}
	im.work <- im.cur
	im.cur = <-im.free
	return nil
}

func (im *importer) staging(tx *bolt.Tx, create bool) (*bolt.Bucket, *bolt.Bucket, error) {
	tb := tableBucket(tx, im.ts.db.key, im.ts.id)
	if _, err := readStat(tb, im.m); err != nil {
		return nil, nil, err
	}
	if !create {
		ib := tb.Bucket(bucketImports)
		if ib == nil || ib.Bucket(im.id) == nil {
			return tb, nil, errors.New("import: staging data disappeared")
		}
		return tb, ib.Bucket(im.id), nil
	}
	ib, err := tb.CreateBucketIfNotExists(bucketImports)
	if err != nil {
		return nil, nil, err
	}
	run, err := ib.CreateBucketIfNotExists(im.id)
	if err != nil {
		return nil, nil, err
	}
	if _, err := run.CreateBucketIfNotExists(bucketRows); err != nil {
		return nil, nil, err
	}
	return tb, run, nil
}

// write commits a batch into the staging bucket in one transaction.
func (im *importer) write(b *batch) error {
	n := len(b.kOff)
	type kv struct{ k, v []byte }
	batch := make([]kv, n)
	kp, vp := 0, 0
	for i := 0; i < n; i++ {
		batch[i] = kv{b.keys[kp:b.kOff[i]], b.vals[vp:b.vOff[i]]}
		kp, vp = b.kOff[i], b.vOff[i]
	}
	if im.m.keys != nil {
		sort.Slice(batch, func(i, j int) bool { return bytes.Compare(batch[i].k, batch[j].k) < 0 })
		for i := 1; i < n; i++ {
			if bytes.Equal(batch[i].k, batch[i-1].k) {
				return im.dupError(batch[i].v)
			}
		}
	}
	var dup []byte
	err := wal.Update(im.s.db, func(tx *bolt.Tx) error {
		tb, run, err := im.staging(tx, true)
		if err != nil {
			return err
		}
		rows := run.Bucket(bucketRows)
		rows.FillPercent = 1.0 // keys arrive in increasing order within a batch
		live := tb.Bucket(bucketRows)
		for _, e := range batch {
			if im.m.keys != nil {
				if rows.Get(e.k) != nil {
					dup = e.v
					return errDupAtCommit
				}
				if v := live.Get(e.k); v != nil {
					dup = append([]byte{}, v...)
					return errDupAtCommit
				}
			}
			if err := rows.Put(e.k, e.v); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errDupAtCommit) {
		return im.dupError(dup)
	}
	if err != nil {
		return fmt.Errorf("import: writing batch: %w", err)
	}
	im.staged += int64(n)
	return nil
}

func (im *importer) dupError(v []byte) error {
	full := newProjection(len(im.m.schema()), seqOrds(len(im.m.schema())))
	row := make(sql.Row, len(im.m.schema()))
	if err := im.m.codec.decode(v, &full, row); err != nil {
		return err
	}
	vals := make([]any, len(im.m.pk.PkOrdinals))
	for i, o := range im.m.pk.PkOrdinals {
		vals[i] = row[o]
	}
	return fmt.Errorf("import: %w", sql.NewUniqueKeyErr(fmt.Sprint(vals), true, nil))
}

// finish makes the staged rows visible: an empty table just takes over the
// staging bucket; otherwise rows are copied with a final key check.
func (im *importer) finish() (int64, error) {
	if err := im.flush(); err != nil {
		return 0, err
	}
	if err := im.stop(); err != nil {
		return 0, err
	}
	if im.staged == 0 {
		return 0, nil
	}
	im.ts.ddlMu.Lock()
	defer im.ts.ddlMu.Unlock()
	var dup []byte
	err := im.s.ddlUpdate(im.ts, func(tx *bolt.Tx) error {
		tb, run, err := im.staging(tx, false)
		if err != nil {
			return err
		}
		st, err := readStat(tb, im.m)
		if err != nil {
			return err
		}
		if st.count == 0 {
			if err := tb.DeleteBucket(bucketRows); err != nil {
				return err
			}
			if err := run.MoveBucket(bucketRows, tb); err != nil {
				return err
			}
		} else {
			live := tb.Bucket(bucketRows)
			if im.m.keys == nil {
				live.FillPercent = 0.9
			}
			err := run.Bucket(bucketRows).ForEach(func(k, v []byte) error {
				if im.m.keys != nil && live.Get(k) != nil {
					dup = append([]byte{}, v...)
					return errDupAtCommit
				}
				return live.Put(k, v)
			})
			if err != nil {
				return err
			}
		}
		if err := tb.Bucket(bucketImports).DeleteBucket(im.id); err != nil {
			return err
		}
		if err := rebuildIndexes(im.ctx, tb, im.m); err != nil {
			return err
		}
		st.count += uint64(im.staged)
		st.seq = max(st.seq, im.ts.seq.Load())
		im.ts.autoMu.Lock()
		st.autoInc = max(st.autoInc, im.ts.autoNext)
		im.ts.autoMu.Unlock()
		return tb.Put(keyStat, st.bytes())
	})
	if errors.Is(err, errDupAtCommit) {
		return 0, im.dupError(dup)
	}
	if err != nil {
		return 0, fmt.Errorf("import: committing: %w", err)
	}
	n := im.staged
	im.staged = -1 // nothing left to clean up
	return n, nil
}

// cleanup drops the staging bucket of a failed import.
func (im *importer) cleanup() {
	_ = im.stop()
	if im.staged < 0 {
		return
	}
	_ = wal.Update(im.s.db, func(tx *bolt.Tx) error {
		tb := tableBucket(tx, im.ts.db.key, im.ts.id)
		if tb == nil {
			return nil
		}
		if ib := tb.Bucket(bucketImports); ib != nil && ib.Bucket(im.id) != nil {
			return ib.DeleteBucket(im.id)
		}
		return nil
	})
}
