package functions

import (
	"errors"

	"github.com/dolthub/go-mysql-server/sql"
)

// Rows is the storage DP releases read directly (no hooks, no privileges,
// no SQL of the analyst): the embedded store (store), or the
// engine's router that sends tables attached from a MariaDB/MySQL server to
// mysqlstore (scale-out, issue 14). Every scan reads one consistent
// snapshot and reports the number of rows it read.
type Rows interface {
	TableSchema(db, table string) (sql.Schema, error)
	RowCount(db, table string) (int64, error)
	ScanFloats(db, table string, cols []string, fn func(row []float64) error) (int64, error)
	ScanValues(db, table string, cols []string, fn func(row []any) error) (int64, error)
}

// ParallelFloats is implemented by storage that can decode a scan's rows
// on several cores (the embedded store): ScanFloats with start called first
// with the snapshot's row count and fn(i, row) called for row i (table
// order, from 0), concurrently for different i. ok = false when the table
// is not one it scans so (nothing read, fn not called); the caller then
// scans with ScanFloats.
type ParallelFloats interface {
	ScanFloatsParallel(db, table string, cols []string, start func(n int64) error, fn func(i int64, row []float64)) (n int64, ok bool, err error)
}

// Pushdown is implemented by storage that can compute a release's
// noise-free statistics next to the data (aggregate SQL on a MariaDB or
// Spider backend). Each method answers ok = false when the table is not
// one it serves, or when the statistic cannot be pushed down exactly (the
// caller then scans rows as on the embedded store); it reads one
// consistent snapshot and returns the n of that snapshot.
type Pushdown interface {
	// ShiftedSum returns n and Σ fl(clip(v) − lo), clip as mechanism.Clip
	// (NULL → fl(lo + (hi − lo)/2)): exact = true sums exactly and rounds
	// once (DECIMAL); exact = false sums the same per-row terms as DOUBLE
	// in the backend's order (mechanism.Mean.ReleaseAnyOrderSum).
	ShiftedSum(db, table, col string, lo, hi float64, exact bool) (sum float64, n int64, ok bool, err error)
	// LinearStats returns n, A = Σ x′x′ᵀ (F×F row-major, both triangles)
	// and c = Σ y′x′ of the rows mapped as mechanism.Prepared.Transform and
	// linreg's label map (see LinearMap): exact = false sums them as DOUBLE in
	// the backend's order (the plan must have linreg.Config.AnyOrderSums);
	// exact = true sums the embedded path's per-row terms exactly (DECIMAL)
	// and rounds once, inside the embedded plan's allowance, at ≈ 30× the
	// cost.
	LinearStats(db, table string, m LinearMap, exact bool) (a, c []float64, n int64, ok bool, err error)
	// CentredLinearStats reads, in one snapshot, ShiftedSum(m.Label, lo,
	// hi, meanExact), hands its sum and n to centre (which releases the
	// label mean and returns the map to use, m with its LabelShift and
	// ShiftAlgebraic set), then LinearStats of that map (exact as
	// there): DP_LSQ's centred release reads one data set, with one n.
	// ok = false is decided from public facts (the column kinds, bounds)
	// before anything is read.
	CentredLinearStats(db, table string, m LinearMap, lo, hi float64, meanExact, exact bool,
		centre func(sum float64, n int64) (LinearMap, error)) (a, c []float64, n int64, ok bool, err error)
	// CountOutside returns the number of rows whose col is not NULL and
	// lies outside [lo, hi] (dp_bounds' check of existing rows).
	CountOutside(db, table, col string, lo, hi float64) (n int64, ok bool, err error)
	// Pushes reports whether db.table is served by the backend, so that a
	// release can be planned for pushed-down statistics before charging
	// (a public fact: where the table lives).
	Pushes(db, table string) bool
}

// LinearMap describes the per-row map of the linear mechanisms: feature j
// becomes z = clamp(v·Mul[j] + Add[j], −1, 1)·Inv (NULL → 0), an intercept
// coordinate Inv is appended when Intercept, and the label becomes
// y′ = clamp((clip(y) − Mid)/Half, −1, 1), clip to [LabelLo, LabelHi] with
// NULL → LabelNull. Every value is computed from public bounds.
type LinearMap struct {
	Features         []string
	Mul, Add         []float64
	Inv              float64
	Intercept        bool
	Label            string
	LabelLo, LabelHi float64
	Mid, Half        float64
	LabelNull        float64
	// LabelShift, when not 0, is subtracted from the raw label before clip
	// (DP_LSQ's centring, y − (μ̃ − mid)); NULL stays NULL. |LabelShift|
	// must be at most 10³⁰¹ (it is ≤ LabelHi − LabelLo).
	LabelShift float64
	// ShiftAlgebraic lets the fast statement apply LabelShift to the rows
	// inside its box through their sums instead of row by row:
	// Σu·y′ = (Σu·y − (s + mid)·Σu)/half (exact rational arithmetic in
	// dpsql). It saves the per-row subtraction, but the sums then differ
	// from the per-row ones by up to γ·Σ|u|·M/half, M = max(|lo|, |hi|) +
	// 2|s| + |mid| instead of γ·Σ|u·y′|: set only for plans whose allowance
	// covers that (lsq.Trainer.ShiftAlgebraic).
	ShiftAlgebraic bool
}

