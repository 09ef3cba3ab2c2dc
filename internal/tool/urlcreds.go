package tool

import (
	"net/url"
	"strings"
)

// urlPasswords are the userinfo of every URL in s that carries a password
// (scheme://user:password@host, redis://:password@host): the userinfo as
// written and its password. The userinfo ends at the authority's last @,
// as net/url reads it (a raw @ in the password stays in it).
func urlPasswords(s string) (userinfo, password []string) {
	for from := 0; ; {
		i := strings.Index(s[from:], "://")
		if i < 0 {
			return userinfo, password
		}
		at := from + i
		from = at + 3
		if at == 0 || !isSchemeChar(s[at-1]) {
			continue
		}
		auth := s[from:]
		if end := strings.IndexAny(auth, "/?#\n\t "); end >= 0 {
			auth = auth[:end]
		}
		last := strings.LastIndexByte(auth, '@')
		if last < 0 {
			continue
		}
		ui := auth[:last]
		_, pw, ok := strings.Cut(ui, ":")
		if !ok || pw == "" {
			continue
		}
		userinfo = append(userinfo, ui)
		password = append(password, pw)
	}
}

func isSchemeChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

// holdsURLPassword reports whether value holds a URL with a password
// (DATABASE_URL=postgres://app:pw@db/x): a credential, whatever the
// variable's name.
func holdsURLPassword(value string) bool {
	ui, _ := urlPasswords(value)
	return len(ui) > 0
}

// urlCredentials are the spellings of the passwords in value's URLs that
// redaction catches, labelled label: "//user:password@" as the URL writes
// it (whatever the password's length), and the password alone, as
// written and percent-decoded, when it is minSecretLen long or more and
// not a plain lowercase word or a ${VAR} placeholder
// (postgres://postgres:postgres@localhost would otherwise blank
// "postgres" everywhere).
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
