// Package noise is dpsql's privacy core: every random draw that protects
// privacy comes from here, and all of it is backed by crypto/rand.
//
// It offers the secure Laplace sampler of google/differential-privacy (scalar
// and per-coordinate), an exact discrete Gaussian (Canonne, Kamath & Steinke
// 2020), and the "Gamma norm × uniform direction" vectors used by objective
// and output perturbation (density ∝ exp(−(ε/2)‖b‖)). It also offers plain
// crypto-backed uniform, normal, exponential and Cauchy draws for
// data-independent randomness such as random Fourier frequencies.
//
// The package imports nothing from SQL and nothing from math/rand.
//
// Accounting of the grids (derivations in docs/privacy/noise.md):
//
//   - AddLaplace/AddLaplaceVec at scale b on F coordinates use the scale
//     b·(1 + F·2⁻¹⁹) on the library's grid g = ceil₂(b′/2⁴⁰); the release is
//     ε-DP for ℓ₁ sensitivity b·ε for every ε ≥ LaplaceMinEpsilon(F).
//   - AddGaussian/AddGaussianVec at σ on F coordinates use the grid
//     g ≤ 2⁻³⁰σ/√F and the integer scale s = ⌈(1 + 2⁻¹⁰)σ/g⌉ + 1; the release
//     has the privacy of a Gaussian with ratio Δ₂/σ for every
//     Δ₂ ≥ GaussianMinRatio·σ.
//   - Gamma, GammaDirection and GammaDirectionScaled are continuous
//     distributions computed in floating point from crypto-backed uniforms;
//     they carry no grid argument (see the caveat in docs/privacy/noise.md).
//
// Imports: only the standard library (crypto/rand). It is the ground floor
// of the privacy core and may not import any dpsql package.
package noise
