package store

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dpsql/dpsql/wal"
	bolt "go.etcd.io/bbolt"
)

// Atomic multi-clause ALTER TABLE.
//
// go-mysql-server runs ALTER TABLE t ADD …, MODIFY …, ADD INDEX … as a block
// of separate operations; one failing used to leave the earlier ones
// applied. AtomicAlterRule wraps such a block: before it runs, the tables it
// names are copied (definition, rows, indexes, counters) into a backup
// bucket; if any clause fails they are restored, and the backup is dropped
// only when every clause succeeded. A server killed in between restores the
// backup when it opens the file, so the ALTER is all or nothing across
// crashes too. Commits to the tables are refused while the block runs.

var bucketAlterBackup = []byte("\x00alter_backup")

// AtomicAlterRuleID is the analyzer rule id AtomicAlterRule is registered
// under (any id go-mysql-server does not use).
const AtomicAlterRuleID analyzer.RuleId = 10_100

// AtomicAlterRule is a post-validation analyzer rule; register it after any
// rule that must inspect the ALTER's clauses (it hides them). It also
// refuses the ALTER TABLE clauses the store would ignore (alterclauses.go).
func (s *Store) AtomicAlterRule(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if err := checkAlterClauses(ctx.Query()); err != nil {
		return n, transform.SameTree, err
	}
	b, ok := n.(*plan.Block)
	if !ok || b.Pref != nil || qFlags == nil || !qFlags.IsSet(sql.QFlagAlterTable) || len(b.Children()) < 2 {
		return n, transform.SameTree, nil
	}
	seen := map[*tableState]bool{}
	var tables []*tableState
	transform.Inspect(b, func(node sql.Node) bool {
		if rt, ok := node.(*plan.ResolvedTable); ok {
			if t, ok := rt.Table.(*Table); ok && t.s == s && !seen[t.ts] {
				seen[t.ts] = true
				tables = append(tables, t.ts)
			}
		}
		return true
	})
	if len(tables) == 0 {
		return n, transform.SameTree, nil
	}
	return &atomicAlter{block: b, s: s, tables: tables, build: a.ExecBuilder}, transform.NewTree, nil
}

// atomicAlter runs a block of ALTER TABLE clauses all or nothing.
type atomicAlter struct {
	block  *plan.Block
	s      *Store
	tables []*tableState
	build  sql.NodeExecBuilder
}

var _ sql.ExecSourceRel = (*atomicAlter)(nil)

func (n *atomicAlter) Resolved() bool       { return n.block.Resolved() }
func (n *atomicAlter) String() string       { return n.block.String() }
func (n *atomicAlter) Schema() sql.Schema   { return n.block.Schema() }
func (n *atomicAlter) Children() []sql.Node { return nil }
func (n *atomicAlter) IsReadOnly() bool     { return false }
func (n *atomicAlter) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

func (n *atomicAlter) RowIter(ctx *sql.Context, row sql.Row) (sql.RowIter, error) {
	if err := n.s.implicitCommit(ctx); err != nil {
		return nil, err
	}
	if err := n.s.backupTables(n.tables); err != nil {
		return nil, err
	}
	rows, err := func() ([]sql.Row, error) {
		it, err := n.build.Build(ctx, n.block, row)
		if err != nil {
			return nil, err
		}
		return sql.RowIterToRows(ctx, it)
	}()
	if err != nil {
		if rerr := n.s.restoreTables(n.tables); rerr != nil {
			return nil, fmt.Errorf("%w (and restoring the tables failed: %v)", err, rerr)
		}
		n.s.afterDDL(ctx, nil)
		return nil, err
	}
	if err := n.s.dropBackups(n.tables); err != nil {
		return nil, err
	}
	return sql.RowsToRowIter(rows...), nil
}

// copyBucket copies every key and nested bucket of src into dst.
func copyBucket(src, dst *bolt.Bucket) error {
	return src.ForEach(func(k, v []byte) error {
		if v != nil {
			return dst.Put(k, append([]byte{}, v...))
		}
		child, err := dst.CreateBucket(k)
		if err != nil {
			return err
		}
		return copyBucket(src.Bucket(k), child)
	})
}

