package budget

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Dump and restore (issue 13). A table's budget travels with the table in a
// database dump: its account (totals, mode, spend) and its ledger rows. A
// restore may only raise what is spent, never lower it:
//
//   - into a server with no account for the table, the account is taken as
//     dumped and its ledger rows are added;
//   - into a server that already has an account (the same server, or one
//     restored from an earlier dump), the totals and mode stay as they are,
//     every dumped ledger row the server does not have yet is added and its
//     cost charged (so two histories that share a prefix are counted once,
//     and divergent ones are summed), and finally each part of the spend is
//     raised to at least the dumped one.
//
// Every ledger row a restore adds is also added to its account's share
// (the per-account spend quotas count), and the table's quotas travel with
// it: a dumped quota is installed where the account has none and, where it
// has one, the stricter of the two (per ε and per δ) is kept — a restore
// never loosens a cap.

// TableDump is the accountant's state of one table as carried by a dump.
type TableDump struct {
	Account json.RawMessage   `json:"account"`
	Ledger  []json.RawMessage `json:"ledger,omitempty"`
	Quotas  []QuotaDump       `json:"quotas,omitempty"`
}

// QuotaDump is one account's quota on a table (AnyUser: the default), in
// the accountant's exact units.
type QuotaDump struct {
	User  string `json:"user"`
	Eps   uint64 `json:"eps"`
	Delta uint64 `json:"delta"`
}

// ExportTable returns the account of table and, if withLedger, its ledger
// rows; ok is false when the table has no account.
func (a *Accountant) ExportTable(table string, withLedger bool) (d TableDump, ok bool, err error) {
	err = a.db.View(func(tx *bolt.Tx) error {
		acct, err := loadAccount(tx, table)
		if err != nil || acct == nil {
			return err
		}
		if d.Account, err = json.Marshal(acct); err != nil {
			return fmt.Errorf("budget: encode account %s: %w", table, err)
		}
		ok = true
		if d.Quotas, err = exportQuotas(tx, table); err != nil {
			return err
		}
		if !withLedger {
			return nil
		}
		return tx.Bucket(ledgerBucket).ForEach(func(k, v []byte) error {
			if v == nil || len(k) != 8 {
				return nil
			}
			r := new(record)
			if err := json.Unmarshal(v, r); err != nil {
				return fmt.Errorf("budget: corrupt ledger record %x: %w", k, err)
			}
			if r.Table == table {
				d.Ledger = append(d.Ledger, append(json.RawMessage(nil), v...))
			}
			return nil
		})
	})
	return d, ok, err
}

// HasAccount reports whether table has a budget account (it is, or was,
// protected: accounts survive DROP TABLE).
func (a *Accountant) HasAccount(table string) (bool, error) {
	var ok bool
	err := a.db.View(func(tx *bolt.Tx) error {
		acct, err := loadAccount(tx, table)
		ok = acct != nil
		return err
	})
	return ok, err
}

// releaseKey identifies a release across servers: its time (nanoseconds),
// account and function.
func releaseKey(r *record) string {
	return r.Time.UTC().Format(time.RFC3339Nano) + "\x00" + r.User + "\x00" + r.Function
}

func decodeDump(table string, d TableDump) (*account, []*record, error) {
	acct := new(account)
	if err := json.Unmarshal(d.Account, acct); err != nil {
		return nil, nil, invalidf("dumped account of %s: %v", table, err)
	}
	if acct.Version != accountVersion {
		return nil, nil, invalidf("dumped account of %s has unknown version %d", table, acct.Version)
	}
	if acct.Mode != Basic && acct.Mode != RDP {
		return nil, nil, invalidf("dumped account of %s has unknown accounting mode %q", table, acct.Mode)
	}
	if acct.EpsTotal == 0 {
		return nil, nil, invalidf("dumped account of %s has no ε budget", table)
	}
	if acct.Mode == RDP && (len(acct.Orders) == 0 || len(acct.RDP) != len(acct.Orders)) {
		return nil, nil, invalidf("dumped account of %s: %d Rényi orders, %d RDP values", table, len(acct.Orders), len(acct.RDP))
	}
	recs := make([]*record, 0, len(d.Ledger))
	for i, raw := range d.Ledger {
		r := new(record)
		if err := json.Unmarshal(raw, r); err != nil {
			return nil, nil, invalidf("dumped ledger row %d of %s: %v", i, table, err)
		}
		for j, e := range r.Events {
			if err := e.Validate(); err != nil {
				return nil, nil, invalidf("dumped ledger row %d of %s, event %d: %v", i, table, j, err)
			}
		}
		r.Table = table
		if r.Status == StatusReserved {
			// Its outcome never reached the dumped server's ledger.
			r.Status = StatusInterrupted
		}
		recs = append(recs, r)
	}
	return acct, recs, nil
}

