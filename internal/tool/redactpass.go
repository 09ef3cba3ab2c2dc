package tool

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/sandbox"
)

// EnvPassedSecrets names the environment entry ("memfd:N") of the sealed
// memory file in which a parent hands its child the secret values it knows
// (PassSecrets, TakePassedSecrets).
const EnvPassedSecrets = "BROOD_REDACT_VALUES"

// passedSecret is one value on the wire: its label and spelling.
type passedSecret struct {
	Label string `json:"l"`
	Value string `json:"v"`
}

// passedSecrets are the values r knows (a lazy one's found now), each
// spelling it catches: its environment's secret-looking variables' and the
// .env values.
func (r *Redactor) passedSecrets() []passedSecret {
	if r == nil {
		return nil
	}
	r.ready()
	out := make([]passedSecret, 0, min(len(r.secrets), maxPassedCount))
	total := 0
	for _, sv := range passOrder(r.secrets) {
		if len(sv.value) > maxPassedValue || total+len(sv.value) > maxPassedTotal || len(out) == maxPassedCount {
			continue // still redacted here; the child knows it only if it reads it
		}
		total += len(sv.value)
		out = append(out, passedSecret{sv.label, sv.value})
	}
	return out
}

// passOrder is the order in which the caps are filled: the environment's
// values (the user's GITHUB_TOKEN, the provider keys, URL passwords)
// before any .env value, shortest first within each, so that a
// repository's .env of many long values cannot crowd the user's own
// secrets out of what a child knows (red team 21 P2-2: 64 values of 4 KiB
// filled the 256 KiB, and the child wrote the token in clear).
func passOrder(secrets []secretVar) []secretVar {
	out := slices.Clone(secrets)
	slices.SortStableFunc(out, func(a, b secretVar) int {
		if ae, be := strings.HasPrefix(a.label, ".env:"), strings.HasPrefix(b.label, ".env:"); ae != be {
			if be {
				return -1
			}
			return 1
		}
		return cmp.Compare(len(a.value), len(b.value))
	})
	return out
}

// Bounds of what a parent passes (review P3-7: a huge environment cost
// each spawn ~0.7 s): a value over maxPassedValue (a certificate, a
// blob) is not passed, nor any beyond maxPassedCount values or
// maxPassedTotal bytes; the parent still redacts them all.
const (
	maxPassedValue = 4 << 10
	maxPassedTotal = 256 << 10
	maxPassedCount = 1024
)

// PassSecrets hands cmd's child the secret values r knows: the values of
// this process's secret-looking environment variables, which the child's
// environment leaves out (ChildEnviron) but a brief, a file or a tool may
// still show it, and the .env values (the project's and --add-dir's, as
// this process read them from the real tree), which the child's own view
// may hide (an isolated copy leaves the ignored .env out, a `Read(.env)`
// deny hides it). So the child's redactor knows them, and its children's
// in turn. They go in a sealed memory file the child inherits
// (sandbox.PassSealed), never in its arguments, its environment or its
// envelope; where r knows none, nothing is passed.
func PassSecrets(cmd *exec.Cmd, r *Redactor) error {
	vals := r.passedSecrets()
	if len(vals) == 0 {
		return nil
	}
	b, err := json.Marshal(vals)
	if err != nil {
		return err
	}
	return sandbox.PassSealed(cmd, EnvPassedSecrets, b)
}

// TakePassedSecrets is the child's side of PassSecrets: the values its
// parent passed, removed from its environment (and the memory file
// closed), so that nothing it starts inherits them. A value whose label is
// neither a .env one nor a variable's name is dropped.
func TakePassedSecrets() (Secrets, error) {
	v, ok, err := sandbox.TakeEnv(EnvPassedSecrets)
	if err != nil || !ok {
		return nil, err
	}
	var vals []passedSecret
	if err := json.Unmarshal([]byte(v), &vals); err != nil {
		return nil, fmt.Errorf("%s from the parent: %w", EnvPassedSecrets, err)
	}
	out := make(Secrets, 0, len(vals))
	for _, p := range vals {
		if passableLabel(p.Label) {
			out = append(out, secretVar{p.Label, p.Value})
		}
	}
	return out, nil
}

// passableLabel reports whether label is one a parent's redactor makes:
// ".env:NAME", or a variable's NAME (a secret-looking one's, or one whose
// value holds a URL with a password: DATABASE_URL) with nothing in it
// that would end or break the marker.
func passableLabel(label string) bool {
	if strings.HasPrefix(label, ".env:") {
		return true
	}
	return label != "" && !strings.ContainsFunc(label, func(c rune) bool { return c == ']' || c == '=' || c <= ' ' || c == 0x7f })
}

// Secrets are values a parent passed (TakePassedSecrets), for
// NewChildRedactor.
type Secrets []secretVar

// NewChildRedactor is NewLazyProjectRedactor that also knows the values
// passed: a child's, whose own read of its projects' .env files sees only
// what its sandbox lets it see.
func NewChildRedactor(environ []string, passed Secrets, projectRoots ...string) *Redactor {
	r := NewLazyProjectRedactor(environ, projectRoots...)
	own := r.load
	r.load = func() []secretVar { return append(own(), passed...) }
	return r
}
