package budget

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// openTemp opens a fresh bbolt file (fsync on, the default) and an
// Accountant on it.
func openTemp(t testing.TB) (*Accountant, *bolt.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dpsql.db")
	db, a := reopen(t, path)
	return a, db, path
}

func reopen(t testing.TB, path string) (*bolt.DB, *Accountant) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	a, err := Open(db)
	if err != nil {
		t.Fatal(err)
	}
	return db, a
}

func lap(eps float64) []Event { return []Event{{Kind: Laplace, Epsilon: eps}} }

func req(table string, eps float64) Request {
	return Request{Table: table, User: "ana", Function: "DP_MEAN", Requested: [2]float64{eps, 0}, Events: lap(eps)}
}

func mustProtect(t testing.TB, a *Accountant, table string, eps, delta float64, m Mode) {
	t.Helper()
	if err := a.Protect(table, eps, delta, m); err != nil {
		t.Fatal(err)
	}
}

func mustStatus(t testing.TB, a *Accountant, table string) Status {
	t.Helper()
	s, err := a.Status(table)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBudgetExhaustion(t *testing.T) {
	a, _, _ := openTemp(t)
	mustProtect(t, a, "db.t", 1.0, 0, Basic)
	for i := 0; i < 2; i++ {
		rec, err := a.Reserve(req("db.t", 0.5))
		if err != nil {
			t.Fatalf("release %d: %v", i, err)
		}
		if rec.Epsilon != 0.5 || rec.Delta != 0 || rec.ID == 0 {
			t.Fatalf("receipt %+v", rec)
		}
		if err := a.Complete(rec.ID, StatusOK, ""); err != nil {
			t.Fatal(err)
		}
	}
	_, err := a.Reserve(req("db.t", 0.5))
	if !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("third release: got %v, want ErrBudgetExceeded", err)
	}
	for _, want := range []string{"privacy budget exceeded", "db.t", "requested ε=0.5, δ=0", "charge ε=0.5, δ=0", "remaining ε=0, δ=0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	s := mustStatus(t, a, "db.t")
	if s.EpsilonSpent != 1.0 || s.DeltaSpent != 0 || s.Releases != 2 || s.EpsilonRemaining != 0 {
		t.Fatalf("status after refusal: %+v", s)
	}
	l, err := a.Ledger()
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != 2 {
		t.Fatalf("ledger has %d rows, want 2 (a refusal is not a release)", len(l))
	}
	for _, e := range l {
		if e.Table != "db.t" || e.User != "ana" || e.Function != "DP_MEAN" || e.Epsilon != 0.5 || e.Status != StatusOK ||
			e.RequestedEpsilon != 0.5 || e.EventsEpsilon != 0.5 || e.Time.IsZero() || e.Completed.IsZero() {
			t.Errorf("ledger entry %+v", e)
		}
	}
}

func TestOverspendMessageNamesRemaining(t *testing.T) {
	a, _, _ := openTemp(t)
	mustProtect(t, a, "db.t", 1, 1e-6, Basic)
	if _, err := a.Reserve(Request{Table: "db.t", Requested: [2]float64{0.7, 4e-7},
		Events: []Event{{Kind: Generic, Epsilon: 0.7, Delta: 4e-7}}}); err != nil {
		t.Fatal(err)
	}
	_, err := a.Reserve(Request{Table: "db.t", Requested: [2]float64{0.5, 1e-7},
		Events: []Event{{Kind: Generic, Epsilon: 0.5, Delta: 1e-7}}})
	if !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{"db.t", "requested ε=0.5, δ=1e-07", "charge ε=0.5, δ=0.0000001", "remaining ε=0.3, δ=0.0000006"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	// δ alone can exceed too.
	_, err = a.Reserve(Request{Table: "db.t", Requested: [2]float64{0.1, 7e-7},
		Events: []Event{{Kind: Generic, Epsilon: 0.1, Delta: 7e-7}}})
	if !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("δ overspend: got %v", err)
	}
	if s := mustStatus(t, a, "db.t"); s.EpsilonSpent != 0.7 || s.DeltaSpent < 4e-7 || s.DeltaSpent > 4.0000000000001e-7 {
		t.Fatalf("refusals charged something: %+v", s)
	}
}

func TestNotProtected(t *testing.T) {
	a, _, _ := openTemp(t)
	_, err := a.Reserve(req("db.nope", 0.1))
	if !errors.Is(err, ErrNotProtected) || !strings.Contains(err.Error(), "db.nope") {
		t.Fatalf("got %v", err)
	}
	if _, err := a.Status("db.nope"); !errors.Is(err, ErrNotProtected) {
		t.Fatalf("Status: %v", err)
	}
}

func TestProtectValidation(t *testing.T) {
	a, _, _ := openTemp(t)
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		table      string
		eps, delta float64
		mode       Mode
	}{
		{"db.t", 0, 0, Basic}, {"db.t", -1, 0, Basic}, {"db.t", nan, 0, Basic}, {"db.t", inf, 0, Basic},
		{"db.t", 2 * MaxEpsilon, 0, Basic}, {"db.t", 1e-13, 0, Basic},
		{"db.t", 1, -1e-9, Basic}, {"db.t", 1, 1, Basic}, {"db.t", 1, nan, Basic}, {"db.t", 1, inf, Basic},
		{"db.t", 1, 0, "advanced"}, {"db.t", 1, 0, RDP}, {"", 1, 0, Basic}, {"db.\x00t", 1, 0, Basic},
	} {
		err := a.Protect(c.table, c.eps, c.delta, c.mode)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Protect(%q, %v, %v, %q) = %v, want ErrInvalid", c.table, c.eps, c.delta, c.mode, err)
		}
	}
	if all, err := a.All(); err != nil || len(all) != 0 {
		t.Fatalf("invalid protects left accounts: %v %v", all, err)
	}
	if err := a.Protect("db.t", 1, 0, ""); err != nil {
		t.Fatalf("empty mode: %v", err)
	}
	if s := mustStatus(t, a, "db.t"); s.Mode != Basic {
		t.Fatalf("default mode %q", s.Mode)
	}
}

