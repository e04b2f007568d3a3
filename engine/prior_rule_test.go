package engine_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/dpsql/dpsql/mechanism"
)

// TestDPTrainPriorRegime (issue 28, docs/mechanisms/prior.md §2): over the
// wire, the dry run's regime follows the public rule on both conditions —
// the DP class prior alone, with the whole ε as its one event, where
// n·ε/(F·K′) < 0.5 or where the selection's resolution n·ε_sel/2 < 1 — and
// otherwise the three events of the select regime; objective=balanced shows
// the log-prior floor of prior.md §3 at its counts' ε.
func TestDPTrainPriorRegime(t *testing.T) {
	ts := demoServer(t)
	ana := ts.connect("analyst", "analyst", "demo")
	type planJSON struct {
		Epsilon     float64            `json:"epsilon"`
		Events      []map[string]any   `json:"events"`
		Calibration map[string]float64 `json:"calibration"`
		Hyper       map[string]any     `json:"hyperparameters"`
		Mechanism   string             `json:"mechanism"`
	}
	dry := func(q string) planJSON {
		t.Helper()
		var s string
		if err := ana.QueryRow(q).Scan(&s); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var p planJSON
		if err := json.Unmarshal([]byte(s), &p); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return p
	}
	seen := map[string]bool{}
	for _, eps := range []float64{0.05, 0.1, 0.2, 0.5, 2} {
		p := dry("SELECT DP_TRAIN('iris', " + jsonNum(eps) + ", 'logreg', 'dry_run=1')")
		ratio, _ := p.Hyper["prior_ratio"].(float64)
		res, _ := p.Hyper["prior_resolution"].(float64)
		regime, _ := p.Hyper["prior_regime"].(string)
		// iris: n rows, F = 5, K′ = 3; the resolution is n·ε·share/2.
		n := ratio * 15 / eps
		if math.Abs(res-n*eps*mechanism.PriorShare/2) > 1e-9*n {
			t.Fatalf("ε = %v: resolution %v, want n·ε·%v/2 with n = %v", eps, res, mechanism.PriorShare, n)
		}
		alone := ratio < mechanism.PriorMinRatio || res < mechanism.PriorMinResolution
		switch {
		case alone && (regime != "prior" || len(p.Events) != 1 || p.Events[0]["epsilon"] != eps):
			t.Fatalf("ε = %v (r = %v, s = %v): regime %q, events %v; want the prior alone at the whole ε", eps, ratio, res, regime, p.Events)
		case !alone && (regime != "select" || len(p.Events) < 3):
			t.Fatalf("ε = %v (r = %v, s = %v): regime %q, events %v; want the select regime", eps, ratio, res, regime, p.Events)
		}
		if alone && ratio >= mechanism.PriorMinRatio {
			seen["resolution"] = true
		} else if alone {
			seen["ratio"] = true
		} else {
			seen["select"] = true
		}
	}
	if !seen["resolution"] || !seen["select"] {
		t.Fatalf("the ε sweep did not cover both sides of the resolution condition: %v", seen)
	}
	p := dry("SELECT DP_TRAIN('iris', 1, 'logreg', 'objective=balanced; dry_run=1')")
	epsPrior := p.Calibration["prior_epsilon"]
	if want := mechanism.PriorFloor(3, epsPrior); epsPrior <= 0 || math.Abs(p.Calibration["prior_floor"]-want) > 1e-9*want {
		t.Fatalf("balanced: prior_floor %v at ε_prior %v, want %v", p.Calibration["prior_floor"], epsPrior, want)
	}
}

func jsonNum(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}