// ErrBackend marks a failure of the storage backend (a server or shard
// unreachable, a lost connection): its message is the operator's, and the
// analyst gets errBackendFailed instead.
var ErrBackend = errors.New("storage backend failure")

// errBackendFailed is what an analyst sees when the backend failed during a
// release: the failure is of the infrastructure, not of the rows.
var errBackendFailed = errors.New("the storage backend failed during the release (a server or shard is unreachable); the privacy charge is kept, nothing was released (details in dp_ledger and the server log)")

// RowSafe wraps the storage every DP read goes through so that a panic in a
// release's per-row function leaves that row out instead of ending the
// release (issue 25, defence in depth): after the charge, nothing a row
// holds may turn into an error the analyst sees. The per-row functions are
// written to be total; this only catches a bug. Optional interfaces of r
// (Pushdown, Attached) are kept.
func RowSafe(r Rows) Rows {
	s := safeRows{r}
	pd, isPD := r.(Pushdown)
	at, isAt := r.(attacher)
	switch {
	case isPD && isAt:
		return struct {
			safeRows
			Pushdown
			attacher
		}{s, pd, at}
	case isPD:
		return struct {
			safeRows
			Pushdown
		}{s, pd}
	case isAt:
		return struct {
			safeRows
			attacher
		}{s, at}
	}
	return s
}

type attacher interface {
	Attached(db, table string) bool
}

type safeRows struct{ Rows }

func (s safeRows) ScanFloats(db, table string, cols []string, fn func(row []float64) error) (int64, error) {
	return s.Rows.ScanFloats(db, table, cols, func(row []float64) (err error) {
		defer func() {
			if recover() != nil {
				err = nil
			}
		}()
		return fn(row)
	})
}

// ScanFloatsParallel leaves a row whose fn panicked as fn left it (the
// caller's slot i may stay unset: see compactRows), like ScanFloats.
func (s safeRows) ScanFloatsParallel(db, table string, cols []string, start func(n int64) error, fn func(i int64, row []float64)) (int64, bool, error) {
	p, ok := s.Rows.(ParallelFloats)
	if !ok {
		return 0, false, nil
	}
	return p.ScanFloatsParallel(db, table, cols, start, func(i int64, row []float64) {
		defer func() { _ = recover() }()
		fn(i, row)
	})
}

func (s safeRows) ScanValues(db, table string, cols []string, fn func(row []any) error) (int64, error) {
	return s.Rows.ScanValues(db, table, cols, func(row []any) (err error) {
		defer func() {
			if recover() != nil {
				err = nil
			}
		}()
		return fn(row)
	})
}

// UnitPushdown is implemented by storage that can compute the per-(person,
// group) partial aggregates of a person-level release next to the data
// (issue 27 item 6, docs/privacy/units.md §11): SELECT person, group…,
// per term COUNT and SUM … FROM the joined tables GROUP BY person, group….
// ok = false (nothing read, fn not called) when the storage cannot run the
// query exactly as the streaming path would compute it — a table it does
// not serve, a column kind whose equality or grouping differs in SQL, bounds
// whose sums could overflow —, decided from public facts only (where the
// tables live, their column kinds, the public bounds).
type UnitPushdown interface {
	PersonGroups(q PersonGroupQuery, fn func(g PersonGroup) error) (ok bool, err error)
}

// PushNode is a FROM tree: a scan (Table set; its alias is its index in
// the query's Scans) or an inner equi-join of two subtrees.
type PushNode struct {
	Scan              int // index into PersonGroupQuery.Scans; −1 for a join
	Left, Right       *PushNode
	LeftCol, RightCol PushCol
}

// PushCol is a column of one of the query's scans (schema spelling).
type PushCol struct {
	Scan   int
	Column string
}

// PushTable is one scanned table.
type PushTable struct{ DB, Table string }

// PushTerm is one aggregate input: Col nil counts rows (COUNT(*));
// otherwise the rows where Col is not NULL are counted and, when Sum, the
// column clipped to [Lo, Hi] (as mechanism.Clip, the declared read without
// a transform) is summed as a double.
type PushTerm struct {
	Col    *PushCol
	Sum    bool
	Lo, Hi float64
}

// PushGroup is a group column; Binned marks one whose raw values dpsql maps to public
// bins after the pushdown (any numeric or text kind may then be grouped).
type PushGroup struct {
	Col    PushCol
	Binned bool
}

// PersonGroupQuery is the pushed-down part of a person-level release.
type PersonGroupQuery struct {
	Scans  []PushTable
	From   *PushNode
	Person PushCol // the column that holds the person, or the key its person is looked up by
	Groups []PushGroup
	Terms  []PushTerm
}

// PersonGroup is one row of the pushed-down result: the person column's
// value, the group columns' values (as ScanValues returns them), the rows
// of the batch, and per term the rows counted and the sum (0 when no row
// counted).
type PersonGroup struct {
	Person any
	Groups []any
	All    int64
	Rows   []int64
	Sums   []float64
}

// PersonGroups passes the partial aggregates through when the wrapped
// storage computes them (else ok = false), recovering a panic of fn as
// ScanValues does.
func (s safeRows) PersonGroups(q PersonGroupQuery, fn func(g PersonGroup) error) (bool, error) {
	up, ok := s.Rows.(UnitPushdown)
	if !ok {
		return false, nil
	}
	return up.PersonGroups(q, func(g PersonGroup) (err error) {
		defer func() {
			if recover() != nil {
				err = nil
			}
		}()
		return fn(g)
	})
}
