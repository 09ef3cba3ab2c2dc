package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/broodhq/brood/internal/dispatch"
)

// styles are the UI's colours; without colour (NO_COLOR) every one is plain
// text, with bold and reverse kept where they carry meaning.
type styles struct {
	color                                  bool
	user, tool, dim, err, ok, warn, accent lipgloss.Style
	selected, title, askBox                lipgloss.Style
}

func newStyles(color bool) styles {
	plain := lipgloss.NewStyle()
	s := styles{color: color, user: plain.Bold(true), tool: plain.Bold(true), dim: plain, err: plain.Bold(true),
		ok: plain, warn: plain.Bold(true), accent: plain.Bold(true), selected: plain.Reverse(true), title: plain.Bold(true),
		askBox: plain.Border(lipgloss.NormalBorder()).Padding(0, 1)}
	if !color {
		return s
	}
	s.user = s.user.Foreground(lipgloss.Color("12"))
	s.tool = s.tool.Foreground(lipgloss.Color("14"))
	s.dim = s.dim.Foreground(lipgloss.Color("8"))
	s.err = s.err.Foreground(lipgloss.Color("9"))
	s.ok = s.ok.Foreground(lipgloss.Color("10"))
	s.warn = s.warn.Foreground(lipgloss.Color("11"))
	s.accent = s.accent.Foreground(lipgloss.Color("13"))
	s.askBox = s.askBox.BorderForeground(lipgloss.Color("11"))
	return s
}

// status colours a task's status.
func (s styles) status(st string) string {
	switch st {
	case dispatch.StatusDone:
		return s.ok.Render(st)
	case dispatch.StatusFailed, dispatch.StatusKilled, dispatch.StatusRejected:
		return s.err.Render(st)
	case dispatch.StatusPartial, dispatch.StatusCheckpoint, dispatch.StatusCancelled, "asking":
		return s.warn.Render(st)
	}
	return s.accent.Render(st)
}

// truncate cuts s (which may hold styles) to width cells.
func truncate(s string, width int) string {
	if width <= 0 || ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// wrapLines wraps s to width cells and splits it into lines.
func wrapLines(s string, width int) []string {
	if width > 0 {
		s = ansi.Wrap(s, width, " ")
	}
	return strings.Split(s, "\n")
}
