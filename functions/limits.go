package functions

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/dpsql/dpsql/mechanism/lmgc"
	"github.com/dpsql/dpsql/mechanism/lsq"
	"github.com/dpsql/dpsql/mechanism/svm"
)

// Memory limits of releases.
//
// Before a release is charged, its memory is estimated from public values
// only — the row count n, the number of columns with declared bounds (an
// upper bound on the feature count d), the largest declared label domain K,
// the kernel, dim and GOMAXPROCS — and the call is refused if the estimate
// exceeds Env.MaxReleaseMemory (dpsql serve --max-release-memory). Calls
// whose estimates fit wait (killably, before any charge) until the sum of
// the estimates of running releases leaves room for theirs. The formulas
// over-approximate the mechanisms' allocations (docs/sql.md, "Limits"); a
// call the estimator cannot parse gets no estimate and is left to the
// function's own argument checks, which refuse it before charging.

// memEstimate is the public memory estimate of one call.
type memEstimate struct {
	bytes  float64
	detail string // the public quantities it was computed from
}

// estimators by function name; functions without one are streaming (DP_MEAN,
// DP_EVALUATE) or post-processing.
var estimators = map[string]func(e *Env, ctx *sql.Context, args []any) (memEstimate, bool){
	"DP_SVM_TRAIN": func(e *Env, ctx *sql.Context, a []any) (memEstimate, bool) { return e.estimateTrain(ctx, a, "svm") },
	"DP_LSQ":       func(e *Env, ctx *sql.Context, a []any) (memEstimate, bool) { return e.estimateTrain(ctx, a, "lsq") },
	"DP_LSQ_PREDICT": func(e *Env, ctx *sql.Context, a []any) (memEstimate, bool) {
		return e.estimateTrain(ctx, a, "lsq_predict")
	},
	"DP_LMGC_TRAIN": func(e *Env, ctx *sql.Context, a []any) (memEstimate, bool) { return e.estimateTrain(ctx, a, "lmgc") },
	"DP_TRAIN":      estimateDPTrain,
}

// estimateDPTrain maps DP_TRAIN('<table>', ε, '<kind>', '<options>') onto
// the estimate of the function it runs: the papers' functions for svm, lsq
// and lmgc (kernel= becomes their kernel argument), the sufficient-statistics
// shape for every other kind (auto included: its kinds are all of that
// shape or smaller).
func estimateDPTrain(e *Env, ctx *sql.Context, a []any) (memEstimate, bool) {
	if len(a) < 2 {
		return memEstimate{}, false
	}
	kind := "auto"
	if len(a) > 2 && a[2] != nil {
		k, err := argString(a, 2, "kind")
		if err != nil {
			return memEstimate{}, false
		}
		if k = strings.ToLower(strings.TrimSpace(k)); k != "" {
			kind = k
		}
	}
	o, err := optionsArg(a, 3)
	if err != nil {
		return memEstimate{}, false
	}
	kernel, ok := o.take("kernel")
	if !ok {
		kernel = "linear"
	}
	switch kind {
	case "svm", "lsq":
		return e.estimateTrain(ctx, []any{a[0], a[1], kernel, o.String()}, kind)
	case "lmgc":
		return e.estimateTrain(ctx, []any{a[0], a[1], o.String()}, kind)
	}
	return e.estimateTrain(ctx, []any{a[0], a[1], "linear", o.String()}, "suffstats")
}

// shape is the public shape of a training call.
type shape struct {
	n, d, k, dim, workers int
	kernel                string
}

// rowsBytes is the in-memory copy of n rows of d features and a label.
func (s shape) rowsBytes() float64 { return float64(s.n) * (8*float64(s.d+1) + 48) }

// features is F, the dimension after the feature map: d + 1 (intercept)
// for the linear kernel, 2·dim for random Fourier features.
func (s shape) features() float64 {
	if s.kernel == "" || s.kernel == "linear" {
		return float64(s.d + 1)
	}
	return 2 * float64(s.dim)
}

