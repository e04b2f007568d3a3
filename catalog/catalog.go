package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dpsql/dpsql/wal"
	bolt "go.etcd.io/bbolt"
)

var (
	bucketName   = []byte("catalog")
	tablesKey    = []byte("tables")
	ownersPrefix = "owner/"
	modelsPrefix = "model/"
)

// ErrNotFound reports an unknown model or table entry.
var ErrNotFound = errors.New("not found")

// Bound is the public range [Lo, Hi] of a numeric column.
type Bound struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Table is the public metadata of one table, keyed by "db.table".
type Table struct {
	Name      string              `json:"name"` // "db.table", lower case
	Protected bool                `json:"protected"`
	Bounds    map[string]Bound    `json:"bounds,omitempty"` // by lower-case column name
	Labels    map[string][]string `json:"labels,omitempty"` // by lower-case column name, declared order
	// Domains marks the columns of Labels declared with dp_domain (a
	// categorical column: a feature of DP_TRAIN, not a label candidate);
	// an entry of Labels without the mark was declared with dp_labels
	// (catalogs written before the mark existed: every entry).
	Domains map[string]bool `json:"domains,omitempty"`
	// Clip marks bounded columns whose rows may hold values outside the
	// bounds (CALL dp_bounds(…, 'clip')): every DP read clips them.
	Clip map[string]bool `json:"clip,omitempty"`
	// Transforms are public per-column transforms applied by every DP read
	// before clipping and scaling (CALL dp_transform); bounds are declared
	// on the transformed scale. Absent means identity.
	Transforms map[string]string `json:"transforms,omitempty"`
	// Unit is the table's privacy unit (units.go); nil: row-level.
	Unit *Member `json:"unit,omitempty"`
	// MaxRows is the owner's public upper bound on the table's row count
	// (CALL dp_max_rows); 0: none declared. Memory estimates of
	// person-level releases use it instead of the stored count.
	MaxRows int64 `json:"max_rows,omitempty"`
}

// Read describes how DP reads see one column: the raw value v becomes
// Clip(T(v), Lo, Hi) (NaN, i.e. NULL, stays NaN for the mechanism's own
// rule).
type Read struct {
	Bound
	Bounded   bool
	Transform string // "" = identity
	Clip      bool   // rows may hold values outside the bounds
}

// ModelRecord is a released model with its provenance.
type ModelRecord struct {
	Name             string    `json:"name"`
	Kind             string    `json:"kind"`
	Kernel           string    `json:"kernel"`
	Params           string    `json:"params"`
	Epsilon          float64   `json:"epsilon"` // ε charged
	Delta            float64   `json:"delta"`   // δ charged
	RequestedEpsilon float64   `json:"requested_epsilon"`
	N                int64     `json:"n"`
	Table            string    `json:"table"`
	Creator          string    `json:"creator"`
	CreatedAt        time.Time `json:"created_at"`
	// Model is the JSON of the released mechanism.Model.
	Model json.RawMessage `json:"model"`
}

// Catalog is safe for concurrent use.
type Catalog struct {
	db     *bolt.DB
	mu     sync.RWMutex
	tables map[string]*Table
	owners map[string]bool
	models map[string]*ModelRecord
}

// Key normalises a database and table name into the catalog key "db.table".
func Key(db, table string) string {
	return strings.ToLower(db) + "." + strings.ToLower(table)
}