func TestEventValidation(t *testing.T) {
	a, _, _ := openTemp(t)
	mustProtect(t, a, "db.t", 10, 1e-3, Basic)
	nan, inf := math.NaN(), math.Inf(1)
	bad := [][]Event{
		nil,
		{{Kind: Laplace, Epsilon: 0}},
		{{Kind: Laplace, Epsilon: -1}},
		{{Kind: Laplace, Epsilon: nan}},
		{{Kind: Laplace, Epsilon: inf}},
		{{Kind: Laplace, Epsilon: 0.1, Delta: 1e-6}},
		{{Kind: Laplace, Epsilon: 0.1, Ratio: 1}},
		{{Kind: Generic, Epsilon: 0.1, Delta: 1}},
		{{Kind: Generic, Epsilon: 0.1, Delta: -1e-9}},
		{{Kind: Generic, Epsilon: 0.1, Delta: nan}},
		{{Kind: Gaussian, Epsilon: 0.5, Delta: 1e-5}},
		{{Kind: Gaussian, Epsilon: 0.5, Delta: 1e-5, Ratio: nan}},
		{{Kind: Gaussian, Epsilon: 0.5, Delta: 1e-5, Ratio: inf}},
		{{Kind: Gaussian, Epsilon: 0.5, Delta: 0, Ratio: 0.1}},
		{{Kind: Gaussian, Epsilon: 0.5, Delta: 1e-5, Ratio: 10}}, // not (0.5, 1e-5)-DP
		{{Kind: 0, Epsilon: 0.1}},
		{{Kind: 7, Epsilon: 0.1}},
		{{Kind: Laplace, Epsilon: 0.1}, {Kind: Laplace, Epsilon: nan}},
	}
	for _, ev := range bad {
		_, err := a.Reserve(Request{Table: "db.t", Requested: [2]float64{0.1, 0}, Events: ev})
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("events %v: got %v, want ErrInvalid", ev, err)
		}
	}
	for _, rq := range [][2]float64{{nan, 0}, {-1, 0}, {inf, 0}, {0.1, 1}, {0.1, nan}} {
		if _, err := a.Reserve(Request{Table: "db.t", Requested: rq, Events: lap(0.1)}); !errors.Is(err, ErrInvalid) {
			t.Errorf("requested %v: got %v", rq, err)
		}
	}
	if s := mustStatus(t, a, "db.t"); s.EpsilonSpent != 0 || s.Releases != 0 {
		t.Fatalf("invalid requests charged: %+v", s)
	}
	if l, _ := a.Ledger(); len(l) != 0 {
		t.Fatalf("invalid requests reached the ledger: %v", l)
	}
	// A huge but finite ε is valid and simply unaffordable.
	if _, err := a.Reserve(req("db.t", 1e300)); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("ε=1e300: %v", err)
	}
}

