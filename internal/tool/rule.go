package tool

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
)

// Rule is one permission rule in Claude Code syntax: a bare tool name
// ("Bash") that covers every call of the tool, or a tool name with a
// specifier ("Bash(npm test:*)", "Edit(docs/**)") that covers only the calls
// whose command or path matches it.
type Rule struct {
	// Tool is the tool name in Claude Code's spelling for the built-ins
	// ("Read", "LS") and as written for any other tool.
	Tool string
	// Specifier is the text between the parentheses; empty for a bare rule.
	Specifier string
	// builtin marks a rule of brood's read-only command set (readonly.go),
	// which no list holds.
	builtin bool
}

// String renders r back into the syntax ParseRule reads.
func (r Rule) String() string {
	if r.Specifier == "" {
		return r.Tool
	}
	return r.Tool + "(" + r.Specifier + ")"
}

// Which kind of subject a tool's specifier is matched against.
const (
	subjectNone    = iota // a bare-name-only tool; specifiers match by equality
	subjectCommand        // Bash: a command prefix, an exact command or a wildcard
	subjectPath           // file tools: a gitignore-style path glob
)

// builtinNames maps the lowercase form of each tool name brood knows to its
// canonical spelling, so agent files and settings may write "bash" or "ls".
var builtinNames = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"read": "Read", "write": "Write", "edit": "Edit", "multiedit": "MultiEdit",
		"bash": "Bash", "glob": "Glob", "grep": "Grep", "ls": "LS",
		"task": "Task", "taskoutput": "TaskOutput", "sendmessage": "SendMessage",
		"workflow": "Workflow", "notebookedit": "NotebookEdit",
		"webfetch": "WebFetch", "websearch": "WebSearch",
	}
})

// CanonicalName returns Claude Code's spelling of a tool name written in any
// case ("bash" -> "Bash"); a name brood does not know is returned unchanged.
func CanonicalName(name string) string {
	if c, ok := builtinNames()[strings.ToLower(name)]; ok {
		return c
	}
	return name
}

func subjectKind(tool string) int {
	switch tool {
	case "Bash":
		return subjectCommand
	case "Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS":
		return subjectPath
	}
	return subjectNone
}

// ParseRule parses one rule. The errors say what is wrong and show the
// expected form, because they reach a person editing a settings file.
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Rule{}, errors.New(`empty permission rule: write a tool name such as "Read" or "Bash(npm test:*)"`)
	}
	name, spec, hasSpec := s, "", false
	if i := strings.IndexByte(s, '('); i >= 0 {
		if !strings.HasSuffix(s, ")") {
			return Rule{}, fmt.Errorf("permission rule %q: missing closing parenthesis; the form is Tool(specifier), e.g. Bash(go test:*)", s)
		}
		name, spec, hasSpec = strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:len(s)-1]), true
	} else if strings.IndexByte(s, ')') >= 0 {
		return Rule{}, fmt.Errorf("permission rule %q: closing parenthesis without an opening one; the form is Tool(specifier)", s)
	}
	if name == "" {
		return Rule{}, fmt.Errorf("permission rule %q: no tool name before the parenthesis; the form is Tool(specifier), e.g. Edit(docs/**)", s)
	}
	for i, c := range name {
		// mcp__server__* covers all of one MCP server's tools.
		if c == '*' && i == len(name)-1 && strings.HasPrefix(name, "mcp__") && strings.HasSuffix(name, "__*") {
			continue
		}
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return Rule{}, fmt.Errorf("permission rule %q: tool name %q may hold only letters, digits, '_' and '-'", s, name)
		}
	}
	r := Rule{Tool: CanonicalName(name)}
	if !hasSpec {
		return r, nil
	}
	if spec == "" {
		return Rule{}, fmt.Errorf("permission rule %q: empty parentheses; write %q to cover every call, or put a command or path inside", s, r.Tool)
	}
	if spec == "*" || (r.Tool == "Bash" && spec == ":*") {
		// "Bash(*)" is Claude Code's way of saying the bare tool.
		return r, nil
	}
	switch subjectKind(r.Tool) {
	case subjectCommand:
		if strings.Contains(strings.TrimSuffix(spec, ":*"), ":*") {
			return Rule{}, fmt.Errorf("permission rule %q: \":*\" may appear only at the end, as in Bash(npm run:*)", s)
		}
		if strings.TrimSpace(strings.TrimSuffix(spec, ":*")) == "" {
			return Rule{}, fmt.Errorf("permission rule %q: no command before \":*\"", s)
		}
	case subjectPath:
		if strings.ContainsRune(spec, '\x00') {
			return Rule{}, fmt.Errorf("permission rule %q: the path holds a NUL byte", s)
		}
		if !doublestar.ValidatePattern(strings.TrimPrefix(strings.TrimPrefix(spec, "~/"), "./")) {
			return Rule{}, fmt.Errorf("permission rule %q: %q is not a valid glob (check unbalanced [ ] or { })", s, spec)
		}
	}
	r.Specifier = spec
	return r, nil
}