// RestoreTable merges a dumped account and ledger into table's (see the
// rules above). It is one durable transaction.
func (a *Accountant) RestoreTable(table string, d TableDump) error {
	if err := validTable(table); err != nil {
		return err
	}
	dumped, recs, err := decodeDump(table, d)
	if err != nil {
		return err
	}
	return a.c.do(func(tx *bolt.Tx, st *txState) error {
		cur, err := st.get(tx, table)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		lb := tx.Bucket(ledgerBucket)
		if err := restoreQuotas(tx, table, d.Quotas, now); err != nil {
			return err
		}
		if cur == nil {
			n := *dumped
			n.Updated = now
			st.set(table, &n)
			for _, r := range recs {
				if err := appendRestored(lb, tx, r); err != nil {
					return err
				}
			}
			return nil
		}
		have := map[string]bool{}
		if err := lb.ForEach(func(k, v []byte) error {
			if v == nil || len(k) != 8 {
				return nil
			}
			r := new(record)
			if err := json.Unmarshal(v, r); err != nil {
				return fmt.Errorf("budget: corrupt ledger record %x: %w", k, err)
			}
			if r.Table == table {
				have[releaseKey(r)] = true
			}
			return nil
		}); err != nil {
			return err
		}
		n := *cur
		n.RDP = slices.Clone(cur.RDP)
		for _, r := range recs {
			if have[releaseKey(r)] {
				continue
			}
			have[releaseKey(r)] = true
			// Charged at the events' cost under this server's accounting.
			c := costOf(r.Events, [2]float64{r.ReqEps, r.ReqDelta})
			n.EpsBasic, n.DeltaBasic = addSat(n.EpsBasic, c.eps), addSat(n.DeltaBasic, c.delta)
			if n.Mode == RDP {
				n.RDP = addVec(n.RDP, releaseRDP(n.Orders, r.Events))
			}
			n.Releases++
			if err := appendRestored(lb, tx, r); err != nil {
				return err
			}
		}
		// A floor: whatever the dump had spent stays spent.
		n.EpsBasic, n.DeltaBasic = max(n.EpsBasic, dumped.EpsBasic), max(n.DeltaBasic, dumped.DeltaBasic)
		n.Releases = max(n.Releases, dumped.Releases)
		if n.Mode == RDP && dumped.Mode == RDP && slices.Equal(n.Orders, dumped.Orders) {
			for i := range n.RDP {
				n.RDP[i] = max(n.RDP[i], dumped.RDP[i])
			}
		}
		n.Updated = now
		st.set(table, &n)
		return nil
	})
}

// appendRestored adds a restored ledger row and its charge to the share of
// the account that made it, as Reserve's chargeUser would have.
func appendRestored(lb *bolt.Bucket, tx *bolt.Tx, r *record) error {
	id, err := lb.NextSequence()
	if err != nil {
		return fmt.Errorf("budget: ledger sequence: %w", err)
	}
	if err := putRecord(tx, id, r); err != nil {
		return err
	}
	s, err := getSpend(tx, r.Table, r.User)
	if err != nil {
		return err
	}
	s.Eps, s.Delta, s.Releases = addSat(s.Eps, r.Eps), addSat(s.Delta, r.Delta), s.Releases+1
	return putJSON(tx.Bucket(spendBucket), userKey(r.Table, r.User), &s)
}

func exportQuotas(tx *bolt.Tx, table string) ([]QuotaDump, error) {
	var out []QuotaDump
	prefix := []byte(table + "\x00")
	c := tx.Bucket(quotaBucket).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		q := new(quotaRec)
		if err := json.Unmarshal(v, q); err != nil {
			return nil, fmt.Errorf("budget: corrupt quota %q: %w", k, err)
		}
		out = append(out, QuotaDump{User: string(k[len(prefix):]), Eps: q.Eps, Delta: q.Delta})
	}
	return out, nil
}

// restoreQuotas installs dumped quotas, keeping the stricter cap where the
// account already has one.
func restoreQuotas(tx *bolt.Tx, table string, qs []QuotaDump, now time.Time) error {
	qb := tx.Bucket(quotaBucket)
	for _, d := range qs {
		if err := validUser(d.User); err != nil {
			return fmt.Errorf("dumped quota of %s: %w", table, err)
		}
		q := quotaRec{Eps: d.Eps, Delta: d.Delta, Updated: now}
		if v := qb.Get(userKey(table, d.User)); v != nil {
			cur := new(quotaRec)
			if err := json.Unmarshal(v, cur); err != nil {
				return fmt.Errorf("budget: corrupt quota %s/%s: %w", table, d.User, err)
			}
			q.Eps, q.Delta = min(q.Eps, cur.Eps), min(q.Delta, cur.Delta)
		}
		if err := putJSON(qb, userKey(table, d.User), &q); err != nil {
			return err
		}
	}
	return nil
}
