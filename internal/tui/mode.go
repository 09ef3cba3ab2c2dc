package tui

import (
	"slices"

	"github.com/broodhq/brood/internal/tool"
)

// Shift+Tab cycles the root agent's permission mode, as in Claude Code:
// default → acceptEdits → plan → default (a mode the session started in
// that is none of these, such as bypassPermissions from settings, stays in
// the cycle after plan). It is the root's: the subagents keep the mode
// their settings and agent files give them.

// modeCycle is the order Shift+Tab goes through from start.
func modeCycle(start tool.Mode) []tool.Mode {
	c := []tool.Mode{tool.ModeDefault, tool.ModeAcceptEdits, tool.ModePlan}
	if !slices.Contains(c, start) {
		c = append(c, start)
	}
	return c
}

// permMode is the root's permission mode now.
func (e *engine) permMode() tool.Mode {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mode != "" {
		return e.mode
	}
	if p := e.cfg.Agent.Env; p != nil && p.Perms != nil {
		return p.Perms.Mode()
	}
	return tool.ModeDefault
}

// cycleMode switches the root to the next mode from the next turn (a turn
// running keeps the mode it started with) and returns it.
func (e *engine) cycleMode() tool.Mode {
	cur := e.permMode()
	start := tool.ModeDefault
	if p := e.cfg.Agent.Env; p != nil && p.Perms != nil {
		start = p.Perms.Mode()
	}
	c := modeCycle(start)
	next := c[(slices.Index(c, cur)+1)%len(c)]
	e.mu.Lock()
	e.mode = next
	e.mu.Unlock()
	return next
}

func modeWords(m tool.Mode) string {
	switch m {
	case tool.ModeDefault:
		return "default mode"
	case tool.ModeAcceptEdits:
		return "⏵⏵ accept edits"
	case tool.ModePlan:
		return "⏸ plan mode"
	case tool.ModeBypass:
		return "bypass permissions"
	}
	return string(m) + " mode"
}