func TestCompleteKeepsCharge(t *testing.T) {
	a, _, _ := openTemp(t)
	mustProtect(t, a, "db.t", 1, 0, Basic)
	r1, err := a.Reserve(req("db.t", 0.25))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := a.Reserve(req("db.t", 0.25))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Complete(r1.ID, StatusOK, ""); err != nil {
		t.Fatal(err)
	}
	if err := a.Complete(r2.ID, StatusFailed, "solver diverged"); err != nil {
		t.Fatal(err)
	}
	if s := mustStatus(t, a, "db.t"); s.EpsilonSpent != 0.5 {
		t.Fatalf("a failed release gave its charge back: %+v", s)
	}
	if err := a.Complete(r2.ID, StatusOK, ""); err == nil {
		t.Fatal("completing twice succeeded")
	}
	if err := a.Complete(999, StatusOK, ""); !errors.Is(err, ErrUnknownRelease) {
		t.Fatalf("unknown id: %v", err)
	}
	if err := a.Complete(r1.ID, "reserved", ""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad status: %v", err)
	}
	l, _ := a.Ledger()
	if len(l) != 2 || l[0].Status != StatusOK || l[1].Status != StatusFailed || l[1].Detail != "solver diverged" || l[1].Epsilon != 0.25 {
		t.Fatalf("ledger %+v", l)
	}
}

func TestPersistenceAcrossReopen(t *testing.T) {
	a, db, path := openTemp(t)
	mustProtect(t, a, "db.t", 2, 1e-6, Basic)
	mustProtect(t, a, "db.r", 5, 2e-6, RDP)
	done, err := a.Reserve(req("db.t", 0.3))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Complete(done.ID, StatusOK, ""); err != nil {
		t.Fatal(err)
	}
	inflight, err := a.Reserve(Request{Table: "db.t", User: "bob", Function: "DP_SVM_TRAIN", Requested: [2]float64{0.2, 1e-7},
		Events: []Event{{Kind: Generic, Epsilon: 0.2, Delta: 1e-7}}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if _, err := a.Reserve(req("db.r", 0.4)); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := a.All()
	db.Close() // the process "dies" with one release still reserved

	_, a2 := reopen(t, path)
	after, err := a2.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 2 {
		t.Fatalf("accounts after reopen: %+v", after)
	}
	for i := range before {
		b, c := before[i], after[i]
		if b.Table != c.Table || b.Mode != c.Mode || b.EpsilonSpent != c.EpsilonSpent || b.DeltaSpent != c.DeltaSpent ||
			b.EpsilonTotal != c.EpsilonTotal || b.DeltaTotal != c.DeltaTotal || b.Releases != c.Releases || b.EpsilonRDP != c.EpsilonRDP {
			t.Errorf("status changed across reopen:\n%+v\n%+v", b, c)
		}
	}
	if s := after[1]; s.Table != "db.t" || s.EpsilonSpent != 0.5 || s.DeltaSpent < 1e-7 {
		t.Fatalf("db.t after reopen: %+v", s)
	}
	l, _ := a2.Ledger()
	if len(l) != 12 {
		t.Fatalf("ledger has %d rows after reopen, want 12", len(l))
	}
	byID := map[uint64]Entry{}
	for _, e := range l {
		byID[e.ID] = e
	}
	if e := byID[done.ID]; e.Status != StatusOK {
		t.Errorf("completed release: %+v", e)
	}
	if e := byID[inflight.ID]; e.Status != StatusInterrupted || e.Epsilon != 0.2 || e.User != "bob" {
		t.Errorf("in-flight release after restart: %+v", e)
	}
	// Ids keep increasing and the spend keeps accumulating.
	r, err := a2.Reserve(req("db.t", 0.1))
	if err != nil || r.ID <= inflight.ID {
		t.Fatalf("reserve after reopen: %+v %v", r, err)
	}
	if s := mustStatus(t, a2, "db.t"); s.EpsilonSpent != 0.6 {
		t.Fatalf("spend after reopen: %+v", s)
	}
}

func TestReprotect(t *testing.T) {
	a, _, _ := openTemp(t)
	mustProtect(t, a, "db.t", 1, 1e-6, Basic)
	if _, err := a.Reserve(req("db.t", 0.6)); err != nil {
		t.Fatal(err)
	}
	// Raising the totals keeps the spend.
	mustProtect(t, a, "db.t", 2, 1e-6, Basic)
	if s := mustStatus(t, a, "db.t"); s.EpsilonTotal != 2 || s.EpsilonSpent != 0.6 || s.Releases != 1 {
		t.Fatalf("after raising: %+v", s)
	}
	// Lowering below the spend is refused; to exactly the spend is allowed.
	if err := a.Protect("db.t", 0.5, 1e-6, Basic); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "already spent") {
		t.Fatalf("lowering below spend: %v", err)
	}
	mustProtect(t, a, "db.t", 0.6, 1e-6, Basic)
	if _, err := a.Reserve(req("db.t", 0.01)); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("after lowering to the spend: %v", err)
	}
	// The mode cannot change once anything is spent …
	if err := a.Protect("db.t", 5, 1e-6, RDP); !errors.Is(err, ErrInvalid) {
		t.Fatalf("mode change after spend: %v", err)
	}
	// … but can before.
	mustProtect(t, a, "db.u", 1, 1e-6, Basic)
	mustProtect(t, a, "db.u", 1, 1e-6, RDP)
	if s := mustStatus(t, a, "db.u"); s.Mode != RDP || len(s.Orders) != len(defaultOrders) {
		t.Fatalf("mode change before spend: %+v", s)
	}
}

