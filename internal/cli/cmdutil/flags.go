package cmdutil

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/term"
)

// Enum is a string flag that takes one of a fixed set of values, checked
// when the flag is parsed (so `--effort huge` is a usage error at once, not
// a failure at the first model call).
type Enum struct {
	Value   *string
	Allowed []string
}

// NewEnum binds an Enum to p with its default value def.
func NewEnum(p *string, def string, allowed ...string) *Enum {
	*p = def
	return &Enum{Value: p, Allowed: allowed}
}

func (e *Enum) String() string { return *e.Value }

// Set implements pflag.Value.
func (e *Enum) Set(v string) error {
	if !slices.Contains(e.Allowed, v) {
		return fmt.Errorf("%q is not one of %s", v, strings.Join(e.Allowed, ", "))
	}
	*e.Value = v
	return nil
}

// Type implements pflag.Value.
func (e *Enum) Type() string { return "string" }

// IsTerminal reports whether v is a terminal: an *os.File the terminal
// driver answers for (so /dev/null, a pipe or a file is not one, as it is
// for a ModeCharDevice test).
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	return term.IsTerminal(int(f.Fd())) // TCGETS: the terminal driver answers
}

// SplitRules splits a Claude Code tool list ("Bash(git log:*) Edit,Read")
// on commas and spaces outside parentheses.
func SplitRules(vals []string) []string {
	var out []string
	for _, v := range vals {
		depth, start := 0, 0
		for i, r := range v {
			switch {
			case r == '(':
				depth++
			case r == ')':
				depth = max(depth-1, 0)
			case (r == ',' || r == ' ') && depth == 0:
				if s := strings.TrimSpace(v[start:i]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
		if s := strings.TrimSpace(v[start:]); s != "" {
			out = append(out, s)
		}
	}
	return out
}
