package lsq

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/noise"
)

// Input perturbation (Fukuchi, Tran & Sakuma, Algorithms 1–2) for linear
// regression: q = x, p = y·x, s = y²/2, so ℓ(w; x, y) = ½wᵀqqᵀw − pᵀw + s
// = ½(xᵀw − y)². Every row i is perturbed as q̃ᵢ = qᵢ + uᵢ, p̃ᵢ = pᵢ − rᵢ with
// uᵢ ~ N(0, σ_u²/n·I), rᵢ ~ N(0, σ_b²/n·I), and the model is
//
//	w = argmin_{‖w‖≤η} (1/n)Σᵢ(½wᵀq̃ᵢq̃ᵢᵀw − p̃ᵢᵀw + sᵢ) + (Δ_in/2n)‖w‖².
//
// The calibration of σ_u and σ_b follows the corrected proof in
// docs/mechanisms/lsq.md ("Input perturbation"): the paper's Lemma 1 bounds
// wᵀ(UᵀU + UᵀQ + QᵀU)w for one fixed w (a uniform bound over w is needed),
// takes ‖Q‖_F ≤ √d·λ (it is up to √(nλ)), and lets the differing row's own
// noise enter the "data-independent" regulariser. Here, conditionally on U:
//
//   - the rows other than the differing one give a Hessian
//     Σ_{i≠n} q̃ᵢq̃ᵢᵀ ⪰ U₋ᵀP⊥U₋ whose smallest eigenvalue is at least
//     (σ_u²/n)(√(n−1−F) − √F − t)² except with probability 2e^(−t²/2)
//     (Davidson–Szarek, as in Vershynin's Cor. 5.35), for any data;
//   - the differing row has ‖q̃ₙ‖ ≤ ρ = 1 + ū, ū = (σ_u/√n)·√(F + 2√(Fx) + 2x),
//     except with probability e^(−x) (Laurent–Massart);
//   - on that event Kifer et al.'s argument applies to the perturbed rows with
//     smoothness ρ² and gradient difference ρ²η + 2 lying in span{xₙ, x′ₙ, uₙ}
//     (k = 3), and b = Σrᵢ ~ N(0, σ_b²I).
//
// δ is split as δ/2 for b, δ/4 for each of the two events.
type inputPlan struct {
	eta    float64 // radius of the ball ‖w‖ ≤ η
	ridge  float64 // Δ_in = Δ − 2λ/ε > 0
	s      float64 // standard deviation of each entry of uᵢ: σ_u/√n
	sigmaB float64 // σ_b of b = Σᵢ rᵢ
	n, f   int
}

// inputCal is the public calibration of input perturbation for one n.
type inputCal struct {
	s, sigmaU, rho, sigmaB float64
}

// calibrateInput returns the smallest per-entry standard deviation s of U
// for which the other rows alone supply Kifer's strong convexity 2ρ²/ε
// (ρ = 1 + c₂s the bound on the differing perturbed row), and σ_b for the
// resulting gradient difference ρ²η + 2. Conditions of the paper
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
	rest := float64(n - 1 - f)
	if rest <= 0 {
		return inputCal{}, fmt.Errorf("n = %d is too small for %d features", n, f)
	}
	c1 := math.Sqrt(rest) - math.Sqrt(ff) - t
	c2 := math.Sqrt(ff + 2*math.Sqrt(ff*x) + 2*x)
	a2 := c1*c1 - 2*c2*c2/eps
	if c1 <= 0 || a2 <= 0 {
		return inputCal{}, fmt.Errorf("n = %d is too small for input perturbation at ε = %v, δ = %v with %d features", n, eps, delta, f)
	}
	// c₁²s² ≥ (2/ε)(1 + c₂s)²  ⇔  a₂s² − (4c₂/ε)s − 2/ε ≥ 0.
	a1 := -4 * c2 / eps
	s := (-a1 + math.Sqrt(a1*a1+8*a2/eps)) / (2 * a2) * (1 + 1e-12)
	rho := 1 + c2*s
	sigmaB, err := objGaussSigma(rho*rho*eta+2, eps, delta/2, 3)
	if err != nil {
		return inputCal{}, err
	}
	return inputCal{s: s, sigmaU: s * math.Sqrt(float64(n)), rho: rho, sigmaB: sigmaB}, nil
}