// TestSplitEvents: a release made of K events of ε/K must fit a budget of ε
// (rounding is per release, not per event).
func TestSplitEvents(t *testing.T) {
	a, _, _ := openTemp(t)
	mustProtect(t, a, "db.t", 1, 0, Basic)
	ev := make([]Event, 3)
	for i := range ev {
		ev[i] = Event{Kind: Laplace, Epsilon: 1.0 / 3}
	}
	if _, err := a.Reserve(Request{Table: "db.t", Requested: [2]float64{1, 0}, Events: ev}); err != nil {
		t.Fatalf("3 × ε/3 on a budget of 1: %v", err)
	}
	if s := mustStatus(t, a, "db.t"); s.EpsilonSpent != 1 {
		t.Fatalf("spent %v, want 1", s.EpsilonSpent)
	}
}

// TestSpendNeverUnderCounts: random ε and δ, many releases; the reported
// spend is ≥ the exact sum of the amounts and within the rounding of it.
func TestSpendNeverUnderCounts(t *testing.T) {
	a, _, _ := openTemp(t)
	mustProtect(t, a, "db.t", 1000, 0.5, Basic)
	rng := rand.New(rand.NewPCG(1, 2))
	se, sd := new(big.Rat), new(big.Rat)
	const n = 100
	for i := 0; i < n; i++ {
		e := rng.Float64() * 0.37
		d := rng.Float64() * 1e-6
		if e == 0 {
			continue
		}
		if _, err := a.Reserve(Request{Table: "db.t", Requested: [2]float64{e, d}, Events: []Event{{Kind: Generic, Epsilon: e, Delta: d}}}); err != nil {
			t.Fatal(err)
		}
		se.Add(se, decimalRat(e))
		sd.Add(sd, decimalRat(d))
	}
	s := mustStatus(t, a, "db.t")
	for _, c := range []struct {
		name     string
		reported float64
		exact    *big.Rat
		slack    float64
	}{{"ε", s.EpsilonSpent, se, n * 1e-12}, {"δ", s.DeltaSpent, sd, n * 1e-18}} {
		r := new(big.Rat).SetFloat64(c.reported)
		if r.Cmp(c.exact) < 0 {
			t.Errorf("%s spend %v under-counts the exact %s", c.name, c.reported, c.exact.FloatString(20))
		}
		ex, _ := c.exact.Float64()
		if c.reported-ex > c.slack*1.01+math.Abs(ex)*1e-15 {
			t.Errorf("%s spend %v over-counts %v by more than the rounding", c.name, c.reported, ex)
		}
	}
	// The ledger's charges add up to the spend (same fixed-point units).
	l, _ := a.Ledger()
	var sum float64
	for _, e := range l {
		sum += e.Epsilon
	}
	if math.Abs(sum-s.EpsilonSpent) > 1e-9 {
		t.Errorf("ledger charges sum to %v, spend %v", sum, s.EpsilonSpent)
	}
}

