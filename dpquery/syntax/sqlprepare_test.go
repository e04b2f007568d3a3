package syntax

import "testing"

func TestSQLPrepareForms(t *testing.T) {
	for _, tc := range []struct {
		q, name, text string
		ok            bool
	}{
		{`PREPARE s FROM 'SELECT 1'`, "s", "SELECT 1", true},
		{"/* c */ prepare `My``S` from \"SELECT 'a'\";", "my`s", "SELECT 'a'", true},
		{`PREPARE s FROM 'a ''b'' \'c\' \\ \n \% \_'`, "s", "a 'b' 'c' \\ \n \\% \\_", true},
		{`PREPARE s FROM @v`, "", "", false},
		{`PREPARE s FROM 'x' 'y'`, "", "", false},
		{`SELECT 'PREPARE s FROM ''x'''`, "", "", false},
	} {
		name, text, ok := SQLPrepare(tc.q)
		if ok != tc.ok || name != tc.name || text != tc.text {
			t.Errorf("SQLPrepare(%s) = %q, %q, %v; want %q, %q, %v", tc.q, name, text, ok, tc.name, tc.text, tc.ok)
		}
		if ok {
			// Quoting the text again reads back the same.
			n2, t2, ok2 := SQLPrepare(SQLPrepareText(name, text))
			if !ok2 || n2 != name || t2 != text {
				t.Errorf("round trip of %q: %q, %q, %v", tc.q, n2, t2, ok2)
			}
		}
	}
	if n, ok := SQLPrepareName("PREPARE S FROM @v"); !ok || n != "s" {
		t.Errorf("SQLPrepareName: %q %v", n, ok)
	}
	for _, tc := range []struct {
		q, name       string
		single, found bool
	}{
		{"EXECUTE s USING @a, @b;", "s", true, true},
		{"execute `T`", "t", true, true},
		{"EXECUTE s USING @a; SELECT 1", "s", false, true},
		{"EXECUTE s USING @a @b", "s", false, true},
		{"EXECUTE s USING 5", "s", false, true},
		{"EXECUTE", "", false, false},
	} {
		if n, single, ok := SQLExecute(tc.q); n != tc.name || single != tc.single || ok != tc.found {
			t.Errorf("SQLExecute(%s) = %q, %v, %v; want %q, %v, %v", tc.q, n, single, ok, tc.name, tc.single, tc.found)
		}
	}
	for q, want := range map[string]string{"DEALLOCATE PREPARE s": "s", "DROP PREPARE S": "s", "DROP TABLE s": ""} {
		if n, _ := SQLDeallocate(q); n != want {
			t.Errorf("SQLDeallocate(%s) = %q, want %q", q, n, want)
		}
	}
	for q, want := range map[string]bool{"EXECUTE s;": true, "PREPARE s FROM 'a; b';": true, "EXECUTE s; SELECT 1": false, "SELECT 1 -- ;": true} {
		if got := SingleStatement(q); got != want {
			t.Errorf("SingleStatement(%q) = %v, want %v", q, got, want)
		}
	}
}
