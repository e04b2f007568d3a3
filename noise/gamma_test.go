package noise

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func TestGammaValidation(t *testing.T) {
	bad := []float64{0, -1, math.NaN(), math.Inf(1)}
	for _, v := range bad {
		if _, err := Gamma(v, 1); err == nil {
			t.Errorf("Gamma(%v, 1): want error", v)
		}
		if _, err := Gamma(1, v); err == nil {
			t.Errorf("Gamma(1, %v): want error", v)
		}
		if _, err := GammaDirection(3, v); err == nil {
			t.Errorf("GammaDirection(3, %v): want error", v)
		}
		if _, err := GammaDirectionScaled(3, v); err == nil {
			t.Errorf("GammaDirectionScaled(3, %v): want error", v)
		}
	}
	for _, dim := range []int{0, -1, maxGammaDim + 1} {
		if _, err := GammaDirection(dim, 1); err == nil {
			t.Errorf("GammaDirection(%d, 1): want error", dim)
		}
	}
	if _, err := Gamma(1e300, 1e300); err == nil {
		t.Errorf("Gamma overflowing float64: want error")
	}
}

func TestGammaDirectionScaleFormula(t *testing.T) {
	for _, c := range []struct{ eps, want float64 }{{1, 2}, {0.5, 4}, {2, 1}, {0.1, 20}} {
		if got := gammaDirectionScale(c.eps); got != c.want {
			t.Fatalf("scale for ε = %v: got %v, want %v", c.eps, got, c.want)
		}
	}
}

// KS and moment tests against gonum's Gamma, which takes the RATE β = 1/θ.
func TestGammaDistribution(t *testing.T) {
	const n = 20000
	for _, c := range []struct{ shape, scale float64 }{{0.5, 2}, {1, 2}, {3.7, 0.5}, {100, 2}} {
		ref := distuv.Gamma{Alpha: c.shape, Beta: 1 / c.scale}
		x := make([]float64, n)
		for i := range x {
			v, err := Gamma(c.shape, c.scale)
			if err != nil {
				t.Fatal(err)
			}
			x[i] = v
		}
		requireKS(t, "Gamma", x, ref.CDF)
		m, _ := meanVar(x)
		requireWithin(t, "Gamma mean", m, c.shape*c.scale, math.Sqrt(c.shape)*c.scale/math.Sqrt(n), 6)
	}
	// Large shape, as used for a 65×65 matrix: mean kθ, variance kθ².
	const k, theta, m = 65 * 65, 2.0, 20000
	x := make([]float64, m)
	for i := range x {
		x[i], _ = Gamma(k, theta)
	}
	mean, v := meanVar(x)
	requireWithin(t, "Gamma(4225, 2) mean", mean, k*theta, math.Sqrt(k)*theta/math.Sqrt(m), 6)
	// Var of the sample variance ≈ (μ₄ − σ⁴)/n with μ₄ ≈ 3σ⁴ for large k.
	requireWithin(t, "Gamma(4225, 2) variance", v, k*theta*theta, k*theta*theta*math.Sqrt(2.0/m), 6)
}

func norm2(b []float64) float64 {
	var s float64
	for _, v := range b {
		s += v * v
	}
	return math.Sqrt(s)
}

// ‖b‖ ~ Gamma(dim, 2/ε) (scale), direction isotropic.
func TestGammaDirectionDistribution(t *testing.T) {
	const n = 20000
	const dim, eps = 3, 0.8
	ref := distuv.Gamma{Alpha: dim, Beta: eps / 2} // rate = 1/scale = ε/2
	norms := make([]float64, n)
	var sum [dim]float64
	var second [dim][dim]float64
	for i := range norms {
		b, err := GammaDirection(dim, eps)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != dim {
			t.Fatalf("len = %d", len(b))
		}
		r := norm2(b)
		norms[i] = r
		for j := range b {
			u := b[j] / r
			sum[j] += u
			for k := range b {
				second[j][k] += u * b[k] / r
			}
		}
	}
	requireKS(t, "GammaDirection norm", norms, ref.CDF)
	// Unit direction u: E[u] = 0, E[u uᵀ] = I/dim; Var(u_j) = 1/dim, and
	// Var(u_j u_k) = E[u_j²u_k²] = 1/(dim(dim+2)) for j ≠ k.
	for j := 0; j < dim; j++ {
		requireWithin(t, "E[u_j]", sum[j]/n, 0, math.Sqrt(1.0/dim/n), 6)
		// Var(u_j²) = E[u_j⁴] − 1/dim² = 3/(dim(dim+2)) − 1/dim².
		requireWithin(t, "E[u_j²]", second[j][j]/n, 1.0/dim, math.Sqrt((3.0/(dim*(dim+2))-1.0/(dim*dim))/n), 6)
		for k := j + 1; k < dim; k++ {
			requireWithin(t, "E[u_j u_k]", second[j][k]/n, 0, math.Sqrt(1.0/(dim*(dim+2))/n), 6)
		}
	}
	// The uniform angle of a 2-D direction, as a KS test.
	angles := make([]float64, n)
	for i := range angles {
		b, _ := GammaDirection(2, eps)
		angles[i] = math.Atan2(b[1], b[0])
	}
	requireKS(t, "GammaDirection 2-D angle", angles, func(a float64) float64 { return (a + math.Pi) / (2 * math.Pi) })
}

// The general form: norm ~ Gamma(dim, β); GammaDirection(dim, ε) is β = 2/ε.
// At the matrix size used by the multiclass classifier the mean norm must be
// dim·β, which also separates β = 2/ε from the swapped θ = ε/2.
func TestGammaDirectionScaledNorm(t *testing.T) {
	const dim, rounds = 65 * 65, 100
	for _, beta := range []float64{0.5, 2} {
		var sum float64
		for r := 0; r < rounds; r++ {
			b, err := GammaDirectionScaled(dim, beta)
			if err != nil {
				t.Fatal(err)
			}
			sum += norm2(b)
		}
		requireWithin(t, "mean ‖b‖ at dim 4225", sum/rounds, dim*beta, math.Sqrt(dim)*beta/math.Sqrt(rounds), 6)
	}
	var sum float64
	for r := 0; r < rounds; r++ {
		b, _ := GammaDirection(dim, 1)
		sum += norm2(b)
	}
	requireWithin(t, "GammaDirection(4225, ε=1) mean norm = dim·2/ε", sum/rounds, dim*2, math.Sqrt(dim)*2/math.Sqrt(rounds), 6)
}
