package lsq

import (
	"fmt"
	"math"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism/amp"
	"github.com/dpsql/dpsql/noise"
)

// Input perturbation (Fukuchi, Tran & Sakuma, Algorithms 1–2) for linear
// regression: q = x, p = y·x, s = y²/2, so ℓ(w; x, y) = ½wᵀqqᵀw − pᵀw + s
// = ½(xᵀw − y)². Every row i is perturbed as q̃ᵢ = qᵢ + uᵢ, p̃ᵢ = pᵢ − rᵢ with
// uᵢ ~ N(0, s²·I), Σrᵢ = b ~ N(0, σ_b²·I), and the model is
//
//	w = argmin_{‖w‖≤η} ½wᵀ(Σᵢ q̃ᵢq̃ᵢᵀ + Δ′·I)w − (Σᵢ p̃ᵢ)ᵀw.
//
// dpsql runs it on the table augmented with F public "phantom" rows
// √τ·eⱼ with label 0 (τ = Δ_in/2, at least a public minimum for the
// Cholesky; Δ′ = Δ_in − τ ≥ 0): their Gram matrix τI
// makes S + τI positive definite, so the exact-in-distribution O(F³)
// sampler below can use a Cholesky factor (explicit error bounds) instead
// of a PSD square root. The phantom rows are data-independent and
// perturbed like every row, so the proof below covers them.
//
// The calibration of s and σ_b follows the corrected proof in
// docs/mechanisms/lsq.md §7: the paper's Lemma 1 bounds
// wᵀ(UᵀU + UᵀQ + QᵀU)w for one fixed w (a uniform bound over w is needed),
// takes ‖Q‖_F ≤ √d·λ (it is up to √(nλ)), and lets the differing row's own
// noise enter the "data-independent" regulariser. Here, conditionally on U:
//
//   - the rows other than the differing one (n − 1 real, F phantom) give a
//     Hessian Σ_{i≠n} q̃ᵢq̃ᵢᵀ ⪰ U₋ᵀP⊥U₋ whose smallest eigenvalue is at least
//     s²(√(n−1) − √F − t)² except with probability 2e^(−t²/2)
//     (Davidson–Szarek, as in Vershynin's Cor. 5.35), for any data;
//   - the differing row has ‖q̃ₙ‖ ≤ ρ = κ̂ + ū, ū = s·√(F + 2√(Fx) + 2x),
//     except with probability e^(−x) (Laurent–Massart);
//   - on that event Kifer et al.'s argument applies to the perturbed rows with
//     smoothness ρ² and gradient difference ρ²η + 2κ̂ lying in
//     span{xₙ, x′ₙ, uₙ} (k = 3), and b ~ N(0, σ_b²I).
//
// δ₁ (the ideal mechanism's δ) is split as δ₁/2 for b, δ₁/4 for each event.
// The release is then made grid-safe by the output step (amp).
type inputPlan struct {
	eta    float64 // radius of the ball ‖w‖ ≤ η
	ridge  float64 // Δ_in: τ (phantom rows) + Δ′ (explicit)
	tau    float64 // Gram of the phantom rows, τ = max(Δ_in/2, public Cholesky minimum)
	s      float64 // standard deviation of each entry of uᵢ
	sigmaB float64 // σ_b of b = Σᵢ rᵢ
	n, f   int
	muMax  float64 // public bracket of ballSolve's multiplier
	step   amp.Step
}

// inputCal is the public calibration of input perturbation for one n.
type inputCal struct {
	s, sigmaU, rho, sigmaB float64
}

