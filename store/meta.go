package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
)

// tableMeta is an immutable snapshot of a table's definition. ALTER TABLE
// installs a new snapshot with a higher version; editors and scans check the
// version they started with against the one on disk.
type tableMeta struct {
	id        uint64
	version   uint64
	name      string // as created
	dbName    string // as created
	pk        sql.PrimaryKeySchema
	collation sql.CollationID
	comment   string
	codec     *codec
	keys      *keyEncoder // nil: rows keyed by sequence number
	autoCol   int         // index of the AUTO_INCREMENT column, or -1
	colIndex  map[string]int
	checks    []sql.CheckDefinition
	indexes   []*indexMeta               // secondary and unique indexes, in creation order
	nextIdxID uint32                     // id for the next index (ids are never reused)
	keyFormat int                        // 0: decimals in keys as text (equality only); 2: ordered
	fks       []sql.ForeignKeyConstraint // declared by this table
}

// keyFormatOrdered is the key format of tables created by this version:
// every key part, decimals included, sorts like the values.
const keyFormatOrdered = 2

// derive builds the definition that follows m with a new schema (ALTER),
// keeping checks, indexes (columns by name; a dropped column leaves its
// indexes, an index left without columns is dropped) and the key format.
// renamed maps old lower-case column names to new names.
func (m *tableMeta) derive(version uint64, name string, pk sql.PrimaryKeySchema, renamed map[string]string) (*tableMeta, error) {
	nm, err := newTableMetaFormat(m.id, version, m.dbName, name, pk, m.collation, m.comment, m.keyFormat)
	if err != nil {
		return nil, err
	}
	nm.checks = m.checks
	nm.fks = m.fks
	nm.nextIdxID = m.nextIdxID
	var defs []indexDef
	for _, im := range m.indexes {
		d := im.def
		d.Columns, d.Prefix = nil, nil
		for j, c := range im.def.Columns {
			c = strings.ToLower(c)
			if r, ok := renamed[c]; ok {
				c = r
			}
			if _, ok := nm.column(c); !ok {
				continue
			}
			d.Columns = append(d.Columns, c)
			if im.def.Prefix != nil {
				d.Prefix = append(d.Prefix, im.def.Prefix[j])
			}
		}
		if len(d.Columns) > 0 {
			defs = append(defs, d)
		}
	}
	if err := nm.setIndexes(defs); err != nil {
		return nil, err
	}
	return nm, nil
}

func (m *tableMeta) schema() sql.Schema { return m.pk.Schema }

// column returns the ordinal of a column, case-insensitively.
func (m *tableMeta) column(name string) (int, bool) {
	i, ok := m.colIndex[strings.ToLower(name)]
	return i, ok
}

// newTableMeta validates a schema and builds the codecs for it. Columns get
// Source and DatabaseSource set to the table and database names.
func newTableMeta(id, version uint64, dbName, name string, pk sql.PrimaryKeySchema, coll sql.CollationID, comment string) (*tableMeta, error) {
	return newTableMetaFormat(id, version, dbName, name, pk, coll, comment, keyFormatOrdered)
}

func newTableMetaFormat(id, version uint64, dbName, name string, pk sql.PrimaryKeySchema, coll sql.CollationID, comment string, keyFormat int) (*tableMeta, error) {
	sch := make(sql.Schema, len(pk.Schema))
	for i, c := range pk.Schema {
		cc := *c
		cc.Source = name
		cc.DatabaseSource = dbName
		sch[i] = &cc
	}
	ords := pk.PkOrdinals
	if len(ords) == 0 {
		ords = nil
		for i, c := range sch {
			if c.PrimaryKey {
				ords = append(ords, i)
			}
		}
	}
	for _, o := range ords {
		sch[o].PrimaryKey = true
		sch[o].Nullable = false
	}
	if len(sch) == 0 {
		return nil, fmt.Errorf("table %q has no columns", name)
	}
	cd, err := newCodec(sch)
	if err != nil {
		return nil, err
	}
	m := &tableMeta{
		id: id, version: version, name: name, dbName: dbName,
		pk:        sql.NewPrimaryKeySchema(sch, ords...),
		collation: coll, comment: comment, codec: cd, autoCol: -1,
		colIndex: make(map[string]int, len(sch)), keyFormat: keyFormat,
	}
	if len(ords) > 0 {
		if m.keys, err = newKeyEncoder(sch, ords, cd.kinds, keyFormat >= keyFormatOrdered); err != nil {
			return nil, err
		}
	}
	for i, c := range sch {
		if c.AutoIncrement {
			if m.autoCol >= 0 {
				return nil, sql.ErrInvalidAutoIncCols.New()
			}
			m.autoCol = i
		}
		m.colIndex[strings.ToLower(c.Name)] = i
	}
	if len(m.colIndex) != len(sch) {
		seen := map[string]bool{}
		for _, c := range sch {
			if seen[strings.ToLower(c.Name)] {
				return nil, sql.ErrDuplicateColumn.New(c.Name)
			}
			seen[strings.ToLower(c.Name)] = true
		}
	}
	return m, nil
}

// Persisted form of a table definition. JSON is used for the schema only
// (it changes rarely); rows use the binary codec.
type colJSON struct {
	Name      string  `json:"name"`
	Type      string  `json:"type"`
	Collation uint16  `json:"collation,omitempty"` // of string, enum and set types
	Nullable  bool    `json:"nullable,omitempty"`
	PK        bool    `json:"pk,omitempty"`
	AutoInc   bool    `json:"auto_increment,omitempty"`
	Default   *string `json:"default,omitempty"`
	Generated *string `json:"generated,omitempty"`
	OnUpdate  *string `json:"on_update,omitempty"`
	Comment   string  `json:"comment,omitempty"`
	Extra     string  `json:"extra,omitempty"`
	Virtual   bool    `json:"virtual,omitempty"` // the engine computes it; the store keeps the value it was given
}