// bytes is the estimate for one mechanism (see docs/sql.md, "Limits").
func (s shape) bytes(kind string) float64 {
	n, w, f := float64(s.n), float64(s.workers), s.features()
	rff := 0.0
	if s.kernel != "" && s.kernel != "linear" {
		rff = 8 * float64(s.dim) * float64(s.d+1) // the frequencies
	}
	switch kind {
	case "svm":
		models := float64(s.k)
		if s.k <= 2 {
			models = 1
		}
		par := math.Min(models, w)
		// float32 feature cache n×F, per-model solver state (duals, labels,
		// order, masks: 25 B per row) and two F-vectors per model.
		return s.rowsBytes() + 4*n*f + 8*n + par*(25*n+16*f) + models*8*f + rff
	case "lmgc":
		dd := float64(s.d + 1)
		// scaled rows (n×D), loss scratch (2·n×D) and ~16 solver copies of
		// the K D×D parameter matrices, plus the lifted-row cache and
		// per-part gradients of the loss (h/speed).
		return s.rowsBytes() + 3*8*n*dd + 16*float64(s.k)*8*dd*dd + lmgc.LiftBytes(s.n, s.k, s.d+1)
	case "lsq":
		// one F×F accumulator per worker plus the solver's factorisations
		// (up to 6 F×F matrices) and the per-worker row blocks.
		return s.rowsBytes() + (w+6)*8*f*f + w*520*8*f + rff
	case "suffstats":
		// rows in memory, and K+1 (d+1)×(d+1) statistic blocks with a few
		// working copies each (DP_TRAIN lda/qda/gnb/linreg/logreg).
		dd := float64(s.d + 1)
		return s.rowsBytes() + 4*float64(s.k+1)*8*dd*dd
	case "lsq_predict":
		if s.kernel != "" && s.kernel != "linear" && s.n <= lsq.ExactKernelMax {
			return s.rowsBytes() + 3*8*n*n // exact kernel ridge: m×m Gram matrix and its factor
		}
		return s.rowsBytes() + (w+6)*8*f*f + rff
	}
	return 0
}

// estimateTrain computes the estimate of DP_SVM_TRAIN, DP_LSQ,
// DP_LSQ_PREDICT and DP_LMGC_TRAIN calls from their public arguments.
func (e *Env) estimateTrain(ctx *sql.Context, args []any, kind string) (memEstimate, bool) {
	name, err := argString(args, 0, "table")
	if err != nil {
		return memEstimate{}, false
	}
	ref, err := e.resolveTable(ctx, name)
	if err != nil {
		return memEstimate{}, false
	}
	if _, unit := e.Catalog.UnitOf(ref.key); unit && ref.sample == nil {
		// The estimate would use (and its refusal show) the row count, not
		// public for a unit table; the function refuses the table anyway.
		return memEstimate{}, false
	}
	s := shape{workers: runtime.GOMAXPROCS(0), k: 2}
	optArg := 3
	if kind == "lmgc" {
		optArg = 2
	} else {
		k, err := argString(args, 2, "kernel")
		if err != nil {
			return memEstimate{}, false
		}
		s.kernel = strings.ToLower(k)
	}
	o, err := optionsArg(args, optArg)
	if err != nil {
		return memEstimate{}, false
	}
	if s.kernel != "" && s.kernel != "linear" {
		s.dim = svm.MaxDefaultDim // the default dim is at most this
		if kind != "svm" {
			s.dim = lsq.DefaultDim
		}
		if v, ok := o["dim"]; ok {
			if s.dim, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || s.dim <= 0 {
				return memEstimate{}, false
			}
		}
	}
	n, err := e.rowCount(ctx, ref)
	if err != nil {
		return memEstimate{}, false
	}
	s.n = int(n)
	t := e.tableEntry(ref)
	s.d = max(len(t.Bounds), 1)
	for _, l := range t.Labels {
		s.k = max(s.k, len(l))
	}
	est := memEstimate{bytes: s.bytes(kind)}
	est.detail = fmt.Sprintf("n=%d rows, up to %d feature columns", s.n, s.d)
	if ref.sample != nil {
		// A unit table: the person-level set's public size, never n.
		est.detail = fmt.Sprintf("m=%d rows (one per person), up to %d feature columns", s.n, s.d)
	}
	if s.kernel != "" {
		est.detail += fmt.Sprintf(", F=%.0f features after the %s kernel map", s.features(), s.kernel)
	}
	if kind == "svm" || kind == "lmgc" {
		est.detail += fmt.Sprintf(", up to %d classes", s.k)
	}
	est.detail += fmt.Sprintf(", %d workers", s.workers)
	return est, true
}

// formatBytes prints a byte count in binary units.
func formatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}

