package budget

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func userReq(table, user string, eps float64) Request {
	r := req(table, eps)
	r.User = user
	return r
}

func TestQuotaCapsOneAccount(t *testing.T) {
	a, _, _ := openTemp(t)
	mustProtect(t, a, "db.t", 10, 0, Basic)
	if err := a.SetQuota("db.t", "ana", 1, 0); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := a.Reserve(userReq("db.t", "ana", 0.5)); err != nil {
			t.Fatalf("release %d within the quota: %v", i, err)
		}
	}
	before := mustStatus(t, a, "db.t")
	_, err := a.Reserve(userReq("db.t", "ana", 0.1))
	if !errors.Is(err, ErrQuotaExceeded) || !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("overspend of the quota: %v", err)
	}
	t.Logf("refusal: %v", err)
	if after := mustStatus(t, a, "db.t"); after.EpsilonSpent != before.EpsilonSpent || after.Releases != before.Releases {
		t.Fatalf("refused release charged the table: %+v → %+v", before, after)
	}
	// Another account is limited only by the table.
	if _, err := a.Reserve(userReq("db.t", "bob", 5)); err != nil {
		t.Fatal(err)
	}
	us, err := a.UserStatus("db.t", "ana")
	if err != nil {
		t.Fatal(err)
	}
	if !us.HasQuota || us.EpsilonQuota != 1 || us.EpsilonSpent != 1 || us.EpsilonLeft != 0 || us.TableEpsLeft != 4 {
		t.Fatalf("ana's status %+v", us)
	}
	bs, _ := a.UserStatus("db.t", "bob")
	if bs.HasQuota || bs.EpsilonSpent != 5 || bs.EpsilonLeft != 4 {
		t.Fatalf("bob's status %+v", bs)
	}
	// Raising the quota lets ana spend again; removing it too.
	if err := a.SetQuota("db.t", "ana", 1.5, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Reserve(userReq("db.t", "ana", 0.5)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Reserve(userReq("db.t", "ana", 0.01)); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("raised quota not enforced: %v", err)
	}
	if err := a.RemoveQuota("db.t", "ana"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Reserve(userReq("db.t", "ana", 0.01)); err != nil {
		t.Fatalf("removed quota still enforced: %v", err)
	}
	if err := a.RemoveQuota("db.t", "ana"); err == nil {
		t.Fatal("removing a missing quota succeeded")
	}
}

func TestDefaultQuotaAndDelta(t *testing.T) {
	a, _, _ := openTemp(t)
	mustProtect(t, a, "db.t", 10, 1e-5, Basic)
	if err := a.SetQuota("db.t", AnyUser, 1, 1e-6); err != nil {
		t.Fatal(err)
	}
	if err := a.SetQuota("db.t", "vip", 5, 1e-5); err != nil {
		t.Fatal(err)
	}
	gauss := func(user string, eps, delta float64) Request {
		return Request{Table: "db.t", User: user, Function: "X", Requested: [2]float64{eps, delta},
			Events: []Event{{Kind: Generic, Epsilon: eps, Delta: delta}}}
	}
	for _, u := range []string{"u1", "u2"} {
		if _, err := a.Reserve(gauss(u, 0.5, 1e-6)); err != nil {
			t.Fatal(err)
		}
		// δ is capped as well as ε.
		if _, err := a.Reserve(gauss(u, 0.1, 1e-7)); !errors.Is(err, ErrQuotaExceeded) {
			t.Fatalf("δ overspend of the default quota by %s: %v", u, err)
		}
	}
	if _, err := a.Reserve(gauss("vip", 3, 5e-6)); err != nil {
		t.Fatalf("an account's own quota must override the default: %v", err)
	}
	us, _ := a.UserStatus("db.t", "u3")
	if !us.HasQuota || !us.FromDefault || us.EpsilonLeft != 1 {
		t.Fatalf("fresh account under the default quota: %+v", us)
	}
	qs, err := a.Quotas()
	if err != nil || len(qs) != 2 || qs[0].User != AnyUser || qs[1].User != "vip" || qs[1].EpsilonSpent != 3 {
		t.Fatalf("Quotas() = %+v, %v", qs, err)
	}
	for _, bad := range []struct {
		table, user string
		e, d        float64
	}{{"db.t", "", 1, 0}, {"db.t", "x", -1, 0}, {"db.t", "x", math.NaN(), 0}, {"db.t", "x", 1, 1}, {"db.other", "x", 1, 0}} {
		if err := a.SetQuota(bad.table, bad.user, bad.e, bad.d); err == nil {
			t.Errorf("SetQuota(%+v) accepted", bad)
		}
	}
}

// TestQuotaConcurrent races many reservations of one account against its
// quota: exactly quota/ε of them may succeed.
func TestQuotaConcurrent(t *testing.T) {
	a, _, _ := openTemp(t)
	mustProtect(t, a, "db.t", 100, 0, Basic)
	if err := a.SetQuota("db.t", "ana", 2, 0); err != nil {
		t.Fatal(err)
	}
	var ok atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := a.Reserve(userReq("db.t", "ana", 0.25)); err == nil {
				ok.Add(1)
			} else if !errors.Is(err, ErrQuotaExceeded) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 8 {
		t.Fatalf("%d reservations of 0.25 succeeded under a quota of 2, want 8", ok.Load())
	}
	if s := mustStatus(t, a, "db.t"); s.EpsilonSpent != 2 {
		t.Fatalf("table spent %v, want 2", s.EpsilonSpent)
	}
}

// TestQuotaSpendRebuiltFromLedger opens a data file written before quotas
// existed: the per-account spend is rebuilt from the ledger.
func TestQuotaSpendRebuiltFromLedger(t *testing.T) {
	a, db, path := openTemp(t)
	mustProtect(t, a, "db.t", 10, 0, Basic)
	for i := 0; i < 3; i++ {
		if _, err := a.Reserve(userReq("db.t", "ana", 0.5)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(spendBucket) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, a2 := reopen(t, path)
	us, err := a2.UserStatus("db.t", "ana")
	if err != nil || us.EpsilonSpent != 1.5 || us.Releases != 3 {
		t.Fatalf("rebuilt spend %+v, %v", us, err)
	}
	if err := a2.SetQuota("db.t", "ana", 1.6, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := a2.Reserve(userReq("db.t", "ana", 0.2)); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatal(fmt.Sprint("earlier releases not counted: ", err))
	}
}

func TestCompleteKilled(t *testing.T) {
	a, _, _ := openTemp(t)
	mustProtect(t, a, "db.t", 10, 0, Basic)
	rec, err := a.Reserve(req("db.t", 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Complete(rec.ID, StatusKilled, "KILL QUERY"); err != nil {
		t.Fatal(err)
	}
	l, _ := a.Ledger()
	if len(l) != 1 || l[0].Status != StatusKilled {
		t.Fatalf("ledger %+v", l)
	}
	if s := mustStatus(t, a, "db.t"); s.EpsilonSpent != 1 {
		t.Fatalf("killed release must keep its charge, spent %v", s.EpsilonSpent)
	}
}
