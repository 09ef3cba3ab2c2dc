package tool

import (
	"slices"
	"strings"
	"testing"
)

// TestParseDotenv: a .env file is read as dotenv, docker compose and
// python-dotenv read it: quoted values span lines (red team 20 P3-1: a
// multi-line value was learnt as its first line with the quote).
func TestParseDotenv(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []dotenvVar
	}{
		{"plain", "A=b\n", []dotenvVar{{"A", "b", ""}}},
		{"export and blanks", "  export  A = b  \n", []dotenvVar{{"A", "b", ""}}},
		{"comment after unquoted", "A=b c # note\nB=x#y\n", []dotenvVar{{"A", "b c", ""}, {"B", "x#y", ""}}},
		{"comments and junk", "# A=x\njunk line\n=v\nA B=c\n", nil},
		{"double quoted", `A="b # c"` + "\n", []dotenvVar{{"A", "b # c", "b # c"}}},
		{"double escapes", `A="l1\nl2\t\"q\"\\"` + " # c\n", []dotenvVar{{"A", "l1\nl2\t\"q\"\\", `l1\nl2\t\"q\"\\`}}},
		{"single literal", `A='l1\nl2'` + "\n", []dotenvVar{{"A", `l1\nl2`, `l1\nl2`}}},
		{"multi-line double", "A=\"line1secretAAAA\nline2secretBBBB\"\nB=c\n", []dotenvVar{{"A", "line1secretAAAA\nline2secretBBBB", "line1secretAAAA\nline2secretBBBB"}, {"B", "c", ""}}},
		{"multi-line single", "A='{\n  \"k\": \"v\"\n}'\r\nB=c", []dotenvVar{{"A", "{\n  \"k\": \"v\"\n}", "{\n  \"k\": \"v\"\n}"}, {"B", "c", ""}}},
		{"unterminated", "A=\"abc\nB=c\n", []dotenvVar{{"A", "abc", "abc"}, {"B", "c", ""}}},
		{"duplicate kept", "A=x1\nA=x2\n", []dotenvVar{{"A", "x1", ""}, {"A", "x2", ""}}},
		{"empty", "A=\nB=\"\"\n", []dotenvVar{{"A", "", ""}, {"B", "", ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseDotenv(tc.src); !slices.Equal(got, tc.want) {
				t.Errorf("parseDotenv(%q)\n got %q\nwant %q", tc.src, got, tc.want)
			}
		})
	}
}

