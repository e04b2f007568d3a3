package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dpsql/dpsql/wal"
	bolt "go.etcd.io/bbolt"
)

// Triggers and stored procedures are stored like views (their definitions,
// per database, in bbolt). The store itself accepts them; dpsql's engine
// refuses to create them (engine/provider.go): a trigger on a protected
// table would copy every new row somewhere else, and a stored procedure
// would run statements with its definer's rights. go-mysql-server's
// privilege wrapper asks a database for its triggers on every INSERT and
// for procedures on every CALL, so both lists must be answerable.

var (
	bucketTriggers = []byte("\x00triggers")
	bucketProcs    = []byte("\x00procedures")
)

var (
	_ sql.TriggerDatabase         = (*Database)(nil)
	_ sql.StoredProcedureDatabase = (*Database)(nil)
)

// defBucket returns a database's bucket of definitions of one kind, creating
// it when create is set (databases from older versions lack it).
func (d *Database) defBucket(tx *bolt.Tx, name []byte, create bool) (*bolt.Bucket, error) {
	dbb := tx.Bucket(bucketData).Bucket([]byte(d.ds.key))
	if dbb == nil {
		return nil, sql.ErrDatabaseNotFound.New(d.ds.name)
	}
	if create {
		return dbb.CreateBucketIfNotExists(name)
	}
	return dbb.Bucket(name), nil
}

// listDefs decodes every definition of one kind, sorted by name.
func listDefs[T any](d *Database, bucket []byte) ([]T, error) {
	var out []T
	err := d.s.db.View(func(tx *bolt.Tx) error {
		b, err := d.defBucket(tx, bucket, false)
		if err != nil || b == nil {
			return err
		}
		return b.ForEach(func(_, v []byte) error {
			var x T
			if err := json.Unmarshal(v, &x); err != nil {
				return fmt.Errorf("corrupt definition in %s: %w", d.ds.name, err)
			}
			out = append(out, x)
			return nil
		})
	})
	return out, err
}

func putDef(d *Database, bucket []byte, name string, v any, mustBeNew bool, exists error) error {
	js, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return wal.Update(d.s.db, func(tx *bolt.Tx) error {
		b, err := d.defBucket(tx, bucket, true)
		if err != nil {
			return err
		}
		k := []byte(strings.ToLower(name))
		if mustBeNew && b.Get(k) != nil {
			return exists
		}
		return b.Put(k, js)
	})
}

func dropDef(d *Database, bucket []byte, name string, missing error) error {
	return wal.Update(d.s.db, func(tx *bolt.Tx) error {
		b, err := d.defBucket(tx, bucket, false)
		if err != nil {
			return err
		}
		k := []byte(strings.ToLower(name))
		if b == nil || b.Get(k) == nil {
			return missing
		}
		return b.Delete(k)
	})
}

// GetTriggers returns the triggers in creation order (the engine's order
// of execution depends on it): they are keyed by a sequence number.
func (d *Database) GetTriggers(*sql.Context) ([]sql.TriggerDefinition, error) {
	return listDefs[sql.TriggerDefinition](d, bucketTriggers)
}

func (d *Database) CreateTrigger(_ *sql.Context, def sql.TriggerDefinition) error {
	if def.CreatedAt.IsZero() {
		def.CreatedAt = time.Now().UTC()
	}
	js, err := json.Marshal(def)
	if err != nil {
		return err
	}
	return wal.Update(d.s.db, func(tx *bolt.Tx) error {
		b, err := d.defBucket(tx, bucketTriggers, true)
		if err != nil {
			return err
		}
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		return b.Put(binary.BigEndian.AppendUint64(nil, seq), js)
	})
}

func (d *Database) DropTrigger(_ *sql.Context, name string) error {
	return wal.Update(d.s.db, func(tx *bolt.Tx) error {
		b, err := d.defBucket(tx, bucketTriggers, false)
		if err != nil {
			return err
		}
		if b != nil {
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				var def sql.TriggerDefinition
				if json.Unmarshal(v, &def) == nil && strings.EqualFold(def.Name, name) {
					return c.Delete()
				}
			}
		}
		return sql.ErrTriggerDoesNotExist.New(name)
	})
}

func (d *Database) GetStoredProcedure(_ *sql.Context, name string) (sql.StoredProcedureDetails, bool, error) {
	defs, err := listDefs[sql.StoredProcedureDetails](d, bucketProcs)
	for _, p := range defs {
		if strings.EqualFold(p.Name, name) {
			return p, true, err
		}
	}
	return sql.StoredProcedureDetails{}, false, err
}

func (d *Database) GetStoredProcedures(*sql.Context) ([]sql.StoredProcedureDetails, error) {
	return listDefs[sql.StoredProcedureDetails](d, bucketProcs)
}

func (d *Database) SaveStoredProcedure(_ *sql.Context, spd sql.StoredProcedureDetails) error {
	return putDef(d, bucketProcs, spd.Name, spd, true, sql.ErrStoredProcedureAlreadyExists.New(spd.Name))
}

func (d *Database) DropStoredProcedure(_ *sql.Context, name string) error {
	return dropDef(d, bucketProcs, name, sql.ErrStoredProcedureDoesNotExist.New(name))
}
