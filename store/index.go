package store

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/shopspring/decimal"
	bolt "go.etcd.io/bbolt"
)

// Secondary and unique indexes.
//
// Each index is a bbolt bucket (table bucket / "idx" / 4-byte index id) of
// entries key = the indexed values ‖ the row's key, value = the row's key.
// Every indexed value is a marker byte (0x00 NULL, 0x01 a value) followed by
// an order-preserving, prefix-free encoding (keys.go), so a range of values
// is a range of keys and NULLs sort first, as in InnoDB. A unique index
// holds at most one entry per prefix of values without NULL (MySQL allows
// any number of NULLs). Entries are maintained with the rows by the
// transaction that writes them (editor.go, txn.go).

var bucketIndexes = []byte("idx")

// indexDef is the persisted definition of an index.
type indexDef struct {
	ID      uint32   `json:"id"`
	Name    string   `json:"name"`
	Columns []string `json:"columns"` // lower-case column names
	Prefix  []uint16 `json:"prefix,omitempty"`
	Unique  bool     `json:"unique,omitempty"`
	Comment string   `json:"comment,omitempty"`
	// Vector indexes are kept as definitions only: they hold no entries
	// and lookups through them scan the table (results are the same;
	// ORDER BY distance is sorted by the engine).
	Vector bool `json:"vector,omitempty"`
}

// indexMeta is an index resolved against a schema.
type indexMeta struct {
	def    indexDef
	id     uint32
	name   string
	unique bool
	vector bool
	ords   []int
	kinds  []kind
	cols   []*sql.Column
	prefix []uint16 // per column; 0: whole value
}

func (m *tableMeta) setIndexes(defs []indexDef) error {
	m.indexes = nil
	for _, d := range defs {
		im := &indexMeta{def: d, id: d.ID, name: d.Name, unique: d.Unique, vector: d.Vector}
		for j, c := range d.Columns {
			o, ok := m.column(c)
			if !ok {
				return fmt.Errorf("index %q: no column %q", d.Name, c)
			}
			k := m.codec.kinds[o]
			switch {
			case d.Vector:
			case k == kJSON || k == kGeometry:
				return fmt.Errorf("index %q: JSON and spatial columns (%q) cannot be indexed (spatial indexes are not supported)", d.Name, c)
			}
			im.ords = append(im.ords, o)
			im.kinds = append(im.kinds, k)
			im.cols = append(im.cols, m.schema()[o])
			var p uint16
			if j < len(d.Prefix) {
				p = d.Prefix[j]
			}
			im.prefix = append(im.prefix, p)
		}
		m.indexes = append(m.indexes, im)
	}
	return nil
}

func (m *tableMeta) index(name string) (int, bool) {
	for i, im := range m.indexes {
		if strings.EqualFold(im.name, name) {
			return i, true
		}
	}
	return -1, false
}

func idxKey(id uint32) []byte { return binary.BigEndian.AppendUint32(nil, id) }

// indexBucket finds index id's bucket in a table bucket, or nil.
func indexBucket(tb *bolt.Bucket, id uint32) *bolt.Bucket {
	ib := tb.Bucket(bucketIndexes)
	if ib == nil {
		return nil
	}
	return ib.Bucket(idxKey(id))
}

// entry encodes the index entry of a row (all columns, normalized values)
// stored under row key rk. uniq reports a unique index entry without NULL.
func (im *indexMeta) entry(ctx *sql.Context, row sql.Row, rk []byte) (key []byte, uniq bool, err error) {
	if im.vector {
		return nil, false, nil
	}
	uniq = im.unique
	for i, o := range im.ords {
		v := row[o]
		if v == nil {
			key = append(key, 0)
			uniq = false
			continue
		}
		if v, err = normalize(ctx, im.kinds[i], im.cols[i].Type, v); err != nil {
			return nil, false, fmt.Errorf("column %q: %w", im.cols[i].Name, err)
		}
		key = append(key, 1)
		key = appendIndexValue(key, im.kinds[i], im.cols[i].Type, v, im.prefix[i])
	}
	key = append(key, rk...)
	if len(key) > maxIndexKey {
		return nil, false, fmt.Errorf("index %q: entry of %d bytes exceeds the %d-byte key limit; index a prefix of long columns (KEY (col(n)))", im.name, len(key), maxIndexKey)
	}
	return key, uniq, nil
}

// maxIndexKey bounds index entries well below bbolt's 32 KiB key limit.
const maxIndexKey = 16 << 10

