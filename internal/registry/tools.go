package registry

import (
	"fmt"
	"strings"
	"unicode"
)

// toolInfo is what the registry knows about a tool name.
type toolInfo struct {
	name     string // canonical spelling, Claude Code's
	provided bool   // brood implements it
}

// ReadOnlyTools is what "tools: read-only" expands to, and the tool set of
// the built-in explore and plan agents. Bash joins it only where a kernel
// sandbox can hold Bash read-only; that is a change to this list and to the
// two built-in files.
func ReadOnlyTools() []string { return []string{"Read", "Glob", "Grep", "LS"} }

// isReadOnlyTool reports whether a canonical tool can never write.
func isReadOnlyTool(name string) bool {
	for _, t := range ReadOnlyTools() {
		if t == name {
			return true
		}
	}
	return false
}

// lookupTool resolves a tool name the way Claude Code's files spell them: in
// any case, with or without underscores or dashes (read, web_fetch,
// MultiEdit). Aliases resolve to brood's name: Agent is Task, MultiEdit is
// Edit. The second result is false for a name nobody knows.
func lookupTool(name string) (toolInfo, bool) {
	if isMCPTool(name) {
		// An MCP server's tool (mcp__server__tool, mcp__server__*): the
		// child gets it from the server (see MCPServers).
		return toolInfo{name: name, provided: true}, true
	}
	key := fold(name, "_- ")
	switch key {
	case "read":
		return toolInfo{"Read", true}, true
	case "write":
		return toolInfo{"Write", true}, true
	case "edit", "multiedit":
		return toolInfo{"Edit", true}, true
	case "bash":
		return toolInfo{"Bash", true}, true
	case "glob":
		return toolInfo{"Glob", true}, true
	case "grep":
		return toolInfo{"Grep", true}, true
	case "ls":
		return toolInfo{"LS", true}, true
	case "task", "agent":
		return toolInfo{"Task", true}, true
	case "taskoutput", "agentoutput":
		return toolInfo{"TaskOutput", true}, true
	case "sendmessage":
		return toolInfo{"SendMessage", true}, true
	case "workflow":
		return toolInfo{"Workflow", true}, true
	case "webfetch":
		return toolInfo{"WebFetch", true}, true
	case "websearch":
		// Through the model provider's server-side search (tool.WebSearch):
		// a run whose model has none is told so when it starts.
		return toolInfo{"WebSearch", true}, true
	}
	// Claude Code's other tools: known, so no "unknown tool" warning, but
	// brood has no implementation to give the child.
	for _, n := range []string{
		"NotebookEdit", "NotebookRead", "TodoWrite",
		"TodoRead", "BashOutput", "KillShell", "KillBash", "ExitPlanMode",
		"EnterPlanMode", "SlashCommand", "Skill", "AskUserQuestion",
		"TeamCreate", "TeamDelete", "TaskCreate", "TaskList", "TaskGet",
		"TaskUpdate", "TaskStop", "ListMcpResourcesTool", "ReadMcpResourceTool",
		"LSP", "ToolSearch",
	} {
		if strings.ToLower(n) == key {
			return toolInfo{name: n}, true
		}
	}
	return toolInfo{}, false
}

// splitTools splits a comma-separated tool string on the commas outside
// parentheses, so "Bash(npm test:*, npm run lint)" stays one entry.
func splitTools(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	out = append(out, s[start:])
	var trimmed []string
	for _, e := range out {
		if e = strings.TrimSpace(e); e != "" {
			trimmed = append(trimmed, e)
		}
	}
	return trimmed
}

// toolEntries turns a tools-like value (a comma string or a YAML list) into
// its entries. ok is false when the value is neither.
func toolEntries(v any) (entries []string, ok bool) {
	switch t := v.(type) {
	case string:
		return splitTools(t), true
	case []any:
		entries = []string{}
		for _, e := range t {
			s, isStr := e.(string)
			if !isStr {
				return nil, false
			}
			entries = append(entries, splitTools(s)...)
		}
		return entries, true
	}
	return nil, false
}

// toolSpec is one resolved entry: a tool and, when it had a specifier such
// as Bash(npm test:*), the permission rule it spells.
type toolSpec struct {
	tool string
	rule string
}

// resolveTools resolves entries to canonical names. Names brood doesn't
// provide are dropped with a warning, as are unknown ones; warn receives the
// message. The result has no duplicates and keeps the written order.
func resolveTools(entries []string, warn func(string)) []toolSpec {
	var out []toolSpec
	seen := map[string]bool{}
	for _, e := range entries {
		name, spec, hasSpec := strings.Cut(e, "(")
		name = strings.TrimSpace(name)
		info, known := lookupTool(name)
		switch {
		case !known:
			warn(fmt.Sprintf("unknown tool %q, dropped", name))
			continue
		case !info.provided:
			warn(fmt.Sprintf("brood does not provide the tool %q, dropped", info.name))
			continue
		}
		ts := toolSpec{tool: info.name}
		if hasSpec {
			ts.rule = info.name + "(" + spec
			if !strings.HasSuffix(spec, ")") {
				warn(fmt.Sprintf("tool rule %q has no closing parenthesis", e))
				ts.rule += ")"
			}
		}
		key := ts.tool + "\x00" + ts.rule
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, ts)
	}
	return out
}

// lackingTools are the Claude Code tools entries name that brood does not
// provide (TodoWrite, NotebookEdit, ...): the agent
// runs without them, and is told so.
// fold lowercases s and drops every character of drop. (A
// strings.Replacer built per call cost most of the root's CPU before its
// first request: its byte table is built and allocated each time.)
func fold(s, drop string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(drop, r) {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

func lackingTools(entries []string) []string {
	var out []string
	for _, e := range entries {
		name, _, _ := strings.Cut(e, "(")
		if info, known := lookupTool(strings.TrimSpace(name)); known && !info.provided && !contains(out, info.name) {
			out = append(out, info.name)
		}
	}
	return out
}
