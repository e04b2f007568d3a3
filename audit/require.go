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

// RequirePass runs the audit and fails the test if the lower bound on ε
// exceeds the claimed ε, i.e. if the mechanism is caught leaking more than
// it claims.
func RequirePass(t testing.TB, s Sampler, epsClaimed float64, cfg Config) {
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
// ε exceeds the claimed ε.
func RequireCatch(t testing.TB, s Sampler, epsClaimed float64, cfg Config) {
	t.Helper()
	checkConfig(t, cfg)
	r := Run(s, cfg)
	t.Logf("audit (expect catch, ε claimed %.4g, δ %.3g): %v", epsClaimed, cfg.Delta, r)
	if r.Passes(epsClaimed) {
		t.Fatalf("audit missed a broken mechanism: %v does not exceed claimed ε = %.4g", r, epsClaimed)
	}
}
