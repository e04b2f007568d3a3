package syntax

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Options are the clause's options; zero values mean "not given".
type Options struct {
	Epsilon, Delta    float64
	HasDelta          bool
	MaxGroups         int
	MaxRows           int
	AutoRows          bool   // max_rows_contributed_per_group = auto
	PrivacyUnitColumn string // as written: column or table.column
}

// Bounds is a contribution_bounds_per_group argument: (Lo, Hi), or auto.
type Bounds struct {
	Lo, Hi float64
	Auto   bool
}

// Bounded is one aggregate call that carried contribution bounds: its
// function (lower case) and its argument's text (spaces removed), which is
// how the compiler finds it again (the planner reorders aggregates).
type Bounded struct {
	Func, Arg string
	Bounds
}

// Rewritten is the result of Rewrite.
type Rewritten struct {
	SQL     string
	Options Options
	Bounds  []Bounded
	// Explain: the statement is EXPLAIN (DESCRIBE, DESC) of the query; SQL
	// keeps the keyword.
	Explain bool
}

// ErrSyntax wraps every error of Rewrite.
var ErrSyntax = errors.New("DIFFERENTIAL_PRIVACY clause")

// errPlaceholder refuses a prepared statement's parameter (?) where the
// clause needs a literal: OPTIONS and contribution bounds fix the
// statement's ε, δ and sensitivity, which stay in its text (a prepared
// statement's parameters are the WHERE/HAVING values; a per-execution ε is
// SET SESSION dp_epsilon with the session path).
var errPlaceholder = synErr("a placeholder (?) in OPTIONS(…) or contribution_bounds_per_group is not taken: write the value in the statement (or prepare the query without the clause and SET SESSION dp_epsilon = ? before executing it)")

func synErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrSyntax}, a...)...)
}

// token is a lexical token: its text and byte span in the input.
type token struct {
	text       string
	start, end int
	word       bool // identifier or keyword (unquoted)
}

// lex splits q into tokens, dropping whitespace and comments; string
// literals and quoted identifiers are single tokens.
func lex(q string) ([]token, error) {
	var out []token
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '-' && strings.HasPrefix(q[i:], "--"), c == '#':
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				return nil, synErr("unterminated comment")
			}
			i += j + 4
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for ; j < len(q); j++ {
				if q[j] == '\\' && c != '`' {
					j++
					continue
				}
				if q[j] == c {
					if j+1 < len(q) && q[j+1] == c { // doubled quote
						j++
						continue
					}
					break
				}
			}
			if j >= len(q) {
				return nil, synErr("unterminated quoted text")
			}
			out = append(out, token{text: q[i : j+1], start: i, end: j + 1})
			i = j + 1
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9':
			j := i
			for j < len(q) && (q[j] >= '0' && q[j] <= '9' || q[j] == '.') {
				j++
			}
			if j < len(q) && (q[j] == 'e' || q[j] == 'E') {
				k := j + 1
				if k < len(q) && (q[k] == '+' || q[k] == '-') {
					k++
				}
				if k < len(q) && q[k] >= '0' && q[k] <= '9' {
					for j = k; j < len(q) && q[j] >= '0' && q[j] <= '9'; j++ {
					}
				}
			}
			out = append(out, token{text: q[i:j], start: i, end: j})
			i = j
		case isWord(c):
			j := i
			for j < len(q) && (isWord(q[j]) || q[j] == '.') {
				j++
			}
			out = append(out, token{text: q[i:j], start: i, end: j, word: true})
			i = j
		case c == '=' && strings.HasPrefix(q[i:], "=>"):
			out = append(out, token{text: "=>", start: i, end: i + 2})
			i += 2
		default:
			out = append(out, token{text: string(c), start: i, end: i + 1})
			i++
		}
	}
	return out, nil
}

