package gauss

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsql/dpsql/mechanism"
)

// Everything in this file is post-processing of the released (noisy)
// statistic vector with public quantities (n, d, K, the plan's noise
// standard deviations): it costs no privacy and has no error path.

// minVariance is an absolute floor on every variance estimate on the
// [−1, 1] feature scale, so that precisions stay finite.
const minVariance = 1e-9

// estimates are the class-level quantities shared by the three kinds.
type estimates struct {
	n     []float64   // counts, floored
	prior []float64   // n̂_k / Σ n̂
	mu    [][]float64 // class means S̃_k / n̂_k
}

// countFloor is the public floor of a noisy class count: at least one row,
// and at least one noise standard deviation.
func (t *Trainer) countFloor() float64 { return math.Max(1, t.cal.sdCount) }

func (t *Trainer) classEstimates(v []float64) estimates {
	l := t.lay
	e := estimates{n: make([]float64, l.k), prior: make([]float64, l.k), mu: make([][]float64, l.k)}
	floor := t.countFloor()
	var tot float64
	for k := 0; k < l.k; k++ {
		e.n[k] = math.Max(v[k], floor)
		tot += e.n[k]
	}
	for k := 0; k < l.k; k++ {
		e.prior[k] = e.n[k] / tot
		s := l.sum(v, k)
		e.mu[k] = make([]float64, l.d)
		for j := range s {
			e.mu[k][j] = s[j] / e.n[k]
		}
	}
	return e
}

// scatter returns the d×d matrix M̃ − Σ_{k∈ks} S̃_kS̃_kᵀ/n̂_k (full storage)
// for moment block b.
func (t *Trainer) scatter(v []float64, b int, ks []int, e estimates) []float64 {
	l := t.lay
	d := l.d
	out := make([]float64, d*d)
	blk := l.moment(v, b)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			out[i*d+j] = blk[l.packed(i, j)]
		}
	}
	for _, k := range ks {
		s := l.sum(v, k)
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				out[i*d+j] -= s[i] * s[j] / e.n[k]
			}
		}
	}
	for i := 0; i < d; i++ {
		for j := 0; j < i; j++ {
			out[i*d+j] = out[j*d+i]
		}
	}
	return out
}

// spectral is a covariance estimate in eigen form: Σ̂ = V·diag(vals)·Vᵀ.
type spectral struct {
	vals []float64
	vecs *mat.Dense
}

// precision returns P = Σ̂⁻¹ (full storage) and log det Σ̂.
func (s spectral) precision(d int) ([]float64, float64) {
	p := make([]float64, d*d)
	var logdet float64
	for _, lam := range s.vals {
		logdet += math.Log(lam)
	}
	for a := 0; a < d; a++ {
		inv := 1 / s.vals[a]
		for i := 0; i < d; i++ {
			vi := s.vecs.At(i, a) * inv
			if vi == 0 {
				continue
			}
			for j := i; j < d; j++ {
				p[i*d+j] += vi * s.vecs.At(j, a)
			}
		}
	}
	for i := 0; i < d; i++ {
		for j := 0; j < i; j++ {
			p[i*d+j] = p[j*d+i]
		}
	}
	return p, logdet
}

// denoiseIterations is the fixed number of refinements of the bulk level τ.
const denoiseIterations = 8

