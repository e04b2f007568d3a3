package logreg

import (
	"fmt"
	"math"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/amp"
	"github.com/dpsql/dpsql/noise"
)

// Objective perturbation for pure ε (docs/mechanisms/logreg.md §9,
// "Objective perturbation"): Chaudhuri, Monteleoni & Sarwate (2011, Alg. 2)
// with Laplace noise, the multinomial Jacobian term of Iyengar et al. (2019,
// Thm 1) and the approximate-minima output step of mechanism/amp.
//
// The ideal mechanism draws b ∈ ℝ^D (D = K′F) with i.i.d. Laplace(β)
// coordinates and returns the exact minimiser of
//
//	J(θ) = Σᵢ ℓ(θ; xᵢ, yᵢ) + (Λ/2)‖θ‖² + bᵀθ.
//
// It is (ε_b + ε_J)-DP with ε_b = 2g₁/β (g₁ the ℓ₁ bound of one row's
// gradient) and ε_J = r·log(1 + t/(rΛ)) (r the rank and t the trace bound of
// one row's Hessian). The implementation draws b from coupled normals
// (b = β(N₁² + N₂² − N₃² − N₄²)/2 is Laplace(β) exactly), minimises J by
// projected gradient descent for a public number of steps and releases the
// iterate through amp.NewLaplace with a public a-priori radius.

// MethodGD and MethodObjective name Config.Method.
const (
	MethodGD        = "gd"
	MethodObjective = "objective"
)

// Public constants of the objective plan.
const (
	// ObjectiveOutputShare is ε_out/ε, the output step's share.
	ObjectiveOutputShare = 1.0 / 64
	// ObjectiveJacobianShare caps ε_J/ε: Λ ≥ t/(r·expm1(share·ε/r)).
	ObjectiveJacobianShare = 0.125
	// ObjectiveWork bounds the default T·n·D (multiply-adds of the solver
	// are about 4·T·n·D): Λ grows until the needed steps fit.
	ObjectiveWork = 1e10
	// ObjectiveRidgeScale is s in the statistical default
	// Λ_stat = s·√D·β/√F: the ridge balancing the noise ‖b‖/Λ against the
	// bias of a prior ‖θ‖ ≈ √F/s (weights 1/s on the [−1, 1] features).
	// s = 1/4 from the AUTO harness on synthetic training data (ε = 1,
	// n = 10⁴, d = 10: s = 1 gave 0.80 (K = 2) and 0.55 (K = 5), λ = 3·10⁻⁴
	// and 10⁻³ gave 0.83 and 0.68; docs/mechanisms/logreg.md §9).
	ObjectiveRidgeScale = 0.25
	// objectiveAccuracy is the solver's target radius relative to the
	// per-coordinate noise β/Λ the ideal mechanism adds to θ.
	objectiveAccuracy = 0x1p-20
)

// objPlan is the public plan of one objective-perturbation release.
type objPlan struct {
	d         int     // D = K′·F
	f, kp     int     // F and K′
	beta      float64 // Laplace scale of each bᵢ
	lambda    float64 // Λ = nλ, the ridge
	smooth    float64 // L_J = n·c·κ̂² + Λ
	steps     int     // T
	theta     float64 // Θ: ‖θ*‖ ≤ Θ, the projection radius
	epsB      float64 // ε_b = 2g₁/β
	epsJ      float64 // ε_J = r·log1p(t/(rΛ))
	slack     float64 // 2η, the coupling slack
	rSolve    float64 // a-priori ‖θ̂_T − θ*(b̂)‖
	rNoise    float64 // ‖θ*(b̂) − θ*(b*)‖ from the noise cells
	step      amp.Step
	rowL2     float64 // ℓ₂ bound of one row's gradient (κ̂ included)
	hessRank  int
	hessTrace float64
	gradL1Row float64
	capRatio  float64 // Λ over the default before the work cap (1: not raised)
}

