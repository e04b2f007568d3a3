package syntax

import "strings"

// SQL-level prepared statements (PREPARE name FROM '…', EXECUTE name
// [USING …], DEALLOCATE | DROP PREPARE name): the clause sits inside a
// string literal that go-mysql-server parses itself, so the wire handler
// rewrites the literal at PREPARE and stashes the clause again at every
// EXECUTE of that name (fastpath). Only the literal form is taken:
// PREPARE name FROM @variable keeps go-mysql-server's path.

// SQLPrepare recognises PREPARE name FROM '<text>' as one statement: the
// statement name (lower case, as MySQL compares them) and the unquoted
// text.
func SQLPrepare(q string) (name, text string, ok bool) {
	toks, err := lex(strings.TrimRight(q, "; \t\r\n"))
	if err != nil || len(toks) != 4 || !toks[0].word || !strings.EqualFold(toks[0].text, "prepare") ||
		!strings.EqualFold(toks[2].text, "from") {
		return "", "", false
	}
	name, ok = stmtName(toks[1])
	if !ok {
		return "", "", false
	}
	text, ok = unquote(toks[3].text)
	return name, text, ok
}

// SQLPrepareText is PREPARE name FROM '<text>' with text quoted.
func SQLPrepareText(name, text string) string {
	return "PREPARE `" + strings.ReplaceAll(name, "`", "``") + "` FROM '" +
		strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(text) + "'"
}

// SingleStatement reports whether q holds one statement: no ';' outside
// literals and comments except trailing ones.
func SingleStatement(q string) bool {
	toks, err := lex(q)
	if err != nil {
		return false
	}
	end := len(toks)
	for end > 0 && toks[end-1].text == ";" {
		end--
	}
	for _, t := range toks[:end] {
		if t.text == ";" {
			return false
		}
	}
	return true
}

// SQLPrepareName recognises PREPARE name FROM … in any form (a literal or
// a variable): the statement name.
func SQLPrepareName(q string) (string, bool) {
	toks, err := lex(q)
	if err != nil || len(toks) < 3 || !toks[0].word || !strings.EqualFold(toks[0].text, "prepare") ||
		!strings.EqualFold(toks[2].text, "from") {
		return "", false
	}
	return stmtName(toks[1])
}

// SQLExecute recognises EXECUTE name …: the name, and whether the text is
// exactly EXECUTE name [USING @a [, @b …]] (one whole statement: a clause
// is stashed for this statement only, never for a later one of a
// multi-statement text).
func SQLExecute(q string) (name string, single, ok bool) {
	toks, err := lex(strings.TrimRight(q, "; \t\r\n"))
	if err != nil || len(toks) < 2 || !toks[0].word || !strings.EqualFold(toks[0].text, "execute") {
		return "", false, false
	}
	if name, ok = stmtName(toks[1]); !ok {
		return "", false, false
	}
	rest := toks[2:]
	if len(rest) == 0 {
		return name, true, true
	}
	// USING @v (, @v)*
	if !rest[0].word || !strings.EqualFold(rest[0].text, "using") || len(rest)%3 != 0 {
		return name, false, true
	}
	for i := 1; i < len(rest); i += 3 {
		if rest[i].text != "@" || !rest[i+1].word || i+2 < len(rest) && rest[i+2].text != "," {
			return name, false, true
		}
	}
	return name, true, true
}

// SQLDeallocate recognises DEALLOCATE PREPARE name and DROP PREPARE name.
func SQLDeallocate(q string) (string, bool) {
	toks, err := lex(q)
	if err != nil || len(toks) < 3 || !toks[0].word || !toks[1].word || !strings.EqualFold(toks[1].text, "prepare") ||
		!strings.EqualFold(toks[0].text, "deallocate") && !strings.EqualFold(toks[0].text, "drop") {
		return "", false
	}
	return stmtName(toks[2])
}

// stmtName is a statement name token, plain or back-quoted, lower case.
func stmtName(t token) (string, bool) {
	if t.word {
		return strings.ToLower(t.text), true
	}
	if len(t.text) >= 2 && t.text[0] == '`' && t.text[len(t.text)-1] == '`' {
		return strings.ToLower(strings.ReplaceAll(t.text[1:len(t.text)-1], "``", "`")), true
	}
	return "", false
}

// unquote is the value of a '…' or "…" literal token (backslash escapes
// and doubled quotes, as MySQL reads them).
func unquote(s string) (string, bool) {
	if len(s) < 2 || (s[0] != '\'' && s[0] != '"') || s[len(s)-1] != s[0] {
		return "", false
	}
	q, body := s[0], s[1:len(s)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\\' && i+1 < len(body):
			i++
			switch body[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'Z':
				b.WriteByte(26)
			case 'b':
				b.WriteByte('\b')
			case '%', '_':
				b.WriteByte('\\') // MySQL keeps the backslash of \% and \_
				b.WriteByte(body[i])
			default:
				b.WriteByte(body[i]) // \\, \', \" and any other character
			}
		case c == q && i+1 < len(body) && body[i+1] == q:
			b.WriteByte(q)
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}
