package budget

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Per-account quotas (as BigQuery's per-user quotas or Snowflake's resource
// monitors): an owner caps one account's share of a table's budget. An
// account's share is the sum of what its releases charged the table (the
// ledger's ε and δ columns), so the shares of all accounts add up to the
// table's spend. Reserve refuses a release that would take the account past
// its quota, in the same transaction that checks the table's budget.

// AnyUser is the account name of a table's default quota: it applies to
// every account that has no quota of its own on that table.
const AnyUser = "%"

var (
	quotaBucket = []byte("quota")     // table \x00 user → quotaRec (JSON)
	spendBucket = []byte("userspend") // table \x00 user → spendRec (JSON)
)

const maxUserName = 255

type quotaRec struct {
	Eps     uint64    `json:"eps"`   // units of 10⁻¹², rounded down
	Delta   uint64    `json:"delta"` // units of 10⁻¹⁸, rounded down
	Updated time.Time `json:"updated"`
}

type spendRec struct {
	Eps      uint64 `json:"eps"`
	Delta    uint64 `json:"delta"`
	Releases uint64 `json:"releases"`
}

// Quota is one account's cap on a table, with what it has spent there.
type Quota struct {
	Table, User    string
	EpsilonQuota   float64
	DeltaQuota     float64
	EpsilonSpent   float64 // the account's share so far (rounded up)
	DeltaSpent     float64
	Releases       uint64
	EpsilonLeft    float64 // quota − spent, rounded down, ≥ 0
	DeltaLeft      float64
	FromDefault    bool // the table's default quota (user AnyUser) applies
	HasQuota       bool // false: no quota, only the table's budget limits the account
	TableEpsLeft   float64
	TableDeltaLeft float64
}

func userKey(table, user string) []byte {
	return []byte(table + "\x00" + user)
}

func validUser(user string) error {
	switch {
	case user == "":
		return invalidf("account name must not be empty")
	case len(user) > maxUserName:
		return invalidf("account name longer than %d bytes", maxUserName)
	case strings.ContainsRune(user, 0):
		return invalidf("account name contains a NUL byte")
	}
	return nil
}

// ensureUserBuckets creates the quota and per-account spend buckets. A data
// file from before quotas existed gets its per-account spend rebuilt from
// the ledger once, so that a quota set later counts earlier releases.
func ensureUserBuckets(tx *bolt.Tx) error {
	if _, err := tx.CreateBucketIfNotExists(quotaBucket); err != nil {
		return err
	}
	if tx.Bucket(spendBucket) != nil {
		return nil
	}
	sb, err := tx.CreateBucket(spendBucket)
	if err != nil {
		return err
	}
	sums := map[string]*spendRec{}
	err = tx.Bucket(ledgerBucket).ForEach(func(k, v []byte) error {
		if v == nil || len(k) != 8 {
			return nil
		}
		r := new(record)
		if err := json.Unmarshal(v, r); err != nil {
			return fmt.Errorf("budget: corrupt ledger record %x: %w", k, err)
		}
		key := string(userKey(r.Table, r.User))
		s := sums[key]
		if s == nil {
			s = &spendRec{}
			sums[key] = s
		}
		s.Eps, s.Delta, s.Releases = addSat(s.Eps, r.Eps), addSat(s.Delta, r.Delta), s.Releases+1
		return nil
	})
	if err != nil {
		return err
	}
	for k, s := range sums {
		if err := putJSON(sb, []byte(k), s); err != nil {
			return err
		}
	}
	return nil
}

func putJSON(b *bolt.Bucket, k []byte, v any) error {
	buf, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(k, buf)
}

func getSpend(tx *bolt.Tx, table, user string) (spendRec, error) {
	var s spendRec
	if v := tx.Bucket(spendBucket).Get(userKey(table, user)); v != nil {
		if err := json.Unmarshal(v, &s); err != nil {
			return s, fmt.Errorf("budget: corrupt account spend %s/%s: %w", table, user, err)
		}
	}
	return s, nil
}

// getQuota returns the quota that applies to user on table: its own, else
// the table's default, else nil.
func getQuota(tx *bolt.Tx, table, user string) (*quotaRec, bool, error) {
	qb := tx.Bucket(quotaBucket)
	for i, u := range []string{user, AnyUser} {
		if v := qb.Get(userKey(table, u)); v != nil {
			q := new(quotaRec)
			if err := json.Unmarshal(v, q); err != nil {
				return nil, false, fmt.Errorf("budget: corrupt quota %s/%s: %w", table, u, err)
			}
			return q, i == 1, nil
		}
	}
	return nil, false, nil
}

// chargeUser checks the quota that applies to r.User and, if the release
// (charging chE, chD) fits, adds it to the account's spend. It returns the
// refusal, if any, as opErr (nil error = storage fine).
func chargeUser(tx *bolt.Tx, r Request, chE, chD uint64) (opErr, err error) {
	s, err := getSpend(tx, r.Table, r.User)
	if err != nil {
		return nil, err
	}
	q, def, err := getQuota(tx, r.Table, r.User)
	if err != nil {
		return nil, err
	}
	e1, d1 := addSat(s.Eps, chE), addSat(s.Delta, chD)
	if q != nil && (e1 > q.Eps || d1 > q.Delta) {
		which := "the quota of account " + quoteUser(r.User)
		if def {
			which = "the default per-account quota"
		}
		return fmt.Errorf("%w on table %s: %s allows ε=%s, δ=%s and it has spent ε=%s, δ=%s; this release (requested ε=%s, δ=%s) would charge ε=%s, δ=%s",
			ErrQuotaExceeded, r.Table, which, formatUnits(q.Eps, epsDigits), formatUnits(q.Delta, deltaDigits),
			formatUnits(s.Eps, epsDigits), formatUnits(s.Delta, deltaDigits), fmtFloat(r.Requested[0]), fmtFloat(r.Requested[1]),
			formatUnits(chE, epsDigits), formatUnits(chD, deltaDigits)), nil
	}
	s.Eps, s.Delta, s.Releases = e1, d1, s.Releases+1
	return nil, putJSON(tx.Bucket(spendBucket), userKey(r.Table, r.User), &s)
}

func quoteUser(u string) string { return "'" + strings.ReplaceAll(u, "'", "''") + "'" }

// SetQuota caps user's share of table's budget at (ε, δ); user AnyUser sets
// the table's default quota. The table must be protected. A quota below what
// the account has already spent is allowed: it only stops further releases.
func (a *Accountant) SetQuota(table, user string, eps, delta float64) error {
	if err := validTable(table); err != nil {
		return err
	}
	if err := validUser(user); err != nil {
		return err
	}
	if !finite(eps) || eps < 0 {
		return invalidf("quota ε must be finite and ≥ 0, got %v", eps)
	}
	if eps > MaxEpsilon {
		return invalidf("quota ε %v is above the maximum %v", eps, MaxEpsilon)
	}
	if err := validDelta("quota", delta); err != nil {
		return err
	}
	q := quotaRec{Eps: ratToUnits(decimalRat(eps), epsScale, false), Delta: ratToUnits(decimalRat(delta), deltaScale, false)}
	var opErr error
	err := a.c.do(func(tx *bolt.Tx, st *txState) error {
		opErr = nil
		acct, err := st.get(tx, table)
		if err != nil {
			return err
		}
		if acct == nil {
			opErr = notProtected(table)
			return nil
		}
		q.Updated = time.Now().UTC()
		return putJSON(tx.Bucket(quotaBucket), userKey(table, user), &q)
	})
	if err != nil {
		return err
	}
	return opErr
}

// RemoveQuota removes user's quota on table (the default quota, if any,
// applies again). Removing a quota that does not exist is an error.
func (a *Accountant) RemoveQuota(table, user string) error {
	if err := validTable(table); err != nil {
		return err
	}
	if err := validUser(user); err != nil {
		return err
	}
	var opErr error
	err := a.c.do(func(tx *bolt.Tx, _ *txState) error {
		opErr = nil
		qb := tx.Bucket(quotaBucket)
		if qb.Get(userKey(table, user)) == nil {
			opErr = fmt.Errorf("%w: no quota for account %s on table %s", ErrInvalid, quoteUser(user), table)
			return nil
		}
		return qb.Delete(userKey(table, user))
	})
	if err != nil {
		return err
	}
	return opErr
}

// UserStatus is what user may still spend on table: its share so far, the
// quota that applies (if any) and the table's remaining budget.
func (a *Accountant) UserStatus(table, user string) (Quota, error) {
	var out Quota
	var found bool
	err := a.db.View(func(tx *bolt.Tx) error {
		acct, err := loadAccount(tx, table)
		if err != nil || acct == nil {
			return err
		}
		found = true
		out, err = userStatus(tx, acct, table, user)
		return err
	})
	if err != nil {
		return Quota{}, err
	}
	if !found {
		return Quota{}, notProtected(table)
	}
	return out, nil
}

func userStatus(tx *bolt.Tx, acct *account, table, user string) (Quota, error) {
	s, err := getSpend(tx, table, user)
	if err != nil {
		return Quota{}, err
	}
	q, def, err := getQuota(tx, table, user)
	if err != nil {
		return Quota{}, err
	}
	se, sd := acct.spent(acct.EpsBasic, acct.DeltaBasic, acct.RDP)
	tE, tD := subFloor(acct.EpsTotal, se), subFloor(acct.DeltaTotal, sd)
	out := Quota{
		Table: table, User: user,
		EpsilonSpent: unitsFloat(s.Eps, epsDigits, true), DeltaSpent: unitsFloat(s.Delta, deltaDigits, true),
		Releases:     s.Releases,
		TableEpsLeft: unitsFloat(tE, epsDigits, false), TableDeltaLeft: unitsFloat(tD, deltaDigits, false),
	}
	lE, lD := tE, tD
	if q != nil {
		out.HasQuota, out.FromDefault = true, def
		out.EpsilonQuota, out.DeltaQuota = unitsNearest(q.Eps, epsDigits), unitsNearest(q.Delta, deltaDigits)
		lE, lD = min(lE, subFloor(q.Eps, s.Eps)), min(lD, subFloor(q.Delta, s.Delta))
	}
	out.EpsilonLeft, out.DeltaLeft = unitsFloat(lE, epsDigits, false), unitsFloat(lD, deltaDigits, false)
	return out, nil
}

// Quotas lists every quota that has been set, with the spend of the
// account it names (for AnyUser: no spend), sorted by table then user.
func (a *Accountant) Quotas() ([]Quota, error) {
	var out []Quota
	err := a.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(quotaBucket).ForEach(func(k, _ []byte) error {
			table, user, ok := bytes.Cut(k, []byte{0})
			if !ok {
				return nil
			}
			acct, err := loadAccount(tx, string(table))
			if err != nil {
				return err
			}
			if acct == nil {
				return nil // the table's budget is gone; the quota is dormant
			}
			q, err := userStatus(tx, acct, string(table), string(user))
			if err != nil {
				return err
			}
			out = append(out, q)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Table != out[j].Table {
			return out[i].Table < out[j].Table
		}
		return out[i].User < out[j].User
	})
	return out, nil
}
