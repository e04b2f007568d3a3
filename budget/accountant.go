package budget

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dpsql/dpsql/wal"
	bolt "go.etcd.io/bbolt"
)

// Ledger statuses. A release is "reserved" from the durable charge until the
// caller reports its outcome; the charge stays whatever the outcome, since
// the data has been touched. "interrupted" marks releases whose server
// stopped before reporting an outcome.
const (
	StatusReserved    = "reserved"
	StatusOK          = "ok"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
	// StatusKilled marks a release stopped by KILL QUERY / KILL after its
	// charge: no result was returned and no model was saved.
	StatusKilled = "killed"
)

const (
	maxTableName = 512
	maxDetail    = 4096
	maxEvents    = 1 << 20
)

// Accountant is the durable per-table privacy accountant. It is safe for
// concurrent use. Open at most one Accountant per database.
type Accountant struct {
	db *bolt.DB
	c  *committer
}

// Request is the cost of one release: its events, plus who asked for what
// (recorded in the ledger).
type Request struct {
	Table, User, Function string
	Requested             [2]float64 // (ε, δ) the caller asked for
	Events                []Event
}

// Receipt identifies a durable reservation and what it charged: the rise of
// the table's reported spend (ε, δ), rounded up.
type Receipt struct {
	ID      uint64
	Table   string
	Epsilon float64
	Delta   float64
	Time    time.Time
}

// Status is a table's budget. Spent amounts are rounded up and remaining
// amounts down, so neither overstates what is left.
type Status struct {
	Table        string
	Mode         Mode
	EpsilonTotal float64
	EpsilonSpent float64 // basic: Σε; rdp: min(Σε, Rényi filter ε)
	DeltaTotal   float64
	DeltaSpent   float64 // basic: Σδ; rdp: Σδ + DeltaReserved

	EpsilonRemaining float64
	DeltaRemaining   float64
	EpsilonBasic     float64   // Σε of all events (sequential composition)
	DeltaBasic       float64   // Σδ of all events
	EpsilonRDP       float64   // rdp: ε of the Rényi filter (+Inf before the first release or in basic mode)
	DeltaReserved    float64   // rdp: δ reserved for the RDP → (ε, δ) conversion
	Orders           []float64 // rdp: Rényi orders
	Releases         uint64
}

// Entry is one ledger row.
type Entry struct {
	ID               uint64
	Time             time.Time
	User             string
	Table            string
	Function         string
	Mode             Mode
	Epsilon          float64 // charged (rise of the table's reported ε spend)
	Delta            float64 // charged (rise of the table's reported δ spend)
	EventsEpsilon    float64 // Σε of the release's events
	EventsDelta      float64 // Σδ of the release's events
	RequestedEpsilon float64
	RequestedDelta   float64
	Events           []Event
	Status           string
	Detail           string
	Completed        time.Time // zero while reserved
}

// Open prepares the "budget" and "ledger" buckets of db, creating them if
// missing. Releases left "reserved" by a previous process are marked
// "interrupted" (their charge stays). db must be opened with syncing on (the
// bbolt default) or behind the write-ahead log (wal.Open): durability of a
// reservation is the fsync of its commit, or the checkpoint wal.Update makes
// before it returns.
func Open(db *bolt.DB) (*Accountant, error) {
	if db == nil {
		return nil, fmt.Errorf("budget: nil database")
	}
	err := wal.Update(db, func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(budgetBucket); err != nil {
			return err
		}
		lb, err := tx.CreateBucketIfNotExists(ledgerBucket)
		if err != nil {
			return err
		}
		pb, err := lb.CreateBucketIfNotExists(pendingBucket)
		if err != nil {
			return err
		}
		if err := ensureUserBuckets(tx); err != nil {
			return err
		}
		var ids []uint64
		if err := pb.ForEach(func(k, _ []byte) error {
			if len(k) == 8 {
				ids = append(ids, binary.BigEndian.Uint64(k))
			}
			return nil
		}); err != nil {
			return err
		}
		now := time.Now().UTC()
		for _, id := range ids {
			r, err := getRecord(tx, id)
			if err != nil {
				return err
			}
			if r != nil && r.Status == StatusReserved {
				r.Status = StatusInterrupted
				r.Detail = "the server stopped before the release reported its outcome; the charge is kept"
				r.Completed = now
				if err := putRecord(tx, id, r); err != nil {
					return err
				}
			}
			if err := pb.Delete(idKey(id)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("budget: open: %w", err)
	}
	return &Accountant{db: db, c: &committer{db: db}}, nil
}

func validTable(table string) error {
	switch {
	case table == "":
		return invalidf("table name must not be empty")
	case len(table) > maxTableName:
		return invalidf("table name longer than %d bytes", maxTableName)
	case !utf8.ValidString(table) || strings.ContainsRune(table, 0):
		return invalidf("table name %q is not valid UTF-8 text", table)
	}
	return nil
}

func notProtected(table string) error {
	return fmt.Errorf("%w: %s", ErrNotProtected, table)
}

// ParseMode maps "", "basic" and "rdp" (any case, surrounding blanks
// ignored) to a Mode.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return Basic, nil
	case Basic, RDP:
		return m, nil
	}
	return "", invalidf("accounting mode must be %q or %q, got %q", Basic, RDP, s)
}