// withLimits wraps every budget-spending function so that, before its own
// checks run, the call's memory estimate is checked against the limit and
// reserved, and so that model names and memory reserved by the call are
// freed when it ends.
func (e *Env) withLimits(fs []sql.Function) []sql.Function {
	for i, f := range fs {
		fn, ok := f.(sql.FunctionN)
		if !ok {
			continue
		}
		inner, name := fn.Fn, strings.ToUpper(fn.Name)
		fn.Fn = func(args ...sql.Expression) (sql.Expression, error) {
			x, err := inner(args...)
			if err != nil {
				return nil, err
			}
			if c, ok := x.(*call); ok && c.release {
				c.fn = e.limited(name, c.fn)
			}
			return x, nil
		}
		fs[i] = fn
	}
	return fs
}

// limited is the wrapper withLimits installs.
func (e *Env) limited(name string, inner callFn) callFn {
	return func(ctx *sql.Context, args []any) (any, error) {
		rt := e.rt()
		defer rt.releaseNames(ctx)
		rt.beginCounts(ctx)
		defer rt.endCounts(ctx)
		if argsDryRun(args) {
			// A dry run reads no rows: no memory to reserve or wait for.
			return inner(ctx, args)
		}
		if est, ok := e.estimate(ctx, name, args); ok && e.MaxReleaseMemory > 0 {
			if est.bytes > float64(e.MaxReleaseMemory) {
				return nil, fmt.Errorf("this release would need about %s of memory (%s), above the server's limit of %s per release (--max-release-memory); use a smaller dim, fewer features or a smaller table; nothing was charged",
					formatBytes(est.bytes), est.detail, formatBytes(float64(e.MaxReleaseMemory)))
			}
			t, err := rt.mem.acquire(ctx, int64(math.Ceil(est.bytes)))
			if err != nil {
				return nil, err
			}
			rt.hold(ctx, t)
			defer rt.unhold(ctx, t)
		}
		return inner(ctx, args)
	}
}

// argsDryRun reports whether one of the string arguments is an options
// string with dry_run=1 (table, column and model names contain no '=').
func argsDryRun(args []any) bool {
	for _, a := range args {
		s, ok := a.(string)
		if !ok || !strings.Contains(strings.ToLower(s), "dry_run") {
			continue
		}
		o, err := parseOptions(s)
		if err != nil {
			continue
		}
		if dry, err := dryRunOption(o); err == nil && dry {
			return true
		}
	}
	return false
}

func (e *Env) estimate(ctx *sql.Context, name string, args []any) (memEstimate, bool) {
	f, ok := estimators[name]
	if !ok {
		return memEstimate{}, false
	}
	return f(e, ctx, args)
}

// memPool is the memory budget shared by running releases.
type memPool struct {
	limit   int64
	used    int64
	changed chan struct{}
	mu      chan struct{} // 1-slot mutex usable in select
}

func newMemPool(limit int64) *memPool {
	p := &memPool{limit: limit, changed: make(chan struct{}), mu: make(chan struct{}, 1)}
	return p
}

// memTicket is one call's reservation; free is idempotent.
type memTicket struct {
	p      *memPool
	n      int64
	freed  bool
	handed bool
}

// acquire waits until n bytes fit under the limit, or the query is killed
// (then nothing was charged: this runs before the release reserves).
func (p *memPool) acquire(ctx *sql.Context, n int64) (*memTicket, error) {
	for {
		p.mu <- struct{}{}
		if p.used+n <= p.limit || p.used == 0 {
			p.used += n
			<-p.mu
			return &memTicket{p: p, n: n}, nil
		}
		ch := p.changed
		<-p.mu
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ErrKilled
		}
	}
}

func (t *memTicket) free() {
	p := t.p
	p.mu <- struct{}{}
	if !t.freed {
		t.freed = true
		p.used -= t.n
		close(p.changed)
		p.changed = make(chan struct{})
	}
	<-p.mu
}

// hold registers t as the memory of the call running under ctx.
func (rt *runtimeState) hold(ctx *sql.Context, t *memTicket) {
	rt.mu.Lock()
	rt.held[ctx] = t
	rt.mu.Unlock()
}

// unhold frees t when the call ends, unless release handed it to a compute
// goroutine that is still running.
func (rt *runtimeState) unhold(ctx *sql.Context, t *memTicket) {
	rt.mu.Lock()
	if rt.held[ctx] == t {
		delete(rt.held, ctx)
	}
	handed := t.handed
	rt.mu.Unlock()
	if !handed {
		t.free()
	}
}

// handOverMemory moves the call's memory reservation to the compute
// goroutine of its release: the returned func frees it when compute ends,
// which after a KILL may be later than the call's return.
func (rt *runtimeState) handOverMemory(ctx *sql.Context) func() {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	t := rt.held[ctx]
	if t == nil || t.handed {
		return func() {}
	}
	t.handed = true
	return t.free
}
