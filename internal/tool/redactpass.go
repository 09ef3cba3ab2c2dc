package tool

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"

	"github.com/broodhq/brood/internal/sandbox"
)

// EnvPassedSecrets names the environment entry ("memfd:N") of the sealed
// memory file in which a parent hands its child the project's .env values
// (PassSecrets, TakePassedSecrets).
const EnvPassedSecrets = "BROOD_REDACT_VALUES"

// passedSecret is one value on the wire: its label and spelling.
type passedSecret struct {
	Label string `json:"l"`
	Value string `json:"v"`
}

// dotenvSecrets are the .env values r knows (a lazy one's found now).
func (r *Redactor) dotenvSecrets() []passedSecret {
	if r == nil {
		return nil
	}
	r.ready()
	var out []passedSecret
	for _, sv := range r.secrets {
		if strings.HasPrefix(sv.label, ".env:") {
			out = append(out, passedSecret{sv.label, sv.value})
		}
	}
	return out
}

// PassSecrets hands cmd's child the .env values r knows (the project's and
// --add-dir's, as this process read them from the real tree), so that the
// child's redactor knows them whatever its own view hides: an isolated
// child's copy leaves the ignored .env out, a `Read(.env)` deny hides it.
// They go in a sealed memory file the child inherits (sandbox.PassSealed),
// never in its arguments, its environment or its envelope; where r knows
// none, nothing is passed.
func PassSecrets(cmd *exec.Cmd, r *Redactor) error {
	vals := r.dotenvSecrets()
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
// closed), so that nothing it starts inherits them.
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
		if strings.HasPrefix(p.Label, ".env:") {
			out = append(out, secretVar{p.Label, p.Value})
		}
	}
	return out, nil
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