// denoise estimates Σ from Σ̃ = Σ + E, where E is symmetric with
// independent centred entries of standard deviation s off the diagonal
// (docs/mechanisms/gauss.md §5). Model: Σ = τI + a few spikes. The
// spectrum of τI + E fills τ ± 2s√d (semicircle); an eigenvalue λ of Σ̃
// above τ + edge·2s√d is read as a spike θ and de-biased by inverting
// λ − τ = (θ − τ) + s²d/(θ − τ); the others are replaced by τ, estimated
// from the trace (which the noise moves by only O(s√d)) minus the spikes.
// τ and the spikes are refined a fixed number of times. τ is floored at
// 2s√(2/d) (two noise standard deviations of the trace estimate) and at
// minVariance.
func denoise(full []float64, d int, s, edge float64) spectral {
	sym := mat.NewSymDense(d, nil)
	var tr float64
	for i := 0; i < d; i++ {
		tr += full[i*d+i]
		for j := i; j < d; j++ {
			sym.SetSym(i, j, full[i*d+j])
		}
	}
	floor := math.Max(2*s*math.Sqrt(2/float64(d)), minVariance)
	var es mat.EigenSym
	if !es.Factorize(sym, true) {
		// Not reachable for finite input; an isotropic estimate keeps
		// Train free of data-dependent errors all the same.
		vals := make([]float64, d)
		for i := range vals {
			vals[i] = math.Max(tr/float64(d), floor)
		}
		vecs := mat.NewDense(d, d, nil)
		for i := 0; i < d; i++ {
			vecs.Set(i, i, 1)
		}
		return spectral{vals: vals, vecs: vecs}
	}
	raw := es.Values(nil)
	vecs := new(mat.Dense)
	es.VectorsTo(vecs)
	width := edge * 2 * s * math.Sqrt(float64(d))
	s2d := s * s * float64(d)
	vals := make([]float64, d)
	if s == 0 {
		// No noise: the spectrum is the estimate (floored to stay PD).
		for i, lam := range raw {
			vals[i] = math.Max(lam, floor)
		}
		return spectral{vals: vals, vecs: vecs}
	}
	tau := math.Max(tr/float64(d), floor)
	for range denoiseIterations {
		bulkSum, nBulk := tr, 0
		for i, lam := range raw {
			if x := lam - tau; x > width && x > 0 {
				vals[i] = tau + (x+math.Sqrt(math.Max(x*x-4*s2d, 0)))/2
				bulkSum -= vals[i]
			} else {
				vals[i] = 0 // bulk
				nBulk++
			}
		}
		next := floor
		if nBulk > 0 {
			next = math.Max(bulkSum/float64(nBulk), floor)
		}
		tau = next
	}
	for i := range vals {
		if vals[i] < tau {
			vals[i] = tau
		}
	}
	return spectral{vals: vals, vecs: vecs}
}

// model post-processes the noisy statistics into a released model.
func (t *Trainer) model(v []float64) *mechanism.Model {
	e := t.classEstimates(v)
	m := &mechanism.Model{
		Kind:     t.cfg.Kind,
		Label:    t.cfg.Label,
		Features: append([]string(nil), t.cfg.Features...),
		Classes:  append([]string(nil), t.cfg.Classes...),
		Scaler:   t.scaler,
		Params:   t.withShrink(t.params()),
	}
	switch t.cfg.Kind {
	case KindLDA:
		if t.cfg.Quadratic {
			m.Kind, m.Phi = mechanism.KindLMGC, t.ldaPhi(v, e)
			break
		}
		m.Weights = t.lda(v, e)
	case KindQDA:
		m.Phi = t.qda(v, e)
	case KindGNB:
		m.Phi = t.gnb(v, e)
	}
	return m
}

// params records the public calibration with the model.
func (t *Trainer) params() map[string]float64 {
	c := t.cal
	return map[string]float64{
		"epsilon":      t.cfg.Epsilon,
		"delta":        t.cfg.Delta,
		"n":            float64(t.cfg.N),
		"moment_share": t.cfg.MomentShare,
		"edge_factor":  t.cfg.EdgeFactor,
		"share_count":  c.countShare,
		"share_sum":    c.sumShare,
		"share_moment": c.momentShare,
		"sensitivity":  c.sens,
		"scale":        c.scale,
		"sd_count":     c.sdCount,
		"sd_sum":       c.sdSum,
		"sd_diag":      c.sdDiag,
		"sd_off":       c.sdOff,
	}
}

// withShrink records a non-default post-processing variant in the params.
func (t *Trainer) withShrink(p map[string]float64) map[string]float64 {
	if t.post.Shrink != 0 {
		p["shrink"] = t.post.Shrink
	}
	if t.post.Ridge != 0 {
		p["post_ridge"] = t.post.Ridge
	}
	return p
}

// within returns max(n − K, 1), the degrees of freedom of a pooled
// covariance (n is public).
func (t *Trainer) within() float64 { return math.Max(float64(t.cfg.N-t.lay.k), 1) }

