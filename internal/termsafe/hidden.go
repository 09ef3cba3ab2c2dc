package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hidden reports whether r, on its own, is an invisible or format
// character: one a terminal shows as nothing (or that reorders what it
// shows) while a model reads it. These are
//
//   - every format character (Unicode category Cf): zero-width space and
//     joiners, word joiner, BOM, soft hyphen, the bidirectional embeddings,
//     overrides, isolates and marks, invisible operators;
//   - the whole TAG block U+E0000–E007F, which spells ASCII invisibly;
//   - the variation selectors (U+FE00–FE0F, U+E0100–E01EF, the Mongolian
//     ones) and the other default-ignorable code points (Hangul fillers,
//     the combining grapheme joiner, U+E0080–E0FFF);
//   - the line and paragraph separators U+2028 and U+2029.
//
// In text, two of them are kept where they belong to an emoji sequence
// (see the unexported hiddenAt): one text or emoji presentation selector
// (U+FE0E, U+FE0F) right after an emoji, and a zero-width joiner between
// two emoji (👩‍💻). Anywhere else, including a run of selectors after an
// emoji (which can encode bytes), they are escaped.
func Hidden(r rune) bool {
	switch {
	case r < 0xa0:
		return false
	case r >= 0xe0000 && r <= 0xe0fff: // TAG block and the ignorable rest of plane 14
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}

// hiddenAt reports whether the rune r (n bytes) at s[i:] is to be escaped:
// Hidden, unless it is the selector or joiner of an emoji sequence.
func hiddenAt(s string, i int, r rune, n int) bool {
	if !Hidden(r) {
		return false
	}
	switch r {
	case 0xfe0e, 0xfe0f: // text / emoji presentation, once, after an emoji
		prev, _ := utf8.DecodeLastRuneInString(s[:i])
		return !isEmoji(prev)
	case 0x200d: // zero-width joiner, between two emoji
		prev, pn := utf8.DecodeLastRuneInString(s[:i])
		next, _ := utf8.DecodeRuneInString(s[i+n:])
		if prev == 0xfe0f { // a kept selector: the emoji is before it
			prev, _ = utf8.DecodeLastRuneInString(s[:i-pn])
		}
		return !(isEmoji(prev) || isSkinTone(prev)) || !isEmoji(next)
	}
	return true
}

// isEmoji is a rune that starts or continues an emoji sequence: a symbol
// (category So: pictographs, dingbats, regional indicators), the two
// double punctuation emoji, or a keycap base.
func isEmoji(r rune) bool {
	switch {
	case r == '#' || r == '*' || (r >= '0' && r <= '9'):
		return true
	case r == 0x203c || r == 0x2049:
		return true
	case r < 0xa0 || r == utf8.RuneError: // U+FFFD is a symbol, and what invalid UTF-8 decodes to
		return false
	}
	return unicode.Is(unicode.So, r)
}

func isSkinTone(r rune) bool { return r >= 0x1f3fb && r <= 0x1f3ff }

// isBidi reports the bidirectional embedding, override and isolate
// controls, which reorder what a person sees ("Trojan source"). All of
// them are Hidden.
func isBidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// writeRuneEscape writes r as Go writes it in a quoted string: \u200b,
// \U000e0041.
func writeRuneEscape(b *strings.Builder, r rune) {
	if r > 0xffff {
		fmt.Fprintf(b, `\U%08x`, r)
		return
	}
	fmt.Fprintf(b, `\u%04x`, r)
}

// EscapeHidden returns s with only its invisible characters (as Text and
// Model judge them: Hidden, emoji sequences kept) escaped, everything else
// as it is: for a renderer with its own handling of controls (the TUI).
func EscapeHidden(s string) string {
	i := 0
	for i < len(s) {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if hiddenAt(s, i, r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r >= utf8.RuneSelf && hiddenAt(s, i, r, n) {
			writeRuneEscape(&b, r)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
