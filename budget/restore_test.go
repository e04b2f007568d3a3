package budget

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
)

func reserveOK(t *testing.T, a *Accountant, table string, eps float64) {
	t.Helper()
	r, err := a.Reserve(req(table, eps))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Complete(r.ID, StatusOK, ""); err != nil {
		t.Fatal(err)
	}
}

func mustExport(t *testing.T, a *Accountant, table string) TableDump {
	t.Helper()
	d, ok, err := a.ExportTable(table, true)
	if err != nil || !ok {
		t.Fatalf("export %s: ok=%v err=%v", table, ok, err)
	}
	return d
}

func wantSpent(t *testing.T, a *Accountant, table string, eps float64, releases uint64) {
	t.Helper()
	s := mustStatus(t, a, table)
	if math.Abs(s.EpsilonSpent-eps) > 1e-12 || s.Releases != releases {
		t.Fatalf("%s: spent ε=%v in %d releases, want %v in %d", table, s.EpsilonSpent, s.Releases, eps, releases)
	}
}

// TestRestoreFresh: into an accountant without the table, the dumped
// account (totals, mode, spend) and ledger are taken as they are.
func TestRestoreFresh(t *testing.T) {
	for _, m := range []Mode{Basic, RDP} {
		src, _, _ := openTemp(t)
		mustProtect(t, src, "d.t", 3, 1e-6, m)
		reserveOK(t, src, "d.t", 0.5)
		reserveOK(t, src, "d.t", 0.25)
		d := mustExport(t, src, "d.t")
		if len(d.Ledger) != 2 {
			t.Fatalf("exported %d ledger rows, want 2", len(d.Ledger))
		}
		dst, _, _ := openTemp(t)
		if err := dst.RestoreTable("e.u", d); err != nil {
			t.Fatal(err)
		}
		want, got := mustStatus(t, src, "d.t"), mustStatus(t, dst, "e.u")
		if got.Mode != m || got.EpsilonTotal != 3 || got.EpsilonSpent != want.EpsilonSpent || got.DeltaSpent != want.DeltaSpent || got.Releases != 2 {
			t.Fatalf("%s: restored status %+v, want like %+v", m, got, want)
		}
		l, err := dst.Ledger()
		if err != nil || len(l) != 2 || l[0].Table != "e.u" || l[1].RequestedEpsilon != 0.25 {
			t.Fatalf("%s: restored ledger %+v, %v", m, l, err)
		}
	}
}

// TestRestoreNeverLowers: an older dump restored over a newer state changes
// nothing; a dump with releases the server lacks adds them once.
func TestRestoreNeverLowers(t *testing.T) {
	a, _, _ := openTemp(t)
	mustProtect(t, a, "d.t", 4, 0, Basic)
	reserveOK(t, a, "d.t", 0.5)
	old := mustExport(t, a, "d.t")
	reserveOK(t, a, "d.t", 1)
	if err := a.RestoreTable("d.t", old); err != nil {
		t.Fatal(err)
	}
	wantSpent(t, a, "d.t", 1.5, 2)
	if err := a.RestoreTable("d.t", mustExport(t, a, "d.t")); err != nil {
		t.Fatal(err)
	}
	wantSpent(t, a, "d.t", 1.5, 2)

	// A copy that diverged: shares the first release, adds its own.
	b, _, _ := openTemp(t)
	if err := b.RestoreTable("d.t", old); err != nil {
		t.Fatal(err)
	}
	reserveOK(t, b, "d.t", 0.25)
	if err := a.RestoreTable("d.t", mustExport(t, b, "d.t")); err != nil {
		t.Fatal(err)
	}
	wantSpent(t, a, "d.t", 1.75, 3)
	if l, _ := a.Ledger(); len(l) != 3 {
		t.Fatalf("ledger has %d rows, want 3", len(l))
	}
	// The totals of an existing account are kept.
	if s := mustStatus(t, a, "d.t"); s.EpsilonTotal != 4 {
		t.Fatalf("total changed to %v", s.EpsilonTotal)
	}
}

