package mysqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dpsql/dpsql/wal"
	"github.com/go-sql-driver/mysql"
	"github.com/sirupsen/logrus"
	bolt "go.etcd.io/bbolt"

	"github.com/dpsql/dpsql/functions"
)

// bucketAttached lists the attached tables in the embedded bbolt file:
// "db.table" (lower case) → {"db": …, "table": …} as the backend spells them.
var bucketAttached = []byte("mysql_attached")

var identRE = regexp.MustCompile(`^[A-Za-z0-9_$]{1,64}$`)

// Backend is a connection pool to the MariaDB/MySQL server plus the
// attached tables' schemas.
type Backend struct {
	pool *sql.DB
	meta *bolt.DB
	log  logrus.FieldLogger

	mu     sync.RWMutex
	tables map[string]*table // key: lower-case "db.table"

	// moved counts the bytes read and written on the wire to the backend
	// (every connection of the pool), for docs/scale-out.md.
	moved atomic.Int64
}

// table is one attached table: names as the backend spells them and the
// schema dpsql shows for it.
type table struct {
	db, name string
	schema   gsql.Schema
	kinds    []kind
	// double marks the columns stored as DOUBLE (REAL): their values are
	// the float64 dpsql reads, so arithmetic on the bare column is the
	// embedded path's (the in-box split of the fast statement, sums.go).
	double []bool
}

type kind int

const (
	kindInt kind = iota
	kindUint
	kindFloat
	kindText
	kindTime
)

type attachment struct {
	DB    string `json:"db"`
	Table string `json:"table"`
}

// Open connects to dsn (go-sql-driver/mysql syntax) and restores the
// attachments recorded in meta. A table that no longer exists on the
// backend is logged and left out (DP functions then report it missing).
func Open(dsn string, meta *bolt.DB, log logrus.FieldLogger) (*Backend, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("backend DSN: %w", err) // the DSN parser never echoes the password
	}
	b := &Backend{meta: meta, log: log, tables: map[string]*table{}}
	cfg.ParseTime = true
	cfg.InterpolateParams = false
	cfg.MultiStatements = false
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	d := &net.Dialer{KeepAlive: 30 * time.Second}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c, n: &b.moved}, nil
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("backend DSN: %w", err)
	}
	b.pool = sql.OpenDB(conn)
	b.pool.SetMaxIdleConns(8)
	b.pool.SetConnMaxIdleTime(5 * time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.pool.PingContext(ctx); err != nil {
		b.pool.Close()
		return nil, fmt.Errorf("connect to the MariaDB/MySQL backend at %s: %w", cfg.Addr, err)
	}
	if err := wal.Update(meta, func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketAttached)
		return err
	}); err != nil {
		b.pool.Close()
		return nil, fmt.Errorf("attachment list: %w", err)
	}
	var list []attachment
	if err := meta.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAttached).ForEach(func(_, v []byte) error {
			var a attachment
			if err := json.Unmarshal(v, &a); err != nil {
				return err
			}
			list = append(list, a)
			return nil
		})
	}); err != nil {
		b.pool.Close()
		return nil, fmt.Errorf("attachment list: %w", err)
	}
	for _, a := range list {
		t, err := b.describe(ctx, a.DB, a.Table)
		if err != nil {
			log.WithError(err).WithField("table", a.DB+"."+a.Table).Warn("attached table is not available on the backend")
			continue
		}
		b.tables[key(a.DB, a.Table)] = t
	}
	return b, nil
}

// Close closes the pool.
func (b *Backend) Close() error { return b.pool.Close() }

// BytesMoved returns the bytes read and written on the wire to the backend
// since Open.
func (b *Backend) BytesMoved() int64 { return b.moved.Load() }

func key(db, table string) string { return strings.ToLower(db) + "." + strings.ToLower(table) }

func quote(id string) string { return "`" + strings.ReplaceAll(id, "`", "``") + "`" }

// Attach makes the backend's db.table visible in dpsql as db.table and
// records it durably. It reads only the table's definition.
func (b *Backend) Attach(ctx context.Context, db, name string) (gsql.Schema, error) {
	if !identRE.MatchString(db) || !identRE.MatchString(name) {
		return nil, fmt.Errorf("invalid table name %q", db+"."+name)
	}
	t, err := b.describe(ctx, db, name)
	if err != nil {
		return nil, err
	}
	v, _ := json.Marshal(attachment{DB: t.db, Table: t.name})
	if err := wal.Update(b.meta, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAttached).Put([]byte(key(db, name)), v)
	}); err != nil {
		return nil, fmt.Errorf("record attachment: %w", err)
	}
	b.mu.Lock()
	b.tables[key(db, name)] = t
	b.mu.Unlock()
	return t.schema.Copy(), nil
}

