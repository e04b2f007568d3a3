package gauss

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/mechanism"
)

// TestPlanRejects: every public misconfiguration is refused by Plan (before
// any data), with an error that names the problem.
func TestPlanRejects(t *testing.T) {
	base := func() Config { return testConfig(KindLDA, 3, 2, 100, 1, 1e-5) }
	cases := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"kind", func(c *Config) { c.Kind = "svm" }, "unknown kind"},
		{"eps 0", func(c *Config) { c.Epsilon = 0 }, "epsilon"},
		{"eps NaN", func(c *Config) { c.Epsilon = math.NaN() }, "epsilon"},
		{"eps Inf", func(c *Config) { c.Epsilon = math.Inf(1) }, "epsilon"},
		{"delta <0", func(c *Config) { c.Delta = -1e-9 }, "delta"},
		{"delta 1", func(c *Config) { c.Delta = 1 }, "delta"},
		{"delta NaN", func(c *Config) { c.Delta = math.NaN() }, "delta"},
		{"n", func(c *Config) { c.N = 0 }, "row count"},
		{"share", func(c *Config) { c.MomentShare = 1 }, "moment share"},
		{"share <0", func(c *Config) { c.MomentShare = -0.1 }, "moment share"},
		{"edge", func(c *Config) { c.EdgeFactor = -1 }, "edge factor"},
		{"no features", func(c *Config) { c.Features, c.Lo, c.Hi = nil, nil, nil }, "no feature"},
		{"bounds", func(c *Config) { c.Lo = c.Lo[:2] }, "bounds"},
		{"lo = hi", func(c *Config) { c.Hi[1] = c.Lo[1] }, "bounds of feature 1"},
		{"NaN bound", func(c *Config) { c.Lo[0] = math.NaN() }, "NaN"},
		{"inf bound", func(c *Config) { c.Hi[0] = math.Inf(1) }, "finite"},
		{"one class", func(c *Config) { c.Classes = c.Classes[:1] }, "at least 2 classes"},
		{"duplicate class", func(c *Config) { c.Classes[1] = c.Classes[0] }, "twice"},
		{"too many statistics", func(c *Config) {
			*c = testConfig(KindQDA, 200, 60, 100, 1, 1e-5)
		}, "limit"},
		{"tiny eps laplace", func(c *Config) { c.Delta, c.Epsilon = 0, 1e-7 }, "minimum"},
	}
	for _, c := range cases {
		cfg := base()
		c.mod(&cfg)
		_, err := Plan(cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}

// TestTrainContract: shape errors are caller bugs reported before any
// noise; a plan releases once.
func TestTrainContract(t *testing.T) {
	p := mustPlan(t, testConfig(KindLDA, 2, 2, 3, 1, 1e-5))
	if _, err := p.statistics([][]float64{{1, 2}, {3, 4}}, []int{0, 1}); err == nil {
		t.Error("wrong n accepted")
	}
	if _, err := p.statistics([][]float64{{1, 2}, {3}, {4, 5}}, []int{0, 1, 0}); err == nil {
		t.Error("short row accepted")
	}
	x := [][]float64{{1, 2}, {3, 4}, {5, 6}}
	if _, err := p.Train(x, []int{0, 1, 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Train(x, []int{0, 1, 0}); err == nil {
		t.Error("a plan released twice")
	}
}

// naiveStatistics recomputes the statistic vector with plain loops and the
// documented mapping (clip to the bounds, NULL ↦ midpoint, label out of
// range ↦ class 0).
func naiveStatistics(p *Trainer, X [][]float64, y []int) []float64 {
	l := p.lay
	v := make([]float64, l.size)
	for i, row := range X {
		u := make([]float64, l.d)
		for j, x := range row {
			switch {
			case math.IsNaN(x):
				u[j] = 0
			default:
				u[j] = math.Max(-1, math.Min(1, 2*(x-p.cfg.Lo[j])/(p.cfg.Hi[j]-p.cfg.Lo[j])-1))
			}
		}
		k := y[i]
		if k < 0 || k >= l.k {
			k = 0
		}
		v[k]++
		for j := range u {
			l.sum(v, k)[j] += u[j]
		}
		b := 0
		if l.kind != KindLDA {
			b = k
		}
		blk := l.moment(v, b)
		for a := 0; a < l.d; a++ {
			if l.kind == KindGNB {
				blk[a] += u[a] * u[a]
				continue
			}
			for c := a; c < l.d; c++ {
				blk[l.packed(a, c)] += u[a] * u[c]
			}
		}
	}
	return v
}

// TestStatisticsExact compares the one-pass statistics (chunked rank-k
// updates) with plain loops on 700 rows (several chunks) with NULLs,
// values outside the bounds and labels outside the domain.
func TestStatisticsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, d = 700, 5
	X := make([][]float64, n)
	y := make([]int, n)
	for i := range X {
		X[i] = make([]float64, d)
		for j := range X[i] {
			X[i][j] = -3 + 16*rng.Float64() // bounds [0, 10]
			if rng.IntN(20) == 0 {
				X[i][j] = math.NaN()
			}
		}
		y[i] = rng.IntN(4) - 1 // −1 and 2 fall outside K = 2 … handled below
		if y[i] == 2 {
			y[i] = 7
		}
	}
	for _, kind := range []string{KindLDA, KindQDA, KindGNB} {
		p := mustPlan(t, testConfig(kind, d, 3, n, 1, 1e-5))
		got, err := p.statistics(X, y)
		if err != nil {
			t.Fatal(err)
		}
		want := naiveStatistics(p, X, y)
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-9*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("%s: statistic %d = %v, want %v", kind, i, got[i], want[i])
			}
		}
	}
}

