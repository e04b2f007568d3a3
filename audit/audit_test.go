package audit

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// The harness is tested with math/rand noise (fast, test-only): its
// correctness does not depend on the production samplers.

func laplace(r *rand.Rand, scale float64) float64 {
	e := r.ExpFloat64() * scale
	if r.IntN(2) == 0 {
		return -e
	}
	return e
}

// laplaceShift is the Laplace mechanism with Δ = 1 and scale b: true ε = 1/b.
func laplaceShift(seed uint64, scale float64) Sampler {
	r := rand.New(rand.NewPCG(seed, 1))
	return func(neighbour int) float64 { return float64(neighbour) + laplace(r, scale) }
}

func TestRunDeterministicCaught(t *testing.T) {
	r := Run(func(neighbour int) float64 { return float64(neighbour) }, Config{N: 1000})
	// All 500 test outputs fall on one side: log(a^(1/500)/(1 − a^(1/500))).
	a := DefaultAlpha / 4
	want := math.Log(math.Pow(a, 1.0/500) / (1 - math.Pow(a, 1.0/500)))
	if math.Abs(r.EpsLower-want) > 1e-9 {
		t.Fatalf("deterministic mechanism: EpsLower = %v, want %v", r.EpsLower, want)
	}
	if r.N != 1000 || r.Direction == "" {
		t.Fatalf("result not filled in: %+v", r)
	}
}

func TestRunIdenticalDistributionsGiveZero(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	res := Run(func(int) float64 { return laplace(r, 1) }, Config{N: 20000})
	if res.EpsLower != 0 {
		t.Fatalf("identical distributions: EpsLower = %v, want 0", res.EpsLower)
	}
}

// Validity: the bound may exceed the true ε in at most a fraction α of
// audits. At α = 0.2 over 150 audits, more than 56 exceedances has
// probability below 1e-6 for a valid harness (Binomial(150, 0.2): mean 30,
// sd 4.9); a harness that tests on its calibration half exceeds in about half
// of the audits. (The bound is conservative: a valid run sees a few percent.)
func TestRunValidity(t *testing.T) {
	const runs, alpha = 150, 0.2
	exceed := 0
	for i := 0; i < runs; i++ {
		res := Run(laplaceShift(uint64(i), 1), Config{N: 1000, Alpha: alpha})
		if res.EpsLower > 1 {
			exceed++
		}
	}
	t.Logf("EpsLower > true ε in %d of %d audits at α = %v", exceed, runs, alpha)
	if exceed > 56 {
		t.Fatalf("bound exceeded the true ε in %d of %d audits at α = %v", exceed, runs, alpha)
	}
}

func TestRunPowerOnHalvedLaplace(t *testing.T) {
	res := Run(laplaceShift(1, 0.5), Config{N: 4000})
	if res.Passes(1) {
		t.Fatalf("halved Laplace noise not caught: %v", res)
	}
	if res.EpsLower > 2 {
		t.Fatalf("EpsLower %v exceeds the true ε = 2", res.EpsLower)
	}
}

// A mechanism that reveals neighbour 0 with probability q is (0, q)-DP.
func TestRunDelta(t *testing.T) {
	const q = 0.01
	r := rand.New(rand.NewPCG(3, 3))
	leaky := func(neighbour int) float64 {
		if neighbour == 0 && r.Float64() < q {
			return 1
		}
		return 0
	}
	if res := Run(leaky, Config{N: 20000}); res.Passes(1) {
		t.Fatalf("(0, %v)-DP mechanism passed a pure ε = 1 claim: %v", q, res)
	}
	if res := Run(leaky, Config{N: 20000, Delta: 2 * q}); !res.Passes(0.1) {
		t.Fatalf("(0, %v)-DP mechanism failed an (0.1, %v) claim: %v", q, 2*q, res)
	}
}

