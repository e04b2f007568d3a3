package functions

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/catalog"
)

// runtimeState is the in-process state of running releases: model names
// reserved by running trainings, the kill gate of each running release and
// the memory reserved by each (limits.go). Everything is keyed by the query's
// *sql.Context, which go-mysql-server creates per statement and cancels when
// the statement ends or is killed.
type runtimeState struct {
	mu    sync.Mutex
	names map[string]*sql.Context // model key "db.name" → query holding it
	gates map[*sql.Context]*gate
	mem   *memPool
	held  map[*sql.Context]*memTicket
	// counts holds the row counts read by each running release call
	// (rowCount): one COUNT(*) per table and call.
	counts map[*sql.Context]*callCounts
	// units holds the planning pass of a person-level training running
	// under a query (unittrain.go).
	units map[*sql.Context]*unitCall
	// running counts compute goroutines, including those of killed
	// releases that have not noticed yet.
	running atomic.Int64
}

// RunningReleases is the number of releases whose computation is still
// running, including killed ones whose mechanism has not stopped yet.
func (e *Env) RunningReleases() int { return int(e.rt().running.Load()) }

func (e *Env) rt() *runtimeState {
	e.rtOnce.Do(func() {
		e.rtv = &runtimeState{
			names:  map[string]*sql.Context{},
			gates:  map[*sql.Context]*gate{},
			mem:    newMemPool(e.MaxReleaseMemory),
			held:   map[*sql.Context]*memTicket{},
			counts: map[*sql.Context]*callCounts{},
			units:  map[*sql.Context]*unitCall{},
		}
	})
	return e.rtv
}

// gate makes "save the model" and "the release was killed" mutually
// exclusive: whichever comes first wins, atomically.
type gate struct {
	mu        sync.Mutex
	killed    bool
	committed bool
}

// kill marks the release killed unless its result was already committed.
func (g *gate) kill() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.committed {
		return false
	}
	g.killed = true
	return true
}

func (g *gate) commit(fn func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.killed {
		return ErrKilled
	}
	if err := fn(); err != nil {
		return err
	}
	g.committed = true
	return nil
}

func (rt *runtimeState) beginRun(ctx *sql.Context) *gate {
	g := &gate{}
	rt.mu.Lock()
	rt.gates[ctx] = g
	rt.mu.Unlock()
	return g
}

func (rt *runtimeState) endRun(ctx *sql.Context, g *gate) {
	rt.mu.Lock()
	if rt.gates[ctx] == g {
		delete(rt.gates, ctx)
	}
	rt.mu.Unlock()
}

// commit runs fn (saving a released model) unless the release running under
// ctx has been killed; outside a release it just runs fn.
func (e *Env) commit(ctx *sql.Context, fn func() error) error {
	rt := e.rt()
	rt.mu.Lock()
	g := rt.gates[ctx]
	rt.mu.Unlock()
	if g == nil {
		if ctx != nil && ctx.Err() != nil {
			return ErrKilled
		}
		return fn()
	}
	return g.commit(fn)
}

// reserveName reserves model name in database db for the query ctx. A
// name is taken if a model of db has it or a running query holds it; a
// hold lapses when its query ends (go-mysql-server cancels the context)
// and is dropped by releaseNames when the call returns.
func (rt *runtimeState) reserveName(ctx *sql.Context, db, name string, exists func(db, name string) bool) bool {
	key := catalog.ModelKey(db, name)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if holder, ok := rt.names[key]; ok && holder != ctx && holder.Err() == nil {
		return false
	}
	if exists(db, name) {
		return false
	}
	rt.names[key] = ctx
	return true
}

// releaseNames drops every name held by ctx.
func (rt *runtimeState) releaseNames(ctx *sql.Context) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for k, c := range rt.names {
		if c == ctx || c.Err() != nil {
			delete(rt.names, k)
		}
	}
}

// reserveModelName reserves name in database db (that of the training
// table) for the release being prepared under ctx. Names are per database;
// within one the refusal is the same whether the name belongs to a model
// the caller can see, one trained on a table it may not read, or a
// training still running.
func (e *Env) reserveModelName(ctx *sql.Context, db, name string) error {
	taken := e.Catalog.HasModel(db, name)
	if ctx != nil && !taken {
		taken = !e.rt().reserveName(ctx, db, name, e.Catalog.HasModel)
	}
	if taken {
		return fmt.Errorf("model name %q is already taken in database %s (by a saved model or a training in progress); choose another with model=", name, db)
	}
	return nil
}

// freeModelName picks and reserves the first free default name in db.
func (e *Env) freeModelName(ctx *sql.Context, db, prefix string) string {
	for i := 1; ; i++ {
		name := fmt.Sprintf("%s_%d", prefix, i)
		if ctx == nil {
			if !e.Catalog.HasModel(db, name) {
				return name
			}
			continue
		}
		if e.rt().reserveName(ctx, db, name, e.Catalog.HasModel) {
			return name
		}
	}
}

// callCounts are the public row counts one release call has read, by
// catalog key; depth counts nested calls on the same query (a release in
// the arguments of another).
type callCounts struct {
	depth int
	n     map[string]int64
}

// beginCounts starts sharing row counts among the reads of the call
// running under ctx; endCounts ends it.
func (rt *runtimeState) beginCounts(ctx *sql.Context) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	c := rt.counts[ctx]
	if c == nil {
		c = &callCounts{n: map[string]int64{}}
		rt.counts[ctx] = c
	}
	c.depth++
}

func (rt *runtimeState) endCounts(ctx *sql.Context) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if c := rt.counts[ctx]; c != nil {
		if c.depth--; c.depth <= 0 {
			delete(rt.counts, ctx)
		}
	}
}

// rowCount returns the number of rows of ref, the public n a release
// plans with before it charges. Within one release call it is read once
// and shared by the memory estimate, kind=auto and the plan: on a backend
// each read is a COUNT(*) scan of the table (≈ 2 % of a pushed-down
// release's cost per read, docs/scale-out.md), and one value keeps the
// three consistent. The release's own snapshot still reports its n, and
// the mechanisms re-plan when it differs (owners wrote in between).
func (e *Env) rowCount(ctx *sql.Context, ref tableRef) (int64, error) {
	if ref.sample != nil {
		return ref.sample.m, nil // the person-level set's public m
	}
	rt := e.rt()
	var c *callCounts
	if ctx != nil && !separateReads.Load() {
		rt.mu.Lock()
		c = rt.counts[ctx]
		if c != nil {
			if n, ok := c.n[ref.key]; ok {
				rt.mu.Unlock()
				return n, nil
			}
		}
		rt.mu.Unlock()
	}
	n, err := e.Store.RowCount(ref.db, ref.table)
	if err != nil || c == nil {
		return n, err
	}
	rt.mu.Lock()
	c.n[ref.key] = n
	rt.mu.Unlock()
	return n, nil
}
