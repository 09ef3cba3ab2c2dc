package tool

import (
	"encoding/base64"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// minSecretLen is the shortest environment value treated as a secret; short
// values ("1", "true") would blank out ordinary text everywhere.
const minSecretLen = 6

// Redactor replaces secrets with a marker naming where they came from, so
// that command output, transcripts, results and logs never carry a
// credential that happened to be printed. It knows three kinds:
//
//   - the values of secret-looking environment variables (IsSecretName),
//     and of any variable whose value holds a URL with a password, as
//     they are, reversed and base64-encoded, as [REDACTED:NAME], and such
//     a URL's password (urlCredentials);
//   - the values of a project's .env files (see NewProjectRedactor), as
//     [REDACTED:.env:NAME];
//   - common key formats, whoever printed them (Anthropic and OpenAI keys,
//     GitHub tokens, AWS access key ids, Stripe and Slack keys, private key
//     blocks), as [REDACTED:kind].
//
// The literal values are matched by one strings.Replacer, built on first
// use; the formats by one regular expression behind a cheap prefilter. A
// Redactor is immutable once built and safe for concurrent use.
type Redactor struct {
	secrets []secretVar // longest value first, so overlapping values redact whole
	longest int

	// load, when set, finds the secrets at the first use (loadOnce).
	load     func() []secretVar
	loadOnce sync.Once

	once sync.Once
	rep  *strings.Replacer
}

type secretVar struct{ label, value string }

// NewRedactor picks the secrets out of an environment in os.Environ form
// ("NAME=value").
func NewRedactor(environ []string) *Redactor {
	return newRedactor(envSecrets(environ))
}

// NewProjectRedactor is NewRedactor plus the values of the .env files at
// the top of each of projectRoots and one directory below (see
// projectEnvSecrets): the project's, and --add-dir's directories.
func NewProjectRedactor(environ []string, projectRoots ...string) *Redactor {
	out := envSecrets(environ)
	for _, root := range projectRoots {
		out = append(out, projectEnvSecrets(root)...)
	}
	return newRedactor(out)
}

// NewLazyProjectRedactor is NewProjectRedactor, of the .env files of every
// one of projectRoots, made at its first use (a Redact, a Writer's first
// line): a child's, whose first redaction (its started event) comes past
// its sandbox and before any tool of its runs, so the .env files read are
// those it was started with.
func NewLazyProjectRedactor(environ []string, projectRoots ...string) *Redactor {
	return &Redactor{load: func() []secretVar {
		out := envSecrets(environ)
		for _, root := range projectRoots {
			out = append(out, projectEnvSecrets(root)...)
		}
		return out
	}}
}

// ready finds a lazy redactor's secrets, once.
func (r *Redactor) ready() {
	if r.load != nil {
		r.loadOnce.Do(func() { r.set(r.load()) })
	}
}

func envSecrets(environ []string) []secretVar {
	var out []secretVar
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if (IsSecretName(name) && len(value) >= minSecretLen) || holdsURLPassword(value) {
			out = append(out, variants(name, value)...)
		}
		out = append(out, urlCredentials(name, value)...)
	}
	return out
}

// variants are the spellings of one secret value that redaction catches:
// the value, reversed, and base64 of it (with and without the newline echo
// adds). A secret encoded some other way is what the child environment's
// allowlist is for: a child never holds one it did not ask for.
func variants(label, value string) []secretVar {
	out := []secretVar{{label, value}}
	if rev := reverse(value); rev != value {
		out = append(out, secretVar{label, rev})
	}
	for _, v := range []string{value, value + "\n"} {
		enc := strings.TrimRight(base64.StdEncoding.EncodeToString([]byte(v)), "=")
		if len(enc) >= 8 {
			out = append(out, secretVar{label, enc})
		}
	}
	return out
}

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

func newRedactor(secrets []secretVar) *Redactor {
	r := &Redactor{}
	r.set(secrets)
	return r
}

// isBroodsWord reports whether v is a value brood itself writes in its
// outputs' structure: a result's status, trust and patch attributes,
// stream-json's subtypes and types. One is never taken for a secret: a
// repository's committed .env (AUTH_TOKEN=rejected,
// FOO_SECRET=error_max_turns) would otherwise blank the words a user's
// script or CI step reads.
func isBroodsWord(v string) bool {
	switch v {
	case "done", "partial", "checkpoint", "failed", "killed", "cancelled", "rejected", "applied", "not-applied",
		"running", "queued", "interrupted", "stopped", "trusted", "untrusted", "success", "error_max_turns",
		"error_max_budget_usd", "error_interrupted", "error_during_execution", "error_max_structured_output_retries",
		"assistant", "result", "system", "tool_use", "tool_result", "subagent-result",
		// stream-json's and json's keys and fixed values (Claude Code's
		// shapes, docs/cli.md)
		"is_error", "session_id", "num_turns", "end_turn", "max_tokens", "stop_sequence", "stop_reason",
		"duration_ms", "duration_api_ms", "total_cost_usd", "input_tokens", "output_tokens",
		"cache_creation_input_tokens", "cache_read_input_tokens", "tool_use_id", "parent_tool_use_id",
		"permission_denials", "content", "message", "subtype", "permissionMode", "apiKeySource",
		"mcp_servers", "slash_commands", "output_style", "claude_code_version", "modelUsage",
		"server_tool_use", "service_tier", "terminal_reason", "structured_output", "errors":
		return true
	}
	return false
}