// ldaPrecision returns the denoised pooled precision P (d×d, row-major,
// positive definite: the denoiser floors every eigenvalue).
func (t *Trainer) ldaPrecision(v []float64, e estimates) []float64 {
	l := t.lay
	d := l.d
	all := make([]int, l.k)
	for k := range all {
		all[k] = k
	}
	sc := t.scatter(v, 0, all, e)
	dof := t.within()
	for i := range sc {
		sc[i] /= dof
	}
	p, _ := t.shrunk(denoise(sc, d, t.cal.sdOff/dof, t.cfg.EdgeFactor), t.cal.sdOff/dof).precision(d)
	return p
}

// lda returns the K weight vectors of the linear scorer on
// φ(x) = (u, 1)/√D: score_k = ⟨u, Pμ_k⟩ − ½μ_kᵀPμ_k + log π_k, scaled by √D.
func (t *Trainer) lda(v []float64, e estimates) [][]float64 {
	d := t.lay.d
	p := t.ldaPrecision(v, e)
	rootD := math.Sqrt(float64(d + 1))
	ws := make([][]float64, t.lay.k)
	for k := range ws {
		w := make([]float64, d+1)
		var q float64
		for i := 0; i < d; i++ {
			var r float64
			for j := 0; j < d; j++ {
				r += p[i*d+j] * e.mu[k][j]
			}
			w[i] = r
			q += r * e.mu[k][i]
		}
		w[d] = -q/2 + math.Log(e.prior[k])
		for i := range w {
			w[i] *= rootD
		}
		ws[k] = w
	}
	return ws
}

// ldaPhi returns the LDA discriminant in the quadratic-scorer form of
// DP_LMGC_TRAIN (Pathak & Raj's ellipsoid per class, sharing P):
// Φ_k = homogeneous(P, μ_k, −2 log π_k), so x̃ᵀΦ_kx̃ = (u − μ_k)ᵀP(u − μ_k)
// − 2 log π_k. uᵀPu is common to all classes, so argmin_k is argmax_k of
// lda's score: the same decisions. Each Φ_k is PSD (P ≻ 0 and the Schur
// complement −2 log π_k ≥ 0 since π_k ≤ 1).
func (t *Trainer) ldaPhi(v []float64, e estimates) [][]float64 {
	p := t.ldaPrecision(v, e)
	phi := make([][]float64, t.lay.k)
	for k := range phi {
		phi[k] = homogeneous(p, e.mu[k], -2*math.Log(e.prior[k]))
	}
	return phi
}

// homogeneous returns Φ = D·[[P, −Pμ], [−μᵀP, μᵀPμ + c]] (D = d + 1,
// row-major): x̃ᵀΦx̃ = (u − μ)ᵀP(u − μ) + c for x̃ = (u, 1)/√D.
func homogeneous(p, mu []float64, c float64) []float64 {
	d := len(mu)
	D := d + 1
	phi := make([]float64, D*D)
	pm := make([]float64, d)
	var q float64
	for i := 0; i < d; i++ {
		var r float64
		for j := 0; j < d; j++ {
			r += p[i*d+j] * mu[j]
			phi[i*D+j] = p[i*d+j]
		}
		pm[i] = r
		q += r * mu[i]
	}
	for i := 0; i < d; i++ {
		phi[i*D+d] = -pm[i]
		phi[d*D+i] = -pm[i]
	}
	phi[d*D+d] = q + c
	for i := range phi {
		phi[i] *= float64(D)
	}
	return phi
}