// TestRestoreFloor: spend the dumped ledger does not explain (a dump without
// its ledger) still counts.
func TestRestoreFloor(t *testing.T) {
	src, _, _ := openTemp(t)
	mustProtect(t, src, "d.t", 4, 0, Basic)
	reserveOK(t, src, "d.t", 2)
	d := mustExport(t, src, "d.t")
	d.Ledger = nil
	dst, _, _ := openTemp(t)
	mustProtect(t, dst, "d.t", 4, 0, Basic)
	reserveOK(t, dst, "d.t", 0.5)
	if err := dst.RestoreTable("d.t", d); err != nil {
		t.Fatal(err)
	}
	wantSpent(t, dst, "d.t", 2, 1)
}

func TestRestoreRefusesBadDumps(t *testing.T) {
	a, _, _ := openTemp(t)
	mustProtect(t, a, "d.t", 1, 0, Basic)
	good := mustExport(t, a, "d.t")
	for name, raw := range map[string]string{
		"not json":     `{`,
		"version":      `{"v":9,"mode":"basic","eps_total":1}`,
		"mode":         `{"v":1,"mode":"magic","eps_total":1}`,
		"no budget":    `{"v":1,"mode":"basic","eps_total":0}`,
		"rdp mismatch": `{"v":1,"mode":"rdp","eps_total":1,"orders":[2,4],"rdp":[1]}`,
	} {
		d := good
		d.Account = json.RawMessage(raw)
		if err := a.RestoreTable("x.y", d); err == nil {
			t.Errorf("%s: restored a bad account", name)
		}
	}
	d := good
	d.Ledger = []json.RawMessage{json.RawMessage(`{"events":[{"Kind":1,"Epsilon":-1}]}`)}
	if err := a.RestoreTable("x.y", d); err == nil {
		t.Error("restored a ledger row with a negative ε")
	}
	if ok, _ := a.HasAccount("x.y"); ok {
		t.Error("a refused restore left an account behind")
	}
}

// TestRestoreQuotasAndShares: a dump carries the table's quotas, and the
// restored ledger rows count toward each account's share, so a restore can
// neither drop a cap nor reset what an account has spent under it; where a
// quota already exists the stricter one stays.
func TestRestoreQuotasAndShares(t *testing.T) {
	src, _, _ := openTemp(t)
	mustProtect(t, src, "d.t", 10, 0, Basic)
	if err := src.SetQuota("d.t", "ana", 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := src.SetQuota("d.t", AnyUser, 3, 0); err != nil {
		t.Fatal(err)
	}
	reserveOK(t, src, "d.t", 0.75) // ana
	d := mustExport(t, src, "d.t")
	if len(d.Quotas) != 2 {
		t.Fatalf("exported quotas %+v, want ana's and the default", d.Quotas)
	}

	dst, _, _ := openTemp(t)
	if err := dst.RestoreTable("e.u", d); err != nil {
		t.Fatal(err)
	}
	q, err := dst.UserStatus("e.u", "ana")
	if err != nil {
		t.Fatal(err)
	}
	if !q.HasQuota || q.FromDefault || q.EpsilonQuota != 1 || math.Abs(q.EpsilonSpent-0.75) > 1e-12 {
		t.Fatalf("restored status of ana %+v, want quota 1 with 0.75 spent", q)
	}
	if _, err := dst.Reserve(req("e.u", 0.5)); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("ana past her restored quota: %v, want ErrQuotaExceeded", err)
	}
	if q, err := dst.UserStatus("e.u", "bob"); err != nil || !q.FromDefault || q.EpsilonQuota != 3 {
		t.Fatalf("restored default quota for bob %+v, %v", q, err)
	}

	// Restoring the same dump again adds nothing; over a looser local quota
	// the dumped one wins, over a stricter one the local one stays.
	if err := dst.SetQuota("e.u", "ana", 5, 0); err != nil {
		t.Fatal(err)
	}
	if err := dst.SetQuota("e.u", AnyUser, 2, 0); err != nil {
		t.Fatal(err)
	}
	if err := dst.RestoreTable("e.u", d); err != nil {
		t.Fatal(err)
	}
	if q, _ := dst.UserStatus("e.u", "ana"); q.EpsilonQuota != 1 || math.Abs(q.EpsilonSpent-0.75) > 1e-12 || q.Releases != 1 {
		t.Fatalf("after a second restore ana has %+v, want quota 1, 0.75 spent in 1 release", q)
	}
	if q, _ := dst.UserStatus("e.u", "bob"); q.EpsilonQuota != 2 {
		t.Fatalf("default quota after restore %v, want the stricter local 2", q.EpsilonQuota)
	}
}
