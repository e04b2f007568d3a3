package functions

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
)

// runtimeState is the in-process state of running releases: model names
// reserved by running trainings, the kill gate of each running release and
// the memory reserved by each (limits.go). Everything is keyed by the query's
// *sql.Context, which go-mysql-server creates per statement and cancels when
// the statement ends or is killed.
type runtimeState struct {
	mu    sync.Mutex
	names map[string]*sql.Context // lower-case model name → query holding it
	gates map[*sql.Context]*gate
	mem   *memPool
	held  map[*sql.Context]*memTicket
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
			names: map[string]*sql.Context{},
			gates: map[*sql.Context]*gate{},
			mem:   newMemPool(e.MaxReleaseMemory),
			held:  map[*sql.Context]*memTicket{},
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

// reserveName reserves a model name for the query ctx. A name is taken if a
// model has it or a running query holds it; a hold lapses when its query
// ends (go-mysql-server cancels the context) and is dropped by
// releaseNames when the call returns.
func (rt *runtimeState) reserveName(ctx *sql.Context, name string, exists func(string) bool) bool {
	key := strings.ToLower(name)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if holder, ok := rt.names[key]; ok && holder != ctx && holder.Err() == nil {
		return false
	}
	if exists(name) {
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

// reserveModelName reserves name for the release being prepared under ctx.
// Model names are one namespace for all databases, so the refusal is the
// same whether the name belongs to a model the caller can see, one it
// cannot, or a training still running.
func (e *Env) reserveModelName(ctx *sql.Context, name string) error {
	taken := e.Catalog.HasModel(name)
	if ctx != nil && !taken {
		taken = !e.rt().reserveName(ctx, name, e.Catalog.HasModel)
	}
	if taken {
		return fmt.Errorf("model name %q is already taken (by a saved model or a training in progress); choose another with model=", name)
	}
	return nil
}

// freeModelName picks and reserves the first free default name.
func (e *Env) freeModelName(ctx *sql.Context, prefix string) string {
	for i := 1; ; i++ {
		name := fmt.Sprintf("%s_%d", prefix, i)
		if ctx == nil {
			if !e.Catalog.HasModel(name) {
				return name
			}
			continue
		}
		if e.rt().reserveName(ctx, name, e.Catalog.HasModel) {
			return name
		}
	}
}
