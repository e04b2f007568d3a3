package eval

import (
	"fmt"
	"unicode/utf8"
	"unsafe"
)

// LIKE with a constant pattern, as a bit-parallel automaton (Baeza-Yates &
// Gonnet's shift-and, extended with % loops): the state is a bit set over
// the pattern's tokens, and one input byte costs a fixed handful of word
// operations. The automaton always reads width bytes — the column's
// declared byte length, a public number — and takes the state after the
// value's last byte; so neither backtracking nor an early exit can make its
// cost depend on the value.

// maxLikeTokens bounds the pattern (one 64-bit state word).
const maxLikeTokens = 63

type likeNode struct {
	x     strNode
	width int // bytes read on every row
	// Pattern masks over token positions j (bit j: "tokens < j matched").
	lit   [256]uint64 // tokens that are literal byte c
	any1  uint64      // '_' tokens: any lead byte (a whole character)
	pct   uint64      // '%' tokens: loop on any byte
	after uint64      // positions right after a '_' (stay on continuation bytes)
	final uint64      // the accepting position
	m     int
}

// compileLike parses pattern with escape character esc into the automaton.
// MySQL's '_' matches one character: a lead byte followed by its
// continuation bytes (10xxxxxx), which keep the position after '_'.
func compileLike(x strNode, pattern string, esc rune, width int) (*likeNode, error) {
	n := &likeNode{x: x, width: width}
	j := 0
	add := func() error {
		j++
		if j > maxLikeTokens {
			return fmt.Errorf("the pattern has more than %d characters", maxLikeTokens)
		}
		return nil
	}
	escaped := false
	for _, r := range pattern {
		switch {
		case !escaped && r == esc:
			escaped = true
			continue
		case !escaped && r == '%':
			if j > 0 && n.pct&(1<<(j-1)) != 0 {
				continue // %% is %
			}
			n.pct |= 1 << j
			if err := add(); err != nil {
				return nil, err
			}
		case !escaped && r == '_':
			n.any1 |= 1 << j
			n.after |= 1 << (j + 1)
			if err := add(); err != nil {
				return nil, err
			}
		default:
			var buf [utf8.UTFMax]byte
			for _, c := range buf[:utf8.EncodeRune(buf[:], r)] {
				n.lit[c] |= 1 << j
				if err := add(); err != nil {
					return nil, err
				}
			}
		}
		escaped = false
	}
	if escaped {
		// MySQL treats a trailing escape character as itself.
		n.lit[byte(esc)] |= 1 << j
		if err := add(); err != nil {
			return nil, err
		}
	}
	n.m = j
	n.final = 1 << j
	return n, nil
}

// closure adds the positions reachable through % (which matches empty).
// One step suffices: compileLike folds %% into %, so no % follows a %.
func (n *likeNode) closure(d uint64) uint64 {
	return d | (d&n.pct)<<1
}

func (n *likeNode) evalBool(row []any) tri {
	// A NULL runs the automaton too (on ""), so it costs the same.
	s, ok := n.x.evalStr(row)
	d := n.closure(1)
	var at uint64 // the state after the value's last byte
	if len(s) == 0 {
		at = d
	}
	for i := 0; i < n.width; i++ {
		c := byte(0)
		if i < len(s) {
			c = s[i]
		}
		cont := uint64(0)
		if c&0xC0 == 0x80 {
			cont = ^uint64(0)
		}
		step := ((d & (n.lit[c] | n.any1&^cont)) << 1) | (d & n.pct) | (d & n.after & cont)
		d = n.closure(step)
		if i+1 == len(s) {
			at = d
		}
	}
	switch {
	case !ok:
		return unk
	case len(s) > n.width:
		return fls // outside the declared type; cannot match in width steps
	case at&n.final != 0:
		return tru
	}
	return fls
}

// unsafeString views b as a string without copying (b is only read).
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
