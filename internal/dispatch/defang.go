package dispatch

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/broodhq/brood/internal/termsafe"
)

// tagName is the name of the tag untrusted text is wrapped in; a dash in
// it may be any dash, an underscore, or left out.
const tagName = "subagent-result"

// Defang neutralises every subagent-result tag inside untrusted text, so a
// child cannot close its own envelope early and speak as the runtime: its
// "<" (or a lookalike of it) becomes "&lt;". A tag is found however it is
// spelled to look like one to a model: any case; blanks, zero-width and
// other invisible characters (termsafe.Hidden) and combining marks
// anywhere in it; a lookalike "<" (‹ ＜ ﹤ 〈 ⟨ ❮ ˂), "/" (⁄ ∕ ／) or dash
// (‐ ‑ – — − _ or none); fullwidth and mathematical letters
// (ｓｕｂ…, 𝐬𝐮𝐛…); and the Cyrillic, Greek and small-capital letters
// that look like the name's (ѕ υ ь а ɡ е ո т г ӏ ...).
func Defang(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if skeleton(r) == '<' && forgedTagAt(s, i+n) {
			if last == 0 {
				b.Grow(len(s) + 8)
			}
			b.WriteString(s[last:i])
			b.WriteString("&lt;")
			last = i + n
		}
		i += n
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// forgedTagAt reports whether s[i:] reads as "/subagent-result" or
// "subagent-result" (Defang's spellings) right after a "<".
func forgedTagAt(s string, i int) bool {
	i = skipIgnorable(s, i)
	if r, n := utf8.DecodeRuneInString(s[i:]); skeleton(r) == '/' {
		i += n
	}
	for _, want := range tagName {
		i = skipIgnorable(s, i)
		if i >= len(s) {
			return false
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		got := skeleton(r)
		switch {
		case got == want:
			i += n
		case want == '-':
			// No dash: the next letter is read again as the name's.
			if got != 'r' {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// skipIgnorable is the index of the first rune at or after i that a
// reader sees: blanks, invisible characters and combining marks are not.
func skipIgnorable(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) && !termsafe.Hidden(r) && !unicode.Is(unicode.Mn, r) && !unicode.Is(unicode.Me, r) {
			return i
		}
		i += n
	}
	return i
}

// skeleton is the character r reads as in a tag: ASCII for a fullwidth or
// mathematical form, lower case, and the ASCII letter or sign a lookalike
// stands for.
func skeleton(r rune) rune {
	switch {
	case r >= 0xff01 && r <= 0xff5e: // fullwidth ASCII
		r -= 0xfee0
	case r >= 0x1d400 && r <= 0x1d6a3: // mathematical alphanumerics: 13 alphabets of A-Z a-z
		n := (r - 0x1d400) % 52
		r = 'a' + n%26
	}
	r = unicode.ToLower(r)
	switch r {
	case '‹', '〈', '⟨', '❮', '˂', 'ᐸ', '﹤', '≺', '⋖':
		return '<'
	case '⁄', '∕', '╱', '⧸':
		return '/'
	case '‐', '‑', '‒', '–', '—', '―', '−', '﹣', '﹘', '_', '⁃':
		return '-'
	case 'ѕ', 'ꜱ', 'ʂ':
		return 's'
	case 'υ', 'ս', 'ᴜ', 'ʋ':
		return 'u'
	case 'ь', 'ƅ', 'Ꮟ', 'ḃ':
		return 'b'
	case 'а', 'ɑ', 'α', '⍺':
		return 'a'
	case 'ɡ', 'ց', 'ǥ':
		return 'g'
	case 'е', 'ҽ', '℮', 'ε', 'ё':
		return 'e'
	case 'ո', 'ռ', 'η', 'п':
		return 'n'
	case 'т', 'ᴛ', 'τ':
		return 't'
	case 'г', 'ᴦ', 'ʀ':
		return 'r'
	case 'ӏ', 'ⅼ', 'ℓ', '1', '|', 'ǀ', 'ι', 'i', 'ı', 'ɩ':
		return 'l'
	}
	return r
}