// TestConcurrentReservations: 64 clients × 50 releases of ε = 0.01 against
// a budget of 10: exactly 1000 succeed and the spend is exactly 10.
func TestConcurrentReservations(t *testing.T) {
	a, _, _ := openTemp(t)
	mustProtect(t, a, "db.t", 10, 0, Basic)
	mustProtect(t, a, "db.other", 1, 0, Basic)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		ok, over int
		ids      = map[uint64]bool{}
		otherOK  int
	)
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				rec, err := a.Reserve(req("db.t", 0.01))
				mu.Lock()
				switch {
				case err == nil:
					ok++
					if ids[rec.ID] {
						t.Errorf("duplicate release id %d", rec.ID)
					}
					ids[rec.ID] = true
				case errors.Is(err, ErrBudgetExceeded):
					over++
				default:
					t.Errorf("unexpected error: %v", err)
				}
				mu.Unlock()
				if err == nil && i%2 == 0 {
					if err := a.Complete(rec.ID, StatusOK, ""); err != nil {
						t.Error(err)
					}
				}
				if g%8 == 0 && i%10 == 0 { // interleave another table
					if _, err := a.Reserve(req("db.other", 0.1)); err == nil {
						mu.Lock()
						otherOK++
						mu.Unlock()
					}
				}
			}
		}(g)
	}
	wg.Wait()
	if ok != 1000 || over != 64*50-1000 {
		t.Fatalf("%d succeeded, %d refused; want 1000 and %d", ok, over, 64*50-1000)
	}
	s := mustStatus(t, a, "db.t")
	if math.Abs(s.EpsilonSpent-10) > 1e-9 || s.Releases != 1000 {
		t.Fatalf("spent %v over %d releases, want 10 over 1000", s.EpsilonSpent, s.Releases)
	}
	if o := mustStatus(t, a, "db.other"); otherOK != 10 || o.EpsilonSpent != 1 {
		t.Fatalf("other table: %d ok, %+v", otherOK, o)
	}
	l, _ := a.Ledger()
	if len(l) != 1000+otherOK {
		t.Fatalf("ledger has %d rows", len(l))
	}
}

func TestClosedDatabase(t *testing.T) {
	a, db, _ := openTemp(t)
	mustProtect(t, a, "db.t", 1, 0, Basic)
	db.Close()
	if _, err := a.Reserve(req("db.t", 0.1)); err == nil || errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("reserve on a closed database: %v", err)
	}
	if _, err := Open(nil); err == nil {
		t.Fatal("Open(nil) succeeded")
	}
}