// Detach forgets an attachment (the backend's table is not touched).
func (b *Backend) Detach(db, name string) error {
	if err := wal.Update(b.meta, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAttached).Delete([]byte(key(db, name)))
	}); err != nil {
		return fmt.Errorf("forget attachment: %w", err)
	}
	b.mu.Lock()
	delete(b.tables, key(db, name))
	b.mu.Unlock()
	return nil
}

// describe reads a table's columns from information_schema.
func (b *Backend) describe(ctx context.Context, db, name string) (*table, error) {
	rows, err := b.pool.QueryContext(ctx, `SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, COLUMN_KEY
		FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, db, name)
	if err != nil {
		return nil, b.fail("describe "+db+"."+name, err)
	}
	defer rows.Close()
	t := &table{}
	for rows.Next() {
		var sdb, sname, col, dt, ct, nullable, ckey string
		if err := rows.Scan(&sdb, &sname, &col, &dt, &ct, &nullable, &ckey); err != nil {
			return nil, b.fail("describe "+db+"."+name, err)
		}
		t.db, t.name = sdb, sname
		k, typ := mapType(dt, ct)
		t.kinds = append(t.kinds, k)
		dtl := strings.ToLower(dt)
		t.double = append(t.double, dtl == "double" || dtl == "real" || dtl == "double precision")
		t.schema = append(t.schema, &gsql.Column{Name: col, Type: typ, Nullable: nullable == "YES",
			PrimaryKey: ckey == "PRI", Source: sname, DatabaseSource: sdb})
	}
	if err := rows.Err(); err != nil {
		return nil, b.fail("describe "+db+"."+name, err)
	}
	if len(t.schema) == 0 {
		return nil, fmt.Errorf("table %s.%s does not exist on the backend", db, name)
	}
	for _, c := range t.schema {
		if !identRE.MatchString(c.Name) {
			return nil, fmt.Errorf("column %q of %s.%s: only columns named with letters, digits, _ and $ are supported", c.Name, db, name)
		}
	}
	return t, nil
}

// mapType maps a backend column type to the type dpsql shows. DECIMAL
// becomes DOUBLE (the DP functions read numbers as float64 on both
// backends); unknown types are shown as text.
func mapType(dataType, columnType string) (kind, gsql.Type) {
	unsigned := strings.Contains(strings.ToLower(columnType), "unsigned")
	switch strings.ToLower(dataType) {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year", "bit":
		if unsigned {
			return kindUint, types.Uint64
		}
		return kindInt, types.Int64
	case "float", "double", "real", "decimal", "numeric":
		return kindFloat, types.Float64
	case "date", "datetime", "timestamp":
		return kindTime, types.DatetimeMaxPrecision
	}
	return kindText, types.LongText
}

// lookup returns an attached table.
func (b *Backend) lookup(db, name string) (*table, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	t, ok := b.tables[key(db, name)]
	return t, ok
}

// Attached reports whether db.table is attached.
func (b *Backend) Attached(db, name string) bool {
	_, ok := b.lookup(db, name)
	return ok
}

// Tables returns the attached tables of db (as the backend spells them).
func (b *Backend) Tables(db string) []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	var out []string
	for _, t := range b.tables {
		if strings.EqualFold(t.db, db) {
			out = append(out, t.name)
		}
	}
	sort.Strings(out)
	return out
}

// Databases returns the databases holding attached tables.
func (b *Backend) Databases() []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	seen := map[string]bool{}
	var out []string
	for _, t := range b.tables {
		if !seen[strings.ToLower(t.db)] {
			seen[strings.ToLower(t.db)] = true
			out = append(out, t.db)
		}
	}
	sort.Strings(out)
	return out
}

// TableSchema returns a copy of an attached table's schema.
func (b *Backend) TableSchema(db, name string) (gsql.Schema, error) {
	t, ok := b.lookup(db, name)
	if !ok {
		return nil, gsql.ErrTableNotFound.New(name)
	}
	return t.schema.Copy(), nil
}

// fail turns a driver error into a backend failure: the driver's message
// (it can name the backend's servers, shards and account) goes to the
// server log only; callers see what failed on which public table.
func (b *Backend) fail(what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, functions.ErrKilled) {
		return err
	}
	b.log.WithError(err).Warn("storage backend: " + what)
	return fmt.Errorf("%w: %s failed (details in the server log)", functions.ErrBackend, what)
}

// countingConn counts the bytes of one backend connection.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	k, err := c.Conn.Read(p)
	c.n.Add(int64(k))
	return k, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	k, err := c.Conn.Write(p)
	c.n.Add(int64(k))
	return k, err
}
