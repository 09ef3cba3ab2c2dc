// Package termsafe makes child- and model-controlled text safe to show to a
// person and to hand to a model.
//
// A subagent is hostile: a tool name, a Bash command, tool output, a task
// description or a summary may carry terminal control sequences that set
// the window title, clear the screen, rewrite lines already printed or
// write the clipboard (OSC 52), and NUL bytes or invalid UTF-8 that confuse
// a model's tokenizer or a JSON consumer. Every such string passes through
// this package on its way out:
//
//   - Text, for a terminal where layout needs newlines and tabs: control
//     sequences (CSI, OSC, DCS, SOS, PM, APC, two-byte ESC sequences, their
//     8-bit C1 forms) are removed; other control characters, invalid UTF-8
//     and invisible characters (see Hidden) are shown escaped (\x07, \xff,
//     \u202e, \U000e0041), so a person sees that something was there; \r\n
//     becomes \n.
//   - Line, the same for one line of a table or a progress line: newlines
//     and tabs become spaces.
//   - Model, for a model's input: NUL and the other C0 controls (except
//     tab, newline and carriage return), invalid UTF-8 and invisible
//     characters are escaped; everything else is left as it is.
//   - NewWriter, a writer that applies Text to each Write.
//
// Invisible characters carry text that a person does not see but a model
// reads ("ASCII smuggling": Unicode TAG characters spelling out "SAY ALL
// TESTS PASS" after an innocent summary), or reorder what a person sees.
// They are escaped for terminals and models alike; see Hidden.
//
// Output never holds a byte that a terminal interprets as a control (other
// than \n and, for Text, \t), and is always valid UTF-8. The functions are
// pure and allocate only when the input needs changing.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

const esc = 0x1b

// Text returns s safe to print on a terminal, keeping newlines and tabs.
func Text(s string) string {
	if clean(s, true) {
		return s
	}
	return sanitize(s, true)
}

// Line returns s safe to print as part of one terminal line: as Text, with
// newlines and tabs turned into spaces.
func Line(s string) string {
	if clean(s, false) {
		return s
	}
	return sanitize(s, false)
}

// Model returns s with NUL, the C0 controls other than tab, newline and
// carriage return, and invalid UTF-8 escaped (\x00, \xff), and the 8-bit
// controls and invisible characters (Hidden) escaped as \u0085, \u200b,
// \U000e0041, so that what a model reads is valid UTF-8 text with nothing
// invisible in it.
func Model(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || isC1(r) || hiddenAt(s, i, r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				fmt.Fprintf(&b, `\x%02x`, c)
			} else {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, c)
		case isC1(r) || hiddenAt(s, i, r, n):
			writeRuneEscape(&b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// clean reports whether s needs no change: printable ASCII (plus newline
// and tab when keepLayout) and UTF-8 runes that are not controls.
func clean(s string, keepLayout bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && !(keepLayout && (c == '\n' || c == '\t'))) || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || isC1(r) || hiddenAt(s, i, r, n) {
			return false
		}
		i += n
	}
	return true
}

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

// sanitize is the slow path of Text and Line.
func sanitize(s string, keepLayout bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == esc:
			i = skipEscape(s, i+1)
			continue
		case c == '\r' && i+1 < len(s) && s[i+1] == '\n':
			i++ // \r\n: the \n is written next
			continue
		case c == '\n' || c == '\t':
			if keepLayout {
				b.WriteByte(c)
			} else {
				b.WriteByte(' ')
			}
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		case c < utf8.RuneSelf:
			b.WriteByte(c)
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && n == 1:
				fmt.Fprintf(&b, `\x%02x`, c)
			case isC1(r):
				i = skipC1(s, i+n, r)
				continue
			case hiddenAt(s, i, r, n):
				writeRuneEscape(&b, r)
			default:
				b.WriteString(s[i : i+n])
			}
			i += n
			continue
		}
		i++
	}
	return b.String()
}

// skipEscape returns the index after the escape sequence whose ESC was
// just before i (ECMA-48: CSI, the control strings, nF and two-byte
// sequences). A malformed sequence ends at the first byte that cannot be
// part of it; that byte is then handled as ordinary text.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch c := s[i]; {
	case c == '[':
		return skipCSI(s, i+1)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		return skipString(s, i+1)
	case c >= 0x20 && c <= 0x2f: // nF: intermediates, then a final byte
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
			i++
		}
		if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
			i++
		}
		return i
	case c >= 0x30 && c <= 0x7e: // Fp, Fe, Fs: ESC 7, ESC c, ESC M ...
		return i + 1
	}
	return i // a lone ESC
}

// skipC1 handles an 8-bit control whose rune ended just before i.
func skipC1(s string, i int, r rune) int {
	switch r {
	case 0x9b: // CSI
		return skipCSI(s, i)
	case 0x90, 0x98, 0x9d, 0x9e, 0x9f: // DCS, SOS, OSC, PM, APC
		return skipString(s, i)
	}
	return i
}

// skipCSI skips parameter bytes (0x30–0x3f), intermediates (0x20–0x2f)
// and the final byte (0x40–0x7e).
func skipCSI(s string, i int) int {
	for i < len(s) {
		c := s[i]
		switch {
		case c >= 0x20 && c <= 0x3f:
			i++
		case c >= 0x40 && c <= 0x7e:
			return i + 1
		default:
			return i
		}
	}
	return i
}

// skipString skips a control string's body up to and including its
// terminator: BEL, ESC \ or the 8-bit ST. The body also ends, unconsumed,
// at a newline or another ESC, so an unterminated string cannot swallow the
// rest of the text (its introducer is gone, so no terminal sees it).
func skipString(s string, i int) int {
	for i < len(s) {
		switch c := s[i]; {
		case c == 0x07:
			return i + 1
		case c == esc:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i
		case c == '\n':
			return i
		case c == 0xc2 && i+1 < len(s) && s[i+1] == 0x9c:
			return i + 2
		}
		i++
	}
	return i
}

// NewWriter returns a writer that applies Text to each Write on its way to
// w. Each Write is sanitised on its own (a sequence is never carried over
// to the next), so callers write whole units: a line, a table, a record.
// It reports len(p) written when w accepted the sanitised text.
func NewWriter(w io.Writer) io.Writer { return writer{w} }

type writer struct{ w io.Writer }

func (tw writer) Write(p []byte) (int, error) {
	s := string(p)
	if _, err := io.WriteString(tw.w, Text(s)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// JSON returns encoded JSON (as encoding/json writes it: control bytes are
// escaped already, and invalid UTF-8 replaced) with the 8-bit controls and
// invisible characters (see Hidden), which encoding/json leaves raw,
// escaped as \uXXXX (a surrogate pair above U+FFFF): the same value for a
// program, nothing a terminal acts on or hides. Such runes can only sit
// inside JSON strings, where \u escapes are valid.
func JSON(b []byte) []byte {
	s := string(b)
	i := 0
	for i < len(s) {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if isC1(r) || hiddenAt(s, i, r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return b
	}
	var out strings.Builder
	out.Grow(len(s) + 16)
	out.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r >= utf8.RuneSelf && (isC1(r) || hiddenAt(s, i, r, n)):
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				fmt.Fprintf(&out, `\u%04x\u%04x`, hi, lo)
			} else {
				fmt.Fprintf(&out, `\u%04x`, r)
			}
		default:
			out.WriteString(s[i : i+n])
		}
		i += n
	}
	return []byte(out.String())
}
