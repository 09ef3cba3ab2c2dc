package hooks

import "github.com/broodhq/brood/internal/protocol"

// Match reports whether a group's matcher selects value, as Claude Code
// does: empty and "*" match everything; a matcher of letters, digits, _ and
// | is a list of exact names; anything else is an (unanchored) regular
// expression, and one that does not compile matches nothing. aliases are
// other names of the same thing (brood's Task is Claude Code's Agent). It
// is protocol.HookMatch, which children evaluate too (protocol.HookFilter).
func Match(matcher, value string, aliases ...string) bool {
	return protocol.HookMatch(matcher, value, aliases...)
}

// toolAliases are Claude Code's names for brood's tools where they differ.
func toolAliases(name string) []string { return protocol.ToolAliases(name) }

// isRegexMatcher reports whether matcher is read as a regular expression.
func isRegexMatcher(matcher string) bool {
	if matcher == "" || matcher == "*" {
		return false
	}
	for _, r := range matcher {
		if !(r == '_' || r == '|' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return true
		}
	}
	return false
}

// payloadToolName is the tool_name a payload carries: Claude Code's Agent
// for brood's Task (as stream-json names it), so a hook written for Claude
// Code (`jq 'select(.tool_name=="Agent")'`) sees delegations. Matchers
// still select it by either name (toolAliases).
func payloadToolName(name string) string {
	if name == "Task" {
		return "Agent"
	}
	return name
}