// Open loads the catalog from db, creating its bucket if needed. Models
// stored by catalogs older than per-database model names (key
// "model/<name>") are moved to "model/<db>.<name>", db being the database
// of their training table, in the same transaction.
func Open(db *bolt.DB) (*Catalog, error) {
	c := &Catalog{db: db, tables: map[string]*Table{}, owners: map[string]bool{}, models: map[string]*ModelRecord{}}
	err := wal.Update(db, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketName)
		if err != nil {
			return err
		}
		if v := b.Get(tablesKey); v != nil {
			if err := json.Unmarshal(v, &c.tables); err != nil {
				return fmt.Errorf("decode tables: %w", err)
			}
		}
		var moved []string // stored keys that are not the record's key
		err = b.ForEach(func(k, v []byte) error {
			switch ks := string(k); {
			case strings.HasPrefix(ks, ownersPrefix):
				c.owners[strings.TrimPrefix(ks, ownersPrefix)] = true
			case strings.HasPrefix(ks, modelsPrefix):
				var m ModelRecord
				if err := json.Unmarshal(v, &m); err != nil {
					return fmt.Errorf("decode model %q: %w", ks, err)
				}
				key, err := modelKeyOf(m)
				if err != nil {
					return fmt.Errorf("model %q: %w", ks, err)
				}
				if _, dup := c.models[key]; dup {
					// Impossible from either format (names were unique
					// globally, then per database): a damaged catalog.
					return fmt.Errorf("model %q: two stored models are %s", ks, key)
				}
				c.models[key] = &m
				if ks != modelsPrefix+key {
					moved = append(moved, ks)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		// bbolt forbids changing a bucket while iterating it: move after.
		for _, ks := range moved {
			v := b.Get([]byte(ks))
			var m ModelRecord
			if err := json.Unmarshal(v, &m); err != nil {
				return fmt.Errorf("decode model %q: %w", ks, err)
			}
			key, _ := modelKeyOf(m)
			if err := b.Put([]byte(modelsPrefix+key), v); err != nil {
				return fmt.Errorf("migrate model %q: %w", ks, err)
			}
			if err := b.Delete([]byte(ks)); err != nil {
				return fmt.Errorf("migrate model %q: %w", ks, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("open catalog: %w", err)
	}
	return c, nil
}

// saveTablesLocked persists the table map; c.mu must be held for writing.
func (c *Catalog) saveTablesLocked() error {
	buf, err := json.Marshal(c.tables)
	if err != nil {
		return err
	}
	return wal.Update(c.db, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketName).Put(tablesKey, buf)
	})
}

// update applies fn to a copy of the entry for key and persists it; on error
// the in-memory state is left unchanged.
func (c *Catalog) update(key string, fn func(t *Table) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.tables[key]
	t := &Table{Name: key, Bounds: map[string]Bound{}, Labels: map[string][]string{}}
	if old != nil {
		t.Protected = old.Protected
		t.Unit = old.Unit
		t.MaxRows = old.MaxRows
		for k, v := range old.Bounds {
			t.Bounds[k] = v
		}
		for k, v := range old.Labels {
			t.Labels[k] = v
		}
		for k, v := range old.Domains {
			if t.Domains == nil {
				t.Domains = map[string]bool{}
			}
			t.Domains[k] = v
		}
		for k, v := range old.Clip {
			if t.Clip == nil {
				t.Clip = map[string]bool{}
			}
			t.Clip[k] = v
		}
		for k, v := range old.Transforms {
			if t.Transforms == nil {
				t.Transforms = map[string]string{}
			}
			t.Transforms[k] = v
		}
	}
	if err := fn(t); err != nil {
		return err
	}
	c.tables[key] = t
	if err := c.saveTablesLocked(); err != nil {
		if old == nil {
			delete(c.tables, key)
		} else {
			c.tables[key] = old
		}
		return fmt.Errorf("save catalog: %w", err)
	}
	return nil
}

// SetProtected marks (or unmarks) the table as protected.
func (c *Catalog) SetProtected(key string, on bool) error {
	return c.update(key, func(t *Table) error { t.Protected = on; return nil })
}

// SetBounds declares the public bounds of a numeric column (rows must lie
// within them).
func (c *Catalog) SetBounds(key, column string, lo, hi float64) error {
	return c.SetBoundsClip(key, column, lo, hi, false)
}

// SetBoundsClip declares bounds; with clip, rows may hold values outside
// them and every DP read clips.
func (c *Catalog) SetBoundsClip(key, column string, lo, hi float64, clip bool) error {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || !(lo < hi) {
		return fmt.Errorf("bounds must be finite with lower < upper, got [%v, %v]", lo, hi)
	}
	col := strings.ToLower(column)
	return c.update(key, func(t *Table) error {
		t.Bounds[col] = Bound{lo, hi}
		if clip {
			if t.Clip == nil {
				t.Clip = map[string]bool{}
			}
			t.Clip[col] = true
		} else {
			delete(t.Clip, col)
		}
		return nil
	})
}

// SetTransform declares the public transform of a column ("identity" or
// "" removes it). The name is validated by the caller.
func (c *Catalog) SetTransform(key, column, name string) error {
	col := strings.ToLower(column)
	return c.update(key, func(t *Table) error {
		if name == "" || name == "identity" {
			delete(t.Transforms, col)
			return nil
		}
		if t.Transforms == nil {
			t.Transforms = map[string]string{}
		}
		t.Transforms[col] = name
		return nil
	})
}

// SetMaxRows declares the public maximum row count of a table (0
// removes it).
func (c *Catalog) SetMaxRows(key string, n int64) error {
	return c.update(key, func(t *Table) error { t.MaxRows = n; return nil })
}

// ReadOf returns how DP reads see column of table key.
func (t Table) ReadOf(column string) Read {
	col := strings.ToLower(column)
	b, ok := t.Bounds[col]
	return Read{Bound: b, Bounded: ok, Transform: t.Transforms[col], Clip: t.Clip[col]}
}

// SetLabels declares the public label domain of a column (order kept).
func (c *Catalog) SetLabels(key, column string, values []string) error {
	return c.SetDomain(key, column, values, false)
}

// SetDomain declares the public domain of a column (order kept): a label
// (dp_labels) or, with categorical, a categorical column (dp_domain).
func (c *Catalog) SetDomain(key, column string, values []string, categorical bool) error {
	col := strings.ToLower(column)
	return c.update(key, func(t *Table) error {
		t.Labels[col] = append([]string(nil), values...)
		if categorical {
			if t.Domains == nil {
				t.Domains = map[string]bool{}
			}
			t.Domains[col] = true
		} else {
			delete(t.Domains, col)
		}
		return nil
	})
}

// IsLabel reports whether column has a domain declared as a label
// (dp_labels), not as a categorical column (dp_domain).
func (t Table) IsLabel(column string) bool {
	col := strings.ToLower(column)
	_, ok := t.Labels[col]
	return ok && !t.Domains[col]
}

// Forget removes everything known about a table (used when it is dropped).
func (c *Catalog) Forget(key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.tables[key]
	if !ok {
		return nil
	}
	if old.Unit != nil {
		// A table of a privacy unit never leaves it (its releases were the
		// unit's): a table re-created under the name is protected and in
		// the unit again; bounds and domains are forgotten.
		c.tables[key] = &Table{Name: key, Protected: true, Bounds: map[string]Bound{}, Labels: map[string][]string{}, Unit: old.Unit}
	} else {
		delete(c.tables, key)
	}
	if err := c.saveTablesLocked(); err != nil {
		c.tables[key] = old
		return fmt.Errorf("save catalog: %w", err)
	}
	return nil
}

// Table returns a copy of the entry for key.
func (c *Catalog) Table(key string) (Table, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.tables[key]
	if !ok {
		return Table{}, false
	}
	return *t, true
}

// IsProtected reports whether the table is protected. It is on every read
// path, so it only takes a read lock on the in-memory map.
func (c *Catalog) IsProtected(key string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.tables[key]
	return ok && t.Protected
}

// Bounds returns the declared bounds of column in table key.
func (c *Catalog) Bounds(key, column string) (Bound, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.tables[key]
	if !ok {
		return Bound{}, false
	}
	b, ok := t.Bounds[strings.ToLower(column)]
	return b, ok
}

// Labels returns the declared label domain of column in table key.
func (c *Catalog) Labels(key, column string) ([]string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.tables[key]
	if !ok {
		return nil, false
	}
	l, ok := t.Labels[strings.ToLower(column)]
	return l, ok
}

// Owner accounts. root is always an owner and is not stored.

// IsOwner reports whether user may read and write protected tables.
func (c *Catalog) IsOwner(user string) bool {
	if user == "root" {
		return true
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.owners[user]
}

// SetOwner adds or removes an owner account.
func (c *Catalog) SetOwner(user string, on bool) error {
	if user == "" {
		return errors.New("owner name must not be empty")
	}
	if user == "root" {
		return errors.New("root is always an owner")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	err := wal.Update(c.db, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketName)
		if on {
			return b.Put([]byte(ownersPrefix+user), []byte{1})
		}
		return b.Delete([]byte(ownersPrefix + user))
	})
	if err != nil {
		return fmt.Errorf("save owner: %w", err)
	}
	if on {
		c.owners[user] = true
	} else {
		delete(c.owners, user)
	}
	return nil
}

// Owners lists the designated owner accounts (root included), sorted.
func (c *Catalog) Owners() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := []string{"root"}
	for u := range c.owners {
		out = append(out, u)
	}
	sort.Strings(out[1:])
	return out
}

// Models belong to the database of their training table (as tables do):
// names are unique per database, case-insensitively, and the catalog key
// of a model is "db.name".

// ModelKey normalises a database and model name into the key "db.name".
func ModelKey(db, name string) string {
	return strings.ToLower(db) + "." + strings.ToLower(name)
}

// DB is the database the model belongs to: that of its training table.
func (m ModelRecord) DB() string {
	db, _, _ := strings.Cut(m.Table, ".")
	return db
}

// modelKeyOf is the key of a stored record, which must name its training
// table as "db.table" and have a name without a dot.
func modelKeyOf(m ModelRecord) (string, error) {
	db, table, ok := strings.Cut(m.Table, ".")
	if !ok || db == "" || table == "" {
		return "", fmt.Errorf("model %q: training table %q is not db.table", m.Name, m.Table)
	}
	if m.Name == "" || strings.Contains(m.Name, ".") {
		return "", fmt.Errorf("model name %q must be non-empty and without a dot", m.Name)
	}
	return ModelKey(db, m.Name), nil
}

// PutModel stores a new model in the database of m.Table; names are
// unique per database (case-insensitive).
func (c *Catalog) PutModel(m ModelRecord) error {
	key, err := modelKeyOf(m)
	if err != nil {
		return err
	}
	buf, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode model: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.models[key]; ok {
		return fmt.Errorf("model %q already exists in database %s", m.Name, m.DB())
	}
	err = wal.Update(c.db, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketName).Put([]byte(modelsPrefix+key), buf)
	})
	if err != nil {
		return fmt.Errorf("save model: %w", err)
	}
	c.models[key] = &m
	return nil
}

// HasModel reports whether a model name is taken in database db.
func (c *Catalog) HasModel(db, name string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.models[ModelKey(db, name)]
	return ok
}

// Model returns the model called name in database db.
func (c *Catalog) Model(db, name string) (ModelRecord, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	m, ok := c.models[ModelKey(db, name)]
	if !ok {
		return ModelRecord{}, fmt.Errorf("model %s.%s: %w", db, name, ErrNotFound)
	}
	return *m, nil
}

// DropModel deletes the model called name in database db.
func (c *Catalog) DropModel(db, name string) error {
	key := ModelKey(db, name)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.models[key]; !ok {
		return fmt.Errorf("model %s.%s: %w", db, name, ErrNotFound)
	}
	err := wal.Update(c.db, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketName).Delete([]byte(modelsPrefix + key))
	})
	if err != nil {
		return fmt.Errorf("delete model: %w", err)
	}
	delete(c.models, key)
	return nil
}

// Models lists all models of every database sorted by creation time, then
// database and name.
func (c *Catalog) Models() []ModelRecord {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]ModelRecord, 0, len(c.models))
	for _, m := range c.models {
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		if a, b := out[i].DB(), out[j].DB(); a != b {
			return a < b
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Tables lists all catalog entries sorted by name.
func (c *Catalog) Tables() []Table {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]Table, 0, len(c.tables))
	for _, t := range c.tables {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
