package tui

import (
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/broodhq/brood/internal/spawn"
)

// key handles one key press.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "ctrl+c":
		return m.ctrlC()
	case "ctrl+z":
		return tea.Suspend
	case "ctrl+o":
		m.conv.expand = !m.conv.expand
		return nil
	case "pgup", "pgdown":
		m.pageKey(k.String() == "pgup")
		return nil
	}
	if m.stopping {
		return nil
	}
	m.hint = ""
	if m.approval != nil {
		m.approvalKey(k.String())
		return nil
	}
	if len(m.asks) > 0 {
		m.askKey(k)
		return nil
	}
	if m.picker != nil {
		m.pickerKey(k.String())
		return nil
	}
	switch m.focus {
	case focusTree:
		return m.treeKey(k)
	case focusMessage:
		return m.messageKey(k)
	}
	return m.inputKey(k)
}

// pageKey scrolls the tree when it has the keys, the conversation
// otherwise.
func (m *Model) pageKey(up bool) {
	if m.focus == focusTree {
		d := max(1, m.height/3-2)
		if up {
			d = -d
		}
		m.tree.page(d)
		return
	}
	d := max(1, m.convHeight()-2)
	if up {
		m.conv.scroll += d
	} else {
		m.conv.scroll = max(0, m.conv.scroll-d)
	}
}

// ctrlC interrupts the turn; a second press within exitWindow exits,
// stopping every child in stages first.
func (m *Model) ctrlC() tea.Cmd {
	now := m.now()
	if m.stopping {
		return nil
	}
	if !m.lastCtrlC.IsZero() && now.Sub(m.lastCtrlC) <= exitWindow {
		m.stopping = true
		n := m.tree.running()
		m.hint = "exiting…"
		if n > 0 {
			m.hint = fmt.Sprintf("exiting: stopping %d subagent(s) in stages (they stay resumable)…", n)
		}
		m.eng.shutdown()
		return nil
	}
	m.lastCtrlC = now
	switch {
	case m.eng.interrupt():
		m.interrupted = true
		m.notice(entryNotice, "interrupted")
		m.hint = "turn interrupted; Ctrl-C again to exit"
	case m.input.Value() != "":
		m.setInput("")
		m.hint = "Ctrl-C again to exit"
	default:
		m.hint = "Ctrl-C again to exit"
	}
	return nil
}

func (m *Model) inputKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc":
		// As in Claude Code: Esc stops the turn; the session stays.
		if m.running && m.eng.interrupt() {
			m.interrupted = true
			m.notice(entryNotice, "interrupted (esc)")
		}
		return nil
	case "enter":
		return m.submit(m.takeInput())
	case "up", "down":
		m.historyKey(k.String() == "up")
		return nil
	case "tab":
		m.complete()
		return nil
	case "shift+tab":
		m.hint = "permission mode: " + modeWords(m.eng.cycleMode()) + " (from the next turn; Shift+Tab again to change)"
		return nil
	case "ctrl+t":
		if len(m.tree.visible()) > 0 {
			m.focus = focusTree
			m.input.Blur()
		} else {
			m.hint = "no subagents yet"
		}
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return cmd
}

func (m *Model) treeKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "up", "k":
		m.tree.move(-1)
	case "down", "j":
		m.tree.move(1)
	case "enter", "space", "right", "left":
		m.tree.toggle()
	case "x":
		id := m.tree.selected()
		if run, ok := strings.CutPrefix(id, "workflow:"); ok {
			if m.eng.stopWorkflow(run) {
				m.hint = "cancelling workflow run " + run + " (its agents stop in stages; brood workflow resume continues it)"
			}
			return nil
		}
		if n := m.tree.nodes[id]; n != nil && n.stopped.IsZero() {
			m.hint = "stopping " + n.agent + " " + shortID(id) + " (SIGTERM, then SIGKILL)…"
			m.stopHint = id // the hint goes when it has stopped
			m.eng.kill(id)
		} else {
			m.hint = "that task is not running"
		}
	case "m":
		id := m.tree.selected()
		if id == "" {
			return nil
		}
		m.focus, m.msgTo = focusMessage, id
		n := m.tree.nodes[id]
		verb := "message to"
		if !n.stopped.IsZero() {
			verb = "resume"
		}
		m.input.Prompt = fmt.Sprintf("%s %s %s › ", verb, n.agent, shortID(id))
		m.input.SetValue("")
		return m.input.Focus()
	case "shift+tab":
		m.hint = "permission mode: " + modeWords(m.eng.cycleMode()) + " (from the next turn)"
	case "esc", "ctrl+t", "tab":
		m.focus = focusInput
		return m.input.Focus()
	}
	return nil
}

