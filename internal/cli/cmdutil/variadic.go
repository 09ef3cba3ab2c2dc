package cmdutil

import (
	"regexp"
	"strings"
	"sync"
)

// VariadicFlags are the flags Claude Code declares variadic (commander.js
// `<values...>`): after `--allowedTools` every following argument up to
// the next one that starts with "-" is a value, so
// `--allowedTools "Bash(git log:*)" Edit` allows both.
var VariadicFlags = []string{"--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools", "--add-dir", "--mcp-config", "--betas"}

// Swallowed is a value of a tool-list flag past its first that looks like
// a prompt (a word that is no tool name): Claude Code warns about it.
type Swallowed struct{ Flag, Value string }

// ExpandVariadic rewrites each `--flag a b c` of a variadic flag into
// `--flag=a --flag=b --flag=c`, as commander.js parses it, so pflag sees
// one value per occurrence. `--flag=a` takes only a, as in commander;
// "--" ends the flags. It returns the values after the first that look
// like a prompt, for the note Claude Code prints.
func ExpandVariadic(args []string) ([]string, []Swallowed) {
	out := make([]string, 0, len(args))
	var swallowed []Swallowed
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), swallowed
		}
		if !isVariadic(a) || i+1 >= len(args) {
			out = append(out, a)
			continue
		}
		out = append(out, a+"="+args[i+1]) // the first value, whatever it looks like
		i++
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			out = append(out, a+"="+args[i])
			if strings.Contains(strings.ToLower(a), "tools") && looksLikePrompt(args[i]) {
				swallowed = append(swallowed, Swallowed{Flag: a, Value: args[i]})
			}
		}
	}
	return out, swallowed
}

func isVariadic(a string) bool {
	for _, f := range VariadicFlags {
		if a == f {
			return true
		}
	}
	return false
}

// ruleShape is a tool name or rule: Edit, Bash(git log:*), mcp__srv__tool.
var ruleShape = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(mcp__[\w-]+|[A-Z][A-Za-z0-9_]*)(\(.*\))?$`) })

// looksLikePrompt: a word that is no tool name ("Say hello": "hello").
func looksLikePrompt(s string) bool {
	for _, r := range SplitRules([]string{s}) {
		if !ruleShape().MatchString(r) {
			return true
		}
	}
	return false
}