// exactModel post-processes the noise-free statistics with every noise
// level set to 0: the textbook estimates (the floors and shrinkage vanish).
func exactModel(t testing.TB, p *Trainer, X [][]float64, y []int) *mechanism.Model {
	t.Helper()
	st, err := p.statistics(X, y)
	if err != nil {
		t.Fatal(err)
	}
	p.cal.sdCount, p.cal.sdSum, p.cal.sdDiag, p.cal.sdOff = 0, 0, 0, 0
	return p.model(st)
}

// textbook computes class means, priors, per-class and pooled covariances
// of u directly from the rows.
func textbook(p *Trainer, X [][]float64, y []int) (mu [][]float64, prior []float64, cov []*mat.SymDense, pooled *mat.SymDense) {
	l := p.lay
	U := make([][]float64, len(X))
	for i, row := range X {
		U[i] = make([]float64, l.d)
		for j, x := range row {
			U[i][j] = math.Max(-1, math.Min(1, 2*(x-p.cfg.Lo[j])/(p.cfg.Hi[j]-p.cfg.Lo[j])-1))
		}
	}
	cnt := make([]float64, l.k)
	mu = make([][]float64, l.k)
	for k := range mu {
		mu[k] = make([]float64, l.d)
	}
	for i, u := range U {
		cnt[y[i]]++
		for j := range u {
			mu[y[i]][j] += u[j]
		}
	}
	prior = make([]float64, l.k)
	for k := range mu {
		prior[k] = cnt[k] / float64(len(X))
		for j := range mu[k] {
			mu[k][j] /= cnt[k]
		}
	}
	pooled = mat.NewSymDense(l.d, nil)
	cov = make([]*mat.SymDense, l.k)
	for k := range cov {
		cov[k] = mat.NewSymDense(l.d, nil)
	}
	for i, u := range U {
		k := y[i]
		for a := 0; a < l.d; a++ {
			for b := a; b < l.d; b++ {
				v := (u[a] - mu[k][a]) * (u[b] - mu[k][b])
				cov[k].SetSym(a, b, cov[k].At(a, b)+v/(cnt[k]-1))
				pooled.SetSym(a, b, pooled.At(a, b)+v/float64(len(X)-l.k))
			}
		}
	}
	return mu, prior, cov, pooled
}

