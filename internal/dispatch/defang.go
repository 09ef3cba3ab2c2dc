package dispatch

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"

	"github.com/broodhq/brood/internal/termsafe"
)

// tagName is the name of the tag untrusted text is wrapped in, as it
// folds (fold): a dash in it may be any number of dashes, or none.
const tagName = "subagent-result"

// Defang neutralises every subagent-result tag inside untrusted text, so a
// child cannot close its own envelope early and speak as the runtime: its
// "<" (or a lookalike of it) becomes "&lt;". A tag is found on the text
// as a reader sees it, folded rune by rune (fold): blanks, invisible
// characters (termsafe.Hidden, format characters, fillers, the braille
// blank) and marks dropped; NFKC (fullwidth, mathematical, enclosed,
// superscript and letterlike forms); the UTS #39 confusables skeleton
// (Cyrillic, Greek and other lookalike letters and signs); small
// capitals; lower case; any dash or underscore one dash, any of them
// repeated or left out; a "\" before the "/" ignored. The span found is
// mapped back to the original text, whose "<" is replaced.
func Defang(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if isOpen(r) && forgedTagAt(s, i+n) {
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

// isOpen reports whether r reads as "<".
func isOpen(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '<'
	}
	// The runes that fold to "<" (every rune checked against fold, Unicode
	// 13's confusables), and the angle brackets that read as one.
	return strings.ContainsRune("\u02c2\u1438\u16b2\u2039\u226e\u276e\ufe64\uff1c\U0001d236", r) ||
		strings.ContainsRune("‹\u2329〈⟨❮˂ᐸ﹤≺⋖〈❬❰⧼⦑⧀⟪《«", r)
}

// forgedTagAt reports whether s[i:] reads as "/subagent-result" or
// "subagent-result" right after a "<": the folded runes after i, read
// as a stream, spell it.
func forgedTagAt(s string, i int) bool {
	want := "\\/" + tagName // "\" and "/" optional
	w := 0
	var pending string // folded text of the rune read, not yet matched
	for w < len(want) {
		if pending == "" {
			if i >= len(s) {
				return false
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			i += n
			pending = fold(r)
			continue
		}
		c := pending[0]
		switch {
		case c == want[w]:
			pending = pending[1:]
			if want[w] != '-' {
				w++
			}
		case w < 2 || want[w] == '-':
			w++ // an optional "\" or "/", or the dashes' end
		default:
			return false
		}
	}
	return true
}

// fold is the text rune r reads as: "" for a blank, invisible character
// or mark; else its NFKC form's confusables skeleton, small capitals as
// letters, in lower case, with an "i" as "l" (they look alike in a tag)
// and a dash or underscore as "-".
func fold(r rune) string {
	if r < utf8.RuneSelf {
		switch {
		case unicode.IsSpace(r) || unicode.IsControl(r):
			return ""
		case r == '_':
			return "-"
		case r == 'i' || r == 'I' || r == '1' || r == '|':
			return "l"
		case r >= 'A' && r <= 'Z':
			return string(r + 'a' - 'A')
		}
		return string(r)
	}
	if ignorable(r) {
		return ""
	}
	if isDash(r) {
		return "-"
	}
	var b strings.Builder
	for _, k := range confusables.Skeleton(norm.NFKC.String(string(r))) {
		if ignorable(k) {
			continue
		}
		if l, ok := smallCapital(k); ok {
			k = l
		}
		k = unicode.ToLower(k)
		switch {
		case isDash(k) || k == '_':
			k = '-'
		case k == 'i' || k == 'ı' || k == '1' || k == '|':
			k = 'l'
		}
		b.WriteRune(k)
	}
	return b.String()
}

// ignorable reports whether r is not seen: a blank, an invisible or
// format character, a mark (nonspacing, enclosing or spacing), a filler.
func ignorable(r rune) bool {
	return unicode.IsSpace(r) || termsafe.Hidden(r) || unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc, unicode.Cf, unicode.Cc) ||
		r == 0x2800 || r == 0x3164 || r == 0xffa0 || r == 0x115f || r == 0x1160 || r == 0x180e
}

// isDash reports whether r reads as a dash.
func isDash(r rune) bool {
	return unicode.Is(unicode.Pd, r) || strings.ContainsRune("−➖ーｰ﹘⁃‐‑‒–—―⸺⸻_＿", r)
}

// smallCapitals pairs each small capital the confusables skeleton keeps
// with its letter.
const smallCapitals = "ᴀaʙbᴄcᴅdᴇeꜰfɢgʜhɪiᴊjᴋkʟlᴍmɴnᴏoᴘpꞯqʀrꜱsᴛtᴜuᴠvᴡwʏyᴢzƅbᴦr"

// smallCapital is the letter r is a small capital of.
func smallCapital(r rune) (rune, bool) {
	if r < utf8.RuneSelf {
		return 0, false
	}
	if i := strings.IndexRune(smallCapitals, r); i >= 0 {
		l, _ := utf8.DecodeRuneInString(smallCapitals[i+utf8.RuneLen(r):])
		return l, true
	}
	return 0, false
}