// objConsts returns the loss constants for K′ vectors of F features:
// ℓ₂ and ℓ₁ bounds of one row's gradient r ⊗ x, and the trace bound t and
// rank r of one row's Hessian H (binary: σ(1−σ)xxᵀ, t = κ̂²/4, rank 1;
// multinomial: (diag p − ppᵀ) ⊗ xxᵀ, t = (1 − Σp²)‖x‖² ≤ (1 − 1/K)κ̂²,
// rank ≤ K − 1). The Jacobian term is ε_J = r·log(1 + t/(rΛ)): with B ⪰ ΛI
// the common part, det(B + H)/det(B + H′) ≤ det(I + B^(−½)HB^(−½)) ≤
// (1 + tr(B⁻¹H)/r)^r ≤ (1 + t/(rΛ))^r (AM–GM over the r non-zero
// eigenvalues).
func objConsts(f, kp int, binary bool) (l2, l1, t float64, rank int) {
	k2 := kappaHat * kappaHat
	sf := math.Sqrt(float64(f))
	if binary {
		return kappaHat, sf * kappaHat, k2 / 4, 1
	}
	return math.Sqrt2 * kappaHat, 2 * sf * kappaHat, (1 - 1/float64(kp)) * k2, kp - 1
}

// jacobianEps is ε_J = r·log1p(t/(rΛ)).
func jacobianEps(t float64, rank int, lam float64) float64 {
	r := float64(rank)
	return r * math.Log1p(t/(r*lam))
}

// planObjective calibrates the pure-ε objective perturbation from public
// (n, F, K, ε) and the optional ridge λ = Λ/n.
func planObjective(cfg Config, f, kp int, binary bool) (*objPlan, error) {
	if cfg.Delta != 0 {
		return nil, fmt.Errorf("method %q is the pure-ε method: use delta = 0 (or method %q)", MethodObjective, MethodGD)
	}
	if cfg.Steps != 0 || cfg.Horizon != 0 || cfg.Clip != 0 {
		return nil, fmt.Errorf("method %q takes no steps, horizon or clip", MethodObjective)
	}
	if math.IsNaN(cfg.Lambda) || cfg.Lambda < 0 || math.IsInf(cfg.Lambda, 0) {
		return nil, fmt.Errorf("lambda must be positive and finite (or 0 for the default), got %v", cfg.Lambda)
	}
	n := float64(cfg.N)
	eps := cfg.Epsilon
	p := &objPlan{d: kp * f, f: f, kp: kp}
	D := float64(p.d)
	p.rowL2, p.gradL1Row, p.hessTrace, p.hessRank = objConsts(f, kp, binary)
	// Coupling: 4D coupled normals.
	p.slack = 2 * 4 * D * noise.CoupledNormalRatio
	epsOut := ObjectiveOutputShare * eps
	// Λ: the statistical default, raised for the Jacobian cap and the work cap.
	r := float64(p.hessRank)
	lamJ := p.hessTrace / (r * math.Expm1(ObjectiveJacobianShare*eps/r)) * (1 + 1e-12)
	var lam float64
	if cfg.Lambda > 0 {
		lam = cfg.Lambda * n
		if lam < lamJ {
			return nil, fmt.Errorf("lambda %v is below the smallest ridge %v the Jacobian term allows at epsilon %v", cfg.Lambda, lamJ/n, eps)
		}
	} else {
		epsB0 := eps - epsOut - ObjectiveJacobianShare*eps - p.slack
		beta0 := 2 * p.gradL1Row / epsB0
		lam = math.Max(lamJ, ObjectiveRidgeScale*math.Sqrt(D)*beta0/math.Sqrt(float64(f)))
	}
	lam0 := lam
	maxSteps := math.Floor(ObjectiveWork / (n * D))
	for iter := 0; ; iter++ {
		if iter > 400 {
			return nil, fmt.Errorf("no ridge fits the work limit for n=%d, D=%d", cfg.N, p.d)
		}
		if err := p.fill(cfg.N, eps, epsOut, lam); err != nil {
			return nil, err
		}
		if cfg.Lambda > 0 || float64(p.steps) <= maxSteps {
			break
		}
		lam *= 1.25
	}
	p.capRatio = p.lambda / lam0
	if work := float64(p.steps) * n * D; work > MaxWork {
		return nil, fmt.Errorf("steps·n·K·F = %.3g exceeds the training limit %.3g; raise lambda", work, float64(MaxWork))
	}
	return p, nil
}

