package tui

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/tool"
)

func welcomeMode(m tool.Mode) string {
	if m == tool.ModeDefault {
		return "default (edits and commands ask first)"
	}
	return modeWords(m)
}

// welcome is the first screen of a new conversation: where brood is, the
// model and the mode, and three things to try (Claude Code opens the same
// way: its welcome box with the directory, then tips).
func (m *Model) welcome(w int) []string {
	dir := m.eng.cfg.ProjectRoot
	if env := m.eng.cfg.Agent.Env; env != nil && env.Dir != "" {
		dir = env.Dir
	}
	if m.eng.cfg.Getenv != nil {
		if home := m.eng.cfg.Getenv("HOME"); home != "" {
			if r, err := filepath.Rel(home, dir); err == nil && filepath.IsLocal(r) {
				dir = filepath.Join("~", r)
			}
		}
	}
	agent := "explore"
	var names []string
	for _, d := range m.eng.agents() {
		names = append(names, d.Name)
	}
	if len(names) > 0 && !slices.Contains(names, agent) {
		agent = names[0]
	}
	lines := []string{
		m.st.title.Render("✻ brood") + " · subagents you can watch, steer and stop",
		"",
		"  dir    " + clean(dir, false),
		"  model  " + shortModel(m.eng.modelSpec()) + "  (/model to switch)",
		"  mode   " + welcomeMode(m.eng.permMode()) + "  (Shift+Tab to change)",
		"",
		"  Try:",
		"  › what does this project do, and how is it laid out?",
		"  › /subagent " + clean(agent, false) + ` "find where errors are handled"`,
		"  › /agents  — the subagent types you can dispatch",
		"",
		m.st.dim.Render("  /help keys and commands · Ctrl-T the subagent tree · Ctrl-C twice to leave"),
	}
	var out []string
	for _, l := range lines {
		out = append(out, truncate(strings.TrimRight(l, " "), w))
	}
	return out
}
