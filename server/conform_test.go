package server

import (
	"strings"
	"testing"
	"time"
)

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

// TestWireFixes: the representations wire.go corrects.
func TestWireFixes(t *testing.T) {
	for in, want := range map[string]string{
		"1-1-1 3:25:45.5": "0001-01-01 03:25:45.000005", // vitess: 5 µs as ".5"
		"2021-3-4 5:6:7":  "2021-03-04 05:06:07",
		"2021-3-4":        "2021-03-04",
		"0-0-0 0:0:0.0":   "0000-00-00 00:00:00",
		" ":               "0000-00-00 00:00:00", // a zero-length binary date
		"2021-03-04 x":    "",
	} {
		got, ok := normalizeBinaryDate(in)
		if !ok {
			got = ""
		}
		if got != want {
			t.Errorf("normalizeBinaryDate(%q) = %q, want %q", in, got, want)
		}
	}
	for raw, want := range map[string]bool{"0000-00-00": true, "0000-00-00 00:00:00.000000": true, "0000-00-01": false, "2000-00-00": false, "": false} {
		if isZeroDate([]byte(raw)) != want {
			t.Errorf("isZeroDate(%q) != %v", raw, want)
		}
	}
	for q, want := range map[string]string{
		"SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci": "SET character_set_client = 'utf8mb4', character_set_results = 'utf8mb4', character_set_connection = 'utf8mb4', collation_connection = 'utf8mb4_unicode_ci'",
		"set names 'latin1' collate `latin1_bin`;":     "SET character_set_client = 'latin1', character_set_results = 'latin1', character_set_connection = 'latin1', collation_connection = 'latin1_bin'",
		"SET NAMES utf8mb4":                            "",
	} {
		got, _ := rewriteSetNames(q)
		if got != want {
			t.Errorf("rewriteSetNames(%q) = %q, want %q", q, got, want)
		}
	}
	for _, c := range [][3]string{
		{"SELECT * FROM (SELECT 1 AS one) AS A", "a", "A"},
		{"SELECT a.x FROM t AS A", "a", ""}, // two spellings: left alone
		{"SELECT x FROM `Tbl`", "tbl", "Tbl"},
	} {
		if got := uniqueSpelling(c[0], c[1]); got != c[2] {
			t.Errorf("uniqueSpelling(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

// TestStatisticsText: COM_STATISTICS's reply in MariaDB's layout (two
// spaces between items, three decimals).
func TestStatisticsText(t *testing.T) {
	got := statisticsText(8*time.Second+900*time.Millisecond, 3, 10, 1)
	want := "Uptime: 8  Threads: 3  Questions: 10  Slow queries: 1  Opens: 0  Open tables: 0  Queries per second avg: 1.250"
	if got != want {
		t.Errorf("statisticsText = %q, want %q", got, want)
	}
	if got := statisticsText(0, 1, 5, 0); !strings.HasSuffix(got, "Queries per second avg: 0.000") {
		t.Errorf("at uptime 0: %q", got)
	}
}

// TestClassifySecureFilePriv: go-mysql-server's secure_file_priv refusal
// (sent as 1105) is MySQL's 1290.
func TestClassifySecureFilePriv(t *testing.T) {
	code, state, _ := classifyError("LOAD DATA is unable to open file: The MySQL server is running with the --secure-file-priv option so it cannot execute this statement")
	if code != 1290 || state != "HY000" {
		t.Errorf("got %d/%s, want 1290/HY000", code, state)
	}
}
