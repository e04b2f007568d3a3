package functions

import (
	"fmt"
	"testing"

	"github.com/dpsql/dpsql/mechanism/linreg"
)

// planLinRegPush takes the fast (any-order DOUBLE) statement while its
// rounding allowance costs at most MaxAnyOrderInflation of noise, and the
// exact statement with the embedded plan beyond: a rule on public n only.
func TestPlanLinRegPush(t *testing.T) {
	f := make([]string, 20)
	lo, hi := make([]float64, 20), make([]float64, 20)
	for i := range f {
		f[i], lo[i], hi[i] = fmt.Sprintf("x%d", i+1), -1, 1
	}
	for _, c := range []struct {
		n         int
		wantExact bool
	}{{1000, false}, {1_000_000, false}, {10_000_000, false}, {100_000_000, true}, {10_000_000_000, true}} {
		cfg := linreg.Config{Epsilon: 1, Delta: 1e-6, N: c.n, Features: f, Lo: lo, Hi: hi, Label: "y", LabelLo: -1, LabelHi: 1}
		tr, out, exact, err := planLinRegPush(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if exact != c.wantExact || out.AnyOrderSums == exact {
			t.Fatalf("n=%d: exact=%v AnyOrderSums=%v, want exact=%v", c.n, exact, out.AnyOrderSums, c.wantExact)
		}
		emb, err := linreg.Plan(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := tr.Params()["noise_norm"] / emb.Params()["noise_norm"]
		if r < 1 || r > 1+linreg.MaxAnyOrderInflation {
			t.Fatalf("n=%d: noise ×%v", c.n, r)
		}
		t.Logf("n=%d: exact=%v, noise ×%.6f", c.n, exact, r)
	}
}
