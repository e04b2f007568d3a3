package audit

import "testing"

// MinN is the smallest Config.N the test helpers accept: below it an audit
// cannot catch anything and a pass would say nothing.
const MinN = 100

func checkConfig(t testing.TB, cfg Config) {
	t.Helper()
	if cfg.N < MinN {
		t.Fatalf("audit: N = %d per side is below %d; the audit would be vacuous", cfg.N, MinN)
	}
	if cfg.Alpha < 0 || cfg.Alpha >= 1 {
		t.Fatalf("audit: α = %v outside [0, 1)", cfg.Alpha)
	}
	if cfg.Delta < 0 || cfg.Delta >= 1 {
		t.Fatalf("audit: δ = %v outside [0, 1)", cfg.Delta)
	}
}

// RaceSkip is the reason statistical audits give for not running in a -race
// build: CI runs every audit in its plain `go test ./...` pass, and the race
// pass (which multiplies the cost of the tens of thousands of noisy releases
// an audit draws by 5–10×) is there to find data races, which the other tests
// of each package exercise.
const RaceSkip = "statistical audit: runs in the plain go test pass; the -race pass checks concurrency only"

// RequirePass runs the audit and fails the test if the lower bound on ε
// exceeds the claimed ε, i.e. if the mechanism is caught leaking more than
// it claims. In a -race build it skips the test (RaceSkip).
func RequirePass(t testing.TB, s Sampler, epsClaimed float64, cfg Config) {
	t.Helper()
	if raceDetector {
		t.Skip(RaceSkip)
	}
	requirePass(t, s, epsClaimed, cfg)
}

func requirePass(t testing.TB, s Sampler, epsClaimed float64, cfg Config) {
	t.Helper()
	checkConfig(t, cfg)
	r := Run(s, cfg)
	t.Logf("audit (expect pass, ε claimed %.4g, δ %.3g): %v", epsClaimed, cfg.Delta, r)
	if !r.Passes(epsClaimed) {
		t.Fatalf("audit caught a privacy violation: %v exceeds claimed ε = %.4g", r, epsClaimed)
	}
}

// RequireCatch is an expected-failure test: it runs the audit on a
// deliberately broken mechanism and fails the test unless the lower bound on
// ε exceeds the claimed ε. In a -race build it skips the test (RaceSkip).
func RequireCatch(t testing.TB, s Sampler, epsClaimed float64, cfg Config) {
	t.Helper()
	if raceDetector {
		t.Skip(RaceSkip)
	}
	requireCatch(t, s, epsClaimed, cfg)
}

func requireCatch(t testing.TB, s Sampler, epsClaimed float64, cfg Config) {
	t.Helper()
	checkConfig(t, cfg)
	r := Run(s, cfg)
	t.Logf("audit (expect catch, ε claimed %.4g, δ %.3g): %v", epsClaimed, cfg.Delta, r)
	if r.Passes(epsClaimed) {
		t.Fatalf("audit missed a broken mechanism: %v does not exceed claimed ε = %.4g", r, epsClaimed)
	}
}
