package tool

import (
	"net/url"
	"strings"
)

// urlUserinfo is the userinfo of one URL in a text: as written, its user
// and its password (hasPassword: a ':' is there).
type urlUserinfo struct {
	raw, user, password string
	hasPassword         bool
	at                  int // where raw starts in the text
}

// urlUserinfos are the userinfo of every URL in s (scheme://userinfo@host).
// The userinfo ends at the authority's last @, as net/url reads it (a raw
// @ in the password stays in it).
func urlUserinfos(s string) []urlUserinfo {
	var out []urlUserinfo
	for from := 0; ; {
		i := strings.Index(s[from:], "://")
		if i < 0 {
			return out
		}
		at := from + i
		from = at + 3
		if at == 0 || !isSchemeChar(s[at-1]) {
			continue
		}
		auth := cutAtHostComma(authority(s[from:]))
		last := strings.LastIndexByte(auth, '@')
		if last <= 0 {
			continue
		}
		ui := urlUserinfo{raw: auth[:last], at: from}
		ui.user, ui.password, ui.hasPassword = strings.Cut(ui.raw, ":")
		out = append(out, ui)
	}
}

// urlPasswords are the userinfo of every URL in s that carries a password
// (scheme://user:password@host, redis://:password@host) or whose user
// name is a token (https://ghp_…@github.com, tokenUser): the userinfo as
// written and the secret in it (the password, or the user name).
func urlPasswords(s string) (userinfo, password []string) {
	for _, ui := range urlUserinfos(s) {
		switch {
		case ui.hasPassword && ui.password != "":
			userinfo, password = append(userinfo, ui.raw), append(password, ui.password)
		case !ui.hasPassword && tokenUser(ui.user):
			userinfo, password = append(userinfo, ui.raw), append(password, ui.user)
		}
	}
	return userinfo, password
}

// minTokenUser is the shortest user name taken for a token.
const minTokenUser = 20

// tokenPrefixes begin the tokens of known services, taken for tokens
// whatever their length or alphabet.
const tokenPrefixes = "ghp_ gho_ ghu_ ghs_ ghr_ github_pat_ glpat- xoxa- xoxb- xoxp- xoxo- xoxr- xoxs- xapp-"

// tokenUser reports whether a URL's user name (with no password) looks
// like a credential rather than a person's or a service's name: a token
// given as the user (https://TOKEN@github.com/o/r, as git and GitLab take
// one): a known service's prefix (ghp_, github_pat_, glpat-, xoxb- ...),
// or 20 characters or more of letters and digits only, both, and varied
// (12 distinct or more). "git", "alice", "deploy-bot-12345678901234567",
// "jenkins-user-01-2024-build" and an e-mail address (its @
// percent-encoded) are names.
func tokenUser(u string) bool {
	for _, p := range strings.Fields(tokenPrefixes) {
		if strings.HasPrefix(u, p) && len(u) > len(p)+8 {
			return true
		}
	}
	if len(u) < minTokenUser {
		return false
	}
	letter, digit := false, false
	var seen [128]bool
	distinct := 0
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9':
			digit = true
		default:
			return false
		}
		if !seen[c] {
			seen[c], distinct = true, distinct+1
		}
	}
	return letter && digit && distinct >= 12
}

// cutAtHostComma is auth up to a comma that ends a host or host:port
// (http://example.com:8080,admin@example.org is a list, not a user
// "example.com:8080,admin"); a comma after a user:password's colon stays.
func cutAtHostComma(auth string) string {
	c := strings.IndexByte(auth, ',')
	if c < 0 {
		return auth
	}
	host, port, hasPort := strings.Cut(auth[:c], ":")
	if strings.Contains(host, "@") || hasPort && strings.Trim(port, "0123456789") != "" {
		return auth
	}
	return auth[:c]
}

