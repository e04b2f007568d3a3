package svm

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/noise"
)

// MaxEpochs caps the work of one solve at MaxEpochs·n coordinate visits (an
// epoch over a shrunk active set counts its size). A solve that has not
// certified its duality gap by then fails with errNotConverged.
const MaxEpochs = 5000

// maxCacheEntries bounds n·F, the float32 feature cache (4 bytes an entry),
// so that training stays within a few GB of memory.
const maxCacheEntries = 1 << 30

// shrink32 is applied before rounding features to float32 so that rounding
// to nearest can never make ‖φᵢ‖₂ exceed its float64 value (≤ 1): the SVM
// that is solved is the SVM on these float32 features, and κ ≤ 1 holds for
// them exactly.
const shrink32 = 1 - 0x1p-22

// errNotConverged is the only data-dependent error of Train; see the package
// documentation.
var errNotConverged = fmt.Errorf("svm: dual coordinate descent did not certify the duality gap within %d passes over the data", MaxEpochs)

// featureCache holds φ(xᵢ) for every row, row-major, as float32.
type featureCache struct {
	n, f int
	x    []float32
	q    []float64 // ‖φᵢ‖², computed from the float32 values
}

func (fc *featureCache) row(i int) []float32 { return fc.x[i*fc.f : (i+1)*fc.f : (i+1)*fc.f] }

// buildCache maps every raw row through the Scaler (public bounds, clipping)
// and, for kernel SVMs, the random Fourier features. Rows are split over
// GOMAXPROCS goroutines.
func buildCache(X [][]float64, sc mechanism.Scaler, rff *mechanism.RFF) *featureCache {
	f := sc.Dim()
	if rff != nil {
		f = rff.Dim()
	}
	n := len(X)
	fc := &featureCache{n: n, f: f, x: make([]float32, n*f), q: make([]float64, n)}
	parallelRows(n, func(lo, hi int) {
		z := make([]float64, sc.Dim())
		var phi []float64
		for i := lo; i < hi; i++ {
			z = sc.Transform(z, X[i])
			v := z
			if rff != nil {
				phi = rff.Map(phi, z)
				v = phi
			}
			r := fc.row(i)
			var q float64
			for j, t := range v {
				r[j] = float32(t * shrink32)
				q += float64(r[j]) * float64(r[j])
			}
			fc.q[i] = q
		}
	})
	return fc
}

