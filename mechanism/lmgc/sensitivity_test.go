package lmgc

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomPhi returns C symmetric D×D blocks: PSD (BBᵀ) when psd, else
// symmetric with both signs, scaled by scale.
func randomPhi(r *rand.Rand, classes, dim int, scale float64, psd bool) []float64 {
	phi := make([]float64, classes*dim*dim)
	for c := 0; c < classes; c++ {
		blk := phi[c*dim*dim : (c+1)*dim*dim]
		if psd {
			b := make([]float64, dim*dim)
			for i := range b {
				b[i] = r.NormFloat64()
			}
			for i := 0; i < dim; i++ {
				for j := 0; j < dim; j++ {
					var s float64
					for k := 0; k < dim; k++ {
						s += b[i*dim+k] * b[j*dim+k]
					}
					blk[i*dim+j] = scale * s / float64(dim)
				}
			}
			continue
		}
		for i := 0; i < dim; i++ {
			for j := i; j < dim; j++ {
				v := scale * r.NormFloat64()
				blk[i*dim+j], blk[j*dim+i] = v, v
			}
		}
	}
	return phi
}

// cornerRow returns x̃ for a raw row at a random corner of [−1, 1]^d
// (‖x̃‖ = 1), or a random interior row.
func scaledRow(r *rand.Rand, d int, corner bool) []float64 {
	D := d + 1
	x := make([]float64, D)
	inv := 1 / math.Sqrt(float64(D))
	for j := 0; j < d; j++ {
		if corner {
			x[j] = inv
			if r.IntN(2) == 0 {
				x[j] = -inv
			}
		} else {
			x[j] = (2*r.Float64() - 1) * inv
		}
	}
	x[d] = inv
	return x
}

func diffNorm(a, b []float64) float64 {
	var s float64
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return math.Sqrt(s)
}

// TestGradientSensitivity checks Lemma A on adversarial neighbours: the
// whole-gradient difference of two rows never exceeds S = √2·C, comes
// within rounding of it (same corner x, label flipped, all margins linear),
// and exceeds the paper's per-class bound 2.
func TestGradientSensitivity(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, classes := range []int{2, 3, 5, 10} {
		for _, d := range []int{1, 3} {
			for _, h := range []float64{0.1, 0.5, 2} {
				D := d + 1
				S := sensitivity(classes)
				g1 := make([]float64, classes*D*D)
				g2 := make([]float64, classes*D*D)
				var worst, worstBlock float64
				for trial := 0; trial < 400; trial++ {
					var phi []float64
					switch trial % 4 {
					case 0:
						phi = make([]float64, classes*D*D) // Φ = 0: all margins at z = 1
					case 1:
						phi = randomPhi(r, classes, D, 0.3, true)
					case 2:
						phi = randomPhi(r, classes, D, 3, true)
					default:
						phi = randomPhi(r, classes, D, 1, false)
					}
					x1 := scaledRow(r, d, trial%3 != 2)
					x2 := x1 // label flip on the same row: the extremal case
					if trial%5 == 4 {
						x2 = scaledRow(r, d, true)
					}
					y1 := r.IntN(classes)
					y2 := (y1 + 1 + r.IntN(classes-1)) % classes
					rowGradient(phi, classes, D, x1, y1, h, g1)
					rowGradient(phi, classes, D, x2, y2, h, g2)
					diff := diffNorm(g1, g2)
					if diff > S*(1+1e-12) {
						t.Fatalf("C=%d d=%d h=%v: ‖Δ∇‖ = %.17g > S = %.17g", classes, d, h, diff, S)
					}
					worst = math.Max(worst, diff)
					// Largest single-class block, the paper's Lemma 1 quantity.
					dd := D * D
					for c := 0; c < classes; c++ {
						worstBlock = math.Max(worstBlock, diffNorm(g1[c*dd:(c+1)*dd], g2[c*dd:(c+1)*dd]))
					}
				}
				if h < 1 && !near(worst, S, 1e-12) {
					t.Errorf("C=%d d=%d h=%v: max ‖Δ∇‖ = %.17g, want S = %.17g attained at Φ = 0", classes, d, h, worst, S)
				}
				if worst <= 2 {
					t.Errorf("C=%d: max ‖Δ∇‖ = %v does not exceed the paper's bound 2", classes, worst)
				}
				if classes >= 3 && h < 1 && !(worstBlock > 2) {
					t.Errorf("C=%d: largest per-class block difference %v, want > 2 (own class reaches C)", classes, worstBlock)
				}
			}
		}
	}
}

