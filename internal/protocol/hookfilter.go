package protocol

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// HookFilter is, for each tool-call hook event the root runs
// (HookPreToolUse, HookPostToolUse), the matchers of its hook groups. The
// root sends it down (delegate.EnvHooksParent) so that a child asks the
// root only for a call some matcher selects: a call no hook would run for
// costs no round trip. The root still decides: it runs only the hooks
// whose matcher selects the call, whatever a child asks. A child that
// skips a request it should send skips hooks on its own calls only, which
// it runs itself, inside its own sandbox and permissions — nothing it could
// not do without the tool.
type HookFilter map[string][]string

// Has reports whether event has any hook.
func (f HookFilter) Has(event string) bool {
	_, ok := f[event]
	return ok
}

// Events are the events with hooks, PreToolUse first.
func (f HookFilter) Events() []string {
	var out []string
	for _, e := range []string{HookPreToolUse, HookPostToolUse} {
		if f.Has(e) {
			out = append(out, e)
		}
	}
	return out
}

// Selects reports whether some hook of event matches the tool name.
func (f HookFilter) Selects(event, tool string) bool {
	return slices.ContainsFunc(f[event], func(m string) bool { return HookMatch(m, tool, ToolAliases(tool)...) })
}

// Encode is f as the value of delegate.EnvHooksParent ("" when empty).
func (f HookFilter) Encode() string {
	if len(f.Events()) == 0 {
		return ""
	}
	b, _ := json.Marshal(f)
	return string(b)
}

// ParseHookFilter reads an encoded filter: the known events only, at most
// 64 matchers each. Anything unreadable is no filter (no hooks asked).
func ParseHookFilter(v string) HookFilter {
	var raw map[string][]string
	if json.Unmarshal([]byte(v), &raw) != nil {
		return nil
	}
	f := HookFilter{}
	for _, e := range []string{HookPreToolUse, HookPostToolUse} {
		if ms, ok := raw[e]; ok {
			f[e] = append([]string{}, ms[:min(len(ms), 64)]...)
		}
	}
	if len(f) == 0 {
		return nil
	}
	return f
}

// simpleMatcher is a matcher Claude Code compares as names, not as a
// regular expression: "Bash", "Edit|Write".
var simpleMatcher = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_|]+$`) })

// HookMatch reports whether a hook group's matcher selects value, as
// Claude Code does: empty and "*" match everything; a matcher of letters,
// digits, _ and | is a list of exact names; anything else is an
// (unanchored) regular expression, and one that does not compile matches
// nothing. aliases are other names of the same thing.
func HookMatch(matcher, value string, aliases ...string) bool {
	if matcher == "" || matcher == "*" {
		return true
	}
	names := append([]string{value}, aliases...)
	if simpleMatcher().MatchString(matcher) {
		for _, m := range strings.Split(matcher, "|") {
			if slices.Contains(names, strings.TrimSpace(m)) {
				return true
			}
		}
		return false
	}
	re, err := regexp.Compile(matcher)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(names, re.MatchString)
}

// ToolAliases are Claude Code's names for a brood tool or built-in agent
// where they differ: brood's Task is Claude Code's Agent, its explore and
// plan agents Claude Code's Explore and Plan (so a SubagentStart matcher
// "Explore" selects brood's explore).
func ToolAliases(name string) []string {
	switch name {
	case "Task":
		return []string{"Agent"}
	case "explore":
		return []string{"Explore"}
	case "plan":
		return []string{"Plan"}
	}
	return nil
}