// MinInputN returns the smallest row count for which input perturbation can
// be planned with F features (intercept included) at (ε, δ) and bound η
// (public; used for error messages and by callers that want to check
// first). It returns 0 if ε or δ are invalid.
func MinInputN(f int, eps, delta, eta float64) int {
	if !(eps > 0) || !(delta > 0 && delta < 1) || !(eta > 0) || f < 1 {
		return 0
	}
	ok := func(n int) bool { _, err := calibrateInput(n, f, eps, delta, eta); return err == nil }
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
	cal, err := calibrateInput(cfg.N, f, cfg.Epsilon, cfg.Delta, eta)
	if err != nil {
		if m := MinInputN(f, cfg.Epsilon, cfg.Delta, eta); m > 0 {
			return fmt.Errorf("%w; it needs n ≥ %d", err, m)
		}
		return err
	}
	p := &inputPlan{eta: eta, s: cal.s, sigmaB: cal.sigmaB, n: cfg.N, f: f}
	if cfg.Lambda == 0 {
		p.ridge = autoRidge(f, cal.sigmaB, eta)
	} else {
		p.ridge = cfg.Lambda * float64(cfg.N)
	}
	if cal.sigmaB/(cal.rho*cal.rho*eta+2) > 1/noise.GaussianMinRatio {
		return fmt.Errorf("noise multiplier exceeds what the Gaussian sampler supports")
	}
	t.lambda = p.ridge / float64(cfg.N)
	t.in = p
	pu, pb := paperInputSigmas(cfg.N, f, cfg.Epsilon, cfg.Delta, eta)
	t.params = map[string]float64{
		"eta": eta, "input_delta": p.ridge, "kifer_delta": 2 * lossSmoothness / cfg.Epsilon,
		"sigma_u": cal.sigmaU, "sigma_b": cal.sigmaB, "row_norm_bound": cal.rho,
		"paper_sigma_u": pu, "paper_sigma_b": pb,
	}
	t.events = []budget.Event{{Kind: budget.Generic, Epsilon: cfg.Epsilon, Delta: cfg.Delta}}
	return nil
}

// solve minimises ½wᵀ(G + Δ_in·I)w − cᵀw over ‖w‖ ≤ η for the (perturbed)
// Gram matrix G = Σq̃ᵢq̃ᵢᵀ and c = Σp̃ᵢ: n·J^in up to a constant.
func (p *inputPlan) solve(g *mat.SymDense, c []float64) ([]float64, error) {
	return solveBall(g, p.ridge, c, p.eta)
}

// perturbedGram draws Q̃ᵀQ̃ = Σᵢ(xᵢ + uᵢ)(xᵢ + uᵢ)ᵀ, uᵢ ~ N(0, s²I), from
// S = XᵀX alone, exactly in distribution: write X = Q_X·R with Q_X (n×F)
// orthonormal columns and RᵀR = S; U = Q_X·A + Q⊥·B with A (F×F) and B
// ((n−F)×F) independent with i.i.d. N(0, s²) entries (rotation invariance),
// so (X + U)ᵀ(X + U) = (R + A)ᵀ(R + A) + BᵀB, BᵀB ~ Wishart_F(s²I, n − F).
// Any R with RᵀR = S gives the same law (R′ = O·R, OᵀA ~ A); we use the
// symmetric square root. BᵀB is drawn by the Bartlett decomposition
// s²·LLᵀ, L lower triangular with L_ii² ~ χ²_{n−F−i+1}, L_ij ~ N(0, 1).
// This replaces n·F Gaussian draws by F² + F(F−1)/2 Gaussian and F χ²
// draws.
func (p *inputPlan) perturbedGram(s *mat.SymDense) (*mat.SymDense, error) {
	f := p.f
	if p.s == 0 {
		return s, nil
	}
	r, err := psdSqrt(s)
	if err != nil {
		return nil, err
	}
	a := make([]float64, f*f)
	if err := noise.AddGaussianVec(a, p.s); err != nil {
		return nil, fmt.Errorf("drawing U: %w", err)
	}
	ra := mat.NewDense(f, f, a)
	ra.Add(ra, r)
	l := mat.NewDense(f, f, nil)
	off := make([]float64, f*(f-1)/2)
	if len(off) > 0 {
		if err := noise.AddGaussianVec(off, p.s); err != nil {
			return nil, fmt.Errorf("drawing U: %w", err)
		}
	}
	k := 0
	dof := p.n - f
	for i := 0; i < f; i++ {
		chi2, err := noise.Gamma(float64(dof-i)/2, 2)
		if err != nil {
			return nil, fmt.Errorf("drawing U: %w", err)
		}
		l.Set(i, i, p.s*math.Sqrt(chi2))
		for j := 0; j < i; j++ {
			l.Set(i, j, off[k])
			k++
		}
	}
	g := mat.NewSymDense(f, nil)
	g.SymOuterK(1, ra.T()) // (R + A)ᵀ(R + A)
	w := mat.NewSymDense(f, nil)
	w.SymOuterK(1, l) // L·Lᵀ
	g.AddSym(g, w)
	return g, nil
}

// releaseInput perturbs the sufficient statistics as Algorithm 1 would
// (summed over rows) and returns Algorithm 2's exact constrained minimiser.
// Σᵢ p̃ᵢ = Σᵢ y′ᵢxᵢ − b with b = Σᵢ rᵢ ~ N(0, σ_b²I): the sum of n
// independent N(0, σ_b²/n·I) draws is one N(0, σ_b²I) draw in distribution.
func (t *Trainer) releaseInput(st stats) ([]float64, error) {
	g, err := t.in.perturbedGram(st.s)
	if err != nil {
		return nil, err
	}
	b := make([]float64, t.fm.f)
	if err := noise.AddGaussianVec(b, t.in.sigmaB); err != nil {
		return nil, fmt.Errorf("drawing b: %w", err)
	}
	c := make([]float64, len(b))
	for i := range c {
		c[i] = st.c[i] - b[i]
	}
	return t.in.solve(g, c)
}
