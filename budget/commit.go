package budget

import (
	"fmt"
	"sync"

	"github.com/dpsql/dpsql/wal"
	bolt "go.etcd.io/bbolt"
)

// maxBatch bounds the number of operations in one write transaction.
const maxBatch = 1024

// op is one accountant write. apply runs inside the batch's write
// transaction and records its own outcome in variables it closes over (a
// refused reservation is an outcome, not a transaction failure); it returns
// an error only when the storage itself fails, which aborts the whole batch.
// apply must reset its outcome on entry: it is called once per attempt.
type op struct {
	apply func(tx *bolt.Tx, st *txState) error
	done  chan error
}

// committer is a group commit in front of bbolt. A caller that finds no
// commit running becomes the leader and commits everything queued so far in
// one transaction (one fsync); callers arriving meanwhile queue up and are
// committed by the next leader. Unlike bolt.DB.Batch there is no timer, so a
// lone caller pays one fsync and no added delay, and under load the batch
// size adapts to the fsync latency. Every caller returns only after the
// transaction holding its operation has been committed to disk.
type committer struct {
	db      *bolt.DB
	mu      sync.Mutex
	queue   []*op
	running bool
}

// do queues o and waits until it is durable (or its batch failed).
func (c *committer) do(apply func(tx *bolt.Tx, st *txState) error) error {
	o := &op{apply: apply, done: make(chan error, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, o)
	lead := !c.running
	c.running = true
	c.mu.Unlock()
	if lead {
		c.lead()
	}
	return <-o.done
}

// lead commits one batch, then hands leadership to a fresh goroutine if more
// work queued meanwhile, so that no caller is held back by others' work.
func (c *committer) lead() {
	c.mu.Lock()
	n := len(c.queue)
	if n > maxBatch {
		n = maxBatch
	}
	batch := c.queue[:n:n]
	c.queue = c.queue[n:]
	c.mu.Unlock()

	err := wal.Update(c.db, func(tx *bolt.Tx) error {
		st := newTxState()
		for _, o := range batch {
			if err := safeApply(o, tx, st); err != nil {
				return err
			}
		}
		return st.flush(tx)
	})
	if err != nil {
		err = fmt.Errorf("budget: commit failed, nothing was recorded: %w", err)
	}
	for _, o := range batch {
		o.done <- err
	}

	c.mu.Lock()
	if len(c.queue) == 0 {
		c.running = false
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	go c.lead()
}

// safeApply turns a panic in one operation into a batch failure instead of
// a crash with the write transaction open.
func safeApply(o *op, tx *bolt.Tx, st *txState) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("budget: internal error: %v", r)
		}
	}()
	return o.apply(tx, st)
}
