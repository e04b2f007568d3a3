package budget

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Quote is what a release would charge now, computed without charging:
// the answer of a dry run (functions: dry_run=1).
type Quote struct {
	// Epsilon and Delta are the charge after accounting (basic composition,
	// or the Rényi filter's increase in RDP mode), as Reserve would record.
	Epsilon, Delta float64
	// EventsEpsilon and EventsDelta are the plain sums of the events.
	EventsEpsilon, EventsDelta float64
	// Admitted reports whether the table's budget and the account's quota
	// admit the release now; Refusal is Reserve's message otherwise.
	Admitted bool
	Refusal  string
}

// Quote computes what Reserve(r) would charge and whether it would admit
// it, in a read-only transaction: nothing is written, nothing is charged,
// no ledger row is added. Everything it reports is public (dp_budget and
// the account's own quota).
func (a *Accountant) Quote(r Request) (Quote, error) {
	if err := validRequest(&r); err != nil {
		return Quote{}, err
	}
	cost := costOf(r.Events, r.Requested)
	var q Quote
	var found bool
	err := a.db.View(func(tx *bolt.Tx) error {
		acct, err := loadAccount(tx, r.Table)
		if err != nil || acct == nil {
			return err
		}
		found = true
		var rdp []uint64
		if acct.Mode == RDP {
			rdp = addVec(acct.RDP, releaseRDP(acct.Orders, r.Events))
		}
		eps, delta := addSat(acct.EpsBasic, cost.eps), addSat(acct.DeltaBasic, cost.delta)
		se0, sd0 := acct.spent(acct.EpsBasic, acct.DeltaBasic, acct.RDP)
		se1, sd1 := acct.spent(eps, delta, rdp)
		chE, chD := subFloor(se1, se0), subFloor(sd1, sd0)
		q = Quote{
			Epsilon: unitsFloat(chE, epsDigits, true), Delta: unitsFloat(chD, deltaDigits, true),
			EventsEpsilon: unitsFloat(cost.eps, epsDigits, true), EventsDelta: unitsFloat(cost.delta, deltaDigits, true),
			Admitted: true,
		}
		if !acct.admits(eps, delta, rdp) {
			q.Admitted, q.Refusal = false, exceeded(r, acct, chE, chD, se0, sd0).Error()
			return nil
		}
		s, err := getSpend(tx, r.Table, r.User)
		if err != nil {
			return err
		}
		qu, def, err := getQuota(tx, r.Table, r.User)
		if err != nil {
			return err
		}
		if qu != nil && (addSat(s.Eps, chE) > qu.Eps || addSat(s.Delta, chD) > qu.Delta) {
			which := "the quota of account " + quoteUser(r.User)
			if def {
				which = "the default per-account quota"
			}
			q.Admitted = false
			q.Refusal = fmt.Sprintf("%v on table %s: %s allows ε=%s, δ=%s and it has spent ε=%s, δ=%s", ErrQuotaExceeded, r.Table, which,
				formatUnits(qu.Eps, epsDigits), formatUnits(qu.Delta, deltaDigits), formatUnits(s.Eps, epsDigits), formatUnits(s.Delta, deltaDigits))
		}
		return nil
	})
	if err != nil {
		return Quote{}, err
	}
	if !found {
		return Quote{}, notProtected(r.Table)
	}
	return q, nil
}