func isWord(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Has reports whether q starts with SELECT WITH DIFFERENTIAL_PRIVACY (a
// cheap test before Rewrite).
func Has(q string) bool {
	toks, err := lex(q)
	if err != nil {
		return false
	}
	toks = toks[explainPrefix(toks):]
	return len(toks) >= 3 && strings.EqualFold(toks[0].text, "select") &&
		strings.EqualFold(toks[1].text, "with") && strings.EqualFold(toks[2].text, "differential_privacy")
}

// explainPrefix is the number of tokens of a leading EXPLAIN, DESCRIBE or
// DESC (0 or 1): EXPLAIN SELECT WITH DIFFERENTIAL_PRIVACY … asks for the
// DP plan of the query (docs/sql.md "EXPLAIN of a DP query"); the prefix
// is kept in the rewritten text. Other EXPLAIN options (FORMAT=…,
// ANALYZE) are not taken: the clause must follow the keyword directly.
func explainPrefix(toks []token) int {
	if len(toks) > 0 && toks[0].word {
		switch strings.ToLower(toks[0].text) {
		case "explain", "describe", "desc":
			if len(toks) > 1 && toks[1].word && strings.EqualFold(toks[1].text, "analyze") {
				return 2 // refused by Rewrite, with the reason
			}
			return 1
		}
	}
	return 0
}

// Rewrite removes the clause and the aggregate bounds. A statement without
// the clause is an error (call Has first).
func Rewrite(q string) (*Rewritten, error) {
	toks, err := lex(q)
	if err != nil {
		return nil, err
	}
	if !Has(q) {
		return nil, synErr("the statement does not start with SELECT WITH DIFFERENTIAL_PRIVACY")
	}
	r := &Rewritten{}
	start := toks[0].start
	pre := explainPrefix(toks)
	if pre == 2 {
		return nil, synErr("EXPLAIN ANALYZE would run the DP release and spend its budget without showing its answer: EXPLAIN <query> shows the DP plan (charge, noise scales, bounds) without charging, and the query itself gives the answer")
	}
	r.Explain = pre > 0
	toks = toks[pre:]
	i := 3
	if i >= len(toks) || !strings.EqualFold(toks[i].text, "options") {
		return nil, synErr("SELECT WITH DIFFERENTIAL_PRIVACY needs OPTIONS(epsilon = …)")
	}
	i++
	if i >= len(toks) || toks[i].text != "(" {
		return nil, synErr("OPTIONS needs a parenthesised list")
	}
	end, err := r.options(toks, i+1)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(q[start:toks[0].end]) // [EXPLAIN] SELECT
	cut := toks[end].end                // after OPTIONS(…)
	// Aggregate calls: drop ", contribution_bounds_per_group => (lo, hi)".
	last := cut
	for j := end + 1; j < len(toks); j++ {
		t := toks[j]
		if !t.word || j+1 >= len(toks) || toks[j+1].text != "(" {
			continue
		}
		name := strings.ToLower(t.text)
		if name != "count" && name != "sum" && name != "avg" {
			continue
		}
		// Find the matching ')' and a top-level "contribution_bounds_per_group".
		depth := 0
		for k := j + 1; k < len(toks); k++ {
			switch toks[k].text {
			case "(":
				depth++
				continue
			case ")":
				depth--
				if depth == 0 {
					k = len(toks)
				}
				continue
			}
			if depth == 1 && toks[k].text == "," && k+1 < len(toks) && strings.EqualFold(toks[k+1].text, "contribution_bounds_per_group") {
				bd, stop, err := boundsArg(toks, k+2)
				if err != nil {
					return nil, err
				}
				arg := strings.Join(strings.Fields(q[toks[j+2].start:toks[k].start]), "")
				r.Bounds = append(r.Bounds, Bounded{Func: name, Arg: arg, Bounds: bd})
				b.WriteString(q[last:toks[k].start])
				last = toks[stop].start // the aggregate's ')'
				k = stop - 1
			}
		}
	}
	b.WriteString(q[last:])
	r.SQL = b.String()
	if r.Options.Epsilon == 0 {
		return nil, synErr("OPTIONS must give epsilon")
	}
	return r, nil
}

// options parses name = value, … ) from toks[i]; it returns the index of
// the closing ')'.
func (r *Rewritten) options(toks []token, i int) (int, error) {
	seen := map[string]bool{}
	for {
		if i >= len(toks) {
			return 0, synErr("OPTIONS( is not closed")
		}
		if toks[i].text == ")" {
			return i, nil
		}
		if !toks[i].word || i+2 >= len(toks) || toks[i+1].text != "=" {
			return 0, synErr("OPTIONS: expected name = value, got %q", toks[i].text)
		}
		name, val := strings.ToLower(toks[i].text), toks[i+2].text
		if val == "?" {
			return 0, errPlaceholder
		}
		if seen[name] {
			return 0, synErr("option %s given twice", name)
		}
		seen[name] = true
		i += 3
		// A negative number is two tokens.
		if val == "-" && i < len(toks) {
			val += toks[i].text
			i++
		}
		if i < len(toks) && toks[i].text != "," && toks[i].text != ")" {
			return 0, synErr("OPTIONS: unexpected %q after %s = %s", toks[i].text, name, val)
		}
		switch name {
		case "epsilon", "delta":
			f, err := number(val)
			if err != nil {
				return 0, synErr("%s: %v", name, err)
			}
			if name == "epsilon" {
				if !(f > 0) {
					return 0, synErr("epsilon must be positive, got %v", f)
				}
				r.Options.Epsilon = f
			} else {
				if f < 0 || f >= 1 {
					return 0, synErr("delta must be in [0, 1), got %v", f)
				}
				r.Options.Delta, r.Options.HasDelta = f, true
			}
		case "max_groups_contributed", "max_rows_contributed_per_group":
			if name == "max_rows_contributed_per_group" && strings.EqualFold(val, "auto") && toks[i-1].word {
				r.Options.AutoRows = true
				break
			}
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return 0, synErr("%s must be a positive integer%s, got %q", name, map[bool]string{true: " or auto"}[name == "max_rows_contributed_per_group"], val)
			}
			if name == "max_groups_contributed" {
				r.Options.MaxGroups = n
			} else {
				r.Options.MaxRows = n
			}
		case "privacy_unit_column":
			if !toks[i-1].word {
				return 0, synErr("privacy_unit_column must name a column, got %q", val)
			}
			r.Options.PrivacyUnitColumn = val
		default:
			return 0, synErr("unknown option %s (epsilon, delta, max_groups_contributed, max_rows_contributed_per_group, privacy_unit_column)", name)
		}
		if i < len(toks) && toks[i].text == "," {
			i++
		}
	}
}

// boundsArg parses "=> (lo, hi)" from toks[i] and returns the bounds and
// the index of the aggregate's closing ')'.
func boundsArg(toks []token, i int) (Bounds, int, error) {
	want := func(s string) error {
		if i >= len(toks) || toks[i].text != s {
			return synErr("contribution_bounds_per_group => (lower, upper) or => auto: expected %q", s)
		}
		i++
		return nil
	}
	if err := want("=>"); err != nil {
		return Bounds{}, 0, err
	}
	if i < len(toks) && toks[i].word && strings.EqualFold(toks[i].text, "auto") {
		if i+1 >= len(toks) || toks[i+1].text != ")" {
			return Bounds{}, 0, synErr("contribution_bounds_per_group must be the aggregate's last argument")
		}
		return Bounds{Auto: true}, i + 1, nil
	}
	if err := want("("); err != nil {
		return Bounds{}, 0, err
	}
	var vals [2]float64
	for k := 0; k < 2; k++ {
		s := ""
		if i < len(toks) && toks[i].text == "-" {
			s = "-"
			i++
		}
		if i >= len(toks) {
			return Bounds{}, 0, synErr("contribution_bounds_per_group: missing bound")
		}
		if toks[i].text == "?" {
			return Bounds{}, 0, errPlaceholder
		}
		f, err := number(s + toks[i].text)
		if err != nil {
			return Bounds{}, 0, synErr("contribution_bounds_per_group: %v", err)
		}
		vals[k] = f
		i++
		if k == 0 {
			if err := want(","); err != nil {
				return Bounds{}, 0, err
			}
		}
	}
	if err := want(")"); err != nil {
		return Bounds{}, 0, err
	}
	if i >= len(toks) || toks[i].text != ")" {
		return Bounds{}, 0, synErr("contribution_bounds_per_group must be the aggregate's last argument")
	}
	if !(vals[0] < vals[1]) {
		return Bounds{}, 0, synErr("contribution_bounds_per_group: lower %v must be below upper %v", vals[0], vals[1])
	}
	return Bounds{Lo: vals[0], Hi: vals[1]}, i, nil
}

// number parses a finite decimal number (digits, '.', exponent).
func number(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || strings.ContainsAny(s, "xXpP_") {
		return 0, fmt.Errorf("%q is not a finite decimal number", s)
	}
	return f, nil
}
