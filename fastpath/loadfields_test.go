package fastpath

import (
	"reflect"
	"testing"
)

// TestSplitLoadFields: MySQL's LOAD DATA field rules (issue 29): escapes
// (\t is a tab, not t), \N, OPTIONALLY ENCLOSED BY with some fields quoted
// (R's write.csv), doubled quotes, terminators inside quotes.
func TestSplitLoadFields(t *testing.T) {
	f := func(s string) loadField { return loadField{s: s} }
	null := loadField{null: true}
	for _, c := range []struct {
		line, term string
		encl, esc  byte
		want       []loadField
	}{
		{"a\\tb\tc", "\t", 0, '\\', []loadField{f("a\tb"), f("c")}},
		{"\\N\tNULL\t\\\\N\tx\\ny", "\t", 0, '\\', []loadField{null, null, f("\\N"), f("x\ny")}},
		{"a\\\tb\tc", "\t", 0, '\\', []loadField{f("a\tb"), f("c")}},
		{`1,"Smith, J",3.5,"say ""hi"""`, ",", '"', '\\', []loadField{f("1"), f("Smith, J"), f("3.5"), f(`say "hi"`)}},
		{`"1","a",""`, ",", '"', '\\', []loadField{f("1"), f("a"), f("")}},
		{`NA,"NULL",NULL`, ",", '"', '\\', []loadField{f("NA"), f("NULL"), null}},
		{`a,b,`, ",", '"', 0, []loadField{f("a"), f("b"), f("")}},
		{`"a\"b",c`, ",", '"', '\\', []loadField{f(`a"b`), f("c")}},
		{`"open,x`, ",", '"', 0, []loadField{f(`"open,x`)}},
		{"a||b", "||", 0, 0, []loadField{f("a"), f("b")}},
		{`a\Zb\0`, ",", 0, '\\', []loadField{f("a\x1ab\x00")}},
	} {
		got := splitLoadFields(nil, c.line, c.term, c.encl, c.esc)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %+v, want %+v", c.line, got, c.want)
		}
	}
}
