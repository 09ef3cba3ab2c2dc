package tool

import (
	"strings"
)

// dotenvVar is one NAME=value of a dotenv file: value as a program loading
// the file sees it (quotes removed, a double-quoted value's escapes
// decoded) and raw as the file spells it between its quotes.
type dotenvVar struct{ name, value, raw string }

// parseDotenv reads a dotenv file as dotenv, docker compose and
// python-dotenv do: an `export ` prefix, a double-quoted value that may
// span lines and takes \n, \r, \t, \", \\ escapes, a single-quoted value
// that may span lines and is literal, an unquoted value up to a comment
// after a blank (` # ...`). A line that is none of these is skipped, and
// so is an unterminated quote's (its value is the rest of that line):
// one bad line loses no other. Variables are not expanded: a value is
// redacted as it is written.
func parseDotenv(src string) []dotenvVar {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	var out []dotenvVar
	for src != "" {
		var line string
		line, src, _ = strings.Cut(src, "\n")
		s := strings.TrimLeft(line, " \t")
		if r, ok := strings.CutPrefix(s, "export"); ok && r != "" && (r[0] == ' ' || r[0] == '\t') {
			s = strings.TrimLeft(r, " \t")
		}
		name, value, ok := strings.Cut(s, "=")
		name = strings.TrimRight(name, " \t")
		if !ok || name == "" || name[0] == '#' || strings.ContainsAny(name, " \t") {
			continue
		}
		value = strings.TrimLeft(value, " \t")
		if value == "" || (value[0] != '"' && value[0] != '\'') {
			out = append(out, dotenvVar{name: name, value: strings.TrimSpace(cutComment(value))})
			continue
		}
		q := value[0]
		body := value[1:]
		if src != "" {
			body += "\n" + src
		}
		end := closingQuote(body, q)
		if end < 0 {
			v := strings.TrimSpace(value[1:])
			out = append(out, dotenvVar{name: name, value: v, raw: v})
			continue
		}
		raw := body[:end]
		_, src, _ = strings.Cut(body[end+1:], "\n") // what follows the quote on its line is ignored
		v := raw
		if q == '"' {
			v = unescapeDouble(raw)
		}
		out = append(out, dotenvVar{name: name, value: v, raw: raw})
	}
	return out
}

// cutComment is an unquoted value without a comment that follows a blank.
func cutComment(v string) string {
	for i := 1; i < len(v); i++ {
		if v[i] == '#' && (v[i-1] == ' ' || v[i-1] == '\t') {
			return v[:i]
		}
	}
	return v
}

// closingQuote is the index in s of the first q not escaped by a
// backslash, or -1.
func closingQuote(s string, q byte) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			return i
		}
	}
	return -1
}

// unescapeDouble decodes a double-quoted value's escapes; an unknown one
// is kept as written.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case '"', '\\', '\'':
			b.WriteByte(s[i])
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// minDotenvLen is the shortest .env value (or line of a multi-line one)
// taken for a secret.
const minDotenvLen = 8

// dotenvSecrets are the spellings of one .env value that redaction
// catches, labelled .env:NAME: the value (as variants has it) and, where
// the file spells it otherwise, as written; each line of a multi-line
// value (a PEM body or a service account's JSON printed line by line),
// but a PEM armour line and a line too short or too plain to be a secret;
// and a URL's password (urlCredentials). Under a name that does not look
// secret, plain words, numbers and URLs without a password are
// configuration (plainValue).
func dotenvSecrets(v dotenvVar) []secretVar {
	label := ".env:" + v.name
	secret := func(s string) bool {
		return len(s) >= minDotenvLen && (IsSecretName(v.name) || !plainValue().MatchString(s))
	}
	var out []secretVar
	if secret(v.value) {
		out = append(out, variants(label, v.value)...)
	}
	if v.raw != "" && v.raw != v.value && secret(v.raw) {
		out = append(out, secretVar{label, v.raw})
	}
	for _, whole := range []string{v.value, v.raw} {
		if !strings.Contains(whole, "\n") {
			continue
		}
		for line := range strings.SplitSeq(whole, "\n") {
			line = strings.TrimSpace(line)
			if secret(line) && !pemArmour(line) {
				out = append(out, secretVar{label, line})
			}
		}
	}
	return append(out, urlCredentials(label, v.value)...)
}

// pemArmour reports whether line is a PEM block's BEGIN or END line
// (-----BEGIN CERTIFICATE-----): the same in every such file, no secret.
func pemArmour(line string) bool {
	for _, p := range []string{"-----BEGIN ", "-----END "} {
		if rest, ok := strings.CutPrefix(line, p); ok && strings.HasSuffix(rest, "-----") {
			return true
		}
	}
	return false
}
