package engine_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/mechanism/linreg"
	"github.com/dpsql/dpsql/mechanism/lsq"
)

// lsqConfig is the DP_LSQ configuration of a linreg test configuration.
func lsqConfig(c linreg.Config, n int) lsq.Config {
	return lsq.Config{Epsilon: c.Epsilon, Delta: c.Delta, N: n, Features: c.Features, Lo: c.Lo, Hi: c.Hi,
		Label: c.Label, LabelLo: c.LabelLo, LabelHi: c.LabelHi}
}

// TestScaleOutLSQStatistics checks DP_LSQ's pushed-down statistics (linear
// kernel) against the embedded path's: the exact (DECIMAL) statement bit
// for bit between a single MariaDB and Spider, and bit for bit with the
// embedded sums on dyadic data; the fast (DOUBLE) statement within the
// any-order bound (2·AnyOrderSumBound per entry: each side errs by at most
// one) on general and adversarial data (NULLs, values far outside the
// bounds, ±MaxFloat64, subnormals), with the centring shift 0 and ≠ 0 (the
// shift's overflow guard is met by the ±MaxFloat64 labels).
func TestScaleOutLSQStatistics(t *testing.T) {
	needSpider(t)
	const n = 2000
	ts := startBackendServer(t, t.TempDir())
	defer ts.stop()
	root := ts.connect("root", rootPW, "")
	for _, set := range []string{"dy", "gen", "adv"} {
		var rows [][]float64
		lcfg := pointCfg
		shifts := []float64{0, 0.25}
		switch set {
		case "dy":
			rows = pointRows(n, true)
		case "gen":
			rows = pointRows(n, false)
		default:
			rows, lcfg = adversarialRows(n), adversarialCfg
			shifts = []float64{0, 7.3e5 + 1.0/3, -2.9e6}
		}
		single, sharded, emb := "lsq_single_"+set, "lsq_sharded_"+set, "lsq_emb_"+set
		createSingle(t, single, "pts", pointCols)
		createSharded(t, sharded, "pts", pointCols)
		insertRows(t, headConn(t), single+".pts", renderRows(rows))
		insertRows(t, headConn(t), sharded+".pts", renderRows(rows))
		mustExec(t, root, "CREATE DATABASE "+emb)
		mustExec(t, root, "CREATE TABLE "+emb+".pts ("+pointCols+")")
		insertRows(t, root, emb+".pts", renderRows(rows))
		mustExec(t, root, fmt.Sprintf("CALL dp_attach('%s.pts')", single))
		mustExec(t, root, fmt.Sprintf("CALL dp_attach('%s.pts')", sharded))

		tr, err := lsq.Plan(lsqConfig(lcfg, n))
		if err != nil {
			t.Fatal(err)
		}
		var X [][]float64
		var y []float64
		if _, err := ts.e.Store.ScanFloats(emb, "pts", []string{"x1", "x2", "x3", "y"}, func(r []float64) error {
			X = append(X, append([]float64(nil), r[:3]...))
			y = append(y, r[3])
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		mul, add, inv, icept, lnull, mid, half := tr.Map()
		for _, shift := range shifts {
			aE, cE, err := tr.ExactStats(X, y, shift)
			if err != nil {
				t.Fatal(err)
			}
			m := functions.LinearMap{Features: lcfg.Features, Mul: mul, Add: add, Inv: inv, Intercept: icept,
				Label: "y", LabelLo: lcfg.LabelLo, LabelHi: lcfg.LabelHi, Mid: mid, Half: half, LabelNull: lnull, LabelShift: shift}
			ys := make([]float64, len(y))
			for i, v := range y {
				ys[i] = v - shift
			}
			plain := m
			plain.LabelShift = 0
			absA, absC := absTerms(plain, X, ys)
			type got struct {
				name string
				a, c []float64
			}
			var gs []got
			for _, src := range []struct {
				name, db string
				exact    bool
				one      bool
			}{{"exact single", single, true, false}, {"exact Spider", sharded, true, false}, {"fast single (in-box split)", single, false, false},
				{"fast Spider (in-box split)", sharded, false, false}, {"fast single (one statement)", single, false, true}, {"fast Spider (one statement)", sharded, false, true}} {
				a, c, nB, ok, err := ts.e.Backend.LinearStatsExact(src.db, "pts", m)
				switch {
				case src.one:
					a, c, nB, ok, err = ts.e.Backend.LinearStatsOneStatement(src.db, "pts", m)
				case !src.exact:
					a, c, nB, ok, err = ts.e.Backend.LinearStats(src.db, "pts", m)
				}
				if err != nil || !ok || nB != n {
					t.Fatalf("%s shift %v %s: ok=%v n=%d err=%v", set, shift, src.name, ok, nB, err)
				}
				gs = append(gs, got{src.name, a, c})
			}
			for i := range aE {
				if gs[0].a[i] != gs[1].a[i] {
					t.Fatalf("%s shift %v: S[%d]: exact single %v ≠ Spider %v", set, shift, i, gs[0].a[i], gs[1].a[i])
				}
			}
			for i := range cE {
				if gs[0].c[i] != gs[1].c[i] {
					t.Fatalf("%s shift %v: c[%d]: exact single %v ≠ Spider %v", set, shift, i, gs[0].c[i], gs[1].c[i])
				}
			}
			worst := 0.0
			for _, g := range gs {
				for i := range aE {
					diff, bound := math.Abs(aE[i]-g.a[i]), 2*lsq.AnyOrderSumBound(n, absA[i])
					if set == "dy" && diff != 0 || diff > bound {
						t.Fatalf("%s shift %v: S[%d]: embedded %v, %s %v: |Δ| = %v, bound %v", set, shift, i, aE[i], g.name, g.a[i], diff, bound)
					}
					if bound > 0 {
						worst = max(worst, diff/bound)
					}
				}
				for i := range cE {
					diff, bound := math.Abs(cE[i]-g.c[i]), 2*lsq.AnyOrderSumBound(n, absC[i])
					if set == "dy" && diff != 0 || diff > bound {
						t.Fatalf("%s shift %v: c[%d]: embedded %v, %s %v: |Δ| = %v, bound %v", set, shift, i, cE[i], g.name, g.c[i], diff, bound)
					}
					if bound > 0 {
						worst = max(worst, diff/bound)
					}
				}
			}
			// [lsqfast] ShiftAlgebraic (objective plans with centring): the
			// inside rows' shift through the sums. A as before; c within
			// the embedded side's allowance plus γ·Σ|z_j|·M/half,
			// M = max(|lo|, |hi|) + 2|s| + |mid| (mechanism/lsq
			// algebraicShiftFactor, with the test's |s| for the released
			// |s| ≤ half).
			if shift != 0 {
				alg := m
				alg.ShiftAlgebraic = true
				mt := math.Max(math.Abs(lcfg.LabelLo), math.Abs(lcfg.LabelHi)) + 2*math.Abs(shift) + math.Abs(mid)
				f := len(cE)
				for _, db := range []string{single, sharded} {
					a, c, nB, ok, err := ts.e.Backend.LinearStats(db, "pts", alg)
					if err != nil || !ok || nB != n {
						t.Fatalf("%s shift %v algebraic %s: ok=%v n=%d err=%v", set, shift, db, ok, nB, err)
					}
					for i := range aE {
						if diff, bound := math.Abs(aE[i]-a[i]), 2*lsq.AnyOrderSumBound(n, absA[i]); diff > bound {
							t.Fatalf("%s shift %v algebraic %s: S[%d] |Δ| = %v, bound %v", set, shift, db, i, diff, bound)
						}
					}
					for j := range cE {
						absU := absA[j*f+f-1] / inv // Σ|z_j|
						diff := math.Abs(cE[j] - c[j])
						bound := lsq.AnyOrderSumBound(n, absC[j]) + lsq.AnyOrderSumBound(n, absU*mt/half)
						if diff > bound {
							t.Fatalf("%s shift %v algebraic %s: c[%d]: embedded %v, backend %v, |Δ| = %v, bound %v", set, shift, db, j, cE[j], c[j], diff, bound)
						}
						if bound > 0 {
							worst = max(worst, diff/bound)
						}
					}
				}
			}
			inside := splitRows(t, ts, single, m, shift <= 0.25)
			t.Logf("%s shift %v: %d of %d rows inside the box; max |embedded − backend| = %.3g of the proven bound; exact single = Spider bit for bit", set, shift, inside, n, worst)
		}
	}
}
