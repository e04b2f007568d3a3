package server

import "testing"

// TestRewriteCompat: which statements are answered by the conformance
// layer, and what they become; EXPLAIN-like DESCRIBEs and ordinary
// statements are left alone.
func TestRewriteCompat(t *testing.T) {
	for q, want := range map[string]string{
		"DO 1":                         "SELECT 1",
		" /* x */ do 1, SLEEP(0) ;":    "SELECT 1, SLEEP(0)",
		"DESCRIBE t '%'":               "SHOW COLUMNS FROM t LIKE '%'",
		"desc `d`.`t` 'a%'":            "SHOW COLUMNS FROM `d`.`t` LIKE 'a%'",
		"DESCRIBE d.t col":             "SHOW COLUMNS FROM d.t LIKE 'col'",
		"DESCRIBE SELECT 1":            "",
		"DESC FORMAT=TREE SELECT 1":    "",
		"EXPLAIN SELECT x":             "",
		"SELECT 'DO 1'":                "",
		"DOUBLE":                       "",
		"DESCRIBE t":                   "",
		"DESCRIBE t 'a'; DROP TABLE t": "",
	} {
		got, _, ok := rewriteCompat(q)
		if !ok {
			got = ""
		}
		if got != want {
			t.Errorf("rewriteCompat(%q) = %q, want %q", q, got, want)
		}
	}
	for q, want := range map[string][]string{
		"ALTER USER bob ACCOUNT UNLOCK":                    {"bob"},
		"alter user if exists 'a'@'%', `b` account unlock": {"a", "b"},
		"ALTER USER bob IDENTIFIED BY 'x'":                 nil,
	} {
		got, _ := unlockTargets(q)
		if len(got) != len(want) || (len(want) > 0 && (got[0] != want[0] || got[len(got)-1] != want[len(want)-1])) {
			t.Errorf("unlockTargets(%q) = %q, want %q", q, got, want)
		}
	}
}
