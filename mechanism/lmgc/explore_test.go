//go:build explore

package lmgc

import (
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpsql/dpsql/mechanism/amp"
)

func envList(name string, def []float64) []float64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, _ := strconv.ParseFloat(f, 64)
		out = append(out, v)
	}
	return out
}

func TestExploreDelta(t *testing.T) {
	sets := strings.Split(os.Getenv("SETS"), ",")
	for _, name := range sets {
		ds := loadShared(t, name)
		xtr, ytr, xte, yte := validationSplit(ds)
		for _, h := range envList("HS", []float64{1}) {
			for _, lam := range envList("LAMS", []float64{0.01}) {
				for _, delta := range envList("DELTAS", []float64{1e-3}) {
					cfg := ds.config(1, len(xtr))
					cfg.H = h
					cfg.Lambda = lam
					p, err := Plan(cfg)
					if err != nil {
						t.Fatal(err)
					}
					kappa := (float64(p.classes)/(2*h) + delta) / delta
					it := int(math.Ceil(envList("ITF", []float64{15})[0] * math.Sqrt(kappa)))
					st := time.Now()
					m, sol, err := p.train(xtr, ytr, trainOptions{noiseOff: true, delta: delta, iters: it})
					if err != nil {
						t.Fatal(err)
					}
					a := accuracy(t, predictor(m), ds.classes, xte, yte)
					t.Logf("%-14s h=%.1f λ=%-6g Δ=%-6g T=%-5d acc=%.3f |Φ|=%.3g %.1fs", name, h, lam, delta, it, a, norm2(sol.phi), time.Since(st).Seconds())
				}
			}
		}
	}
}

// withMargin re-plans p with noise margin c (exploration only); with
// p.cfg.Delta > 0 the Gaussian calibration (§10).
func withMargin(t *testing.T, p *Trainer, c float64) {
	if p.cfg.Delta > 0 {
		p.cal = calibrateGauss(p.cfg.Epsilon, p.cfg.Delta, p.cfg.N, p.classes, p.dim, p.cfg.H, p.cfg.Lambda, MaxJacobianShare, c)
		st, err := amp.NewGaussian(p.cal.ReleaseRadius, p.cal.Dim, p.cal.OutputEpsilon, p.cal.OutputDelta)
		if err != nil {
			t.Fatal(err)
		}
		p.step = st
		return
	}
	p.cal = calibrate(p.cfg.Epsilon, p.cfg.N, p.classes, p.dim, p.cfg.H, p.cfg.Lambda, MaxJacobianShare, c)
	st, err := amp.NewLaplace(p.cal.ReleaseRadius, p.cal.Dim, p.cal.OutputEpsilon)
	if err != nil {
		t.Fatal(err)
	}
	p.step = st
}

func TestExploreMargin(t *testing.T) {
	runs := int(envList("RUNS", []float64{10})[0])
	for _, name := range strings.Split(os.Getenv("SETS"), ",") {
		ds := loadShared(t, name)
		xtr, ytr, xva, yva := validationSplit(ds)
		for _, eps := range envList("EPS", []float64{1, 10, 100}) {
			for _, c := range envList("MARGINS", []float64{0.3, 1, 3}) {
				cfg := ds.config(eps, len(xtr))
				cfg.Delta = envList("DP", []float64{0})[0] // δ > 0: the Gaussian release
				p, err := Plan(cfg)
				if err != nil {
					t.Fatal(err)
				}
				withMargin(t, p, c)
				var accs []float64
				st := time.Now()
				for r := 0; r < runs; r++ {
					m, _, err := p.train(xtr, ytr, trainOptions{})
					if err != nil {
						t.Fatal(err)
					}
					accs = append(accs, accuracy(t, predictor(m), ds.classes, xva, yva))
				}
				mu, sd := meanSDf(accs)
				t.Logf("%-14s ε=%-5g cν=%-4g Δ=%-9.3g T=%-5d val acc=%.3f ± %.3f  %.2fs/run", name, eps, c, p.cal.StrongConvexity, p.cal.Iterations, mu, sd, time.Since(st).Seconds()/float64(runs))
			}
		}
	}
}

func TestExplorePlans(t *testing.T) {
	for _, name := range sharedSets {
		ds := loadShared(t, name)
		xtr, _, _, _ := ds.split80()
		for _, eps := range []float64{0.1, 1, 10, 100, 1e4} {
			p, err := Plan(ds.config(eps, len(xtr)))
			if err != nil {
				t.Logf("%s ε=%g: %v", name, eps, err)
				continue
			}
			c := p.cal
			old := aprioriIterations(c.GradientBound, c.StrongConvexity, c.Smoothness, c.Radius/2)
			t.Logf("%-14s ε=%-6g m=%-6d Δ=%-9.3g 𝒥=%-8.3g ε_b=%-8.4g disp≈%-8.3g R0=%-8.3g T=%-6d (G-bound T %d)", name, eps, c.Dim, c.StrongConvexity, c.JacobianEpsilon, c.PerturbationEpsilon, float64(c.Dim)*c.PerturbationScale/(float64(p.cfg.N)*c.StrongConvexity), c.StartRadius, c.Iterations, old)
		}
	}
}

// validationSplit splits the training 80 % of ds (split80) into a
// training part and a validation part (every 4th training row): the test
// split is never used for choosing defaults.
func validationSplit(ds *dataset) (xtr [][]float64, ytr []int, xva [][]float64, yva []int) {
	xtr0, ytr0, _, _ := ds.split80()
	for j := range xtr0 {
		if j%4 == 0 {
			xva, yva = append(xva, xtr0[j]), append(yva, ytr0[j])
		} else {
			xtr, ytr = append(xtr, xtr0[j]), append(ytr, ytr0[j])
		}
	}
	return
}

func TestExploreFailureGrid(t *testing.T) {
	for _, lambda := range []float64{1e-12, 0.01, 1e6} {
		for _, h := range []float64{1e-6, 0.5, 1e6} {
			for _, eps := range []float64{0.01, 1, 100} {
				cfg := testConfig(eps, 230, 4, 5)
				cfg.Lambda, cfg.H = lambda, h
				p, err := Plan(cfg)
				if err != nil {
					t.Logf("λ=%g h=%g ε=%g: %v", lambda, h, eps, err)
					continue
				}
				t.Logf("λ=%g h=%g ε=%g: T=%d Δ=%g", lambda, h, eps, p.cal.Iterations, p.cal.StrongConvexity)
			}
		}
	}
}

func TestExploreFailureCost(t *testing.T) {
	rng := rand.New(rand.NewPCG(111, 112))
	var total float64
	for _, lambda := range []float64{1e-12, 0.01, 1e6} {
		for _, h := range []float64{1e-6, 0.5, 1e6} {
			for _, eps := range []float64{0.01, 1, 100} {
				d, classes, n := 1+rng.IntN(4), 2+rng.IntN(4), 30+rng.IntN(200)
				cfg := testConfig(eps, n, d, classes)
				cfg.Lambda, cfg.H = lambda, h
				p, err := Plan(cfg)
				if err != nil {
					continue
				}
				_ = lmgcPairs(rng, n, d, classes)
				T := p.cal.Iterations
				total += float64(6 * T)
				t.Logf("λ=%g h=%g ε=%g d=%d C=%d n=%d T=%d", lambda, h, eps, d, classes, n, T)
			}
		}
	}
	t.Logf("total iterations %g", total)
}
