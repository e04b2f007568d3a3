package fastpath

import "strings"

// loadField is one field of a LOAD DATA line after MySQL's escape and
// enclosure rules (issue 29): null for an unenclosed \N (or NULL).
type loadField struct {
	s    string
	null bool
}

// splitLoadFields splits a LOAD DATA line as MySQL does: fields end at term
// (a term inside an enclosed field, or escaped, is data); a field that
// starts with encl (0: none) is enclosed and ends at encl followed by term
// or the line's end, a doubled encl inside it being one encl; with
// [OPTIONALLY] ENCLOSED BY, unenclosed fields are read as they are. With an
// escape character esc (0: none), esc+0, b, n, r, t, Z are NUL, backspace,
// newline, carriage return, tab and byte 26, \N alone is NULL, and esc
// before any other character is that character. An unenclosed field NULL
// is NULL.
func splitLoadFields(dst []loadField, line, term string, encl, esc byte) []loadField {
	var b strings.Builder
	i := 0
	for {
		b.Reset()
		enclosed := encl != 0 && i < len(line) && line[i] == encl
		start := i
		if enclosed {
			i++
		}
		escaped := false // the field used an escape sequence (so \N is not NULL)
		for i < len(line) {
			c := line[i]
			if esc != 0 && c == esc && i+1 < len(line) {
				n := line[i+1]
				if !enclosed && n == 'N' && i == start && (i+2 == len(line) || strings.HasPrefix(line[i+2:], term)) {
					i += 2
					dst = append(dst, loadField{null: true})
					goto next
				}
				b.WriteByte(unescapeLoad(n))
				escaped = true
				i += 2
				continue
			}
			if enclosed && c == encl {
				if i+1 < len(line) && line[i+1] == encl { // doubled: one enclosure character
					b.WriteByte(encl)
					i += 2
					continue
				}
				if i+1 == len(line) || strings.HasPrefix(line[i+1:], term) {
					i++
					dst = append(dst, loadField{s: b.String()})
					goto next
				}
				b.WriteByte(c) // an enclosure character inside the field
				i++
				continue
			}
			if !enclosed && strings.HasPrefix(line[i:], term) {
				break
			}
			b.WriteByte(c)
			i++
		}
		if enclosed { // no closing enclosure: MySQL keeps the opening one as data
			dst = append(dst, loadField{s: string(encl) + b.String()})
		} else {
			if s := b.String(); !escaped && s == "NULL" {
				dst = append(dst, loadField{null: true})
			} else {
				dst = append(dst, loadField{s: s})
			}
		}
	next:
		if i >= len(line) {
			return dst
		}
		i += len(term)
		if i == len(line) { // a trailing terminator: one more, empty field
			return append(dst, loadField{})
		}
	}
}

// unescapeLoad is the character esc+c stands for in LOAD DATA.
func unescapeLoad(c byte) byte {
	switch c {
	case '0':
		return 0
	case 'b':
		return '\b'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'Z':
		return 26
	}
	return c
}