// authority is the authority at the start of rest (what follows "://"):
// up to the first / ? # or blank, as net/url reads it, or, read
// leniently, past a raw "/" in a password (postgres://app:Zx9k/Qw8=@db/x,
// as a generated base64 password is often written): when the text before
// the first "/" is user:password (after the ":" something other than a
// port's digits) and an "@" follows before a blank, "?" or "#", it is
// that "@"'s userinfo (red team 21 P3-1).
func authority(rest string) string {
	end := strings.IndexAny(rest, "/?#\n\t \"'<>`")
	if end < 0 || rest[end] != '/' {
		if end < 0 {
			return rest
		}
		return rest[:end]
	}
	head := rest[:end]
	_, pw, ok := strings.Cut(head, ":")
	if !ok || strings.Contains(head, "@") || pw == "" || strings.Trim(pw, "0123456789") == "" {
		return head
	}
	tail := rest[end:]
	if stop := strings.IndexAny(tail, "?#\n\t \"'<>`"); stop >= 0 {
		tail = tail[:stop]
	}
	at := strings.IndexByte(tail, '@')
	if at < 0 {
		return head
	}
	host := tail[at+1:]
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host = host[:i]
	}
	if host == "" {
		return head
	}
	return rest[:end+at+1+len(host)]
}

func isSchemeChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

// holdsURLPassword reports whether value holds a URL with a password
// (DATABASE_URL=postgres://app:pw@db/x) or a token for a user name
// (REPO_URL=https://ghp_…@github.com/o/r): a credential, whatever the
// variable's name.
func holdsURLPassword(value string) bool {
	ui, _ := urlPasswords(value)
	return len(ui) > 0
}

// urlCredentials are the spellings of the passwords (and token user
// names) in value's URLs that redaction catches, labelled label:
// "//user:password@" as the URL writes it (whatever the password's
// length), and the password alone, as written and percent-decoded, when
// it is minSecretLen long or more and not a plain lowercase word or a
// ${VAR} placeholder (postgres://postgres:postgres@localhost would
// otherwise blank "postgres" everywhere).
func urlCredentials(label, value string) []secretVar {
	uis, pws := urlPasswords(value)
	var out []secretVar
	for i, ui := range uis {
		out = append(out, secretVar{label, "//" + ui + "@"})
		pw := pws[i]
		spellings := []string{pw}
		if dec, err := url.PathUnescape(pw); err == nil && dec != pw {
			spellings = append(spellings, dec)
		}
		for _, p := range spellings {
			if len(p) >= minSecretLen && !plainWord(p) && !strings.HasPrefix(p, "$") {
				out = append(out, secretVar{label, p})
			}
		}
	}
	return out
}

// plainWord reports whether s is lowercase letters only.
func plainWord(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 'a' || r > 'z' }) < 0
}

// urlMarker replaces the userinfo of a URL that carries a credential,
// whoever printed it.
const urlMarker = "[REDACTED:url-credentials]"

// redactURLCredentials replaces, in any URL of s, a userinfo that looks
// like a credential with urlMarker (https://[REDACTED:url-credentials]@github.com/o/r):
// a token as the user name (tokenUser), or a password that is not a
// placeholder (credentialPassword). The URLs of the environment's and the
// .env's variables are redacted by value before this, whatever their
// password.
func redactURLCredentials(s string) string {
	if !strings.Contains(s, "://") || !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	last := 0
	for _, ui := range urlUserinfos(s) {
		if ui.at < last {
			continue
		}
		if ui.hasPassword && !credentialPassword(ui.password) || !ui.hasPassword && !tokenUser(ui.user) {
			continue
		}
		b.WriteString(s[last:ui.at])
		b.WriteString(urlMarker)
		last = ui.at + len(ui.raw)
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// credentialPassword reports whether a URL's password, printed by anyone,
// is taken for a credential: minSecretLen long or more, not a plain
// lowercase word (user:password, postgres:postgres: an example's) and not
// a placeholder ($VAR, ${VAR}, <password>, {{.Password}}, ****, xxxxxx).
func credentialPassword(pw string) bool {
	if len(pw) < minSecretLen || plainWord(pw) || strings.ContainsAny(pw[:1], "$<{*") {
		return false
	}
	return strings.Trim(pw, "*xX") != ""
}
