package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// The input line: a multi-line paste (bracketed paste) stands in the line
// as "[pasted text #N +K lines]" and reaches the model whole, newlines
// kept, as Claude Code does; ↑/↓ walk the project's history (history.go);
// a prompt sent while a turn runs is queued and sent when it ends.

// pasteLabel is what stands in the input line for the n-th paste.
func pasteLabel(n int, text string) string {
	return fmt.Sprintf("[pasted text #%d +%d lines]", n, strings.Count(text, "\n")+1)
}

// paste takes a bracketed paste into the input line.
func (m *Model) paste(content string) tea.Cmd {
	content = strings.ReplaceAll(strings.ReplaceAll(content, "\r\n", "\n"), "\r", "\n")
	if !strings.Contains(strings.TrimRight(content, "\n"), "\n") {
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(tea.PasteMsg{Content: strings.TrimRight(content, "\n")})
		return cmd
	}
	content = strings.TrimRight(content, "\n")
	m.pastes = append(m.pastes, content)
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(tea.PasteMsg{Content: pasteLabel(len(m.pastes), content)})
	return cmd
}

// takeInput empties the input line and returns what it held, each paste's
// label replaced by the text pasted.
func (m *Model) takeInput() string {
	line := m.input.Value()
	for i, p := range m.pastes {
		line = strings.Replace(line, pasteLabel(i+1, p), p, 1)
	}
	m.setInput("")
	return line
}

// setInput puts text in the input line, a multi-line text as a paste.
func (m *Model) setInput(text string) {
	m.pastes = nil
	if strings.Contains(text, "\n") {
		m.pastes = []string{text}
		text = pasteLabel(1, text)
	}
	m.input.SetValue(text)
	m.input.CursorEnd()
}

// historyKey walks the history: up is ↑.
func (m *Model) historyKey(up bool) {
	if up {
		cur := m.input.Value()
		if len(m.pastes) > 0 {
			cur = m.takeInput()
		}
		if p, ok := m.hist.older(cur); ok {
			m.setInput(p)
		}
		return
	}
	if p, ok := m.hist.newer(); ok {
		m.setInput(p)
	}
}

// queue keeps a prompt sent during a turn, for when the turn ends.
func (m *Model) queuePrompt(line string) {
	m.queued = append(m.queued, line)
	m.hint = "queued: it is sent when this turn ends (Esc or Ctrl-C interrupts the turn and puts it back here)"
}

// sendQueued sends the next queued prompt once a turn has ended; after an
// interrupt the queued prompts come back to the input line instead.
func (m *Model) sendQueued() {
	if len(m.queued) == 0 {
		return
	}
	if m.interrupted {
		m.setInput(strings.Join(m.queued, "\n"))
		m.queued = nil
		m.hint = "the queued prompt is back in the input line: Enter sends it"
		return
	}
	next := m.queued[0]
	m.queued = m.queued[1:]
	m.startPrompt(next)
}

// queuedLines are the prompts waiting for the turn, above the input line.
func (m *Model) queuedLines(w int) []string {
	var out []string
	for _, q := range m.queued {
		out = append(out, m.st.dim.Render(truncate("⧗ queued: "+firstLine(m.redact(q), w), w)))
	}
	return out
}