// qda returns one Φ_c per class for −2 × the Gaussian log-posterior:
// (u − μ_k)ᵀΣ̂_k⁻¹(u − μ_k) + log det Σ̂_k − 2 log π_k. Σ̂_k shrinks the
// class covariance toward the pooled one with a noise-aware Ledoit–Wolf
// intensity, then denoises the spectrum.
func (t *Trainer) qda(v []float64, e estimates) [][]float64 {
	l := t.lay
	d := l.d
	df := float64(d)
	dof := t.within()
	pooled := make([]float64, d*d)
	classes := make([][]float64, l.k)
	for k := 0; k < l.k; k++ {
		sc := t.scatter(v, k, []int{k}, e)
		for i, x := range sc {
			pooled[i] += x / dof
		}
		kd := math.Max(e.n[k]-1, 1)
		for i := range sc {
			sc[i] /= kd
		}
		classes[k] = sc
	}
	sOffP := t.cal.sdOff * math.Sqrt(float64(l.k)) / dof
	phis := make([][]float64, l.k)
	for k := 0; k < l.k; k++ {
		kd := math.Max(e.n[k]-1, 1)
		sOff, sDiag := t.cal.sdOff/kd, t.cal.sdDiag/kd
		noiseF := df*(df-1)*sOff*sOff + df*sDiag*sDiag // E‖E_k‖²_F
		var dev float64
		for i, x := range classes[k] {
			dd := x - pooled[i]
			dev += dd * dd
		}
		g := 1.0
		if dev > noiseF {
			g = noiseF / dev
		}
		mix := make([]float64, d*d)
		for i := range mix {
			mix[i] = (1-g)*classes[k][i] + g*pooled[i]
		}
		p, logdet := t.shrunk(denoise(mix, d, (1-g)*sOff+g*sOffP, t.cfg.EdgeFactor), (1-g)*sOff+g*sOffP).precision(d)
		phis[k] = homogeneous(p, e.mu[k], logdet-2*math.Log(e.prior[k]))
	}
	return phis
}

// gnb returns one diagonal-plus-intercept Φ_c per class:
// Σ_j (u_j − μ_kj)²/v_kj + Σ_j log v_kj − 2 log π_k, with v_kj shrunk
// toward the pooled variance of feature j by a noise-aware intensity.
func (t *Trainer) gnb(v []float64, e estimates) [][]float64 {
	l := t.lay
	d := l.d
	dof := t.within()
	raw := make([][]float64, l.k)
	pooled := make([]float64, d)
	for k := 0; k < l.k; k++ {
		q, s := l.moment(v, k), l.sum(v, k)
		raw[k] = make([]float64, d)
		for j := 0; j < d; j++ {
			sc := q[j] - s[j]*s[j]/e.n[k]
			pooled[j] += sc / dof
			raw[k][j] = sc / math.Max(e.n[k]-1, 1)
		}
	}
	sdP := t.cal.sdDiag * math.Sqrt(float64(l.k)) / dof
	for j := range pooled {
		pooled[j] = math.Max(pooled[j], math.Max(sdP, minVariance))
	}
	phis := make([][]float64, l.k)
	for k := 0; k < l.k; k++ {
		sdK := t.cal.sdDiag / math.Max(e.n[k]-1, 1)
		var dev float64
		for j := 0; j < d; j++ {
			dd := raw[k][j] - pooled[j]
			dev += dd * dd
		}
		dev /= float64(d)
		g := 1.0
		if dev > sdK*sdK {
			g = sdK * sdK / dev
		}
		floor := math.Max((1-g)*sdK+g*sdP, minVariance)
		vs := make([]float64, d)
		for j := range vs {
			vs[j] = math.Max((1-g)*raw[k][j]+g*pooled[j], floor)
		}
		vs = shrinkToMean(vs, t.post.Shrink)
		for j := range vs {
			vs[j] += t.post.Ridge * floor
		}
		p := make([]float64, d*d)
		var logdet float64
		for j, vj := range vs {
			p[j*d+j] = 1 / vj
			logdet += math.Log(vj)
		}
		phis[k] = homogeneous(p, e.mu[k], logdet-2*math.Log(e.prior[k]))
	}
	return phis
}

// shrunk applies the post-processing variant to a covariance estimate
// whose off-diagonal noise level is s: every eigenvalue λ becomes
// (1 − γ)λ + γ·mean(λ) + Ridge·2s√d (the zero variant: unchanged).
func (t *Trainer) shrunk(sp spectral, s float64) spectral {
	sp.vals = shrinkToMean(sp.vals, t.post.Shrink)
	add := t.post.Ridge * 2 * s * math.Sqrt(float64(len(sp.vals)))
	for i := range sp.vals {
		sp.vals[i] += add
	}
	return sp
}

// shrinkToMean returns (1 − γ)v + γ·mean(v), in place.
func shrinkToMean(v []float64, g float64) []float64 {
	if g == 0 || len(v) == 0 {
		return v
	}
	var m float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for i, x := range v {
		v[i] = (1-g)*x + g*m
	}
	return v
}
