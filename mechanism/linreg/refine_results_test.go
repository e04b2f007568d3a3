//go:build results

package linreg

// §15 design runs: AdaSSP followed by noisy preconditioned gradient steps.
// Run:
//
//	REF_RUNS=6 REF_VARS=0,0.3/2/0.5/1 go test -tags results -run TuneRefine -v -timeout 2h ./mechanism/linreg/
//
// Not part of CI: it measures, it does not assert. Training-side synthetic
// generators only (§12's reg50Gens; no accuracy-page split is read).

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// refineVariant is share/steps/tau/step; share 0 = no refinement.
type refineVariant struct {
	share     float64
	steps     int
	tau, step float64
}

func parseRefineVariants(t testing.TB, s string) []refineVariant {
	var out []refineVariant
	for _, f := range strings.Split(s, ",") {
		p := strings.Split(f, "/")
		v := refineVariant{}
		var err error
		if v.share, err = strconv.ParseFloat(p[0], 64); err != nil {
			t.Fatal(err)
		}
		if v.share > 0 {
			if len(p) != 4 {
				t.Fatalf("variant %q: want share/steps/tau/step", f)
			}
			v.steps, _ = strconv.Atoi(p[1])
			v.tau, _ = strconv.ParseFloat(p[2], 64)
			v.step, _ = strconv.ParseFloat(p[3], 64)
		}
		out = append(out, v)
	}
	return out
}

// withRefine re-plans tr's Gaussian stage with the variant (share 0: the
// refinement removed, AdaSSP at the whole stage ratio).
func withRefine(t testing.TB, tr *Trainer, v refineVariant) {
	t.Helper()
	if tr.ref != nil {
		// Undo the default's split: AdaSSP at the whole stage ratio.
		r := math.Sqrt(tr.gauss.ratio*tr.gauss.ratio + tr.ref.totalRatio*tr.ref.totalRatio)
		g, err := planGaussianRatio(r, tr.cfg.Epsilon, tr.cfg.Delta, tr.cfg.N, tr.f, tr.depth(), Kappa)
		if err != nil {
			t.Fatal(err)
		}
		*tr.gauss = g
		tr.ref = nil
	}
	if v.share > 0 {
		if err := tr.planRefineShare(tr.gauss, v.share, v.steps, v.tau, v.step); err != nil {
			t.Fatal(err)
		}
	}
	f := float64(tr.f)
	tr.noiseNorm = tr.gauss.sigmaA * (math.Sqrt(2*f) + math.Sqrt(2*math.Log(1/Failure)))
	tr.margin = tr.gauss.sigmaL * normalQuantile(1-Failure)
}

func TestTuneRefine(t *testing.T) {
	runs := envInt("REF_RUNS", 6)
	n, d := envInt("REF_N", 10000), envInt("REF_D", 50)
	eps, delta := envFloats("REF_EPS", []float64{1})[0], 1e-6
	vars := parseRefineVariants(t, func() string {
		if s := os.Getenv("REF_VARS"); s != "" {
			return s
		}
		return "0,0.3/2/0.5/1"
	}())
	logsum := make([]float64, len(vars))
	cells := 0
	for _, g := range reg50Gens {
		if only := os.Getenv("REF_GENS"); only != "" && !strings.Contains(","+only+",", ","+g.name+",") {
			continue
		}
		train, test := g.draw(1, n, d), g.draw(2, 5000, d)
		cfg := genConfig(g, d, n, eps, delta)
		if b := os.Getenv("REF_BOUNDS"); b != "" {
			cfg.Bounds = b
			if b == "auto" {
				cfg.Bounds = BoundsAuto
			}
		}
		ols := olsRMSE(t, mustPlan(t, withBounds(cfg, BoundsPublic)), train, test)
		var line []string
		for i, v := range vars {
			tr := mustPlan(t, cfg)
			if tr.gauss == nil || tr.params["joint_zcdp"] != 1 {
				if v.share > 0 {
					line = append(line, "n/a")
					continue
				}
			} else {
				withRefine(t, tr, v)
			}
			var s float64
			for k := 0; k < runs; k++ {
				s += trainRMSE(t, tr, train, test) / ols
			}
			s /= float64(runs)
			logsum[i] += math.Log(s)
			line = append(line, strconv.FormatFloat(s, 'f', 4, 64))
		}
		cells++
		t.Logf("%-7s OLS %.4f | %s", g.name, ols, strings.Join(line, " "))
	}
	for i, v := range vars {
		t.Logf("geomean over %d generators: %+v %.4f", cells, v, math.Exp(logsum[i]/float64(cells)))
	}
}
