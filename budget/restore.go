package budget

import (
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

// TableDump is the accountant's state of one table as carried by a dump.
type TableDump struct {
	Account json.RawMessage   `json:"account"`
	Ledger  []json.RawMessage `json:"ledger,omitempty"`
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
		if cur == nil {
			n := *dumped
			n.Updated = now
			st.set(table, &n)
			for _, r := range recs {
				if err := appendRecord(lb, tx, r); err != nil {
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
			if err := appendRecord(lb, tx, r); err != nil {
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

func appendRecord(lb *bolt.Bucket, tx *bolt.Tx, r *record) error {
	id, err := lb.NextSequence()
	if err != nil {
		return fmt.Errorf("budget: ledger sequence: %w", err)
	}
	return putRecord(tx, id, r)
}
