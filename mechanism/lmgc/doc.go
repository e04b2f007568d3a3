// Package lmgc is DP_LMGC_TRAIN: the differentially private large-margin
// multiclass Gaussian classifier of Pathak & Raj (2010), with a corrected
// privacy calibration.
//
// Each class c is a (d+1)×(d+1) positive semidefinite matrix Φ_c and a row x
// is classified by argmin_c x̃ᵀΦ_c x̃, with x̃ = Scaler(x) (public bounds,
// intercept appended, ‖x̃‖₂ ≤ 1). Training minimises over the PSD cone
//
//	(1/n)Σᵢ Σ_{c≠yᵢ} ℓ_h(1 + x̃ᵢᵀ(Φ_{yᵢ} − Φ_c)x̃ᵢ) + λ Σ_c tr(I_Φ Φ_c I_Φ)
//	    + (Δ/2)‖Φ‖²_F + (1/n)⟨b, Φ⟩
//
// with ℓ_h the Huber-smoothed hinge of width h and b an objective
// perturbation with density ∝ exp(−‖b‖/β) on the whole parameter space
// (C symmetric blocks, dimension m = C·D(D+1)/2, D = d+1).
//
// Corrections to the paper (derivation in docs/mechanisms/lmgc.md):
// strong convexity Δ is added; β is calibrated to the sensitivity √2·C of the
// gradient of all classes together (not the paper's per-class 2); the
// Jacobian term reflects rank C−1 row Hessians; the PSD-constrained domain
// follows Kifer, Smith & Thakurta (2012); Δ is the smallest value at which
// the perturbation's expected displacement of the minimiser is at most
// c_ν·D·√C (and 𝒥 ≤ ε_obj/2), so the noise's effect falls as ε grows
// (issue 11; the previous fixed Jacobian share made it independent of ε).
// The perturbation is drawn as
// β‖h‖g from coupled normals (exactly the density ∝ exp(−‖b‖/β), within
// e^(±η) on matching grid cells); the solver (V-FISTA with an
// eigendecomposition projection) runs a number of iterations fixed a priori
// from public quantities; and the result, within a public radius r of the
// ideal exact minimiser, is released through the grid-safe Laplace output
// step of package amp (approximate minima perturbation, Iyengar et al.
// 2019). No path after the data is read can fail.
//
// Usage follows the Plan/Events/Train split of every dpsql mechanism:
//
//	tr, err := lmgc.Plan(cfg)      // public quantities only
//	events := tr.Events()          // reserve with the accountant
//	model, err := tr.Train(X, y)   // touches the data, adds the noise
//
// ChargedEpsilon (what the derivation supports, equal to the requested ε up
// to rounding) and RequestedEpsilon are both exposed for the ledger.
//
// Config.Method = MethodStats (the SQL default, DefaultMethod) fits the same
// model class — one PSD Φ_c per class — from one noisy release of the
// shared-covariance Gaussian sufficient statistics of package gauss (the
// LDA rule written as Φ_c; docs/mechanisms/lmgc.md §11), whose noise at the
// same (ε, δ) is several times smaller; MethodMargin (also the empty value)
// is the paper's release above.
//
// Imports: budget, mechanism, mechanism/amp, mechanism/gauss, noise. Like every mechanism package it may not
// import catalog, store, functions, go-mysql-server or anything else that
// knows SQL, nor another mechanism that imports it (docs/architecture.md).
package lmgc