// TestDatasetGradientSensitivity checks the same bound on the summed
// gradient of two neighbouring datasets as computed by the solver's eval:
// n·‖∇f_D − ∇f_D′‖ ≤ S, and that eval's gradient is the sum of rowGradient.
func TestDatasetGradientSensitivity(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const classes, d, n = 4, 2, 37
	D := d + 1
	S := sensitivity(classes)
	x := make([]float64, n*D)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		copy(x[i*D:], scaledRow(r, d, i%2 == 0))
		y[i] = r.IntN(classes)
	}
	for trial := 0; trial < 50; trial++ {
		phi := randomPhi(r, classes, D, 0.5*float64(trial%3), trial%2 == 0)
		x2 := append([]float64(nil), x...)
		y2 := append([]int(nil), y...)
		i := r.IntN(n)
		y2[i] = (y[i] + 1 + r.IntN(classes-1)) % classes
		if trial%4 == 3 {
			copy(x2[i*D:], scaledRow(r, d, true))
		}
		p1 := newProblem(classes, D, x, y, 0.5, 0.01, 0.1, nil)
		p2 := newProblem(classes, D, x2, y2, 0.5, 0.01, 0.1, nil)
		g1 := make([]float64, p1.size())
		g2 := make([]float64, p1.size())
		p1.eval(phi, g1)
		p2.eval(phi, g2)
		if diff := float64(n) * diffNorm(g1, g2); diff > S*(1+1e-9) {
			t.Fatalf("n‖∇f_D − ∇f_D′‖ = %v > S = %v", diff, S)
		}
		// eval's loss gradient equals the average of the row gradients.
		sum := make([]float64, p1.size())
		row := make([]float64, p1.size())
		for k := 0; k < n; k++ {
			rowGradient(phi, classes, D, x[k*D:(k+1)*D], y[k], 0.5, row)
			for j := range sum {
				sum[j] += row[j] / n
			}
		}
		for c := 0; c < classes; c++ {
			for j := 0; j < d; j++ {
				sum[c*D*D+j*D+j] += 0.01
			}
		}
		for j := range sum {
			sum[j] += 0.1 * phi[j]
		}
		if e := diffNorm(sum, g1); e > 1e-12 {
			t.Fatalf("eval gradient differs from the row gradients by %v", e)
		}
	}
}

// TestEvalGradientFiniteDifference checks ∇f against central differences of
// f along random symmetric directions (including the b term).
func TestEvalGradientFiniteDifference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const classes, d, n = 3, 3, 20
	D := d + 1
	x := make([]float64, n*D)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		copy(x[i*D:], scaledRow(r, d, false))
		y[i] = r.IntN(classes)
	}
	b := randomPhi(r, classes, D, 1, false)
	p := newProblem(classes, D, x, y, 0.7, 0.05, 0.2, b)
	g := make([]float64, p.size())
	for trial := 0; trial < 20; trial++ {
		phi := randomPhi(r, classes, D, 0.5, true)
		dir := randomPhi(r, classes, D, 1, false)
		p.eval(phi, g)
		const step = 1e-6
		a := make([]float64, len(phi))
		c := make([]float64, len(phi))
		for i := range phi {
			a[i] = phi[i] + step*dir[i]
			c[i] = phi[i] - step*dir[i]
		}
		fd := (p.eval(a, nil) - p.eval(c, nil)) / (2 * step)
		var an float64
		for i := range g {
			an += g[i] * dir[i]
		}
		if math.Abs(fd-an) > 1e-6*(1+math.Abs(an)) {
			t.Errorf("directional derivative %v, finite difference %v", an, fd)
		}
	}
}

// svecBasis returns an orthonormal basis of (Sym_D)^C in full storage.
func svecBasis(classes, dim int) [][]float64 {
	var basis [][]float64
	for c := 0; c < classes; c++ {
		for i := 0; i < dim; i++ {
			for j := i; j < dim; j++ {
				e := make([]float64, classes*dim*dim)
				off := c * dim * dim
				if i == j {
					e[off+i*dim+i] = 1
				} else {
					e[off+i*dim+j], e[off+j*dim+i] = 1/math.Sqrt2, 1/math.Sqrt2
				}
				basis = append(basis, e)
			}
		}
	}
	return basis
}