// Protect gives table the total budget (ε, δ) under mode ("" means basic).
// ε must be finite, > 0 and ≤ MaxEpsilon; 0 ≤ δ < 1; rdp needs δ > 0 (half
// of it is reserved for the RDP → (ε, δ) conversion). On a table that is
// already protected only the totals may change, never the spend: totals
// under which the current spend would not be admitted are refused, and the
// mode may change only while nothing has been spent.
func (a *Accountant) Protect(table string, epsTotal, deltaTotal float64, mode Mode) error {
	if err := validTable(table); err != nil {
		return err
	}
	if err := validEpsilon("budget", epsTotal); err != nil {
		return err
	}
	if epsTotal > MaxEpsilon {
		return invalidf("budget ε %v is above the maximum %v", epsTotal, MaxEpsilon)
	}
	if err := validDelta("budget", deltaTotal); err != nil {
		return err
	}
	mode, err := ParseMode(string(mode))
	if err != nil {
		return err
	}
	et := ratToUnits(decimalRat(epsTotal), epsScale, false)
	dt := ratToUnits(decimalRat(deltaTotal), deltaScale, false)
	if et == 0 {
		return invalidf("budget ε %v is below the accountant's resolution 1e-12", epsTotal)
	}
	if mode == RDP && dt < conversionShare {
		return invalidf("rdp accounting needs a δ budget > 0 (half of it converts Rényi DP to (ε, δ)); got %v", deltaTotal)
	}
	var opErr error
	err = a.c.do(func(tx *bolt.Tx, st *txState) error {
		opErr = nil
		cur, err := st.get(tx, table)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		if cur == nil || (cur.Mode != mode && cur.Releases == 0) {
			n := &account{Version: accountVersion, Mode: mode, Created: now}
			if cur != nil {
				n.Created = cur.Created
			}
			if mode == RDP {
				n.Orders = DefaultOrders()
				n.RDP = make([]uint64, len(n.Orders))
			}
			*n = n.withTotals(et, dt)
			n.Updated = now
			st.set(table, n)
			return nil
		}
		if cur.Mode != mode {
			opErr = invalidf("table %s already uses %s accounting and has %d releases; the mode cannot change", table, cur.Mode, cur.Releases)
			return nil
		}
		n := cur.withTotals(et, dt)
		if !n.admits(cur.EpsBasic, cur.DeltaBasic, cur.RDP) {
			se, sd := cur.spent(cur.EpsBasic, cur.DeltaBasic, cur.RDP)
			opErr = invalidf("new budget ε=%v, δ=%v for %s is below what is already spent (ε=%s, δ=%s)",
				epsTotal, deltaTotal, table, formatUnits(se, epsDigits), formatUnits(sd, deltaDigits))
			return nil
		}
		n.Updated = now
		st.set(table, &n)
		return nil
	})
	if err != nil {
		return err
	}
	return opErr
}

func validRequest(r *Request) error {
	if err := validTable(r.Table); err != nil {
		return err
	}
	if len(r.Events) == 0 {
		return invalidf("a release must have at least one privacy event")
	}
	if len(r.Events) > maxEvents {
		return invalidf("a release may have at most %d events", maxEvents)
	}
	if e := r.Requested[0]; !finite(e) || e < 0 {
		return invalidf("requested ε must be finite and ≥ 0, got %v", e)
	}
	if err := validDelta("requested", r.Requested[1]); err != nil {
		return err
	}
	for i, e := range r.Events {
		if err := e.Validate(); err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
	}
	return nil
}