// matchCommand reports whether one simple command (no && ; | inside) is
// covered by a Bash specifier: "cmd:*" is a prefix ending at a word boundary,
// a specifier with "*" elsewhere is a wildcard over the whole command, and
// anything else must equal the command exactly.
func matchCommand(spec, cmd string) bool {
	cmd = strings.Join(strings.Fields(cmd), " ")
	if p, ok := strings.CutSuffix(spec, ":*"); ok {
		p = strings.Join(strings.Fields(p), " ")
		return cmd == p || strings.HasPrefix(cmd, p+" ")
	}
	spec = strings.Join(strings.Fields(spec), " ")
	if strings.Contains(spec, "*") {
		return wildcard(spec, cmd)
	}
	return cmd == spec
}

// wildcard matches s against p, which holds at least one '*', where '*'
// stands for any run of characters, slashes and spaces included (unlike a
// path glob).
func wildcard(p, s string) bool {
	parts := strings.Split(p, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return strings.HasSuffix(s, last)
}

// matchPath reports whether the absolute, cleaned path p is covered by a
// path specifier. Specifiers are gitignore-style: "~/x" is under the home
// directory, "/x" (or Claude Code's "//x") is absolute, anything else is
// relative to the workspace; a pattern without a slash matches a name at any
// depth ("./x" anchors one to the workspace), and a pattern that matches a
// directory covers everything under it.
func matchPath(spec, p, workspace string) bool {
	var base string
	anchored := true // relative to its base; only a bare relative name floats
	switch {
	case strings.HasPrefix(spec, "~/"):
		home, err := os.UserHomeDir()
		if err != nil {
			return false
		}
		base, spec = home, spec[2:]
	case strings.HasPrefix(spec, "/"):
		base, spec = "/", strings.TrimLeft(spec, "/")
	case strings.HasPrefix(spec, "./"):
		base, spec = workspace, spec[2:]
	default:
		base, anchored = workspace, strings.Contains(strings.TrimSuffix(spec, "/"), "/")
	}
	if base == "" {
		return false
	}
	rel, err := filepath.Rel(base, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		// The path may have been resolved through links while the rule's
		// base was written through them (/tmp -> /private/tmp, a linked
		// home): compare with the base resolved the same way.
		if real := ResolveLinks(base); real != base {
			rel, err = filepath.Rel(real, p)
		}
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return false
		}
	}
	rel = filepath.ToSlash(rel)
	spec = strings.TrimSuffix(spec, "/")
	if spec == "" || spec == "**" {
		return true
	}
	// Try the path itself and each directory above it, so "build" and
	// "docs/**" both cover docs/a/b.md the way .gitignore would.
	for cand := rel; cand != "." && cand != ""; cand = path.Dir(cand) {
		if anchored {
			if ok, _ := doublestar.Match(spec, cand); ok {
				return true
			}
		} else if ok, _ := doublestar.Match(spec, path.Base(cand)); ok {
			return true
		}
	}
	return false
}