type tableJSON struct {
	Name       string      `json:"name"`
	Columns    []colJSON   `json:"columns"`
	PkOrdinals []int       `json:"pk_ordinals"`
	Collation  uint16      `json:"collation"`
	Comment    string      `json:"comment,omitempty"`
	Checks     []checkJSON `json:"checks,omitempty"`
	Indexes    []indexDef  `json:"indexes,omitempty"`
	NextIdxID  uint32      `json:"next_index_id,omitempty"`
	KeyFormat  int         `json:"key_format,omitempty"`
	// Foreign keys declared by the table, as go-mysql-server describes them.
	ForeignKeys []sql.ForeignKeyConstraint `json:"foreign_keys,omitempty"`
}

type checkJSON struct {
	Name     string `json:"name"`
	Expr     string `json:"expr"`
	Enforced bool   `json:"enforced"`
}

func defaultString(d *sql.ColumnDefaultValue) *string {
	if d == nil || d.Expr == nil {
		return nil
	}
	s := d.String()
	return &s
}

func (m *tableMeta) marshal() ([]byte, error) {
	tj := tableJSON{Name: m.name, PkOrdinals: m.pk.PkOrdinals, Collation: uint16(m.collation), Comment: m.comment,
		NextIdxID: m.nextIdxID, KeyFormat: m.keyFormat, ForeignKeys: m.fks}
	for _, im := range m.indexes {
		tj.Indexes = append(tj.Indexes, im.def)
	}
	for _, c := range m.checks {
		tj.Checks = append(tj.Checks, checkJSON{Name: c.Name, Expr: c.CheckExpression, Enforced: c.Enforced})
	}
	for _, c := range m.pk.Schema {
		var coll uint16
		if tc, ok := c.Type.(sql.TypeWithCollation); ok {
			coll = uint16(tc.Collation())
		}
		tj.Columns = append(tj.Columns, colJSON{Collation: coll,
			Name: c.Name, Type: c.Type.String(), Nullable: c.Nullable, PK: c.PrimaryKey,
			AutoInc: c.AutoIncrement, Default: defaultString(c.Default),
			Generated: defaultString(c.Generated), OnUpdate: defaultString(c.OnUpdate),
			Comment: c.Comment, Extra: c.Extra, Virtual: c.Virtual,
		})
	}
	return json.Marshal(tj)
}

func unresolvedDefault(s *string) *sql.ColumnDefaultValue {
	if s == nil {
		return nil
	}
	return sql.NewUnresolvedColumnDefaultValue(*s)
}

func unmarshalMeta(id, version uint64, dbName string, b []byte) (*tableMeta, error) {
	var tj tableJSON
	if err := json.Unmarshal(b, &tj); err != nil {
		return nil, fmt.Errorf("decoding schema: %w", err)
	}
	sch := make(sql.Schema, len(tj.Columns))
	for i, c := range tj.Columns {
		typ, err := planbuilder.ParseColumnTypeString(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %q: parsing type %q: %w", c.Name, c.Type, err)
		}
		// The type string omits the default collation; restore the exact one.
		if tc, ok := typ.(sql.TypeWithCollation); ok && c.Collation != 0 {
			if typ, err = tc.WithNewCollation(sql.CollationID(c.Collation)); err != nil {
				return nil, fmt.Errorf("column %q: %w", c.Name, err)
			}
		}
		sch[i] = &sql.Column{
			Name: c.Name, Type: typ, Nullable: c.Nullable, PrimaryKey: c.PK,
			AutoIncrement: c.AutoInc, Default: unresolvedDefault(c.Default),
			Generated: unresolvedDefault(c.Generated), OnUpdate: unresolvedDefault(c.OnUpdate),
			Comment: c.Comment, Extra: c.Extra, Virtual: c.Virtual,
		}
	}
	m, err := newTableMetaFormat(id, version, dbName, tj.Name, sql.NewPrimaryKeySchema(sch, tj.PkOrdinals...), sql.CollationID(tj.Collation), tj.Comment, tj.KeyFormat)
	if err != nil {
		return nil, err
	}
	m.nextIdxID = tj.NextIdxID
	m.fks = tj.ForeignKeys
	if err := m.setIndexes(tj.Indexes); err != nil {
		return nil, err
	}
	for _, c := range tj.Checks {
		m.checks = append(m.checks, sql.CheckDefinition{Name: c.Name, CheckExpression: c.Expr, Enforced: c.Enforced})
	}
	return m, nil
}

// tableStat is the small per-table record rewritten by every commit.
type tableStat struct {
	count   uint64 // exact number of rows
	seq     uint64 // next sequence key for tables without a primary key
	autoInc uint64 // next AUTO_INCREMENT value
	version uint64 // schema version
}

const statLen = 32

func (st tableStat) bytes() []byte {
	b := make([]byte, 0, statLen)
	b = binary.BigEndian.AppendUint64(b, st.count)
	b = binary.BigEndian.AppendUint64(b, st.seq)
	b = binary.BigEndian.AppendUint64(b, st.autoInc)
	return binary.BigEndian.AppendUint64(b, st.version)
}

func parseStat(b []byte) (tableStat, error) {
	if len(b) != statLen {
		return tableStat{}, fmt.Errorf("corrupt table statistics record (%d bytes)", len(b))
	}
	be := binary.BigEndian
	return tableStat{count: be.Uint64(b), seq: be.Uint64(b[8:]), autoInc: be.Uint64(b[16:]), version: be.Uint64(b[24:])}, nil
}