// messageKey edits a steering message (or, to a finished task, a resume).
func (m *Model) messageKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc":
		m.endMessage(focusTree)
		return nil
	case "enter":
		text, id := m.takeInput(), m.msgTo
		m.endMessage(focusTree)
		m.sendTo(id, text)
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return cmd
}

func (m *Model) endMessage(f focus) {
	m.focus, m.msgTo = f, ""
	m.input.Prompt = "› "
	m.input.SetValue("")
	if f == focusTree {
		m.input.Blur()
	}
}

// sendTo steers a running task, or resumes a finished one with text.
func (m *Model) sendTo(id, text string) {
	if text == "" {
		return
	}
	n := m.tree.nodes[id]
	if n != nil && !n.stopped.IsZero() {
		m.resume(id, text)
		return
	}
	if err := m.eng.steer(id, text); err != nil {
		var nd *spawn.NotDeliveredError
		if errors.As(err, &nd) {
			m.notice(entryError, fmt.Sprintf("✉ not delivered to %s: the task ended (%s) before its next turn; press m on it to resume it with the message", shortID(id), nd.Status))
			return
		}
		m.notice(entryError, err.Error())
		return
	}
	if m.steered == nil {
		m.steered = map[string]bool{}
	}
	m.steered[id] = true
	m.notice(entryNotice, fmt.Sprintf("✉ to %s: %s (queued for its next turn)", shortID(id), firstLine(text, 120)))
}

// undelivered tells the person about the messages a task they steered
// never read because it ended first (inbox.go in delegate keeps the record).
func (m *Model) undelivered(id string) {
	if !m.steered[id] {
		return
	}
	delete(m.steered, id)
	msgs, err := m.eng.undelivered(id)
	if err != nil {
		m.notice(entryError, err.Error())
	}
	for _, text := range msgs {
		m.notice(entryError, fmt.Sprintf("✉ not delivered to %s: the task ended first: %s (press m on it to resume it with the message)", shortID(id), firstLine(clean(text, false), 120)))
	}
}

// askKey answers the first pending question: y once, a always, n deny.
func (m *Model) askKey(k tea.KeyPressMsg) {
	if m.now().Sub(m.askShown) < askGuard {
		return
	}
	req := m.asks[0]
	var ans spawn.Answer
	switch k.String() {
	case "y", "1":
		ans = spawn.Answer{Allow: true}
		m.notice(entryNotice, fmt.Sprintf("allowed once: %s %s (%s)", req.ask.Tool, firstLine(m.redact(req.ask.Subject), 100), askWho(req.ask)))
	case "a", "2":
		ans = spawn.Answer{Allow: true, Always: true}
		if path, wrote, note, err := m.eng.perm.add(req.ask.Rules); err != nil {
			m.notice(entryError, "allowed once, but not for good: "+err.Error())
		} else {
			ans.Wrote = wrote
			m.notice(entryNotice, fmt.Sprintf("allowed always: %s, added to [permissions] allow in %s", strings.Join(req.ask.Rules, ", "), rel(m.eng.cfg.ProjectRoot, path)))
			if note != "" {
				m.notice(entryError, note)
			}
		}
	case "n", "3", "esc":
		m.notice(entryNotice, fmt.Sprintf("denied: %s %s (%s)", req.ask.Tool, firstLine(m.redact(req.ask.Subject), 100), askWho(req.ask)))
	default:
		return
	}
	req.reply <- ans
	m.asks = m.asks[1:]
	m.askShown = m.now()
	if ans.Always {
		m.answerByRules()
	}
}

// answerByRules answers the questions already waiting that an "always"
// rule just added covers, as a later question would be: the person is not
// asked again.
func (m *Model) answerByRules() {
	kept := m.asks[:0]
	for _, r := range m.asks {
		if !m.eng.perm.allows(r.ask.Tool, r.ask.Subject) {
			kept = append(kept, r)
			continue
		}
		r.reply <- spawn.Answer{Allow: true}
		m.notice(entryNotice, fmt.Sprintf("allowed %s %s for %s (the \"always\" rule just added)", r.ask.Tool, firstLine(m.redact(r.ask.Subject), 80), askWho(r.ask)))
	}
	m.asks = kept
}