// set keeps secrets, each value once, longest first.
func (r *Redactor) set(secrets []secretVar) {
	seen := map[string]bool{}
	for _, sv := range secrets {
		if seen[sv.value] || strings.TrimSpace(sv.value) == "" || isBroodsWord(sv.value) {
			continue
		}
		seen[sv.value] = true
		r.secrets = append(r.secrets, sv)
		r.longest = max(r.longest, len(sv.value))
	}
	sort.Slice(r.secrets, func(i, j int) bool {
		if len(r.secrets[i].value) != len(r.secrets[j].value) {
			return len(r.secrets[i].value) > len(r.secrets[j].value)
		}
		return r.secrets[i].label < r.secrets[j].label
	})
}

func (r *Redactor) replacer() *strings.Replacer {
	r.once.Do(func() {
		pairs := make([]string, 0, 2*len(r.secrets))
		for _, sv := range r.secrets {
			pairs = append(pairs, sv.value, "[REDACTED:"+sv.label+"]")
		}
		r.rep = strings.NewReplacer(pairs...)
	})
	return r.rep
}

// Redact returns s with every secret replaced by its marker.
func (r *Redactor) Redact(s string) string {
	if r == nil || s == "" {
		return s
	}
	r.ready()
	if len(r.secrets) > 0 {
		s = r.replacer().Replace(s)
	}
	return redactFormats(s)
}

// keyPrefixes are the literal starts of the key formats: a string holding
// none of them is left to the regular expression not at all.
var keyPrefixes = []string{"sk-", "sk_", "rk_", "pk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "AKIA", "ASIA", "xox", "AIza", "-----BEGIN"}

// keyFormat matches the common credential formats. Built once, read only.
var keyFormat = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)` +
		`(?P<anthropic>sk-ant-[A-Za-z0-9_\-]{16,})` +
		`|(?P<openai>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,})` +
		`|(?P<stripe>(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,})` +
		`|(?P<github>(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})` +
		`|(?P<aws>\b(?:AKIA|ASIA)[0-9A-Z]{16}\b)` +
		`|(?P<slack>xox[abposr]-[A-Za-z0-9\-]{10,})` +
		`|(?P<google>AIza[0-9A-Za-z_\-]{35})` +
		`|(?P<privatekey>-----BEGIN[ A-Z0-9]*PRIVATE KEY-----.*?-----END[ A-Z0-9]*PRIVATE KEY-----)`)
})

// minKeyTail is the fewest key characters ([A-Za-z0-9_-]) every format
// but a private key has right after its prefix (the shortest: slack's
// xox + "b-" + 10).
const minKeyTail = 12

// mayHoldKey reports whether s could match keyFormat: some prefix followed
// by at least minKeyTail key characters, or a private key's BEGIN line. It
// never says no to a string the expression matches, and says no to almost
// every text — "task-1", "disk-usage" — so that the expression (compiled on
// first use) runs only where a key may be.
func mayHoldKey(s string) bool {
	for _, p := range keyPrefixes {
		for from := 0; ; {
			i := strings.Index(s[from:], p)
			if i < 0 {
				break
			}
			at := from + i + len(p)
			if p == "-----BEGIN" || keyTail(s[at:]) >= minKeyTail {
				return true
			}
			from = from + i + 1
		}
	}
	return false
}

// keyTail counts the key characters at the start of s (at most minKeyTail).
func keyTail(s string) int {
	n := 0
	for n < len(s) && n < minKeyTail {
		c := s[n]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			break
		}
		n++
	}
	return n
}

// redactFormats replaces every key-format match with [REDACTED:kind].
func redactFormats(s string) string {
	if !mayHoldKey(s) {
		return s
	}
	re := keyFormat()
	names := re.SubexpNames()
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		kind := "key"
		for g := 1; g < len(names); g++ {
			if m[2*g] >= 0 {
				kind = names[g]
				break
			}
		}
		b.WriteString(s[last:m[0]])
		b.WriteString("[REDACTED:" + kind + "]")
		last = m[1]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// Writer returns a writer that redacts what passes through it on the way to
// w. It redacts whole lines (a key format's length is open-ended), holding
// back the unfinished last line until the next write or Close, and a
// private key block until its end; a very long line is flushed in pieces
// that keep the longest secret's length back.
func (r *Redactor) Writer(w io.Writer) io.WriteCloser {
	return &redactWriter{r: r, w: w}
}

// Bounds of what the writer holds back.
const (
	maxPendingLine = 64 << 10
	maxPendingKey  = 1 << 20
)

type redactWriter struct {
	r       *Redactor
	w       io.Writer
	pending string
}

func (rw *redactWriter) Write(p []byte) (int, error) {
	s := rw.pending + string(p)
	cut := strings.LastIndexByte(s, '\n') + 1
	if i := strings.LastIndex(s[:cut], "-----BEGIN"); i >= 0 && !strings.Contains(s[i:cut], "-----END") && len(s)-i < maxPendingKey {
		cut = i // a private key block not finished yet
	}
	if len(s)-cut > maxPendingLine {
		cut = len(s) - max(4096, rw.r.maxLen())
	}
	rw.pending = s[cut:]
	if cut == 0 {
		return len(p), nil
	}
	if _, err := io.WriteString(rw.w, rw.r.Redact(s[:cut])); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (r *Redactor) maxLen() int {
	if r == nil {
		return 0
	}
	r.ready()
	return r.longest
}

func (rw *redactWriter) Close() error {
	s := rw.pending
	rw.pending = ""
	_, err := io.WriteString(rw.w, rw.r.Redact(s))
	return err
}
