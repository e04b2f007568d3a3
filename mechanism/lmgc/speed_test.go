package lmgc

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// evalReference is the data-term evaluation before the lifted-row rewrite
// (revision f60da9c, docs/results/speed.md): per chunk of 1024 rows one
// GEMM x̃ᵀ[Φ_1 | … | Φ_C], the margins as D-dots, and the gradient blocks
// as XₐᵀWₐ over the rows with a non-zero weight. It is kept to check that
// the new code path computes the same function.
func evalReference(p *problem, phi, grad []float64) float64 {
	const chunk = 1024
	C, D := p.classes, p.dim
	dd, cd := D*D, C*D
	cat := make([]float64, D*cd)
	for k := 0; k < C; k++ {
		for i := 0; i < D; i++ {
			copy(cat[i*cd+k*D:i*cd+(k+1)*D], phi[k*dd+i*D:k*dd+(i+1)*D])
		}
	}
	catm := blas64.General{Rows: D, Cols: cd, Stride: cd, Data: cat}
	rowsMax := min(p.n, chunk)
	q := make([]float64, rowsMax*cd)
	xa, wa := make([][]float64, C), make([][]float64, C)
	for k := range xa {
		xa[k], wa[k] = make([]float64, rowsMax*D), make([]float64, rowsMax*D)
	}
	na := make([]int, C)
	marg := make([]float64, C)
	if grad != nil {
		clear(grad)
	}
	inv := 1 / float64(p.n)
	var loss float64
	for start := 0; start < p.n; start += chunk {
		rows := min(chunk, p.n-start)
		xc := blas64.General{Rows: rows, Cols: D, Stride: D, Data: p.x[start*D : (start+rows)*D]}
		qm := blas64.General{Rows: rows, Cols: cd, Stride: cd, Data: q[:rows*cd]}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, xc, catm, 0, qm)
		clear(na)
		for r := 0; r < rows; r++ {
			xr := xc.Data[r*D : (r+1)*D]
			qr := qm.Data[r*cd : (r+1)*cd]
			for k := 0; k < C; k++ {
				var s float64
				for j, v := range xr {
					s += v * qr[k*D+j]
				}
				marg[k] = s
			}
			yr := p.y[start+r]
			w := marg
			qy := w[yr]
			var wy float64
			for c := 0; c < C; c++ {
				if c == yr {
					continue
				}
				v, s := huber(1+qy-w[c], p.h)
				loss += v
				wy += s
				w[c] = -s
			}
			w[yr] = wy
			for k, wk := range w {
				if wk == 0 {
					continue
				}
				a := na[k]
				copy(xa[k][a*D:(a+1)*D], xr)
				for j, v := range xr {
					wa[k][a*D+j] = wk * v
				}
				na[k]++
			}
		}
		if grad == nil {
			continue
		}
		for k := 0; k < C; k++ {
			a := na[k]
			if a == 0 {
				continue
			}
			xm := blas64.General{Rows: a, Cols: D, Stride: D, Data: xa[k][:a*D]}
			wm := blas64.General{Rows: a, Cols: D, Stride: D, Data: wa[k][:a*D]}
			gk := blas64.General{Rows: D, Cols: D, Stride: D, Data: grad[k*dd : (k+1)*dd]}
			blas64.Gemm(blas.Trans, blas.NoTrans, inv, xm, wm, 1, gk)
		}
	}
	value := loss * inv
	var sq, lin, tr float64
	for k := 0; k < C; k++ {
		for i := 0; i < D-1; i++ {
			tr += phi[k*dd+i*D+i]
			if grad != nil {
				grad[k*dd+i*D+i] += p.lambda
			}
		}
	}
	for i, v := range phi {
		sq += v * v
		if grad != nil {
			grad[i] += p.delta * v
		}
	}
	if p.b != nil {
		for i, v := range p.b {
			lin += v * phi[i]
			if grad != nil {
				grad[i] += inv * v
			}
		}
		lin *= inv
	}
	return value + p.lambda*tr + p.delta/2*sq + lin
}

// solveReference is solve with evalReference: the V-FISTA loop before the
// rewrite.
func solveReference(p *problem, smooth float64, iters int) []float64 {
	kappa := math.Sqrt(smooth / p.delta)
	mom := (kappa - 1) / (kappa + 1)
	x := p.start()
	xn := make([]float64, p.size())
	y := append([]float64(nil), x...)
	g := make([]float64, p.size())
	for range iters {
		evalReference(p, y, g)
		p.projectedStep(y, g, xn, smooth)
		for i := range y {
			y[i] = xn[i] + mom*(xn[i]-x[i])
		}
		x, xn = xn, x
	}
	return x
}

