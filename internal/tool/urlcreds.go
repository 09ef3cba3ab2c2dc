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
		auth := authority(s[from:])
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

// authority is the authority at the start of rest (what follows "://"):
// up to the first / ? # or blank, as net/url reads it, or, read
// leniently, past a raw "/" in a password (postgres://app:Zx9k/Qw8=@db/x,
// as a generated base64 password is often written): when the text before
// the first "/" is user:password (after the ":" something other than a
// port's digits) and an "@" follows before a blank, "?" or "#", it is
// that "@"'s userinfo (red team 21 P3-1).
func authority(rest string) string {
	end := strings.IndexAny(rest, "/?#\n\t ")
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
