package lsq

import (
	"math"
	"math/rand"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/audit"
)

// objGaussSigmaRounded: without rounding it is objGaussSigma on the
// first event's δ; the bound L/β + s²/(2β²) equals ε at the returned β; β
// grows with ξ; and on samples of the good event the privacy loss of any
// gradient difference v = v₂ + v_E (v₂ in the span of the two rows, ‖v₂‖ ≤
// ζ_D, ‖v_E‖ ≤ ξ) stays within ε.
func TestObjGaussSigmaRounded(t *testing.T) {
	const f, eps, delta = 5, 0.7, 1e-6
	zeta := lossGradDiff(3)
	b0, err := objGaussSigmaRounded(zeta, 0, eps, delta, f)
	if err != nil {
		t.Fatal(err)
	}
	// objGaussSigma takes the whole ε₁ (half for the noise) as its argument.
	ref, err := objGaussSigma(zeta, 2*eps, delta*(1-roundedFraction), 2)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(b0-ref) > 1e-12*ref {
		t.Fatalf("ξ = 0: β %v, objGaussSigma %v", b0, ref)
	}
	t2, _ := chi2Upper(2, delta*(1-roundedFraction))
	tf2, _ := chi2Upper(f, delta*roundedFraction)
	prev := b0
	rng := rand.New(rand.NewSource(7))
	for _, xi := range []float64{1e-6, 0.01, 0.5, 3, 40} {
		beta, err := objGaussSigmaRounded(zeta, xi, eps, delta, f)
		if err != nil {
			t.Fatal(err)
		}
		l := math.Sqrt(t2)*zeta + math.Sqrt(tf2)*xi
		s := zeta + xi
		if got := l/beta + s*s/(2*beta*beta); math.Abs(got-eps) > 1e-12 {
			t.Fatalf("ξ = %v: bound %v at β = %v, want ε = %v", xi, got, beta, eps)
		}
		if !(beta > prev) {
			t.Fatalf("ξ = %v: β %v not above %v", xi, beta, prev)
		}
		prev = beta
		worst := 0.0
		for trial := 0; trial < 20000; trial++ {
			h, h2 := randUnit(rng, f), randUnit(rng, f)
			// v₂ in span{h, h′} with ‖v₂‖ = ζ_D, v_E anywhere with ‖v_E‖ = ξ,
			// b on the good event, pushed towards v (the worst sign).
			v2 := make([]float64, f)
			floats.AddScaled(v2, rng.NormFloat64(), h)
			floats.AddScaled(v2, rng.NormFloat64(), h2)
			floats.Scale(zeta/floats.Norm(v2, 2), v2)
			vE := randUnit(rng, f)
			floats.Scale(xi, vE)
			v := floats.AddTo(make([]float64, f), v2, vE)
			b := make([]float64, f)
			for i := range b {
				b[i] = beta * rng.NormFloat64()
			}
			floats.AddScaled(b, beta*math.Sqrt(t2)/zeta*0.9, v2)
			if projNorm(b, h, h2) > math.Sqrt(t2)*beta || floats.Norm(b, 2) > math.Sqrt(tf2)*beta {
				continue
			}
			loss := math.Abs(2*floats.Dot(b, v)+floats.Dot(v, v)) / (2 * beta * beta)
			worst = math.Max(worst, loss)
		}
		if !(worst > 0) || worst > eps {
			t.Fatalf("ξ = %v: largest loss on the good event %v, ε = %v", xi, worst, eps)
		}
		t.Logf("ξ = %v: β = %.4g (×%.4f of ξ = 0), largest sampled loss %.3f of ε", xi, beta, beta/b0, worst/eps)
	}
}

func randUnit(rng *rand.Rand, f int) []float64 {
	v := make([]float64, f)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	floats.Scale(1/floats.Norm(v, 2), v)
	return v
}

// projNorm is ‖Pb‖ for P the projection on span{h, h2}.
func projNorm(b, h, h2 []float64) float64 {
	q := append([]float64(nil), h2...)
	floats.AddScaled(q, -floats.Dot(q, h), h)
	nq := floats.Norm(q, 2)
	p1 := floats.Dot(b, h)
	if nq < 1e-12 {
		return math.Abs(p1)
	}
	p2 := floats.Dot(b, q) / nq
	return math.Hypot(p1, p2)
}

// jacobianRounded bounds |ln det(B + hhᵀ + E) − ln det(B + h′h′ᵀ + E′)|
// for B ⪰ reg·I, ‖h‖, ‖h′‖ ≤ 1 and ‖E‖, ‖E′‖ ≤ e: random instances and the
// extreme ones (E = ±e·I, one row zero).
func TestJacobianRounded(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, f := range []int{2, 5, 21} {
		for _, reg := range []float64{0.5, 3, 40} {
			for _, e := range []float64{1e-9, 1e-3, 0.1 * reg} {
				bound, err := jacobianRounded(reg, e, f)
				if err != nil {
					t.Fatal(err)
				}
				worst := 0.0
				for trial := 0; trial < 200; trial++ {
					b := mat.NewSymDense(f, nil)
					for i := 0; i < f; i++ {
						b.SetSym(i, i, reg)
					}
					if trial%2 == 1 { // plus a random PSD part
						for k := 0; k < 3; k++ {
							r := randUnit(rng, f)
							b.SymRankOne(b, 5*rng.Float64(), mat.NewVecDense(f, r))
						}
					}
					h, h2 := randUnit(rng, f), randUnit(rng, f)
					var e1, e2 *mat.SymDense
					switch trial % 4 {
					case 0, 1: // the extremes: +e·I against −e·I, one row zero
						e1, e2 = scaledEye(f, e), scaledEye(f, -e)
						for i := range h2 {
							h2[i] = 0
						}
					default:
						e1, e2 = randSym(rng, f, e), randSym(rng, f, e)
					}
					h1m := mat.NewSymDense(f, nil)
					h1m.AddSym(b, e1)
					h1m.SymRankOne(h1m, 1, mat.NewVecDense(f, h))
					h2m := mat.NewSymDense(f, nil)
					h2m.AddSym(b, e2)
					h2m.SymRankOne(h2m, 1, mat.NewVecDense(f, h2))
					d := math.Abs(logDet(t, h1m) - logDet(t, h2m))
					worst = math.Max(worst, d)
				}
				if worst > bound {
					t.Fatalf("F=%d reg=%v e=%v: log-det difference %v above the bound %v", f, reg, e, worst, bound)
				}
				if e == 0.1*reg {
					t.Logf("F=%d reg=%v e=%v: largest log-det difference %.3g = %.2f of the bound", f, reg, e, worst, worst/bound)
				}
			}
		}
	}
	if _, err := jacobianRounded(1, 0.3, 3); err == nil {
		t.Fatal("a rounding allowance of 0.3 against a ridge of 1 was accepted")
	}
}

