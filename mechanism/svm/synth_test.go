package svm

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/sirupsen/logrus"
)

// syntheticMulticlass returns n rows uniform in [−1, 1]^d labelled by the
// noisy argmax of K fixed random linear scores ⟨v_k, x⟩ + 0.5·N(0, 1): a
// linear one-vs-rest problem. The v_k depend only on (d, K); the rows on
// seed.
func syntheticMulticlass(n, d, k int, seed uint64) dataset {
	vr := rand.New(rand.NewPCG(uint64(d), uint64(k)))
	v := make([][]float64, k)
	for c := range v {
		v[c] = make([]float64, d)
		for j := range v[c] {
			v[c][j] = vr.NormFloat64()
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x3c1a55))
	ds := dataset{x: make([][]float64, n), y: make([]int, n)}
	for j := 0; j < d; j++ {
		ds.names = append(ds.names, fmt.Sprintf("x%d", j))
	}
	for i := range ds.x {
		x := make([]float64, d)
		for j := range x {
			x[j] = 2*rng.Float64() - 1
		}
		best, arg := -1e300, 0
		for c := range v {
			s := 0.5 * rng.NormFloat64()
			for j := range x {
				s += v[c][j] * x[j]
			}
			if s > best {
				best, arg = s, c
			}
		}
		ds.x[i], ds.y[i] = x, arg
	}
	return ds
}

// unitBoxConfig returns a Config for rows in [−1, 1]^d with K classes.
func unitBoxConfig(ds dataset, k int) Config {
	cfg := Config{Epsilon: 1, N: len(ds.x), Label: "y", Features: ds.names}
	for range ds.names {
		cfg.Lo = append(cfg.Lo, -1)
		cfg.Hi = append(cfg.Hi, 1)
	}
	for c := 0; c < k; c++ {
		cfg.Classes = append(cfg.Classes, fmt.Sprint(c))
	}
	return cfg
}

func mustPlan(t testing.TB, cfg Config) *Trainer {
	t.Helper()
	tr, err := Plan(cfg)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	return tr
}

// TestMain keeps the per-training log lines out of test output unless
// SVM_TEST_DEBUG is set.
func TestMain(m *testing.M) {
	if os.Getenv("SVM_TEST_DEBUG") == "" {
		logrus.SetLevel(logrus.WarnLevel)
	} else {
		logrus.SetLevel(logrus.DebugLevel)
	}
	os.Exit(m.Run())
}

// syntheticLinear returns n rows uniform in [−1, 1]^d labelled by a noisy
// hyperplane through the first three features.
func syntheticLinear(n, d int, seed uint64) dataset {
	rng := rand.New(rand.NewPCG(seed, 0x11ea7))
	ds := dataset{x: make([][]float64, n), y: make([]int, n)}
	for j := 0; j < d; j++ {
		ds.names = append(ds.names, fmt.Sprintf("x%d", j))
	}
	for i := range ds.x {
		x := make([]float64, d)
		for j := range x {
			x[j] = 2*rng.Float64() - 1
		}
		if x[0]+x[1]-x[2]+0.3*rng.NormFloat64() > 0 {
			ds.y[i] = 1
		}
		ds.x[i] = x
	}
	return ds
}

// syntheticXOR returns n rows uniform in [−1, 1]^d labelled by the sign of
// x₀·x₁ (plus a little noise): balanced and not linearly separable.
func syntheticXOR(n, d int, seed uint64) dataset {
	rng := rand.New(rand.NewPCG(seed, 0x0c0c))
	ds := dataset{x: make([][]float64, n), y: make([]int, n)}
	for j := 0; j < d; j++ {
		ds.names = append(ds.names, fmt.Sprintf("x%d", j))
	}
	for i := range ds.x {
		x := make([]float64, d)
		for j := range x {
			x[j] = 2*rng.Float64() - 1
		}
		if x[0]*x[1]+0.05*rng.NormFloat64() > 0 {
			ds.y[i] = 1
		}
		ds.x[i] = x
	}
	return ds
}