// calibrateInput returns the smallest per-entry standard deviation s of U
// for which the other rows alone supply Kifer's strong convexity 2ρ²/ε
// (ρ = κ̂ + c₂s the bound on the differing perturbed row), and σ_b for the
// resulting gradient difference ρ²η + 2κ̂. Conditions of the paper
// (n ≥ 16 log(8/δ), 1 − 2a > 0 with a = √(log(2/γ)/n), γ = δ/2) are
// enforced too.
func calibrateInput(n, f int, eps, delta, eta float64) (inputCal, error) {
	if float64(n) < 16*math.Log(8/delta) {
		return inputCal{}, fmt.Errorf("n = %d is below 16·log(8/δ) = %.1f (Fukuchi et al. Theorem 2)", n, 16*math.Log(8/delta))
	}
	if a := math.Sqrt(math.Log(4/delta) / float64(n)); 1-2*a <= 0 {
		return inputCal{}, fmt.Errorf("n = %d gives 1 − 2a ≤ 0 (Algorithm 1)", n)
	}
	t := math.Sqrt(2 * math.Log(8/delta)) // 2e^(−t²/2) = δ/4
	x := math.Log(4 / delta)              // e^(−x) = δ/4
	ff := float64(f)
	// n − 1 other real rows and F phantom rows: P⊥ has rank ≥ n − 1.
	rest := float64(n - 1)
	if rest <= ff {
		return inputCal{}, fmt.Errorf("n = %d is too small for %d features", n, f)
	}
	c1 := math.Sqrt(rest) - math.Sqrt(ff) - t
	c2 := math.Sqrt(ff + 2*math.Sqrt(ff*x) + 2*x)
	a2 := c1*c1 - 2*c2*c2/eps
	if c1 <= 0 || a2 <= 0 {
		return inputCal{}, fmt.Errorf("n = %d is too small for input perturbation at ε = %v, δ = %v with %d features", n, eps, delta, f)
	}
	// c₁²s² ≥ (2/ε)(κ̂ + c₂s)²  ⇔  a₂s² − (4κ̂c₂/ε)s − 2κ̂²/ε ≥ 0.
	k := kappaHat
	a1 := -4 * k * c2 / eps
	s := (-a1 + math.Sqrt(a1*a1+8*k*k*a2/eps)) / (2 * a2) * (1 + 1e-12)
	rho := k + c2*s
	sigmaB, err := objGaussSigma(rho*rho*eta+2*k, eps, delta/2, 3)
	if err != nil {
		return inputCal{}, err
	}
	return inputCal{s: s, sigmaU: s * math.Sqrt(float64(n)), rho: rho, sigmaB: sigmaB}, nil
}

