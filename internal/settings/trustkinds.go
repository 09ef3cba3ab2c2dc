package settings

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Kinds says in brood's own words what trusting the project would grant
// (Widening, one kind each: "permissions.defaultMode bypassPermissions",
// "hooks", "MCP servers", "allow rules"), for a refusal to name after the
// narrow route: never a value the repository chose (a rule, a server or
// agent name, a command), which would speak in brood's voice there.
func (t ProjectTrust) Kinds() []string {
	var out []string
	for _, w := range t.Widening {
		if k := widenKind(w); k != "" && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// settingKey is a settings key as the notice names one.
var settingKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z_]+(?:\.[a-zA-Z_]+)*$`) })

// widenKind is the kind of one Widening entry (restrict's, the gated
// files'), or "" when brood has no word for it.
func widenKind(w string) string {
	key, rest, _ := strings.Cut(w, " ")
	switch {
	case key == "permissions.mode" || key == "permissions.defaultMode":
		if m, _, _ := strings.Cut(rest, " "); slices.Contains([]string{"acceptEdits", "bypassPermissions", "dontAsk", "plan", "default"}, m) {
			return key + " " + m
		}
		return key
	case key == "permissions.allow":
		return "allow rules"
	case key == "hooks":
		return "hooks"
	case key == "env":
		return "environment variables"
	case strings.HasPrefix(w, "MCP servers"):
		return "MCP servers"
	case key == "agent":
		// (the name is the repository's: only brood's words count)
		switch {
		case strings.Contains(rest, " starts MCP servers "):
			return "MCP servers"
		case strings.Contains(rest, " runs in permissionMode "):
			return "agent permission modes"
		case strings.Contains(rest, " model is "):
			return "agent models"
		case strings.Contains(rest, " gets "):
			return "agent variables"
		}
		return "agent files"
	case strings.HasPrefix(key, "pool.timeouts."):
		return "pool.timeouts"
	case settingKey().MatchString(key) && (strings.Contains(key, ".") || slices.Contains(Keys(), key)):
		return key
	}
	return ""
}
