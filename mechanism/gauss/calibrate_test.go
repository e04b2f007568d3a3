package gauss

import (
	"math"
	"strconv"
	"testing"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
)

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

// testConfig is a config on d features in [0, 10] and K classes.
func testConfig(kind string, d, k, n int, eps, delta float64) Config {
	cfg := Config{Kind: kind, Epsilon: eps, Delta: delta, N: n, Label: "y"}
	for j := 0; j < d; j++ {
		cfg.Features = append(cfg.Features, "f"+strconv.Itoa(j))
		cfg.Lo, cfg.Hi = append(cfg.Lo, 0), append(cfg.Hi, 10)
	}
	for c := 0; c < k; c++ {
		cfg.Classes = append(cfg.Classes, "c"+strconv.Itoa(c))
	}
	return cfg
}

func mustPlan(tb testing.TB, cfg Config) *Trainer {
	tb.Helper()
	p, err := Plan(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// scaleCase is one hand-derived calibration (docs/mechanisms/gauss.md §3–4)
// at d = 4 and the default moment shares: the expected count share pc, the
// squared-ℓ₂ (δ > 0) or ℓ₁ (δ = 0) joint sensitivity, and the block weights.
type scaleCase struct {
	kind           string
	delta          float64
	pc, sens       float64 // count share, joint sensitivity (ℓ₂ or ℓ₁)
	wc, ws, wm, wo float64
}

func scaleCases() []scaleCase {
	// δ > 0, lda and qda (pm = 0.35, ps = 0.65, d = 4): ws² = ps/(2d),
	// wm² = pm/(2d²); the class-keeping supremum exceeds the class-changing
	// one by ps²/(4pm) (t* = −ps·d/(2pm) = −3.71 ∈ [−4, 4]), which is the
	// free count share.
	pcQ := 0.65 * 0.65 / (4 * 0.35)
	// δ > 0, gnb (pm = 0.25, ps = 0.75): ws² = 0.75/8, wq² = 0.25/8,
	// ρ = ws²/wq² = 3 ≥ ½, so the class-keeping maximum is at c = 2:
	// d·4ws² = 2ps = 1.5, and pc = 1.5 − 1 = 0.5.
	// δ = 0, lda: vs = 0.65/8, vm = 0.35/10; vs ≥ vm so the class-changing
	// bound is 2d·vs + vm·d²/2 = 0.65 + 0.28 = 0.93 and pc = 0.05 (the floor:
	// the class-keeping bound 0.7505 is smaller).
	// δ = 0, qda: vs = 0.65/8, vm = 0.35/20; change 1, pc = 0.05.
	// δ = 0, gnb: vs = 0.75/8, vq = 0.25/8, c* = min(2, 1 + vs/(2vq)) = 2,
	// class-keeping d·2·vs = 0.75 < 1; pc = 0.05.
	return []scaleCase{
		{KindLDA, 1e-5, pcQ, math.Sqrt(1 + pcQ), math.Sqrt(pcQ / 2), math.Sqrt(0.65 / 8), math.Sqrt(0.35 / 32), math.Sqrt(0.35 / 16)},
		{KindQDA, 1e-5, pcQ, math.Sqrt(1 + pcQ), math.Sqrt(pcQ / 2), math.Sqrt(0.65 / 8), math.Sqrt(0.35 / 32), math.Sqrt(0.35 / 16)},
		{KindGNB, 1e-5, 0.5, math.Sqrt(1.5), 0.5, math.Sqrt(0.75 / 8), math.Sqrt(0.25 / 8), 0},
		{KindLDA, 0, 0.05, 0.98, 0.025, 0.65 / 8, 0.035, 0.035},
		{KindQDA, 0, 0.05, 1.05, 0.025, 0.65 / 8, 0.35 / 20, 0.35 / 20},
		{KindGNB, 0, 0.05, 1.05, 0.025, 0.75 / 8, 0.25 / 8, 0},
	}
}

// TestExactScales checks every weight, the joint sensitivity, the noise
// scale, the per-block noise standard deviations and the event, for K = 2
// and K = 3 (K changes the layout, not the calibration), δ = 0 and δ > 0.
func TestExactScales(t *testing.T) {
	const d, eps = 4, 1.0
	for _, c := range scaleCases() {
		for _, k := range []int{2, 3} {
			cfg := testConfig(c.kind, d, k, 1000, eps, c.delta)
			cfg.MomentShare = 0.35
			if c.kind == KindGNB {
				cfg.MomentShare = 0.25
			}
			p := mustPlan(t, cfg)
			cal := p.cal
			name := c.kind + "/K=" + strconv.Itoa(k) + "/delta=" + strconv.FormatFloat(c.delta, 'g', -1, 64)
			check := func(what string, got, want float64) {
				t.Helper()
				if !near(got, want, 1e-12) && !(got == 0 && want == 0) {
					t.Errorf("%s: %s = %.15g, want %.15g", name, what, got, want)
				}
			}
			check("count share weight wc", cal.w.wc, c.wc)
			check("sum weight ws", cal.w.ws, c.ws)
			check("moment weight wm", cal.w.wm, c.wm)
			check("off-diagonal weight wo", cal.w.wo, c.wo)
			check("sensitivity", cal.sens, c.sens)
			check("count share", cal.countShare, c.pc/(1+c.pc))
			var sd float64
			if c.delta > 0 {
				sigma, err := mechanism.GaussianSigma(c.sens, eps, c.delta)
				if err != nil {
					t.Fatal(err)
				}
				check("sigma", cal.scale, sigma)
				sd = sigma
				ev := p.Events()
				want := budget.Event{Kind: budget.Gaussian, Epsilon: eps, Delta: c.delta, Ratio: c.sens / sigma}
				if len(ev) != 1 || ev[0] != want {
					t.Errorf("%s: events %+v, want [%+v]", name, ev, want)
				}
			} else {
				check("laplace scale b", cal.scale, c.sens/eps)
				sd = math.Sqrt2 * c.sens / eps
				ev := p.Events()
				if len(ev) != 1 || ev[0] != (budget.Event{Kind: budget.Laplace, Epsilon: eps}) {
					t.Errorf("%s: events %+v, want one Laplace event at ε = %v", name, ev, eps)
				}
			}
			for _, ev := range p.Events() {
				if err := ev.Validate(); err != nil {
					t.Errorf("%s: event does not validate: %v", name, err)
				}
			}
			check("count sd", cal.sdCount, sd/c.wc)
			check("sum sd", cal.sdSum, sd/c.ws)
			check("diagonal sd", cal.sdDiag, sd/c.wm)
			if c.wo > 0 {
				check("off-diagonal sd", cal.sdOff, sd/c.wo)
			}
			// Layout sizes: K counts, K·d sums, moments.
			want := k + k*d
			switch c.kind {
			case KindLDA:
				want += d * (d + 1) / 2
			case KindQDA:
				want += k * d * (d + 1) / 2
			case KindGNB:
				want += k * d
			}
			if p.Size() != want {
				t.Errorf("%s: %d statistics, want %d", name, p.Size(), want)
			}
		}
	}
}

// TestGaussianSigmaMatchesEvent: the σ of the plan is exactly the one the
// accountant's (ε, δ) check accepts, and a 1 % smaller σ is refused.
func TestGaussianSigmaMatchesEvent(t *testing.T) {
	for _, eps := range []float64{0.1, 1, 10} {
		for _, kind := range []string{KindLDA, KindQDA, KindGNB} {
			p := mustPlan(t, testConfig(kind, 6, 3, 500, eps, 1e-6))
			ev := p.Events()[0]
			if err := ev.Validate(); err != nil {
				t.Fatalf("%s ε=%v: %v", kind, eps, err)
			}
			ev.Ratio = p.cal.sens / (0.99 * p.cal.scale)
			if err := ev.Validate(); err == nil {
				t.Errorf("%s ε=%v: an event with σ 1%% below the plan's validates; the calibration is not tight", kind, eps)
			}
		}
	}
}

// TestSharesDefaultsAndOverrides: MomentShare 0 selects the public rule
// DefaultMomentShare, an explicit share is honoured, and the shares sum to
// one.
func TestSharesDefaultsAndOverrides(t *testing.T) {
	for _, kind := range []string{KindLDA, KindQDA, KindGNB} {
		for _, n := range []int{100, 100000} {
			p := mustPlan(t, testConfig(kind, 5, 2, n, 1, 1e-5))
			want, err := DefaultMomentShare(kind, n, 5, 2, 1, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			if p.Config().MomentShare != want || p.Config().EdgeFactor != DefaultEdgeFactor {
				t.Errorf("%s n=%d: defaults %v/%v, want %v/%v", kind, n, p.Config().MomentShare, p.Config().EdgeFactor, want, DefaultEdgeFactor)
			}
		}
		cfg := testConfig(kind, 5, 2, 100, 1, 1e-5)
		cfg.MomentShare = 0.6
		q := mustPlan(t, cfg)
		c, s, m := q.Shares()
		if !near(c+s+m, 1, 1e-12) || !near(m/s, 0.6/0.4, 1e-12) {
			t.Errorf("%s: shares %v %v %v do not reflect moment share 0.6", kind, c, s, m)
		}
	}
}

// TestDefaultMomentShareRule pins the public rule of §6: gnb's constant;
// for lda/qda 0.4 − 0.15·log₁₀E, clamped, where E = 2√d·sdOff/(n − K) at
// the reference share. E is recomputed here from the plan's own noise sd.
func TestDefaultMomentShareRule(t *testing.T) {
	if s, _ := DefaultMomentShare(KindGNB, 1000, 10, 3, 1, 1e-5); s != DefaultMomentShareGNB {
		t.Errorf("gnb default %v, want %v", s, DefaultMomentShareGNB)
	}
	for _, kind := range []string{KindLDA, KindQDA} {
		for _, c := range []struct {
			n, d, k    int
			eps, delta float64
		}{{500, 30, 2, 1, 1e-5}, {5000, 36, 6, 1, 1e-5}, {100000, 10, 2, 10, 1e-5}, {2000, 8, 3, 1, 0}, {10, 50, 2, 0.1, 1e-5}} {
			cfg := testConfig(kind, c.d, c.k, c.n, c.eps, c.delta)
			cfg.MomentShare = RefMomentShare
			p := mustPlan(t, cfg)
			_, _, _, off := p.NoiseSD()
			e := 2 * math.Sqrt(float64(c.d)) * off / float64(c.n-c.k)
			want := math.Min(MaxMomentShare, math.Max(MinMomentShare, 0.4-0.15*math.Log10(e)))
			got, err := DefaultMomentShare(kind, c.n, c.d, c.k, c.eps, c.delta)
			if err != nil {
				t.Fatal(err)
			}
			if !near(got, want, 1e-12) {
				t.Errorf("%s %+v: default share %v, want %v (E = %v)", kind, c, got, want, e)
			}
			t.Logf("%s n=%d d=%d K=%d ε=%v δ=%v: E = %.4g, share %.3f", kind, c.n, c.d, c.k, c.eps, c.delta, e, got)
		}
	}
	// The clamps.
	if s, _ := DefaultMomentShare(KindLDA, 10, 50, 2, 0.1, 1e-5); s != MinMomentShare {
		t.Errorf("hopeless covariance: share %v, want the floor %v", s, MinMomentShare)
	}
	if s, _ := DefaultMomentShare(KindLDA, 10000000, 5, 2, 10, 1e-5); s != MaxMomentShare {
		t.Errorf("precise covariance: share %v, want the cap %v", s, MaxMomentShare)
	}
}