// appendIndexValue encodes a non-NULL normalized value of an index column.
func appendIndexValue(dst []byte, k kind, t sql.Type, v any, prefix uint16) []byte {
	switch k {
	case kDecimal:
		return appendDecimalKey(dst, v.(decimal.Decimal))
	case kString:
		s := v.(string)
		if prefix > 0 && utf8.RuneCountInString(s) > int(prefix) {
			n := 0
			for i := range s {
				if n == int(prefix) {
					s = s[:i]
					break
				}
				n++
			}
		}
		return appendStringKey(dst, t, s)
	case kBytes:
		b := v.([]byte)
		if prefix > 0 && len(b) > int(prefix) {
			b = b[:prefix]
		}
		return appendEscaped(dst, b)
	}
	return appendKeyPart(dst, k, t, v)
}

// appendDecimalKey encodes a decimal so that byte order is numeric order and
// equal values (1.5, 1.50) encode alike: a sign byte, then for non-zero
// values the decimal exponent and the significant digits (0.d1d2… × 10^e),
// all inverted for negative numbers.
func appendDecimalKey(dst []byte, d decimal.Decimal) []byte {
	switch d.Sign() {
	case 0:
		return append(dst, 1)
	}
	digits := new(big.Int).Abs(d.Coefficient()).String()
	exp := int64(d.Exponent())
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	adj := int64(len(digits)) + exp
	body := binary.BigEndian.AppendUint32(nil, uint32(int32(adj))^1<<31)
	body = append(body, digits...)
	body = append(body, 0)
	if d.Sign() > 0 {
		return append(append(dst, 2), body...)
	}
	dst = append(dst, 0)
	for _, c := range body {
		dst = append(dst, ^c)
	}
	return dst
}

// Index is a table's index as go-mysql-server sees it: PRIMARY (im nil) or
// a secondary index.
type Index struct {
	db, table string
	meta      *tableMeta
	im        *indexMeta
}

var (
	_ sql.Index         = (*Index)(nil)
	_ sql.OrderedIndex  = (*Index)(nil)
	_ sql.ExtendedIndex = (*Index)(nil)
)

func (x *Index) ID() string {
	if x.im == nil {
		return "PRIMARY"
	}
	return x.im.name
}
func (x *Index) Database() string { return x.db }
func (x *Index) Table() string    { return x.table }

func (x *Index) columns() []*sql.Column {
	if x.im != nil {
		return x.im.cols
	}
	out := make([]*sql.Column, len(x.meta.pk.PkOrdinals))
	for i, o := range x.meta.pk.PkOrdinals {
		out[i] = x.meta.schema()[o]
	}
	return out
}

func (x *Index) ordinals() []int {
	if x.im != nil {
		return x.im.ords
	}
	return x.meta.pk.PkOrdinals
}

// extended lists the index's columns followed by the primary-key columns
// it does not contain, which every entry also holds (as InnoDB's secondary
// indexes do): the engine may use them to match foreign keys.
func (x *Index) extended() ([]*sql.Column, []int) {
	cols, ords := append([]*sql.Column{}, x.columns()...), append([]int{}, x.ordinals()...)
	if x.im == nil || x.im.vector {
		return cols, ords
	}
	for _, o := range x.meta.pk.PkOrdinals {
		found := false
		for _, io := range ords {
			found = found || io == o
		}
		if !found {
			cols = append(cols, x.meta.schema()[o])
			ords = append(ords, o)
		}
	}
	return cols, ords
}

func (x *Index) ExtendedExpressions() []string {
	cols, _ := x.extended()
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = x.table + "." + c.Name
	}
	return out
}

func (x *Index) ExtendedColumnExpressionTypes() []sql.ColumnExpressionType {
	cols, _ := x.extended()
	out := make([]sql.ColumnExpressionType, len(cols))
	for i, c := range cols {
		out[i] = sql.ColumnExpressionType{Expression: x.table + "." + c.Name, Type: c.Type}
	}
	return out
}

func (x *Index) Expressions() []string {
	cols := x.columns()
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = x.table + "." + c.Name
	}
	return out
}

func (x *Index) ColumnExpressionTypes() []sql.ColumnExpressionType {
	cols := x.columns()
	out := make([]sql.ColumnExpressionType, len(cols))
	for i, c := range cols {
		out[i] = sql.ColumnExpressionType{Expression: x.table + "." + c.Name, Type: c.Type}
	}
	return out
}

func (x *Index) IsUnique() bool                             { return x.im == nil || x.im.unique }
func (x *Index) IsSpatial() bool                            { return false }
func (x *Index) IsFullText() bool                           { return false }
func (x *Index) IsVector() bool                             { return false }
func (x *Index) IsGenerated() bool                          { return false }
func (x *Index) IndexType() string                          { return "BTREE" }
func (x *Index) CanSupport(*sql.Context, ...sql.Range) bool { return true }
func (x *Index) CanSupportOrderBy(sql.Expression) bool      { return false }