// Reserve charges a release to its table before anything is computed. In
// one write transaction, committed and fsync'd before it returns, it checks
// that the table's filter admits the spend with the release's events added,
// records a ledger row with status "reserved" and updates the spend. On
// overspend it returns an error wrapping ErrBudgetExceeded (message: table,
// requested and charged ε/δ, remaining ε/δ) and charges nothing; an
// unprotected table gives ErrNotProtected, a bad event ErrInvalid.
func (a *Accountant) Reserve(r Request) (Receipt, error) {
	if err := validRequest(&r); err != nil {
		return Receipt{}, err
	}
	cost := costOf(r.Events, r.Requested)
	events := append([]Event(nil), r.Events...)
	var (
		rec   Receipt
		opErr error
	)
	err := a.c.do(func(tx *bolt.Tx, st *txState) error {
		rec, opErr = Receipt{}, nil
		acct, err := st.get(tx, r.Table)
		if err != nil {
			return err
		}
		if acct == nil {
			opErr = notProtected(r.Table)
			return nil
		}
		var rdp []uint64
		if acct.Mode == RDP {
			rdp = addVec(acct.RDP, releaseRDP(acct.Orders, events))
		}
		eps, delta := addSat(acct.EpsBasic, cost.eps), addSat(acct.DeltaBasic, cost.delta)
		se0, sd0 := acct.spent(acct.EpsBasic, acct.DeltaBasic, acct.RDP)
		se1, sd1 := acct.spent(eps, delta, rdp)
		chE, chD := subFloor(se1, se0), subFloor(sd1, sd0)
		if !acct.admits(eps, delta, rdp) {
			opErr = exceeded(r, acct, chE, chD, se0, sd0)
			return nil
		}
		// The account's quota, checked and charged in the same transaction.
		if qErr, err := chargeUser(tx, r, chE, chD); err != nil || qErr != nil {
			opErr = qErr
			return err
		}
		lb := tx.Bucket(ledgerBucket)
		id, err := lb.NextSequence()
		if err != nil {
			return fmt.Errorf("budget: ledger sequence: %w", err)
		}
		now := time.Now().UTC()
		if err := putRecord(tx, id, &record{
			Time: now, User: r.User, Table: r.Table, Function: r.Function, Mode: acct.Mode,
			Eps: chE, Delta: chD, EventsEps: cost.eps, EventsDelta: cost.delta,
			ReqEps: r.Requested[0], ReqDelta: r.Requested[1], Events: events, Status: StatusReserved,
		}); err != nil {
			return err
		}
		if err := lb.Bucket(pendingBucket).Put(idKey(id), nil); err != nil {
			return fmt.Errorf("budget: pending release %d: %w", id, err)
		}
		n := *acct
		n.EpsBasic, n.DeltaBasic, n.RDP = eps, delta, rdp
		n.Releases++
		n.Updated = now
		st.set(r.Table, &n)
		rec = Receipt{ID: id, Table: r.Table, Time: now,
			Epsilon: unitsFloat(chE, epsDigits, true), Delta: unitsFloat(chD, deltaDigits, true)}
		return nil
	})
	if err != nil {
		return Receipt{}, err
	}
	return rec, opErr
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// exceeded builds the overspend error. Everything in it is public: the
// budget state is readable by every user through dp_budget.
func exceeded(r Request, acct *account, chE, chD, se, sd uint64) error {
	remE := subFloor(acct.EpsTotal, se)
	remD := subFloor(acct.DeltaTotal, sd)
	return fmt.Errorf("%w on table %s: requested ε=%s, δ=%s (this release would charge ε=%s, δ=%s); remaining ε=%s, δ=%s",
		ErrBudgetExceeded, r.Table, fmtFloat(r.Requested[0]), fmtFloat(r.Requested[1]),
		formatUnits(chE, epsDigits), formatUnits(chD, deltaDigits),
		formatUnits(remE, epsDigits), formatUnits(remD, deltaDigits))
}

// Complete records the outcome of a reserved release: status "ok",
// "failed" or "killed" with a detail for the owner-only ledger. The charge
// stays whatever the outcome. A release can be completed once.
func (a *Accountant) Complete(id uint64, status string, detail string) error {
	if status != StatusOK && status != StatusFailed && status != StatusKilled {
		return invalidf("release status must be %q, %q or %q, got %q", StatusOK, StatusFailed, StatusKilled, status)
	}
	detail = truncate(detail, maxDetail)
	var opErr error
	err := a.c.do(func(tx *bolt.Tx, st *txState) error {
		opErr = nil
		r, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		if r == nil {
			opErr = fmt.Errorf("%w: %d", ErrUnknownRelease, id)
			return nil
		}
		if r.Status != StatusReserved {
			opErr = fmt.Errorf("release %d is already %s", id, r.Status)
			return nil
		}
		r.Status, r.Detail, r.Completed = status, detail, time.Now().UTC()
		if err := putRecord(tx, id, r); err != nil {
			return err
		}
		if err := tx.Bucket(ledgerBucket).Bucket(pendingBucket).Delete(idKey(id)); err != nil {
			return fmt.Errorf("budget: pending release %d: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return opErr
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Status returns table's budget, or ErrNotProtected.
func (a *Accountant) Status(table string) (Status, error) {
	var s Status
	var found bool
	err := a.db.View(func(tx *bolt.Tx) error {
		acct, err := loadAccount(tx, table)
		if err != nil || acct == nil {
			return err
		}
		s, found = acct.status(table), true
		return nil
	})
	if err != nil {
		return Status{}, err
	}
	if !found {
		return Status{}, notProtected(table)
	}
	return s, nil
}

// All returns the budgets of every protected table, sorted by table.
func (a *Accountant) All() ([]Status, error) {
	var out []Status
	err := a.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(budgetBucket).ForEach(func(k, _ []byte) error {
			acct, err := loadAccount(tx, string(k))
			if err != nil {
				return err
			}
			out = append(out, acct.status(string(k)))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Table < out[j].Table })
	return out, nil
}

func (acct *account) status(table string) Status {
	se, sd := acct.spent(acct.EpsBasic, acct.DeltaBasic, acct.RDP)
	s := Status{
		Table:            table,
		Mode:             acct.Mode,
		EpsilonTotal:     unitsNearest(acct.EpsTotal, epsDigits),
		EpsilonSpent:     unitsFloat(se, epsDigits, true),
		DeltaTotal:       unitsNearest(acct.DeltaTotal, deltaDigits),
		DeltaSpent:       unitsFloat(sd, deltaDigits, true),
		EpsilonRemaining: unitsFloat(subFloor(acct.EpsTotal, se), epsDigits, false),
		DeltaRemaining:   unitsFloat(subFloor(acct.DeltaTotal, sd), deltaDigits, false),
		EpsilonBasic:     unitsFloat(acct.EpsBasic, epsDigits, true),
		DeltaBasic:       unitsFloat(acct.DeltaBasic, deltaDigits, true),
		EpsilonRDP:       math.Inf(1),
		DeltaReserved:    unitsFloat(acct.DeltaConv, deltaDigits, true),
		Orders:           append([]float64(nil), acct.Orders...),
		Releases:         acct.Releases,
	}
	if acct.Mode == RDP && acct.Releases > 0 {
		s.EpsilonRDP = unitsFloat(acct.rdpEps(acct.RDP), epsDigits, true)
	}
	return s
}

// unitsNearest converts a total for display: the float nearest to the
// stored decimal, i.e. the owner's own number.
func unitsNearest(u uint64, digits int) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatUint(u, 10)+"e-"+strconv.Itoa(digits), 64)
	return f
}

// Ledger returns every ledger row in release order.
func (a *Accountant) Ledger() ([]Entry, error) {
	var out []Entry
	err := a.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(ledgerBucket).ForEach(func(k, v []byte) error {
			if v == nil || len(k) != 8 { // the nested "pending" bucket
				return nil
			}
			r := new(record)
			if err := json.Unmarshal(v, r); err != nil {
				return fmt.Errorf("budget: corrupt ledger record %x: %w", k, err)
			}
			out = append(out, r.entry(binary.BigEndian.Uint64(k)))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (r *record) entry(id uint64) Entry {
	return Entry{
		ID: id, Time: r.Time, User: r.User, Table: r.Table, Function: r.Function, Mode: r.Mode,
		Epsilon: unitsFloat(r.Eps, epsDigits, true), Delta: unitsFloat(r.Delta, deltaDigits, true),
		EventsEpsilon: unitsFloat(r.EventsEps, epsDigits, true), EventsDelta: unitsFloat(r.EventsDelta, deltaDigits, true),
		RequestedEpsilon: r.ReqEps, RequestedDelta: r.ReqDelta, Events: r.Events,
		Status: r.Status, Detail: r.Detail, Completed: r.Completed,
	}
}