// TestDotenvMultiLineRedacted: a multi-line .env value is redacted whole
// and line by line (a PEM body or a service account's JSON printed one
// line at a time), as the file spells it and as a program sees it; its
// PEM armour and short lines ({, }) are not secrets.
func TestDotenvMultiLineRedacted(t *testing.T) {
	root := t.TempDir()
	writeTestFile(t, root+"/.env", "MULTI=\"line1secretAAAA\nline2secretBBBB\"\n"+
		"CERT=\"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\nZ2VuZXJhdGVkIGJ5IHRlc3Q\n-----END CERTIFICATE-----\"\n"+
		"GOOGLE_CREDS='{\n  \"private_key_id\": \"a1b2c3d4e5f6\"\n}'\n"+
		`ESCAPED="esc1secretCCCC\nesc2secretDDDD"`+"\n")
	r := NewProjectRedactor(nil, root)
	for in, want := range map[string]string{
		"line1secretAAAA":                          "[REDACTED:.env:MULTI]",
		"  line2secretBBBB\"":                      "  [REDACTED:.env:MULTI]\"",
		"line1secretAAAA\nline2secretBBBB":         "[REDACTED:.env:MULTI]",
		"MIIBszCCAVmgAwIBAgIUQ":                    "[REDACTED:.env:CERT]",
		"Z2VuZXJhdGVkIGJ5IHRlc3Q":                  "[REDACTED:.env:CERT]",
		"-----BEGIN CERTIFICATE-----":              "-----BEGIN CERTIFICATE-----",
		"{\n}":                                     "{\n}",
		`"private_key_id": "a1b2c3d4e5f6"`:         "[REDACTED:.env:GOOGLE_CREDS]",
		`ESCAPED="esc1secretCCCC\nesc2secretDDDD"`: `ESCAPED="[REDACTED:.env:ESCAPED]"`,
		"esc1secretCCCC\nesc2secretDDDD":           "[REDACTED:.env:ESCAPED]",
		"esc2secretDDDD":                           "[REDACTED:.env:ESCAPED]",
	} {
		if got := r.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestURLPasswordsRedacted: a URL's password in any variable of the
// environment or the .env (DATABASE_URL, REDIS_URL: red team 20 P3-2) is
// redacted, the URL whole and the password alone; a plain word of a
// password (postgres:postgres) only inside its URL; a URL without a
// password is left alone.
func TestURLPasswordsRedacted(t *testing.T) {
	root := t.TempDir()
	writeTestFile(t, root+"/.env", "AMQP_URL=amqp://guest:rabbitPw99x@mq:5672/\n")
	r := NewProjectRedactor([]string{
		"DATABASE_URL=postgres://app:hunter2hunter2@db.internal/x",
		"REDIS_URL=redis://:r3dispassw0rd@cache:6379",
		"MONGO_URI=mongodb://u:p%40ss%2Fw0rd@h1,h2/db",
		"DEV_DB=postgres://postgres:postgres@localhost/app",
		"SHORT_URL=redis://:pw@cache:6379/0",
		"API_URL=https://example.com/x",
		"HTTPS_PROXY=http://u:proxyPw123@proxy:3128",
	}, root)
	for in, want := range map[string]string{
		"postgres://app:hunter2hunter2@db.internal/x":          "[REDACTED:DATABASE_URL]",
		"PGPASSWORD=hunter2hunter2 psql":                       "PGPASSWORD=[REDACTED:DATABASE_URL] psql",
		"redis://:r3dispassw0rd@replica:6379/1":                "redis:[REDACTED:REDIS_URL]replica:6379/1",
		"r3dispassw0rd":                                        "[REDACTED:REDIS_URL]",
		"p@ss/w0rd and p%40ss%2Fw0rd":                          "[REDACTED:MONGO_URI] and [REDACTED:MONGO_URI]",
		"postgres is up; postgres://postgres:postgres@other/x": "postgres is up; postgres:[REDACTED:DEV_DB]other/x",
		"redis://:pw@cache:6379/0 and redis://:pw@cache":       "[REDACTED:SHORT_URL] and redis:[REDACTED:SHORT_URL]cache",
		"https://example.com/x":                                "https://example.com/x",
		"proxyPw123":                                           "[REDACTED:HTTPS_PROXY]",
		"rabbitPw99x":                                          "[REDACTED:.env:AMQP_URL]",
	} {
		if got := r.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	// Withheld from a child's environment unless its agent asks for it.
	// A proxy's stays: the child's tools must go through it.
	env := []string{"PATH=/bin", "DATABASE_URL=postgres://app:hunter2hunter2@db/x", "API_URL=https://example.com", "REDIS_URL=redis://:x@c", "https_proxy=http://u:proxyPw123@proxy:3128"}
	if got, want := ChildEnviron(env, []string{"REDIS_URL"}), []string{"PATH=/bin", "API_URL=https://example.com", "REDIS_URL=redis://:x@c", "https_proxy=http://u:proxyPw123@proxy:3128"}; !slices.Equal(got, want) {
		t.Errorf("ChildEnviron = %q, want %q", got, want)
	}
	if got := strings.Join(ChildEnviron(env[:4], nil), " "); strings.Contains(got, "@") {
		t.Errorf("ChildEnviron kept a URL password: %q", got)
	}
}

// TestURLTokenUserRedacted: a token given as a URL's user name
// (https://TOKEN@github.com/o/r, as git and GitLab take one) in a
// variable is redacted as a URL's password is, and withheld from a child
// (a proxy's excepted); and in any text, whoever printed it, a URL's
// userinfo that looks like a credential — a token user, a password that
// is no placeholder — is replaced, while a person's name
// (https://alice@host), git@, an example's user:password or a
// placeholder are left alone.
func TestURLTokenUserRedacted(t *testing.T) {
	const tok = "Zt8kQ2mW9xR4vB7nL1pY6sD3"
	r := NewProjectRedactor([]string{
		"REPO_URL=https://" + tok + "@git.example.com/o/r.git",
		"SITE_URL=https://alice@example.com/x",
	}, t.TempDir())
	for in, want := range map[string]string{
		"fetching https://" + tok + "@git.example.com/o/r.git":            "fetching [REDACTED:REPO_URL]",
		"token " + tok + " again":                                         "token [REDACTED:REPO_URL] again",
		"https://alice@example.com/x":                                     "https://alice@example.com/x",
		"remote: https://x-access-token:Qm7pW2zK9tR4nB8v@github.com/o/r":  "remote: https://[REDACTED:url-credentials]@github.com/o/r",
		"clone https://glpat4Rk9sT2mQ7wX1zB8nV5c@gitlab.com/g/p.git":      "clone https://[REDACTED:url-credentials]@gitlab.com/g/p.git",
		"db at postgres://app:S3cr3t-Pa55@db:5432/x ok":                   "db at postgres://[REDACTED:url-credentials]@db:5432/x ok",
		"example postgres://user:password@localhost/x":                    "example postgres://user:password@localhost/x",
		"template postgres://app:${DB_PASSWORD}@db/x":                     "template postgres://app:${DB_PASSWORD}@db/x",
		"ssh://git@github.com/o/r and https://deploy-bot@ci.example.com/": "ssh://git@github.com/o/r and https://deploy-bot@ci.example.com/",
		"mail alice%40corp.example.com@host via https://a.example.com/":   "mail alice%40corp.example.com@host via https://a.example.com/",
		// A comma ends a host:port; a service's long name with separators
		// is a name; a known token prefix is a token, short or long.
		"see http://example.com:8080,admin@example.org":         "see http://example.com:8080,admin@example.org",
		"ssh://deploy-bot-12345678901234567@host":               "ssh://deploy-bot-12345678901234567@host",
		"https://jenkins-user-01-2024-build@ci.example.com/j/x": "https://jenkins-user-01-2024-build@ci.example.com/j/x",
		"https://ghp_A1b2C3d4E5f6@github.com/o/r":               "https://[REDACTED:url-credentials]@github.com/o/r",
	} {
		if got := r.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	env := []string{"PATH=/bin", "REPO_URL=https://" + tok + "@git.example.com/o/r.git", "SITE_URL=https://alice@example.com/x",
		"GIT_PROXY=http://" + tok + "@proxy:3128"}
	if got, want := ChildEnviron(env, nil), []string{"PATH=/bin", "SITE_URL=https://alice@example.com/x", "GIT_PROXY=http://" + tok + "@proxy:3128"}; !slices.Equal(got, want) {
		t.Errorf("ChildEnviron = %q, want %q", got, want)
	}
	if got := ChildEnviron(env, []string{"REPO_URL"}); !slices.Contains(got, env[1]) {
		t.Errorf("an agent that asks for REPO_URL by name does not get it: %q", got)
	}
}

// TestURLPasswordWithRawSlash: a URL password written with a raw "/" (a
// base64 one) is read leniently: the variable is withheld from children
// and the password redacted (red team 21 P3-1); a port and a path's "@"
// are not taken for one.
func TestURLPasswordWithRawSlash(t *testing.T) {
	const url = "postgres://app:Zx9k/Qw8+Lk7mP2=@db.internal:5432/x"
	r := NewRedactor([]string{"DATABASE_URL=" + url, "SITE_URL=https://example.com:8443/users/@alice", "DOCS_URL=https://example.com/a@b"})
	for in, want := range map[string]string{
		"root sees " + url:                      "root sees [REDACTED:DATABASE_URL]",
		"pw Zx9k/Qw8+Lk7mP2= here":              "pw [REDACTED:DATABASE_URL] here",
		"https://example.com:8443/users/@alice": "https://example.com:8443/users/@alice",
	} {
		if got := r.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	env := []string{"DATABASE_URL=" + url, "SITE_URL=https://example.com:8443/users/@alice", "DOCS_URL=https://example.com/a@b"}
	if got, want := ChildEnviron(env, nil), env[1:]; !slices.Equal(got, want) {
		t.Errorf("ChildEnviron = %q, want %q", got, want)
	}
}
