package tui

import (
	"fmt"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// View implements tea.Model.
func (m *Model) View() tea.View {
	v := tea.NewView(m.frame())
	v.AltScreen = true
	v.WindowTitle = "brood"
	return v
}

// frame draws the whole screen as text: conversation, subagent tree, the
// pending question, input, hint and status line.
func (m *Model) frame() string {
	w := max(20, m.width)
	bottom := m.bottom(w)
	treeLines := m.treeSection(w)
	convH := max(1, m.height-len(bottom)-len(treeLines))
	conv := m.conv.lines(m.st, w)
	end := max(0, len(conv)-m.conv.scroll)
	m.conv.scroll = len(conv) - end
	start := max(0, end-convH)
	view := conv[start:end]
	lines := make([]string, 0, m.height)
	for i := len(view); i < convH; i++ {
		lines = append(lines, "")
	}
	lines = append(lines, view...)
	lines = append(lines, treeLines...)
	lines = append(lines, bottom...)
	for i, l := range lines {
		lines[i] = truncate(l, w)
	}
	return strings.Join(lines, "\n")
}

// convHeight is roughly how many lines the conversation gets (for paging).
func (m *Model) convHeight() int { return max(1, m.height-len(m.treeSection(m.width))-4) }

func (m *Model) treeSection(w int) []string {
	if len(m.tree.nodes) == 0 {
		return nil
	}
	run, queued := m.tree.running(), m.tree.queued()
	head := fmt.Sprintf("── subagents: %d running, %d finished ", run, len(m.tree.nodes)-run-queued)
	if queued > 0 {
		head = fmt.Sprintf("── subagents: %d running, %d queued, %d finished ", run, queued, len(m.tree.nodes)-run-queued)
	}
	if m.focus == focusTree {
		head += "(↑↓ move · Enter expand · x kill · m message · Esc back) "
	} else {
		head += "(Ctrl-T to select) "
	}
	if pad := w - len([]rune(head)); pad > 0 {
		head += strings.Repeat("─", pad)
	}
	lines := []string{m.st.dim.Render(truncate(head, w))}
	return append(lines, m.tree.render(m.st, m.eng.prices(), w, max(3, m.height/3), m.focus != focusInput, m.now())...)
}

func (m *Model) bottom(w int) []string {
	var out []string
	if m.approval != nil {
		box := m.st.askBox.Width(min(w, 118)).Render(approvalText(m.approval, m.now().Sub(m.askShown) >= askGuard))
		out = append(out, strings.Split(box, "\n")...)
	} else if len(m.asks) > 0 {
		q := askText(m.asks[0].ask, m.now().Sub(m.askShown) >= askGuard)
		if n := len(m.asks) - 1; n > 0 {
			q += fmt.Sprintf("\n(%d more waiting)", n)
		}
		box := m.st.askBox.Width(min(w, 118)).Render(q)
		out = append(out, strings.Split(box, "\n")...)
	}
	m.input.SetWidth(max(10, w-ansi.StringWidth(m.input.Prompt)-2))
	out = append(out, m.input.View())
	if m.hint != "" {
		out = append(out, m.st.dim.Render(m.hint))
	}
	return append(out, m.statusLine(w))
}

func (m *Model) statusLine(w int) string {
	state := "ready"
	switch {
	case m.stopping:
		state = "exiting"
	case len(m.asks) > 0:
		state = "waiting for you"
	case m.running:
		state = m.working()
	}
	child := m.tree.usage()
	s := fmt.Sprintf("%s · %s · turn %d · tokens %s", state, shortModel(m.eng.modelSpec()), m.turn, count(m.usage.Total()+child.Total()))
	if child.Total() > 0 {
		s += fmt.Sprintf(" (subagents %s)", count(child.Total()))
	}
	// The cost so far, children included; a model without a price adds its
	// tokens only ("+": some are left out), and none priced shows none.
	l := m.tree.ledger()
	l.Merge(m.spent)
	if c := l.Cost(m.eng.prices()).String(); c != "" {
		s += " · " + c
	}
	if n := m.tree.running(); n > 0 {
		s += fmt.Sprintf(" · %d running", n)
	}
	if n := m.tree.queued(); n > 0 {
		s += fmt.Sprintf(" · %d queued", n)
	}
	s += " · /help"
	return m.st.dim.Render(truncate(s, w))
}

// shortModel is a model spec as the status line shows it: a scripted
// model by its file's name, not its whole path (/model shows it all).
func shortModel(spec string) string {
	if p, ok := strings.CutPrefix(spec, "script:"); ok {
		return "script:" + filepath.Base(p)
	}
	return spec
}