// parallelRows runs fn over [0, n) split into contiguous chunks, one per
// available CPU.
func parallelRows(n int, fn func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	if w > n {
		w = n
	}
	if w <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for k := 0; k < w; k++ {
		lo, hi := k*n/w, (k+1)*n/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

// problem is one binary SVM: ½‖w‖² + c·Σ ℓ(yᵢ⟨w, φᵢ⟩), c = C/n.
type problem struct {
	fc   *featureCache
	y    []float64 // ±1
	loss loss
	c    float64
	tau  float64 // certified duality-gap target
	log  *logrus.Entry
	// maxEpochs overrides MaxEpochs when positive (tests).
	maxEpochs int
}

// solution is a certified approximate minimiser.
type solution struct {
	w      []float64
	gap    float64   // certified upper bound on P(w) − min P (≤ τ)
	epochs int       // passes, including those over a shrunk active set
	passes float64   // coordinate visits / n
	dual   []float64 // a ∈ [0, 1]ⁿ; for tests only, never released
}

// solve runs dual coordinate descent (Hsieh et al. 2008, with LIBLINEAR's
// shrinking, for the hinge loss; the same scheme with an exact quadratic step
// for the Huber loss and a safeguarded Newton step for the logistic loss, as
// in Yu, Huang & Lin 2011) until the duality gap is certified to be at most
// τ. Shrinking only decides which rows are visited; the stopping test always
// runs over every row.
func (p *problem) solve() (solution, error) {
	n := p.fc.n
	a := make([]float64, n)
	_, canShrink := p.loss.(boxLoss)
	if !canShrink {
		for i := range a {
			a[i] = 0.5 // logistic: ψ′ is infinite at 0 and 1
		}
	}
	w := p.weights(a)
	all := shuffled(n)
	active := append([]int(nil), all...)
	keep := make([]bool, n)
	start := time.Now()
	lastInfo := start
	full := true
	pgTol := 0.1
	pgMaxOld, pgMinOld := math.Inf(1), math.Inf(-1)
	wait, nextCert := 1, 0
	maxEpochs := MaxEpochs
	if p.maxEpochs > 0 {
		maxEpochs = p.maxEpochs
	}
	left := int64(maxEpochs) * int64(n)
	for epoch := 1; left > 0; epoch++ {
		if full {
			active = append(active[:0], all...)
		}
		// Visit the rows in a fresh pseudo-random order: a random affine
		// relabelling of a random permutation (solver randomness only; the
		// sensitivity bound holds for every order).
		na := len(active)
		left -= int64(na)
		off, stride := epochOrder(na)
		var approx float64
		pgMax, pgMin := math.Inf(-1), math.Inf(1)
		for t := 0; t < na; t++ {
			i := active[(off+t*stride)%na]
			keep[i] = true
			x := p.fc.row(i)
			m := p.y[i] * dot(w, x)
			if full {
				g, _ := p.loss.gapTerm(m, a[i], 0)
				approx += g
			}
			if canShrink {
				// Projected gradient of the negative dual (LIBLINEAR).
				pg := p.loss.(boxLoss).grad(m, a[i])
				switch {
				case a[i] == 0:
					if pg > pgMaxOld && !full {
						keep[i] = false
						continue
					}
					pg = math.Min(pg, 0)
				case a[i] == 1:
					if pg < pgMinOld && !full {
						keep[i] = false
						continue
					}
					pg = math.Max(pg, 0)
				}
				pgMax, pgMin = math.Max(pgMax, pg), math.Min(pgMin, pg)
				if pg == 0 {
					continue
				}
			}
			nv := p.loss.step(a[i], m, p.fc.q[i], p.c)
			if d := nv - a[i]; d != 0 {
				axpy(p.c*d*p.y[i], x, w)
				a[i] = nv
			}
		}
		approx *= p.c
		entry := p.log.WithFields(logrus.Fields{"epoch": epoch, "active": na, "elapsed": time.Since(start).Round(time.Millisecond).String()})
		if full {
			entry = entry.WithField("gap_estimate", approx)
		}
		if now := time.Now(); now.Sub(lastInfo) >= 5*time.Second {
			entry.Info("svm: training")
			lastInfo = now
		} else {
			entry.Debug("svm: training")
		}
		if canShrink {
			// Shrinking thresholds for the next epoch (LIBLINEAR).
			pgMaxOld, pgMinOld = pgMax, pgMin
			if pgMaxOld <= 0 {
				pgMaxOld = math.Inf(1)
			}
			if pgMinOld >= 0 {
				pgMinOld = math.Inf(-1)
			}
			if !full {
				k := 0
				for _, i := range active {
					if keep[i] {
						active[k] = i
						k++
					}
				}
				active = active[:k]
				// Once the shrunk problem is solved to pgTol, check on
				// all rows.
				full = pgMax-pgMin <= pgTol || len(active) == 0
				continue
			}
		}
		if approx > p.tau/2 || epoch < nextCert {
			if canShrink {
				full = false
				pgTol = math.Max(pgTol/8, 1e-15)
			}
			continue
		}
		wc, gap := p.certify(a)
		if gap <= p.tau {
			passes := float64(int64(maxEpochs)*int64(n)-left) / float64(n)
			p.log.WithFields(logrus.Fields{"epochs": epoch, "passes": passes, "certified_gap": gap, "tau": p.tau, "elapsed": time.Since(start).Round(time.Millisecond).String()}).Debug("svm: duality gap certified")
			return solution{w: wc, gap: gap, epochs: epoch, passes: passes, dual: a}, nil
		}
		// Continue from the recomputed w(a), which removes the drift of
		// the incremental updates, and certify less often.
		w = wc
		nextCert = epoch + wait
		if wait < 16 {
			wait *= 2
		}
		if canShrink {
			full = false
			pgTol = math.Max(pgTol/8, 1e-15)
		}
	}
	return solution{}, errNotConverged
}

// weights returns w(a) = c·Σ aᵢyᵢφᵢ, summed per CPU chunk.
func (p *problem) weights(a []float64) []float64 {
	f := p.fc.f
	var mu sync.Mutex
	w := make([]float64, f)
	parallelRows(p.fc.n, func(lo, hi int) {
		part := make([]float64, f)
		for i := lo; i < hi; i++ {
			if a[i] != 0 {
				axpy(a[i]*p.y[i], p.fc.row(i), part)
			}
		}
		mu.Lock()
		for j, v := range part {
			w[j] += v
		}
		mu.Unlock()
	})
	for j := range w {
		w[j] *= p.c
	}
	return w
}

// certify recomputes ŵ = w(a) and returns it with a rigorous upper bound on
// P(ŵ) − D(a) ≥ P(ŵ) − min P that includes floating-point rounding:
//
//	P(ŵ) − D(a) = c·Σ gᵢ + ½‖ŵ − w(a)‖²,  gᵢ = ℓ(m̂ᵢ) + ψ(aᵢ) + aᵢm̂ᵢ ≥ 0.
//
// Each m̂ᵢ is a float64 dot product of F terms, within γ_F·‖ŵ‖·‖φᵢ‖ of the
// exact value (Higham, Numerical Accuracy and Stability, §3.1); gapTerm turns
// that into a bound on gᵢ. The sum of the n non-negative terms is within a
// relative γ_n; ‖ŵ − w(a)‖ ≤ γ_(n+2)·c·Σaᵢ because ‖φᵢ‖ ≤ 1.
func (p *problem) certify(a []float64) ([]float64, float64) {
	w := p.weights(a)
	var wn float64
	for _, v := range w {
		wn += v * v
	}
	wn = math.Sqrt(wn) * (1 + gamma(p.fc.f))
	gf := gamma(p.fc.f)
	var mu sync.Mutex
	var sumG, sumErr, sumA float64
	parallelRows(p.fc.n, func(lo, hi int) {
		var sg, se, sa float64
		for i := lo; i < hi; i++ {
			m := p.y[i] * dot(w, p.fc.row(i))
			dm := gf * wn * math.Sqrt(p.fc.q[i]) * (1 + 2*u)
			g, e := p.loss.gapTerm(m, a[i], dm)
			sg += g
			se += e
			sa += a[i]
		}
		mu.Lock()
		sumG += sg
		sumErr += se
		sumA += sa
		mu.Unlock()
	})
	gn := gamma(p.fc.n + 2)
	drift := gn * p.c * sumA
	bound := p.c*(sumG*(1+gn)+sumErr*(1+gn)) + 0.5*drift*drift
	return w, bound * (1 + 4*u)
}

// gamma is Higham's γ_k = k·u/(1 − k·u).
func gamma(k int) float64 {
	ku := float64(k) * u
	return ku / (1 - ku)
}

// shuffled returns a uniformly random permutation of [0, n) drawn with the
// crypto-backed sampler (solver randomness, not privacy noise).
func shuffled(n int) []int {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := int(noise.IntN(uint64(i + 1)))
		perm[i], perm[j] = perm[j], perm[i]
	}
	return perm
}

// epochOrder returns a random offset and a random stride coprime with n.
func epochOrder(n int) (off, stride int) {
	if n == 1 {
		return 0, 1
	}
	off = int(noise.IntN(uint64(n)))
	for {
		stride = 1 + int(noise.IntN(uint64(n-1)))
		if gcd(stride, n) == 1 {
			return off, stride
		}
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// dot returns ⟨w, x⟩ in float64.
func dot(w []float64, x []float32) float64 {
	w = w[:len(x)]
	var s0, s1, s2, s3 float64
	for len(x) >= 4 {
		xs, ws := x[:4:4], w[:4:4]
		s0 += ws[0] * float64(xs[0])
		s1 += ws[1] * float64(xs[1])
		s2 += ws[2] * float64(xs[2])
		s3 += ws[3] * float64(xs[3])
		x, w = x[4:], w[4:]
	}
	for i := range x {
		s0 += w[i] * float64(x[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy computes w += s·x.
func axpy(s float64, x []float32, w []float64) {
	w = w[:len(x)]
	for len(x) >= 4 {
		xs, ws := x[:4:4], w[:4:4]
		ws[0] += s * float64(xs[0])
		ws[1] += s * float64(xs[1])
		ws[2] += s * float64(xs[2])
		ws[3] += s * float64(xs[3])
		x, w = x[4:], w[4:]
	}
	for i := range x {
		w[i] += s * float64(x[i])
	}
}