// MinInputN returns the smallest row count for which the ideal input
// perturbation can be calibrated with F features (intercept included) at
// (ε, δ) and bound η, after the smallest output-step share (public; used
// for error messages). It returns 0 if ε or δ are invalid.
func MinInputN(f int, eps, delta, eta float64) int {
	if !(eps > 0) || !(delta > 0 && delta < 1) || !(eta > 0) || f < 1 {
		return 0
	}
	rho := outputShares[0]
	e1, d1 := eps*(1-rho), delta*(1-rho)*(1-1e-9)
	ok := func(n int) bool {
		_, err := calibrateInput(n, f, e1, d1, eta)
		return err == nil && n-f+1 >= noise.MinChiDegrees
	}
	hi := 2
	for !ok(hi) {
		if hi > 1<<40 {
			return 0
		}
		hi *= 2
	}
	lo := hi / 2
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// paperInputSigmas returns σ_u (the lower bound of Algorithm 1) and σ_b as
// printed in the paper, with λ = 1 and ζ = η + 1, for comparison only.
func paperInputSigmas(n, f int, eps, delta, eta float64) (sigmaU, sigmaB float64) {
	gamma := delta / 2
	a := math.Sqrt(math.Log(2/gamma) / float64(n))
	d := float64(f)
	sigmaU = (math.Sqrt(2*d)*a + math.Sqrt(2*d*a*a+(2/eps)*(1-2*a))) / (1 - 2*a)
	zeta := eta + 1
	sigmaB = zeta * math.Sqrt(8*math.Log(2/(delta/2))+4*eps) / eps
	return sigmaU, sigmaB
}

// inputNormals is the number of coupled normal draws of one release: A
// (F²), the strictly lower part of L (F(F−1)/2) and b (F).
func inputNormals(f int) int { return f*f + f*(f-1)/2 + f }

func (t *Trainer) planInput(cm common) error {
	cfg := cm.cfg
	if err := requireLinear(cfg); err != nil {
		return err
	}
	if cfg.Delta == 0 {
		return fmt.Errorf("input perturbation needs delta > 0")
	}
	t.fm = newFeatureMap(cm.scaler, nil)
	f := t.fm.f
	eta := cfg.Eta
	if eta == 0 {
		eta = math.Sqrt(float64(f))
	}
	if nu := cfg.N - f + 1; nu < noise.MinChiDegrees {
		return fmt.Errorf("n = %d is too small for input perturbation with %d features (the Wishart sampler needs n − F + 1 ≥ %d)", cfg.N, f, noise.MinChiDegrees)
	}
	ratio := float64(inputNormals(f))*noise.CoupledNormalRatio + float64(f)*noise.CoupledChiRatio
	// Typical region: every normal within 256 sd, every χ draw in its region,
	// and three norm events of probability ≤ e^(−x) = 2⁻¹⁰⁰⁰·e^(−ε) each.
	tail := float64(inputNormals(f)+3)*noise.CoupledNormalTail + float64(f)*noise.ChiTail(cfg.N-f+1)
	sp, err := chooseShare(cfg.Epsilon, cfg.Delta, ratio, tail, func(sh share) (*inputPlan, float64, error) {
		return inputCandidate(cfg, f, eta, sh)
	})
	if err != nil {
		if m := MinInputN(f, cfg.Epsilon, cfg.Delta, eta); m > cfg.N {
			return fmt.Errorf("%w; it needs n ≥ %d", err, m)
		}
		return err
	}
	p, sh := sp.plan, sp.share
	t.lambda = p.ridge / float64(cfg.N)
	t.in = p
	cal, _ := calibrateInput(cfg.N, f, sh.epsIdeal, sh.deltaIdeal, eta)
	pu, pb := paperInputSigmas(cfg.N, f, sh.epsIdeal, sh.deltaIdeal, eta)
	t.params = map[string]float64{
		"eta": eta, "input_delta": p.ridge, "phantom_tau": p.tau, "kifer_delta": 2 * lossSmoothness / sh.epsIdeal,
		"sigma_u": cal.sigmaU, "sigma_b": cal.sigmaB, "row_norm_bound": cal.rho,
		"paper_sigma_u": pu, "paper_sigma_b": pb,
		"epsilon_objective": sh.epsIdeal, "delta_objective": sh.deltaIdeal,
		"coupling_slack": sh.ratio, "radius": p.step.Radius,
		"output_epsilon": p.step.Epsilon, "output_delta": p.step.Delta, "output_sigma": p.step.Scale,
	}
	t.events = []budget.Event{sh.idealEvent(), p.step.Event()}
	return nil
}

// inputCandidate plans input perturbation for one split of (ε, δ): the
// ideal calibration, the ridge split τ + Δ′, the a-priori radius between the
// computed minimiser and the ideal one (docs/mechanisms/lsq.md §7, §9) and
// the output step. It returns the plan and the public utility proxy.
func inputCandidate(cfg Config, f int, eta float64, sh share) (*inputPlan, float64, error) {
	n := cfg.N
	cal, err := calibrateInput(n, f, sh.epsIdeal, sh.deltaIdeal, eta)
	if err != nil {
		return nil, 0, err
	}
	if !(cal.sigmaB > 0) || cal.sigmaB > 1e290 {
		return nil, 0, fmt.Errorf("noise scale σ_b = %v is out of range", cal.sigmaB)
	}
	p := &inputPlan{eta: eta, s: cal.s, sigmaB: cal.sigmaB, n: n, f: f}
	if cfg.Lambda == 0 {
		p.ridge = autoRidge(f, cal.sigmaB, eta)
	} else {
		p.ridge = cfg.Lambda * float64(n)
	}
	if !(p.ridge < 1e300) {
		return nil, 0, fmt.Errorf("lambda %v is too large", cfg.Lambda)
	}
	// τ = Δ_in/2, but never below the public minimum that makes the
	// Cholesky of S + τI certain to succeed (with a factor 4 of margin);
	// if that exceeds Δ_in, the total ridge is τ (a public, slightly larger
	// ridge than asked for).
	b0 := inputBounds(n, f, cfg.AnyOrderSums, p.s, 0, 0, p.sigmaB, sh.eps)
	p.tau = math.Max(p.ridge/2, 4*(choleskyFloor(f, b0.trA)+b0.eRR))
	explicit := math.Max(p.ridge-p.tau, 0)
	p.ridge = p.tau + explicit
	b := inputBounds(n, f, cfg.AnyOrderSums, p.s, p.tau, explicit, p.sigmaB, sh.eps)
	if !(p.tau >= choleskyFloor(f, b.trA)+b.eRR) {
		return nil, 0, fmt.Errorf("ridge %v is too small for a certified float64 solve with n = %d and %d features (increase lambda)", p.ridge, n, f)
	}
	// λ_min of the ideal Hessian: the explicit ridge plus the Wishart part,
	// λ_min(BᵀB) ≥ s²(√n − √F − √(2x))² except with probability e^(−x)
	// (Davidson–Szarek), x = TailLevel(ε).
	x := amp.TailLevel(sh.eps)
	wl := math.Max(math.Sqrt(float64(n))-math.Sqrt(float64(f))-math.Sqrt(2*x), 0)
	mStar := explicit + p.s*p.s*wl*wl
	if !(mStar > 0) {
		return nil, 0, fmt.Errorf("ridge %v is too small for a certified float64 solve with n = %d and %d features (increase lambda)", p.ridge, n, f)
	}
	r1 := strongMonotoneBound(mStar, b.eH, b.eC, eta)
	r2, err := ballSolveBound(f, b.trH, mStar-b.eH, eta)
	if err != nil {
		return nil, 0, fmt.Errorf("%w (increase lambda)", err)
	}
	p.muMax = 2 * b.cMax / eta * (1 + 4*unitRoundoff)
	if p.step, err = amp.NewGaussian(r1+r2, f, sh.epsOut, sh.deltaOut); err != nil {
		return nil, 0, err
	}
	proxy := math.Hypot(p.sigmaB/(float64(n)/float64(f)+p.ridge), p.step.Scale)
	return p, proxy, nil
}

// inputErr holds the public a-priori bounds of one input-perturbation plan.
type inputErr struct {
	trA  float64 // tr(Ŝ + τI) bound
	eRR  float64 // ‖R̂ᵀR̂ − (S + τI)‖
	eH   float64 // ‖Ĥ − H*‖ on the typical region
	eC   float64 // ‖ĉ′ − c*‖ on the typical region
	trH  float64 // tr(Ĥ) bound on the typical region
	cMax float64 // ‖ĉ′‖ bound for every implemented draw
}

// inputBounds derives the a-priori bounds of docs/mechanisms/lsq.md §7
// ("Floating point and coupling") from public quantities: n, F, s, τ, Δ′,
// σ_b and the tail level x = TailLevel(ε) of the typical region, on which
// ‖Ã‖²_F ≤ s²·χ²-bound(F²), ‖L*‖²_F ≤ χ²-bound(ν_tot), each coupled normal
// is within 256 standard deviations and each χ draw within its region.
func inputBounds(n, f int, anyOrder bool, s, tau, explicit, sigmaB, eps float64) inputErr {
	u := unitRoundoff
	ff := float64(f)
	gS := gammaN(sumDepth(n, anyOrder) + 1)
	gF1 := gammaN(f + 1)
	gF := gammaN(f)
	nk := float64(n) * kappaHat
	nk2 := nk * kappaHat
	x := amp.TailLevel(eps)
	var e inputErr
	// Cholesky of A_τ = fl(Ŝ + τI): R̂ᵀR̂ = A_τ + ΔA, ‖ΔA‖ ≤ γ_{F+1}‖R̂‖²_F,
	// ‖R̂‖²_F ≤ tr(A_τ)/(1 − γ_{F+1}).
	e.trA = (nk2*(1+gS) + ff*tau) * (1 + u)
	rHatF2 := e.trA / (1 - gF1)
	e.eRR = gS*nk2 + u*(nk2*(1+gS)+tau) + gF1*rHatF2
	// Polar coupling R̂ = Oᵀ(R̂ᵀR̂)^{1/2}: distance to (S + τI)^{1/2}.
	dR := e.eRR / (math.Sqrt(math.Max(tau-e.eRR, 0)) + math.Sqrt(tau))
	rStar := math.Sqrt(nk2 + tau)
	aT := s * math.Sqrt(amp.ChiSquareUpper(f*f, x))
	dA := ff * s * (0x1p-41 + noise.CoupledNormalMax*u) * (1 + u)
	g1 := e.eRR + 2*(dR*(aT+dA)+rStar*dA) + dA*(2*aT+dA)
	mF := math.Sqrt(rHatF2) + aT + dA
	g1fl := u*mF*(2*mF+u*mF) + gF*(mF*(1+u))*(mF*(1+u))
	// Bartlett factor L: F χ draws (ν = n − i) and F(F−1)/2 normals.
	nuTot := f * (f - 1) / 2
	for i := 0; i < f; i++ {
		nuTot += n - i
	}
	lT := math.Sqrt(amp.ChiSquareUpper(nuTot, x))
	chiDisp := 0x1p-41 + u*(2*math.Sqrt(float64(n))+noise.ChiDeviationMax)
	dL := math.Sqrt(ff*(ff-1)/2)*0x1p-41 + math.Sqrt(ff)*chiDisp
	l2 := (lT + dL) * (lT + dL)
	s2 := s * s
	w := s2 * (dL*(2*lT+dL) + gF*l2 + 3*u*l2*(1+gF))
	gStore := mF*mF*(1+2*gF+4*u) + s2*l2*(1+2*gF+4*u)
	hfl := u*gStore*(1+u) + u*(gStore+explicit)
	e.eH = (g1 + g1fl + w + hfl) * (1 + 1e-9)
	e.trH = (gStore + ff*explicit) * (1 + 2*u)
	bMax := noise.CoupledNormalMax * sigmaB
	e.eC = gS*nk + math.Sqrt(ff)*(sigmaB*0x1p-41+u*bMax+u*(nk*(1+gS)+bMax))
	e.cMax = (nk*(1+gS) + math.Sqrt(ff)*0x1p13*sigmaB) * (1 + 4*u)
	return e
}

// perturbedGram draws Q̃ᵀQ̃ = Σᵢ(xᵢ + uᵢ)(xᵢ + uᵢ)ᵀ over the n real and F
// phantom rows, uᵢ ~ N(0, s²I), from S = XᵀX alone, exactly in
// distribution (for the continuous normals; the coupled draws are within
// their cells): write the augmented data X_τ = Q_X·R with Q_X (n+F)×F
// orthonormal and RᵀR = S + τI; U = Q_X·A + Q⊥·B with A (F×F) and B (n×F)
// independent with i.i.d. N(0, s²) entries (rotation invariance), so
// (X_τ + U)ᵀ(X_τ + U) = (R + A)ᵀ(R + A) + BᵀB, BᵀB ~ Wishart_F(s²I, n). Any
// R with RᵀR = S + τI gives the same law (R′ = O·R, OᵀA ~ A); we use the
// Cholesky factor. BᵀB is drawn by the Bartlett decomposition s²·LLᵀ, L
// lower triangular with L_ii ~ χ_{n−i} (0-based i) and L_ij ~ N(0, 1).
func (p *inputPlan) perturbedGram(st *mat.SymDense) *mat.SymDense {
	f := p.f
	ch := newChol(f)
	ch.load(st, p.tau)
	if !ch.factor() {
		// Impossible under the plan's floor on τ (Demmel's condition).
		logrus.Error("lsq: Cholesky of S + τI failed despite the a-priori floor (please report)")
		clear(ch.a)
	}
	nrm := noise.StandardNormalVec(f*f + f*(f-1)/2)
	m := mat.NewDense(f, f, nil)
	for i := 0; i < f; i++ {
		for j := 0; j < f; j++ {
			r := 0.0
			if j >= i {
				r = ch.upper(i, j)
			}
			m.Set(i, j, r+p.s*nrm[i*f+j])
		}
	}
	off := nrm[f*f:]
	l := mat.NewDense(f, f, nil)
	k := 0
	for i := 0; i < f; i++ {
		l.Set(i, i, noise.Chi(p.n-i))
		for j := 0; j < i; j++ {
			l.Set(i, j, off[k])
			k++
		}
	}
	g := mat.NewSymDense(f, nil)
	g.SymOuterK(1, m.T()) // (R + A)ᵀ(R + A)
	w := mat.NewSymDense(f, nil)
	w.SymOuterK(p.s*p.s, l) // s²·L·Lᵀ
	g.AddSym(g, w)
	return g
}

// releaseInput perturbs the sufficient statistics as Algorithm 1 would
// (summed over rows), solves Algorithm 2's constrained problem by
// ballSolve and releases the result through the output step.
// Σᵢ p̃ᵢ = Σᵢ y′ᵢxᵢ − b with b = σ_b·N̂: the sum of n independent
// N(0, σ_b²/n·I) draws is one N(0, σ_b²I) draw in distribution.
func (t *Trainer) releaseInput(st stats) ([]float64, error) {
	p := t.in
	g := p.perturbedGram(st.s)
	nrm := noise.StandardNormalVec(p.f)
	c := make([]float64, p.f)
	for i := range c {
		c[i] = st.c[i] - p.sigmaB*nrm[i]
	}
	theta, steps := ballSolve(shifted(g, p.ridge-p.tau), c, p.eta, p.muMax)
	t.solverSteps = steps
	if err := p.step.Apply(theta); err != nil {
		return nil, err
	}
	return theta, nil
}

// solve is the noise-free reference (tests and results): the ball
// minimiser with the Gram matrix S + Δ_in·I (U = 0, b = 0).
func (p *inputPlan) solve(g *mat.SymDense, c []float64) ([]float64, error) {
	w, _ := ballSolve(shifted(g, p.ridge), c, p.eta, p.muMax)
	return w, nil
}