// The leak is only in the ratio P[M(D1) ∈ E]/P[M(D0) ∈ E]; the audit must
// find it in that direction, for both kinds of event.
func TestRunBothDirections(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, sign := range []float64{1, -1} {
		s := func(neighbour int) float64 {
			p := 0.05
			if neighbour == 1 {
				p = 0.5
			}
			if r.Float64() < p {
				return sign
			}
			return 0
		}
		res := Run(s, Config{N: 5000})
		op := ">"
		if sign < 0 {
			op = "<"
		}
		if res.EpsLower < 1.5 || !strings.HasPrefix(res.Direction, "P[M(D1) "+op) {
			t.Fatalf("sign %v: %v, want ε_lower ≥ 1.5 in direction D1 %s", sign, res, op)
		}
	}
}

func TestRunNaNAndSmallN(t *testing.T) {
	nan := func(neighbour int) float64 {
		if neighbour == 1 {
			return math.NaN()
		}
		return 0
	}
	if res := Run(nan, Config{N: 1000}); res.Passes(1) {
		t.Fatalf("NaN outputs on one neighbour not caught: %v", res)
	}
	for _, n := range []int{0, 1} {
		if res := Run(nan, Config{N: n}); res.EpsLower != 0 || res.N != n {
			t.Fatalf("N = %d: %+v", n, res)
		}
	}
}

// fakeTB records Fatalf instead of failing the real test.
type fakeTB struct {
	testing.TB
	failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Logf(string, ...any)   {}
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true; runtime.Goexit() }
func (f *fakeTB) Errorf(string, ...any) { f.failed = true }
func (f *fakeTB) Fatal(...any)          { f.failed = true; runtime.Goexit() }
func (f *fakeTB) Log(...any)            {}
func (f *fakeTB) Name() string          { return "fake" }
func (f *fakeTB) Cleanup(func())        {}
func (f *fakeTB) Setenv(string, string) {}
func (f *fakeTB) Skipf(string, ...any)  { runtime.Goexit() }
func (f *fakeTB) TempDir() string       { return "" }
func (f *fakeTB) Failed() bool          { return f.failed }
func (f *fakeTB) Skip(...any)           { runtime.Goexit() }
func (f *fakeTB) FailNow()              { f.failed = true; runtime.Goexit() }
func (f *fakeTB) Fail()                 { f.failed = true }
func (f *fakeTB) SkipNow()              { runtime.Goexit() }
func (f *fakeTB) Skipped() bool         { return false }
func (f *fakeTB) Error(...any)          { f.failed = true }

func fails(run func(tb testing.TB)) bool {
	f := &fakeTB{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		run(f)
	}()
	wg.Wait()
	return f.failed
}

// The helpers' logic is tested through the unexported versions, which run
// in every build (the exported ones skip under -race).
func TestRequireHelpers(t *testing.T) {
	deterministic := func(neighbour int) float64 { return float64(neighbour) }
	cfg := Config{N: 1000}
	if !fails(func(tb testing.TB) { requirePass(tb, deterministic, 1, cfg) }) {
		t.Error("RequirePass accepted a deterministic mechanism")
	}
	if fails(func(tb testing.TB) { requireCatch(tb, deterministic, 1, cfg) }) {
		t.Error("RequireCatch did not accept a caught mechanism")
	}
	correct := laplaceShift(11, 1)
	if fails(func(tb testing.TB) { requirePass(tb, correct, 1, cfg) }) {
		t.Error("RequirePass rejected a correct mechanism")
	}
	if !fails(func(tb testing.TB) { requireCatch(tb, correct, 1, cfg) }) {
		t.Error("RequireCatch accepted a correct mechanism as caught")
	}
	for _, bad := range []Config{{N: MinN - 1}, {N: 1000, Alpha: 1}, {N: 1000, Delta: -1}} {
		if !fails(func(tb testing.TB) { requireCatch(tb, deterministic, 1, bad) }) {
			t.Errorf("misconfigured audit %+v accepted", bad)
		}
	}
}