func scaledEye(f int, v float64) *mat.SymDense {
	m := mat.NewSymDense(f, nil)
	for i := 0; i < f; i++ {
		m.SetSym(i, i, v)
	}
	return m
}

// randSym is a random symmetric matrix of spectral norm e.
func randSym(rng *rand.Rand, f int, e float64) *mat.SymDense {
	m := mat.NewSymDense(f, nil)
	for i := 0; i < f; i++ {
		for j := i; j < f; j++ {
			m.SetSym(i, j, rng.NormFloat64())
		}
	}
	var ev mat.EigenSym
	if !ev.Factorize(m, false) {
		panic("eigen")
	}
	vals := ev.Values(nil)
	norm := math.Max(math.Abs(vals[0]), math.Abs(vals[len(vals)-1]))
	m.ScaleSym(e/norm, m)
	return m
}

func logDet(t *testing.T, m *mat.SymDense) float64 {
	var ch mat.Cholesky
	if !ch.Factorize(m) {
		t.Fatal("not positive definite")
	}
	return ch.LogDet()
}

// TestObjectiveRoundedAudit audits objective perturbation planned for a
// backend's any-order sums, with the allowance inflated (auditExtraDepth:
// γ ≈ 1, so each sum may be off by ≈ n) and an adversary that uses all of
// it: the released statistics of the flip pair are pushed apart by the
// allowance along φ(x). The statistic is TestObjectiveAudit's φ(x)ᵀHθ. The
// plan passes at ε; the same plan with the β of exact sums (the rounding
// left out of the ideal mechanism) is caught.
func TestObjectiveRoundedAudit(t *testing.T) {
	const eps, delta, n = 1, 0.01, 20
	auditExtraDepth = 1 << 52
	defer func() { auditExtraDepth = 0 }()
	cfg := synthConfig(1, n, eps, delta)
	cfg.Method, cfg.Lambda, cfg.Eta, cfg.AnyOrderSums = MethodObjective, 50, 2, true
	x, y, x2, y2 := flipAtCorner(n)
	tr := mustPlan(t, cfg)
	gS := gammaN(sumDepth(n, true) + 1)
	accS, accC := gS*float64(n)*kappaHat*kappaHat, gS*float64(n)*kappaHat
	if !(accS > 10) {
		t.Fatalf("allowance %v: the audit needs a visible one", accS)
	}
	sampler := func(tr *Trainer) audit.Sampler {
		phi := tr.fm.scaler.Transform(nil, []float64{1})
		u := append([]float64(nil), phi...)
		floats.Scale(1/floats.Norm(u, 2), u)
		// Row n has label −1 in x, y and +1 in x2, y2: c differs by 2φ;
		// the adversary moves ĉ by ∓accC·u and Ŝ by ±accS·uuᵀ.
		perturb := func(st stats, sign float64) stats {
			st.s.SymRankOne(st.s, sign*accS, mat.NewVecDense(len(u), u))
			floats.AddScaled(st.c, -sign*accC, u)
			return st
		}
		sts := [2]stats{perturb(sufficientStats(x, y, tr.fm, tr.lm), 1), perturb(sufficientStats(x2, y2, tr.fm, tr.lm), -1)}
		h := shifted(sts[0].s, tr.obj.kifer+tr.obj.ridge)
		return func(nb int) float64 {
			w := releaseStats(t, tr, stats{s: mat.NewSymDense(len(u), append([]float64(nil), sts[nb].s.RawSymmetric().Data...)),
				c: append([]float64(nil), sts[nb].c...), n: n})
			hb := mat.NewVecDense(len(u), nil)
			hb.MulVec(h, mat.NewVecDense(len(u), w))
			return floats.Dot(phi, hb.RawVector().Data)
		}
	}
	cfgA := audit.Config{N: 30000, Delta: delta}
	audit.RequirePass(t, sampler(tr), eps, cfgA)
	broken := mustPlan(t, cfg)
	p := broken.Params()
	exactBeta, err := objGaussSigma(lossGradDiff(cfg.Eta), p["epsilon_objective"], p["delta_objective"], 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("β = %.4g with the allowance, %.4g without; allowance %.3g per sum", p["gaussian_sigma"], exactBeta, accS)
	broken.obj.beta = exactBeta
	audit.RequireCatch(t, sampler(broken), eps, cfgA)
}