// fill computes everything for one ridge Λ.
func (p *objPlan) fill(nRows int, eps, epsOut, lam float64) error {
	n := float64(nRows)
	D := float64(p.d)
	p.lambda = lam
	p.epsJ = jacobianEps(p.hessTrace, p.hessRank, lam)
	p.epsB = eps - epsOut - p.epsJ - p.slack
	if !(p.epsB > 0) {
		return fmt.Errorf("epsilon %v leaves nothing for the noise after the Jacobian term %v", eps, p.epsJ)
	}
	// ‖b − b′‖₁ ≤ 2g₁ ⇒ the density ratio is at most e^(2g₁/β).
	p.beta = 2 * p.gradL1Row / p.epsB
	if min := noise.LaplaceMinEpsilon(p.d); epsOut < min {
		return fmt.Errorf("epsilon %v is too small for the output step", eps)
	}
	// ‖∇²ℓ‖ ≤ κ̂²/4 (binary) or κ̂²/2 (Gershgorin on diag p − ppᵀ).
	p.smooth = n*p.hessMax() + lam
	// Typical region of the ideal noise: ‖b*‖₁ ≤ β(4D + 2000) (a Gamma(D)
	// tail below e^(−1500)); b̂ is within √D·β·2⁻²⁹ of b*. Stationarity
	// gives Λ‖θ*‖ ≤ ‖Σ∇ℓ‖ + ‖b‖.
	gMax := n * p.rowL2
	p.theta = (gMax + p.bMax()) / lam * (1 + 1e-9)
	// Noise cells: |b̂ᵢ − b*ᵢ| ≤ β·2⁻²⁹ (displacement 2·256·2⁻⁴¹ per square,
	// plus the float64 error of the squares and sums), so
	// ‖θ*(b̂) − θ*(b*)‖ ≤ √D·β·2⁻²⁹/Λ by strong monotonicity.
	p.rNoise = math.Sqrt(D) * p.beta * 0x1p-29 / lam
	// Solver: projected GD with step 1/L_J contracts by q = 1 − Λ/L_J; the
	// float error per step e is bounded in errStep; after T steps
	// ‖θ̂_T − θ*‖ ≤ q^T·Θ + e/(1 − q).
	q := 1 - lam/p.smooth
	e := p.errStep(nRows)
	floor := e * p.smooth / lam
	target := objectiveAccuracy * p.beta / lam
	if target < 2*floor {
		target = 2 * floor
	}
	// q^T·Θ ≤ target − floor.
	lq := math.Log1p(-lam / p.smooth)
	if !(lq < 0) { // Λ/L_J below float resolution: q rounds to 1
		lq = -lam / p.smooth
	}
	steps := math.Ceil(math.Log((target-floor)/p.theta) / lq)
	if steps < 1 {
		steps = 1
	}
	if steps > MaxSteps*100 {
		steps = MaxSteps * 100
	}
	p.steps = int(steps)
	p.rSolve = math.Pow(q, steps)*p.theta*(1+1e-9) + floor
	var err error
	if p.step, err = amp.NewLaplace(p.rSolve+p.rNoise, p.d, epsOut); err != nil {
		return err
	}
	return nil
}

// errStep bounds ‖computed step − exact projected step‖ at a computed
// iterate with ‖θ̂‖ ≤ Θ (docs/mechanisms/logreg.md §9.4). Terms:
//   - scores sᵢₖ = θₖᵀxᵢ err by γ_F·Θ·κ̂ each (‖Δs‖₂ ≤ √K′·γ_F·Θ·κ̂);
//     residuals are 1-Lipschitz in the scores in ℓ₂ (σ′ ≤ 1/4, the softmax
//     Jacobian diag p − ppᵀ has norm ≤ 1/2) and their evaluation adds
//     2γ_{K′+6} (relative, ‖r‖ ≤ 2): per row ρ = √K′·γ_{F+2}·Θ·κ̂ + 2γ_{K′+6};
//   - the gradient sum of n rows with chain length m adds
//     γ_{m+1}·n·(L + ρ)κ̂ and the ρ terms n·ρ·κ̂;
//   - Λθ + b and the update round relatively (5u on each magnitude).
//
// The total is doubled to cover the second-order products of the γ terms.
func (p *objPlan) errStep(nRows int) float64 {
	n := float64(nRows)
	kp, f := float64(p.kp), float64(p.f)
	rho := math.Sqrt(kp)*gamma(f+2)*p.theta*kappaHat + 2*gamma(kp+6)
	m := float64(chunkRows) + math.Ceil(n/chunkRows) + 2
	bMax := p.bMax()
	eG := n*rho*kappaHat + gamma(m+1)*n*(p.rowL2+rho*kappaHat)
	mag := n*p.rowL2 + p.lambda*p.theta + bMax
	eUpd := (eG+5*unitRoundoff*mag)/p.smooth + 5*unitRoundoff*(p.theta+mag/p.smooth) + gamma(f+4)*p.theta
	return 2 * eUpd
}

// hessMax bounds the norm of one row's Hessian.
func (p *objPlan) hessMax() float64 {
	if p.kp == 1 {
		return kappaHat * kappaHat / 4
	}
	return kappaHat * kappaHat / 2
}