// clearBucket removes every key and nested bucket of b.
func clearBucket(b *bolt.Bucket) error {
	var keys, buckets [][]byte
	err := b.ForEach(func(k, v []byte) error {
		if v == nil {
			buckets = append(buckets, append([]byte{}, k...))
		} else {
			keys = append(keys, append([]byte{}, k...))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range buckets {
		if err := b.DeleteBucket(k); err != nil {
			return err
		}
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

var keyBackupName = []byte("\x00name")

func (s *Store) backupTables(tables []*tableState) error {
	err := wal.Update(s.db, func(tx *bolt.Tx) error {
		for _, ts := range tables {
			dbb := tx.Bucket(bucketData).Bucket([]byte(ts.db.key))
			tb := tableBucket(tx, ts.db.key, ts.id)
			if dbb == nil || tb == nil {
				return sql.ErrTableNotFound.New(ts.meta.Load().name)
			}
			bk, err := dbb.CreateBucketIfNotExists(bucketAlterBackup)
			if err != nil {
				return err
			}
			if bk.Bucket(idKey(ts.id)) != nil {
				if err := bk.DeleteBucket(idKey(ts.id)); err != nil {
					return err
				}
			}
			dst, err := bk.CreateBucket(idKey(ts.id))
			if err != nil {
				return err
			}
			if err := copyBucket(tb, dst); err != nil {
				return err
			}
			if err := dst.Put(keyBackupName, []byte(ts.key())); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("backing up tables for ALTER: %w", err)
	}
	for _, ts := range tables {
		ts.altering.Store(true)
	}
	return nil
}

func (s *Store) dropBackups(tables []*tableState) error {
	defer func() {
		for _, ts := range tables {
			ts.altering.Store(false)
		}
	}()
	return wal.Update(s.db, func(tx *bolt.Tx) error {
		for _, ts := range tables {
			if dbb := tx.Bucket(bucketData).Bucket([]byte(ts.db.key)); dbb != nil {
				if bk := dbb.Bucket(bucketAlterBackup); bk != nil && bk.Bucket(idKey(ts.id)) != nil {
					if err := bk.DeleteBucket(idKey(ts.id)); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
}

// restoreTables brings the tables back to their backups and reloads their
// in-memory state.
func (s *Store) restoreTables(tables []*tableState) error {
	defer func() {
		for _, ts := range tables {
			ts.altering.Store(false)
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ts := range tables {
		ts.ddlMu.Lock()
	}
	defer func() {
		for _, ts := range tables {
			ts.ddlMu.Unlock()
		}
	}()
	var stamp uint64
	err := wal.Update(s.db, func(tx *bolt.Tx) error {
		var err error
		if stamp, err = s.mv.assign(tx); err != nil {
			return err
		}
		for _, ts := range tables {
			ts.ddlTS.Store(stamp)
			dbb := tx.Bucket(bucketData).Bucket([]byte(ts.db.key))
			if dbb == nil {
				continue
			}
			if err := restoreTableLocked(dbb, ts.db, ts.id); err != nil {
				return err
			}
		}
		return nil
	})
	if stamp != 0 {
		s.mv.publish(stamp)
	}
	if err != nil {
		return fmt.Errorf("restoring tables after a failed ALTER: %w", err)
	}
	return nil
}

// restoreTableLocked restores table id of database ds from its backup in
// dbb (inside a write transaction, with the store's lock held) and reloads
// the in-memory state if the table is loaded.
func restoreTableLocked(dbb *bolt.Bucket, ds *dbState, id uint64) error {
	bk := dbb.Bucket(bucketAlterBackup)
	if bk == nil || bk.Bucket(idKey(id)) == nil {
		return nil
	}
	src := bk.Bucket(idKey(id))
	name := string(src.Get(keyBackupName))
	tb := dbb.Bucket(bucketTables).Bucket(idKey(id))
	if tb == nil {
		return fmt.Errorf("table %s: data bucket missing", name)
	}
	if err := clearBucket(tb); err != nil {
		return err
	}
	if err := copyBucket(src, tb); err != nil {
		return err
	}
	if err := tb.Delete(keyBackupName); err != nil {
		return err
	}
	if err := bk.DeleteBucket(idKey(id)); err != nil {
		return err
	}
	// A RENAME among the clauses: take the old name back.
	names := dbb.Bucket(bucketNames)
	var current string
	c := names.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if string(v) == string(idKey(id)) {
			current = string(k)
			break
		}
	}
	if current != name {
		if current != "" {
			if err := names.Delete([]byte(current)); err != nil {
				return err
			}
		}
		if err := names.Put([]byte(name), idKey(id)); err != nil {
			return err
		}
	}
	if ds == nil {
		return nil
	}
	st, err := parseStat(tb.Get(keyStat))
	if err != nil {
		return err
	}
	m, err := unmarshalMeta(id, st.version, ds.name, tb.Get(keySchema))
	if err != nil {
		return err
	}
	for key, ts := range ds.tables {
		if ts.id != id {
			continue
		}
		ts.meta.Store(m)
		ts.seq.Store(st.seq)
		ts.autoMu.Lock()
		ts.autoNext = st.autoInc
		ts.autoMu.Unlock()
		if key != strings.ToLower(name) {
			delete(ds.tables, key)
			ds.tables[strings.ToLower(name)] = ts
		}
	}
	return nil
}