// TestNoiseFreeIsTextbook: with the noise levels at 0 the post-processing
// is exactly textbook LDA, QDA and GNB (scores of every class on random
// points agree to 1e-7 relative with a direct computation).
func TestNoiseFreeIsTextbook(t *testing.T) {
	ds := synthetic(400, 4, 3, 9, 0.5)
	for i := range ds.x {
		for j := range ds.x[i] {
			ds.x[i][j] = (ds.x[i][j] + 4) * 1.25 // into [0, 10]
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, kind := range []string{KindLDA, KindQDA, KindGNB} {
		p := mustPlan(t, testConfig(kind, 4, 3, len(ds.x), 1, 1e-5))
		m := exactModel(t, p, ds.x, ds.y)
		mu, prior, cov, pooled := textbook(p, ds.x, ds.y)
		for trial := 0; trial < 20; trial++ {
			x := make([]float64, 4)
			for j := range x {
				x[j] = 10 * rng.Float64()
			}
			xt := m.Scaler.Transform(nil, x)
			u := make([]float64, 4)
			for j := range u {
				u[j] = xt[j] * math.Sqrt(5)
			}
			for k := 0; k < 3; k++ {
				var got, want float64
				diff := mat.NewVecDense(4, nil)
				for j := range u {
					diff.SetVec(j, u[j]-mu[k][j])
				}
				switch kind {
				case KindLDA:
					got = dotv(m.Weights[k], xt)
					var inv mat.Dense
					if err := inv.Inverse(pooled); err != nil {
						t.Fatal(err)
					}
					muv := mat.NewVecDense(4, mu[k])
					uv := mat.NewVecDense(4, u)
					var pm mat.VecDense
					pm.MulVec(&inv, muv)
					want = mat.Dot(uv, &pm) - mat.Dot(muv, &pm)/2 + math.Log(prior[k])
				case KindQDA, KindGNB:
					got = quadForm(m.Phi[k], xt)
					c := mat.NewSymDense(4, nil)
					c.CopySym(cov[k])
					if kind == KindGNB {
						for a := 0; a < 4; a++ {
							for b := a + 1; b < 4; b++ {
								c.SetSym(a, b, 0)
							}
						}
					}
					var inv mat.Dense
					if err := inv.Inverse(c); err != nil {
						t.Fatal(err)
					}
					var pd mat.VecDense
					pd.MulVec(&inv, diff)
					want = mat.Dot(diff, &pd) + math.Log(mat.Det(c)) - 2*math.Log(prior[k])
				}
				if !near(got, want, 1e-7) && math.Abs(got-want) > 1e-9 {
					t.Fatalf("%s class %d at %v: model score %.12g, textbook %.12g", kind, k, x, got, want)
				}
			}
		}
	}
}

func dotv(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func quadForm(phi, x []float64) float64 {
	D := len(x)
	var q float64
	for i := 0; i < D; i++ {
		for j := 0; j < D; j++ {
			q += x[i] * phi[i*D+j] * x[j]
		}
	}
	return q
}

// TestDenoiseRecoversSpikes: Σ = diag(θ₁, θ₂, τ, …) plus symmetric Gaussian
// noise of off-diagonal sd s (edge 2s√d well below θ): the estimate puts
// θ̂ within 5 % of θ (the raw eigenvalue is biased up by s²d/θ) and every
// bulk eigenvalue at the trace-based τ̂ within 10 %.
func TestDenoiseRecoversSpikes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const d = 60
	theta := []float64{4, 2}
	const tau, s = 0.2, 0.05 // edge 2s√d = 0.77
	full := make([]float64, d*d)
	for i := 0; i < d; i++ {
		v := tau
		if i < len(theta) {
			v = theta[i]
		}
		full[i*d+i] = v + math.Sqrt2*s*rng.NormFloat64()
		for j := i + 1; j < d; j++ {
			e := s * rng.NormFloat64()
			full[i*d+j], full[j*d+i] = e, e
		}
	}
	sp := denoise(full, d, s, 1)
	var spikes, bulk []float64
	for _, v := range sp.vals {
		if v > 1 {
			spikes = append(spikes, v)
		} else {
			bulk = append(bulk, v)
		}
	}
	if len(spikes) != 2 {
		t.Fatalf("found %d spikes %v, want 2", len(spikes), spikes)
	}
	hi, lo := math.Max(spikes[0], spikes[1]), math.Min(spikes[0], spikes[1])
	if !near(hi, theta[0], 0.05) || !near(lo, theta[1], 0.05) {
		t.Errorf("spikes %v, %v, want %v", hi, lo, theta)
	}
	for _, v := range bulk {
		if !near(v, tau, 0.1) {
			t.Fatalf("bulk eigenvalue %v, want τ ≈ %v", v, tau)
		}
	}
	// Pure noise of huge level: everything is bulk, at the floor or τ̂.
	sp = denoise(full, d, 100, 1)
	for _, v := range sp.vals {
		if !(v > 0) || math.IsInf(v, 0) {
			t.Fatalf("eigenvalue %v is not a positive finite variance", v)
		}
	}
}

// TestModelShapesAndParams: lda has K weight vectors of length d + 1,
// qda/gnb K matrices of (d + 1)² entries (gnb's block diagonal); the model
// records the public calibration and predicts.
func TestModelShapesAndParams(t *testing.T) {
	ds := synthetic(300, 3, 4, 11, 0.5)
	for _, kind := range []string{KindLDA, KindQDA, KindGNB} {
		cfg := ds.config(kind, 1, 1e-5)
		p := mustPlan(t, cfg)
		m, err := p.Train(ds.x, ds.y)
		if err != nil {
			t.Fatal(err)
		}
		if m.Kind != kind || len(m.Classes) != 4 || m.Scaler.Dim() != 4 {
			t.Fatalf("%s: model kind %q, %d classes, scaler dim %d", kind, m.Kind, len(m.Classes), m.Scaler.Dim())
		}
		switch kind {
		case KindLDA:
			if len(m.Weights) != 4 || len(m.Weights[0]) != 4 || m.Phi != nil {
				t.Fatalf("lda: %d weight vectors of %d", len(m.Weights), len(m.Weights[0]))
			}
		default:
			if len(m.Phi) != 4 || len(m.Phi[0]) != 16 || m.Weights != nil {
				t.Fatalf("%s: %d matrices of %d entries", kind, len(m.Phi), len(m.Phi[0]))
			}
			if kind == KindGNB {
				for i := 0; i < 3; i++ {
					for j := 0; j < 3; j++ {
						if i != j && m.Phi[0][i*4+j] != 0 {
							t.Fatalf("gnb Φ has off-diagonal feature entry (%d, %d)", i, j)
						}
					}
				}
			}
		}
		for _, key := range []string{"epsilon", "delta", "sensitivity", "scale", "moment_share", "sd_sum"} {
			if _, ok := m.Params[key]; !ok {
				t.Errorf("%s: params lack %q", kind, key)
			}
		}
		if _, err := m.Predict([]float64{0, math.NaN(), 100}); err != nil {
			t.Errorf("%s: predict: %v", kind, err)
		}
	}
}

// TestUtility: on a well-separated synthetic task, ε = 10⁴ matches the
// noise-free model and ε = 1 with n = 20 000 is far above the majority
// class (0.34), for every kind and both noise families.
func TestUtility(t *testing.T) {
	// Floors relative to the noise-free model (gnb is misspecified here: 0.61
	// noise-free) and well above chance (1/3); a floor within a run-to-run sd
	// of the mean made the test flaky (pure-ε qda spreads 0.62–0.84 around a
	// noise-free 0.89, so its floor is 0.35 below, still far above chance).
	ds := synthetic(25000, 8, 3, 12, 0.2)
	a, b := splitIdx(len(ds.x), 1, 0.8)
	train, test := ds.subset(a), ds.subset(b)
	for _, kind := range []string{KindLDA, KindQDA, KindGNB} {
		clean := accuracy(t, exactModel(t, mustPlan(t, train.config(kind, 1, 1e-5)), train.x, train.y), test)
		for _, c := range []struct {
			eps, delta, min float64
		}{{1e4, 1e-5, clean - 0.01}, {1e4, 0, clean - 0.01}, {1, 1e-5, max(0.5, clean-0.1)}, {1, 0, max(0.5, clean-0.35)}} {
			m, err := mustPlan(t, train.config(kind, c.eps, c.delta)).Train(train.x, train.y)
			if err != nil {
				t.Fatal(err)
			}
			acc := accuracy(t, m, test)
			t.Logf("%s ε=%v δ=%v: accuracy %.3f (noise-free %.3f)", kind, c.eps, c.delta, acc, clean)
			if acc < c.min {
				t.Errorf("%s ε=%v δ=%v: accuracy %.3f below %.3f", kind, c.eps, c.delta, acc, c.min)
			}
		}
	}
}
