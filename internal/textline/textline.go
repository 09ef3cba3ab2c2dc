// Package textline cuts a message down to the line a status, a span or a
// list shows: the first line, marked when more followed, clipped to a
// number of runes (never inside one). It is the one copy of what eight
// packages each wrote for themselves.
package textline

import "strings"

// First is s's first line once surrounding space is trimmed (so the first
// non-blank line), and whether more lines followed it.
func First(s string) (line string, more bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimRight(s[:i], " \t\r"), true
	}
	return s, false
}

// Summary is First marked " …" when more lines followed, clipped to max
// runes (0: no limit).
func Summary(s string, max int) string {
	l, more := First(s)
	if more {
		l += " …"
	}
	return Clip(l, max)
}

// Clip is s cut to max runes, the cut marked "…" (0: no limit).
func Clip(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}

// Line is s's first line (as First) clipped to max runes (0: no limit),
// with no mark for the lines after it.
func Line(s string, max int) string {
	l, _ := First(s)
	return Clip(l, max)
}