func (x *Index) Comment() string {
	if x.im == nil {
		return ""
	}
	return x.im.def.Comment
}

func (x *Index) PrefixLengths() []uint16 {
	if x.im == nil {
		return nil
	}
	for _, p := range x.im.prefix {
		if p > 0 {
			return x.im.prefix
		}
	}
	return nil
}

// Order: index scans return rows in index order, except through a primary
// key of an old table format with a DECIMAL key column (keyed by text).
func (x *Index) Order() sql.IndexOrder {
	if x.im != nil && x.im.vector {
		return sql.IndexOrderNone
	}
	if x.im == nil && x.meta.keys != nil && !x.meta.keys.orderedDec {
		for _, k := range x.meta.keys.kinds {
			if k == kDecimal {
				return sql.IndexOrderNone
			}
		}
	}
	return sql.IndexOrderAsc
}

func (x *Index) Reversible() bool { return x.Order() == sql.IndexOrderAsc }

// layout describes how the index's key parts are encoded, for turning
// ranges into key intervals.
type keyPart struct {
	kind    kind
	col     *sql.Column
	prefix  uint16
	marker  bool // NULL marker byte (secondary indexes)
	ordered bool // the encoding sorts like the values (else equality only)
}

func (x *Index) parts() []keyPart {
	if x.im != nil {
		out := make([]keyPart, len(x.im.ords))
		for i := range x.im.ords {
			out[i] = keyPart{kind: x.im.kinds[i], col: x.im.cols[i], prefix: x.im.prefix[i], marker: true, ordered: true}
		}
		return out
	}
	ke := x.meta.keys
	out := make([]keyPart, len(ke.ords))
	for i := range ke.ords {
		out[i] = keyPart{kind: ke.kinds[i], col: ke.cols[i], ordered: ke.kinds[i] != kDecimal || ke.orderedDec}
	}
	return out
}

// boundKey encodes a range bound for part p. exact reports that the key
// stands for exactly the bound value (else bounds are widened to inclusive
// ones, and the row filter decides); ok is false when the value cannot be
// encoded for the column (the column is then not narrowed).
func (p keyPart) boundKey(ctx *sql.Context, v any) (key []byte, exact, ok bool) {
	cv, inRange, err := p.col.Type.Convert(ctx, v)
	if err != nil || !bool(inRange) || cv == nil {
		return nil, false, false
	}
	nv, err := normalize(ctx, p.kind, p.col.Type, cv)
	if err != nil {
		return nil, false, false
	}
	if p.marker {
		key = append(key, 1)
	}
	if p.kind == kDecimal && !p.ordered {
		key = appendKeyPart(key, p.kind, p.col.Type, nv)
	} else {
		key = appendIndexValue(key, p.kind, p.col.Type, nv, p.prefix)
	}
	if p.prefix == 0 {
		switch p.kind {
		case kInt8, kInt16, kInt32, kInt64, kUint8, kUint16, kUint32, kUint64:
			switch v.(type) {
			case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
				exact = true
			}
		case kFloat64:
			_, exact = v.(float64)
		}
	}
	return key, exact, true
}