// rowHessianLogDet returns Σ_j log(1 + μ_j/t) for the eigenvalues μ_j of one
// row's loss Hessian on 𝒮, computed by central differences of rowGradient
// in an orthonormal basis (exact away from the Huber kinks: the gradient is
// piecewise linear in Φ).
func rowHessianLogDet(t *testing.T, phi []float64, classes, dim int, x []float64, y int, h, tt float64) float64 {
	basis := svecBasis(classes, dim)
	m := len(basis)
	hess := mat.NewSymDense(m, nil)
	gp := make([]float64, len(phi))
	gm := make([]float64, len(phi))
	const step = 1e-7
	cols := make([][]float64, m)
	for a, e := range basis {
		pp := append([]float64(nil), phi...)
		pm := append([]float64(nil), phi...)
		for i := range e {
			pp[i] += step * e[i]
			pm[i] -= step * e[i]
		}
		rowGradient(pp, classes, dim, x, y, h, gp)
		rowGradient(pm, classes, dim, x, y, h, gm)
		col := make([]float64, m)
		for b, f := range basis {
			var s float64
			for i := range f {
				s += (gp[i] - gm[i]) * f[i]
			}
			col[b] = s / (2 * step)
		}
		cols[a] = col
	}
	for a := 0; a < m; a++ {
		for b := a; b < m; b++ {
			hess.SetSym(a, b, (cols[a][b]+cols[b][a])/2)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(hess, false) {
		t.Fatal("eigendecomposition failed")
	}
	var ld float64
	for _, mu := range es.Values(nil) {
		if mu < -1e-6 {
			t.Fatalf("row Hessian has a negative eigenvalue %v", mu)
		}
		ld += math.Log1p(math.Max(mu, 0) / tt)
	}
	return ld
}

// TestJacobianBound checks §4: Σ_j log(1 + μ_j(E)/(nΔ)) ≤ 𝒥(nΔ) for the
// numerically computed row Hessian E, with equality when every margin is in
// the quadratic zone and ‖x̃‖ = 1 (Φ = 0 with h ≥ 1). The rank-1 reading
// of the paper would allow only log(1 + μ_max/(nΔ)), which this exceeds.
func TestJacobianBound(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, classes := range []int{2, 3, 4} {
		const d = 1
		D := d + 1
		for _, h := range []float64{0.3, 1.5} {
			a := 1 / (2 * h)
			for _, tt := range []float64{0.5, 4} {
				bound := jacobianTerm(classes, a, tt)
				for trial := 0; trial < 30; trial++ {
					phi := randomPhi(r, classes, D, 0.4*float64(trial%3), trial%2 == 0)
					x := scaledRow(r, d, trial%2 == 0)
					y := r.IntN(classes)
					ld := rowHessianLogDet(t, phi, classes, D, x, y, h, tt)
					if ld > bound*(1+1e-6) {
						t.Fatalf("C=%d h=%v t=%v: log det = %v > 𝒥 = %v", classes, h, tt, ld, bound)
					}
				}
				if h >= 1 {
					zero := make([]float64, classes*D*D)
					ld := rowHessianLogDet(t, zero, classes, D, scaledRow(r, d, true), 0, h, tt)
					if !near(ld, bound, 1e-6) {
						t.Errorf("C=%d h=%v t=%v: log det at Φ = 0 is %v, want the bound %v", classes, h, tt, ld, bound)
					}
					if rank1 := math.Log1p(float64(classes) * a / tt); classes >= 3 && !(ld > rank1*(1+1e-6)) {
						t.Errorf("C=%d: log det %v does not exceed the rank-one value %v", classes, ld, rank1)
					}
				}
			}
		}
	}
}

// rowGradient writes the gradient of one row's loss ℓ(Φ; x̃, y) (all
// classes) into g (length C·D·D), directly from the formulas of Lemma A,
// independently of the solver's batched eval.
func rowGradient(phi []float64, classes, dim int, x []float64, y int, h float64, g []float64) {
	D := dim
	dd := D * D
	q := make([]float64, classes)
	for k := range q {
		q[k] = quad(phi[k*dd:(k+1)*dd], x)
	}
	clear(g)
	for c := 0; c < classes; c++ {
		if c == y {
			continue
		}
		_, s := huber(1+q[y]-q[c], h)
		addOuter(g[y*dd:(y+1)*dd], s, x)
		addOuter(g[c*dd:(c+1)*dd], -s, x)
	}
}

// quad returns xᵀAx for a row-major D×D matrix A.
func quad(a, x []float64) float64 {
	D := len(x)
	var s float64
	for i, xi := range x {
		var r float64
		row := a[i*D : (i+1)*D]
		for j, xj := range x {
			r += row[j] * xj
		}
		s += xi * r
	}
	return s
}

// addOuter adds s·xxᵀ to the row-major D×D matrix a.
func addOuter(a []float64, s float64, x []float64) {
	D := len(x)
	for i, xi := range x {
		row := a[i*D : (i+1)*D]
		for j, xj := range x {
			row[j] += s * xi * xj
		}
	}
}
