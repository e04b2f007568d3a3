package budget

import (
	"errors"
	"testing"
)

// Quote reports what Reserve charges, in both modes, and writes nothing.
func TestQuoteMatchesReserve(t *testing.T) {
	a, _, _ := openTemp(t)
	mustProtect(t, a, "db.b", 1, 1e-6, Basic)
	mustProtect(t, a, "db.r", 10, 1e-5, RDP)
	gauss := []Event{{Kind: Gaussian, Epsilon: 0.5, Delta: 1e-7, Ratio: 0.1}}
	for _, r := range []Request{
		req("db.b", 0.25),
		{Table: "db.r", User: "ana", Function: "DP_TRAIN", Requested: [2]float64{0.5, 1e-7}, Events: gauss},
		{Table: "db.r", User: "ana", Function: "DP_TRAIN", Requested: [2]float64{0.5, 1e-7}, Events: gauss},
	} {
		before, _ := a.Status(r.Table)
		ledger, _ := a.Ledger()
		q, err := a.Quote(r)
		if err != nil {
			t.Fatal(err)
		}
		after, _ := a.Status(r.Table)
		ledger2, _ := a.Ledger()
		if before.EpsilonSpent != after.EpsilonSpent || before.DeltaSpent != after.DeltaSpent || before.Releases != after.Releases || len(ledger) != len(ledger2) {
			t.Fatalf("Quote changed the account: %+v → %+v", before, after)
		}
		if !q.Admitted {
			t.Fatalf("quote refused: %s", q.Refusal)
		}
		rec, err := a.Reserve(r)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Epsilon != q.Epsilon || rec.Delta != q.Delta {
			t.Fatalf("quote (%v, %v), Reserve charged (%v, %v)", q.Epsilon, q.Delta, rec.Epsilon, rec.Delta)
		}
	}
	// Over budget: refused with Reserve's message, still nothing written.
	q, err := a.Quote(req("db.b", 0.9))
	if err != nil || q.Admitted || q.Refusal == "" {
		t.Fatalf("over-budget quote: %+v, %v", q, err)
	}
	if _, err := a.Reserve(req("db.b", 0.9)); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("Reserve after refused quote: %v", err)
	}
	if _, err := a.Quote(req("db.none", 0.1)); !errors.Is(err, ErrNotProtected) {
		t.Fatalf("unprotected table: %v", err)
	}
}