// interval turns one range into a key interval that contains every key of
// a matching row (possibly more: rows are filtered by the range as well).
func rangeInterval(ctx *sql.Context, parts []keyPart, r sql.MySQLRange) interval {
	var prefix []byte
	rest := func() interval {
		if len(prefix) == 0 {
			return interval{}
		}
		return prefixInterval(prefix)
	}
	emptyIv := interval{lo: []byte{1}, hi: []byte{0}}
	for j, ce := range r {
		if j >= len(parts) {
			break
		}
		p := parts[j]
		// NULL bounds.
		_, loNull := ce.LowerBound.(sql.BelowNull)
		_, hiAboveNull := ce.UpperBound.(sql.AboveNull)
		_, hiBelowNull := ce.UpperBound.(sql.BelowNull)
		_, loAll := ce.LowerBound.(sql.AboveAll)
		if loAll || hiBelowNull {
			return emptyIv
		}
		if loNull && hiAboveNull { // IS NULL
			if !p.marker {
				return emptyIv
			}
			prefix = append(prefix, 0)
			continue
		}
		var lo, hi []byte
		loVal, hiVal := false, false
		var loKey, hiKey []byte
		var loExact, hiExact bool
		switch b := ce.LowerBound.(type) {
		case sql.BelowNull:
			lo = prefix
		case sql.AboveNull:
			lo = prefix
			if p.marker {
				lo = append(append([]byte{}, prefix...), 1)
			}
		case sql.Below:
			k, exact, ok := p.boundKey(ctx, b.Key)
			if !ok {
				return rest()
			}
			loKey, loExact, loVal = k, exact, true
			lo = append(append([]byte{}, prefix...), k...)
		case sql.Above:
			k, exact, ok := p.boundKey(ctx, b.Key)
			if !ok {
				return rest()
			}
			loKey, loExact, loVal = k, exact, true
			lo = append(append([]byte{}, prefix...), k...)
			if exact {
				if lo = prefixEnd(lo); lo == nil {
					return emptyIv
				}
			}
		default:
			return rest()
		}
		switch b := ce.UpperBound.(type) {
		case sql.AboveAll:
			hi = prefixEnd(prefix)
		case sql.AboveNull:
			if !p.marker {
				return emptyIv
			}
			hi = append(append([]byte{}, prefix...), 1)
		case sql.Below:
			k, exact, ok := p.boundKey(ctx, b.Key)
			if !ok {
				return rest()
			}
			hiKey, hiExact, hiVal = k, exact, true
			hi = append(append([]byte{}, prefix...), k...)
			if !exact {
				hi = prefixEnd(hi)
			}
		case sql.Above:
			k, exact, ok := p.boundKey(ctx, b.Key)
			if !ok {
				return rest()
			}
			hiKey, hiExact, hiVal = k, exact, true
			hi = prefixEnd(append(append([]byte{}, prefix...), k...))
		default:
			return rest()
		}
		_, loBelow := ce.LowerBound.(sql.Below)
		_, hiAbove := ce.UpperBound.(sql.Above)
		point := loVal && hiVal && string(loKey) == string(hiKey) &&
			(loBelow || !loExact) && (hiAbove || !hiExact)
		if point {
			prefix = append(prefix, loKey...)
			continue
		}
		if !p.ordered {
			return rest()
		}
		return interval{lo: lo, hi: hi, hiOpen: true}
	}
	return rest()
}

// describeKey formats the values of index im (nil: primary key) of an
// encoded row, for duplicate-key errors.
func describeKey(m *tableMeta, im *indexMeta, rowVal []byte) string {
	row := make(sql.Row, len(m.schema()))
	full := newProjection(len(m.schema()), seqOrds(len(m.schema())))
	if rowVal == nil || m.codec.decode(rowVal, &full, row) != nil {
		return "[]"
	}
	ords := m.pk.PkOrdinals
	if im != nil {
		ords = im.ords
	}
	vals := make([]any, len(ords))
	for i, o := range ords {
		vals[i] = row[o]
	}
	return fmt.Sprint(vals)
}

// dupAtCommit is the duplicate-key error found when committing (a
// concurrent transaction committed the same key first). It carries no
// existing row.
func (s *Store) dupAtCommit(m *tableMeta, im *indexMeta, rowVal []byte) error {
	return sql.NewUniqueKeyErr(describeKey(m, im, rowVal), im == nil, nil)
}

// rangeFilter is the exact test of one range on a full row.
func rangeFilter(x *Index, r sql.MySQLRange) (sql.Expression, error) {
	return rangesFilter(x, []sql.MySQLRange{r})
}

// rangesFilter tests whether a full row is in any of the ranges.
func rangesFilter(x *Index, ranges []sql.MySQLRange) (sql.Expression, error) {
	cols, ords := x.extended()
	exprs := make([]sql.Expression, len(cols))
	for i, c := range cols {
		exprs[i] = expression.NewGetFieldWithTable(ords[i], 0, c.Type, x.db, x.table, c.Name, c.Nullable)
	}
	cut := make([]sql.MySQLRange, len(ranges))
	for i, r := range ranges {
		if len(r) > len(exprs) {
			r = r[:len(exprs)]
		}
		cut[i] = r
	}
	return expression.NewRangeFilterExpr(exprs, cut)
}

// resetIndexBuckets empties every index of a table (TRUNCATE).
func resetIndexBuckets(tb *bolt.Bucket, m *tableMeta) error {
	if tb.Bucket(bucketIndexes) != nil {
		if err := tb.DeleteBucket(bucketIndexes); err != nil {
			return err
		}
	}
	if len(m.indexes) == 0 {
		return nil
	}
	ib, err := tb.CreateBucket(bucketIndexes)
	if err != nil {
		return err
	}
	for _, im := range m.indexes {
		if _, err := ib.CreateBucket(idxKey(im.id)); err != nil {
			return err
		}
	}
	return nil
}

// rebuildIndexes rebuilds every index of a table from its rows (after a bulk
// import).
func rebuildIndexes(ctx *sql.Context, tb *bolt.Bucket, m *tableMeta) error {
	if len(m.indexes) == 0 {
		return nil
	}
	if err := resetIndexBuckets(tb, m); err != nil {
		return err
	}
	for _, im := range m.indexes {
		if err := buildIndex(ctx, tb, m, im); err != nil {
			return err
		}
	}
	return nil
}