// TestEvalMatchesReference: the lifted-row evaluation gives the value and
// gradient of the previous code to rounding, on sizes that exercise one and
// several parts, the lift cache and its per-block fallback.
func TestEvalMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct{ n, d, classes int }{{7, 3, 2}, {1500, 4, 3}, {5000, 12, 5}, {2100, 30, 2}} {
		D := c.d + 1
		ds := synthetic(c.n, c.d, c.classes, uint64(c.n))
		p, err := Plan(ds.config(1, c.n))
		if err != nil {
			t.Fatal(err)
		}
		xs := make([]float64, c.n*D)
		for i, row := range ds.x {
			p.scaler.Transform(xs[i*D:(i+1)*D], row)
		}
		b := p.objectiveNoise()
		for _, cached := range []bool{true, false} {
			prob := newProblem(c.classes, D, xs, ds.y, p.cfg.H, p.cfg.Lambda, p.cal.StrongConvexity, b)
			if !cached {
				prob.z = nil
			}
			// A PSD point with margins on both sides of the Huber zone.
			phi := randomPhi(r, c.classes, D, 2, true)
			g, gr := make([]float64, prob.size()), make([]float64, prob.size())
			v, vr := prob.eval(phi, g), evalReference(prob, phi, gr)
			if math.Abs(v-vr) > 1e-12*math.Max(1, math.Abs(vr)) {
				t.Errorf("n=%d d=%d C=%d cached=%v: value %v, reference %v", c.n, c.d, c.classes, cached, v, vr)
			}
			var diff, scale float64
			for i := range g {
				diff = math.Max(diff, math.Abs(g[i]-gr[i]))
				scale = math.Max(scale, math.Abs(gr[i]))
			}
			if diff > 1e-12*math.Max(1, scale) {
				t.Errorf("n=%d d=%d C=%d cached=%v: gradient differs by %v (scale %v)", c.n, c.d, c.classes, cached, diff, scale)
			}
			if v2 := prob.eval(phi, nil); v2 != v {
				t.Errorf("value without gradient %v, with %v", v2, v)
			}
		}
	}
}

// TestSolveMatchesReference: for the same perturbation b, the default
// solve (a-priori count T) of the new code path ends within a small
// fraction of the solver target r_s/2 of the previous code's iterate, so
// the release (same output noise) is the same model to solver precision.
func TestSolveMatchesReference(t *testing.T) {
	for _, c := range []struct {
		n, d, classes int
		eps           float64
	}{{1200, 6, 3, 1}, {3000, 10, 5, 0.3}} {
		D := c.d + 1
		ds := synthetic(c.n, c.d, c.classes, 5)
		p, err := Plan(ds.config(c.eps, c.n))
		if err != nil {
			t.Fatal(err)
		}
		xs := make([]float64, c.n*D)
		for i, row := range ds.x {
			p.scaler.Transform(xs[i*D:(i+1)*D], row)
		}
		b := p.objectiveNoise()
		prob := newProblem(c.classes, D, xs, ds.y, p.cfg.H, p.cfg.Lambda, p.cal.StrongConvexity, b)
		smooth := float64(c.classes)*p.cal.Curvature + p.cal.StrongConvexity
		got := prob.solve(smooth, p.cal.Iterations).phi
		want := solveReference(prob, smooth, p.cal.Iterations)
		var d2 float64
		for i := range got {
			d2 += (got[i] - want[i]) * (got[i] - want[i])
		}
		dist, target := math.Sqrt(d2), p.cal.Radius/2
		t.Logf("n=%d d=%d C=%d ε=%v T=%d: ‖new − old‖ = %.3g, r_s/2 = %.3g, ‖Φ‖ = %.3g", c.n, c.d, c.classes, c.eps, p.cal.Iterations, dist, target, norm2(want))
		if !(dist <= 1e-3*target) {
			t.Errorf("n=%d d=%d C=%d: new and old solves differ by %v, more than 10⁻³·r_s/2 = %v", c.n, c.d, c.classes, dist, 1e-3*target)
		}
	}
}
