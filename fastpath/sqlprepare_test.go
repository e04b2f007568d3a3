package fastpath

import "testing"

func TestFirstWord(t *testing.T) {
	for q, want := range map[string]string{"  -- x\n /* y */ (Prepare s": "prepare", "#\nEXECUTE": "execute", "/* open": "", "SELECT 1": "select"} {
		if got := firstWord(q); got != want {
			t.Errorf("firstWord(%q) = %q, want %q", q, got, want)
		}
	}
}
