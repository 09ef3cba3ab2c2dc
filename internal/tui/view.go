package tui

import (
	"fmt"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/broodhq/brood/internal/tool"
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
	if len(m.conv.entries) == 0 {
		conv = m.welcome(w)
	}
	end := max(min(len(conv), convH), len(conv)-m.conv.scroll) // PgUp stops at the top
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
		lines[i] = truncate(m.redact(l), w)
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
	m.tree.asking = m.askingTasks()
	return append(lines, m.tree.render(treeView{st: m.st, prices: m.eng.prices(), width: w, height: max(3, m.height/3), focused: m.focus != focusInput, now: m.now()})...)
}

// askingTasks are the tasks with a question waiting, and those each came
// through: the tree shows them first, so the box never names a task out
// of view.
func (m *Model) askingTasks() map[string]bool {
	if len(m.asks) == 0 {
		return nil
	}
	out := map[string]bool{}
	for _, r := range m.asks {
		if r.ask.TaskID != "" {
			out[r.ask.TaskID] = true
		}
		for _, id := range r.ask.Via {
			out[id] = true
		}
	}
	return out
}

func (m *Model) bottom(w int) []string {
	var out []string
	if m.approval != nil {
		box := m.st.askBox.Width(min(w, 118)).Render(m.redact(approvalText(m.approval, m.now().Sub(m.askShown) >= askGuard)))
		out = append(out, strings.Split(box, "\n")...)
	} else if len(m.asks) > 0 {
		q := askText(m.asks[0].ask, m.now().Sub(m.askShown) >= askGuard)
		if n := len(m.asks) - 1; n > 0 {
			q += fmt.Sprintf("\n(%d more waiting)", n)
		}
		box := m.st.askBox.Width(min(w, 118)).Render(m.redact(q))
		out = append(out, strings.Split(box, "\n")...)
	} else if m.picker != nil {
		box := m.st.askBox.Width(min(w, 118)).Render(m.redact(m.picker.text(m.eng.modelSpec())))
		out = append(out, strings.Split(box, "\n")...)
	}
	out = append(out, m.queuedLines(w)...)
	m.input.SetWidth(max(10, w-ansi.StringWidth(m.input.Prompt)-2))
	out = append(out, m.input.View())
	if m.hint != "" {
		out = append(out, m.st.dim.Render(m.hint))
	}
	return append(out, m.statusLine(w))
}

func (m *Model) statusLine(w int) string {
	state, tail := "ready", ""
	switch {
	case m.stopping:
		state = "exiting"
	case len(m.asks) > 0:
		state = "waiting for you"
	case m.running:
		state, tail = m.working()
	}
	// What runs comes right after the state, so a narrow window keeps it.
	s := state
	if n := m.tree.running(); n > 0 {
		s += fmt.Sprintf(" · %d running", n)
	}
	if n := m.tree.queued(); n > 0 {
		s += fmt.Sprintf(" · %d queued", n)
	}
	s += tail
	child := m.tree.usage()
	if mode := m.eng.permMode(); mode != tool.ModeDefault {
		s += " · " + modeWords(mode) // as Claude Code: the default mode goes unsaid
	}
	s += fmt.Sprintf(" · %s · turn %d · tokens %s", shortModel(m.eng.modelSpec()), m.turn, count(m.usage.Total()+child.Total()))
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