// bMax bounds ‖b̂‖₂ on the typical region: ‖b*‖₂ ≤ ‖b*‖₁ ≤ β(4D + 2000)
// plus the cell displacement √D·β·2⁻²⁹.
func (p *objPlan) bMax() float64 {
	d := float64(p.d)
	return p.beta * (4*d + 2000 + math.Sqrt(d)*0x1p-29) * (1 + 1e-12)
}

// events returns the budget: the ideal mechanism (coupling slack
// included) and the output step.
func (p *objPlan) events(eps float64) []budget.Event {
	return []budget.Event{{Kind: budget.Laplace, Epsilon: eps - p.step.Epsilon}, p.step.Event()}
}

// laplaceNoise draws b̂ ∈ ℝ^D: b̂ᵢ = β(N₁² + N₂² − N₃² − N₄²)/2 from 4D
// coupled normals (N₁² + N₂² ~ 2·Exp(1), so the difference over 2 is
// standard Laplace).
func (p *objPlan) laplaceNoise() []float64 {
	nrm := noise.StandardNormalVec(4 * p.d)
	b := make([]float64, p.d)
	for i := range b {
		a := nrm[4*i : 4*i+4]
		b[i] = p.beta * ((a[0]*a[0] + a[1]*a[1]) - (a[2]*a[2] + a[3]*a[3])) / 2
	}
	return b
}

// minimize runs T projected gradient steps on J with noise b from θ₀ = 0:
// θ ← P_Θ(θ − (G(θ) + Λθ + b)/L_J). The step count and the work per step
// are public.
func (p *objPlan) minimize(prob *problem, b []float64) ([]float64, error) {
	theta := make([]float64, p.d)
	g := make([]float64, p.d)
	nChunks := (prob.n + chunkRows - 1) / chunkRows
	slots := make([][]float64, nChunks)
	for c := range slots {
		slots[c] = make([]float64, p.d)
	}
	inv := 1 / p.smooth
	for t := 0; t < p.steps; t++ {
		if t%64 == 0 {
			if err := prob.stop.Err(); err != nil {
				return nil, err
			}
		}
		prob.gradSum(theta, g, slots)
		var norm float64
		for j := range theta {
			theta[j] -= (g[j] + p.lambda*theta[j] + b[j]) * inv
			norm += theta[j] * theta[j]
		}
		if norm = math.Sqrt(norm); norm > p.theta || math.IsNaN(norm) {
			projectTo(theta, norm, p.theta)
		}
	}
	return theta, nil
}

// projectTo scales θ onto the ball of radius r (or resets a non-finite
// iterate to 0).
func projectTo(theta []float64, norm, r float64) {
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		for j := range theta {
			theta[j] = 0
		}
		return
	}
	s := r / norm
	for j := range theta {
		theta[j] *= s
	}
}

// objParams are the public planning values of MethodObjective.
func (t *Trainer) objParams() map[string]float64 {
	p := t.obj
	return map[string]float64{
		"epsilon": t.cfg.Epsilon, "delta": 0, "n": float64(t.cfg.N), "features": float64(t.f),
		"classes": float64(len(t.cfg.Classes)), "method_objective": 1,
		"lambda": p.lambda / float64(t.cfg.N), "ridge": p.lambda, "laplace_scale": p.beta,
		"epsilon_noise": p.epsB, "epsilon_jacobian": p.epsJ, "coupling_slack": p.slack,
		"steps": float64(p.steps), "smoothness": p.smooth, "theta_bound": p.theta,
		"radius": p.step.Radius, "output_epsilon": p.step.Epsilon, "output_scale": p.step.Scale,
		"work_cap_ratio": p.capRatio,
	}
}

// trainObjective draws b̂, minimises the perturbed objective and releases
// the minimiser through the output step. Its errors are the shape errors
// of checkInput and a killed query.
func (t *Trainer) trainObjective(X [][]float64, y []int) (*mechanism.Model, error) {
	prob := newProblem(X, y, t.prep, t.kp, t.binary, t.workers, math.Inf(1))
	prob.stop = t.cfg.Stop
	b := t.obj.laplaceNoise()
	theta, err := t.obj.minimize(prob, b)
	if err != nil {
		return nil, err
	}
	if err := t.obj.step.Apply(theta); err != nil {
		return nil, fmt.Errorf("logreg: %w", err)
	}
	return t.model(theta), nil
}
