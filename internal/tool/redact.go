package tool

import (
	"io"
	"sort"
	"strings"
)

// minSecretLen is the shortest environment value treated as a secret; short
// values ("1", "true") would blank out ordinary text everywhere.
const minSecretLen = 6

// IsSecretName reports whether an environment variable's name says it holds
// a credential: *_KEY, *_TOKEN, *_SECRET, *_PASSWORD and the provider keys.
func IsSecretName(name string) bool {
	n := strings.ToUpper(name)
	if n == "ANTHROPIC_API_KEY" || n == "OPENAI_API_KEY" {
		return true
	}
	for _, suf := range []string{"_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_PASSWD", "_APIKEY"} {
		if strings.HasSuffix(n, suf) {
			return true
		}
	}
	return false
}

// Redactor replaces the values of secret environment variables with a
// marker naming the variable, so that command output and transcripts never
// carry a credential that happened to be printed. It is immutable and safe
// for concurrent use.
type Redactor struct {
	secrets []secretVar // longest value first, so overlapping values redact whole
	maxLen  int
}

type secretVar struct{ name, value string }

// NewRedactor picks the secrets out of an environment in os.Environ form
// ("NAME=value").
func NewRedactor(environ []string) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !IsSecretName(name) || len(value) < minSecretLen || seen[value] {
			continue
		}
		seen[value] = true
		r.secrets = append(r.secrets, secretVar{name, value})
		r.maxLen = max(r.maxLen, len(value))
	}
	sort.Slice(r.secrets, func(i, j int) bool {
		if len(r.secrets[i].value) != len(r.secrets[j].value) {
			return len(r.secrets[i].value) > len(r.secrets[j].value)
		}
		return r.secrets[i].name < r.secrets[j].name
	})
	return r
}

// Redact returns s with every secret value replaced by [REDACTED:NAME].
func (r *Redactor) Redact(s string) string {
	if r == nil {
		return s
	}
	for _, sv := range r.secrets {
		if strings.Contains(s, sv.value) {
			s = strings.ReplaceAll(s, sv.value, "[REDACTED:"+sv.name+"]")
		}
	}
	return s
}

// Writer returns a writer that redacts what passes through it on the way to
// w. A secret split across two writes is still caught: the last few bytes
// are held back until the next write or Close, which flushes them.
func (r *Redactor) Writer(w io.Writer) io.WriteCloser {
	return &redactWriter{r: r, w: w}
}

type redactWriter struct {
	r       *Redactor
	w       io.Writer
	pending string
}

func (rw *redactWriter) Write(p []byte) (int, error) {
	if rw.r == nil || len(rw.r.secrets) == 0 {
		_, err := rw.w.Write(p)
		return len(p), err
	}
	s := rw.r.Redact(rw.pending + string(p))
	// Any secret starting before the held-back tail was wholly inside s and
	// has been replaced; a prefix of one can only sit in the tail.
	keep := min(rw.r.maxLen-1, len(s))
	rw.pending = s[len(s)-keep:]
	if _, err := io.WriteString(rw.w, s[:len(s)-keep]); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (rw *redactWriter) Close() error {
	s := rw.pending
	rw.pending = ""
	_, err := io.WriteString(rw.w, rw.r.Redact(s))
	return err
}