// TestExactRemainingAdmitted: a release asking exactly the remaining δ (or
// ε), split over events in float64 so that the events' decimals sum a few
// ulp above the request, is admitted and charged what was asked; a release
// whose events cost clearly more than it asked is still charged their cost
// and refused past the budget.
func TestExactRemainingAdmitted(t *testing.T) {
	const delta = 1e-5
	dv, f := delta, 0.4 // variables: constants would fold exactly
	d1, d2 := dv*f, dv*(1-f)
	if new(big.Rat).Add(decimalRat(d1), decimalRat(d2)).Cmp(decimalRat(delta)) <= 0 {
		t.Fatalf("test premise: %v + %v should exceed %v as decimals", d1, d2, delta)
	}
	for _, mode := range []Mode{Basic, RDP} {
		a, _, _ := openTemp(t)
		mustProtect(t, a, "db.t", 1, 2*delta, mode) // rdp keeps half of δ for the conversion
		if mode == Basic {
			if _, err := a.Reserve(Request{Table: "db.t", Requested: [2]float64{0.1, delta}, Events: []Event{{Kind: Generic, Epsilon: 0.1, Delta: delta}}}); err != nil {
				t.Fatal(err)
			}
		}
		ev := []Event{{Kind: Generic, Epsilon: 0.05, Delta: d1}, {Kind: Generic, Epsilon: 0.05, Delta: d2}}
		r := Request{Table: "db.t", Requested: [2]float64{0.1, delta}, Events: ev}
		q, err := a.Quote(r)
		if err != nil || !q.Admitted {
			t.Fatalf("%s: quote of exactly the remaining δ: %+v %v", mode, q, err)
		}
		rec, err := a.Reserve(r)
		if err != nil {
			t.Fatalf("%s: exactly the remaining δ refused: %v", mode, err)
		}
		if rec.Delta != delta {
			t.Errorf("%s: charged δ=%v, want what was asked (%v)", mode, rec.Delta, delta)
		}
		if s := mustStatus(t, a, "db.t"); s.DeltaRemaining != 0 {
			t.Errorf("%s: δ remaining %v after spending it all", mode, s.DeltaRemaining)
		}
		// Nothing left: the next release with any δ is refused.
		if _, err := a.Reserve(Request{Table: "db.t", Requested: [2]float64{0.1, 1e-18}, Events: []Event{{Kind: Generic, Epsilon: 0.1, Delta: 1e-18}}}); !errors.Is(err, ErrBudgetExceeded) {
			t.Errorf("%s: δ beyond the budget: %v", mode, err)
		}
	}

	// ε: a request of exactly the remaining 0.1 split as 0.1·0.2 + 0.1·0.8
	// in float64 (0.020000000000000004 + 0.08000000000000002 as decimals).
	a, _, _ := openTemp(t)
	mustProtect(t, a, "db.e", 0.1, 0, Basic)
	const eps = 0.1
	ev2, f2 := eps, 0.2
	ev := []Event{{Kind: Laplace, Epsilon: ev2 * f2}, {Kind: Laplace, Epsilon: ev2 * (1 - f2)}}
	if new(big.Rat).Add(decimalRat(ev[0].Epsilon), decimalRat(ev[1].Epsilon)).Cmp(decimalRat(eps)) <= 0 {
		t.Fatal("test premise: the ε split should exceed 0.1 as decimals")
	}
	if _, err := a.Reserve(Request{Table: "db.e", Requested: [2]float64{eps, 0}, Events: ev}); err != nil {
		t.Fatalf("ε split 0.2/0.8 of exactly the remaining 0.1: %v", err)
	}
	if s := mustStatus(t, a, "db.e"); s.EpsilonSpent != eps {
		t.Errorf("spent %v, want %v", s.EpsilonSpent, eps)
	}

	// Events that cost more than the request (beyond float error) are
	// charged their cost: asking 0.5 with events of 0.3 + 0.3 costs 0.6.
	a, _, _ = openTemp(t)
	mustProtect(t, a, "db.o", 1, 0, Basic)
	rec, err := a.Reserve(Request{Table: "db.o", Requested: [2]float64{0.5, 0}, Events: []Event{{Kind: Laplace, Epsilon: 0.3}, {Kind: Laplace, Epsilon: 0.3}}})
	if err != nil || rec.Epsilon != 0.6 {
		t.Fatalf("over-asking events: charged %v (%v), want 0.6", rec.Epsilon, err)
	}
	if _, err := a.Reserve(Request{Table: "db.o", Requested: [2]float64{0.4, 0}, Events: []Event{{Kind: Laplace, Epsilon: 0.2}, {Kind: Laplace, Epsilon: 0.2 + 1e-9}}}); !errors.Is(err, ErrBudgetExceeded) {
		t.Errorf("events 1e-9 above the remaining 0.4 admitted: %v", err)
	}
}

// TestSnapToRequestTolerance: the snap window is (k+1)·2⁻⁵⁰ relative, no more.
func TestSnapToRequestTolerance(t *testing.T) {
	tol := splitTolerance(1)
	req := 1e-5
	in := new(big.Rat).Mul(decimalRat(req), big.NewRat(1<<50+1, 1<<50))
	if snapToRequest(in, req, tol).Cmp(decimalRat(req)) != 0 {
		t.Error("a sum 2⁻⁵⁰ relative above the request not snapped to it")
	}
	out := new(big.Rat).Mul(decimalRat(req), big.NewRat(1<<50+3, 1<<50))
	if snapToRequest(out, req, tol).Cmp(out) != 0 {
		t.Error("a sum 3·2⁻⁵⁰ relative above the request snapped (window is 2·2⁻⁵⁰ for one event)")
	}
	below := big.NewRat(1, 1e6)
	if snapToRequest(below, req, tol).Cmp(below) != 0 {
		t.Error("a sum below the request changed")
	}
	if snapToRequest(in, 0, tol).Cmp(in) != 0 {
		t.Error("a zero request snapped")
	}
}
