package tui

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/spend"
)

type focus int

const (
	focusInput focus = iota
	focusTree
	focusMessage // typing a message to the task under the tree's cursor
)

// exitWindow is how soon a second Ctrl-C must follow the first to exit.
const exitWindow = 2 * time.Second

// askGuard ignores keys for a moment after a question appears, so a word
// being typed cannot answer it by accident.
const askGuard = 300 * time.Millisecond

// Model is the interactive mode's state; the engine does the work.
type Model struct {
	eng    *engine
	redact func(string) string // the project's redactor (redact.go)
	st     styles
	now    func() time.Time
	width  int
	height int

	conv  conversation
	tree  tree
	input textinput.Model
	focus focus
	msgTo string // the task a focusMessage input goes to

	running   bool // a root turn is in progress
	turn      int
	usage     model.Usage  // the root's own tokens, this session
	spent     spend.Ledger // the root's own tokens per model, for the cost
	lastCtrlC time.Time
	hint      string // one line under the input: completions, "press again to exit"
	asks      []askRequest
	approval  Workflow // a workflow waiting for the user's go
	picker    *picker  // a list open to choose from (/model)
	askShown  time.Time
	stopping  bool
	quitting  bool
	session   string
	turnStart time.Time       // when the running prompt was sent
	turnUsage model.Usage     // m.usage then: the running prompt's tokens are the difference
	steered   map[string]bool // tasks sent a message that may not have been read yet
	stopHint  string          // the task the hint says is stopping

	pastes      []string // multi-line pastes standing in the input line (input.go)
	hist        history  // the project's prompts, for ↑/↓
	queued      []string // prompts sent during the turn, sent when it ends
	interrupted bool     // the person interrupted the running turn
}

func newModel(eng *engine, color bool, now func() time.Time) *Model {
	in := textinput.New()
	in.Prompt = "› "
	in.Placeholder = "ask brood, or /help"
	in.SetVirtualCursor(true)
	ist := textinput.DefaultDarkStyles()
	ist.Cursor.Blink = false
	if !color {
		plain := lipgloss.NewStyle()
		ist.Focused = textinput.StyleState{Text: plain, Placeholder: plain, Suggestion: plain, Prompt: plain}
		ist.Blurred = ist.Focused
		ist.Cursor.Color = nil
	}
	in.SetStyles(ist)
	in.Focus()
	m := &Model{eng: eng, redact: eng.cfg.redactor(), st: newStyles(color), now: now, input: in, tree: newTree(), width: 80, height: 24, spent: spend.Ledger{}}
	m.conv.markdown, m.conv.color, m.conv.redact = true, color, m.redact
	getenv := eng.cfg.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	h, err := loadHistory(historyPath(getenv, eng.cfg.ProjectRoot), eng.cfg.ProjectRoot)
	if err != nil {
		m.notice(entryError, err.Error())
	}
	m.hist = h
	m.hist.redact = m.redact
	return m
}

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return tea.Batch(m.eng.wait(), clock()) }

// clock redraws every second (elapsed times in the tree).
func clock() tea.Cmd {
	return tea.Every(time.Second, func(time.Time) tea.Msg { return clockMsg{} })
}

// spinClock is the faster redraw while a turn runs: the spinner moves.
func spinClock() tea.Cmd {
	return tea.Tick(spinFrame, func(time.Time) tea.Msg { return clockMsg{} })
}

// pruneAsks drops the questions whose asker stopped waiting (it was
// killed, or its run ended): they can no longer be answered.
func (m *Model) pruneAsks() {
	kept := m.asks[:0]
	for _, r := range m.asks {
		if r.ctx == nil || r.ctx.Err() == nil {
			kept = append(kept, r)
		}
	}
	if len(kept) != len(m.asks) {
		m.askShown = m.now()
	}
	m.asks = kept
}

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.pruneAsks()
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.input.SetWidth(max(10, msg.Width-4))
		// A frame drawn for the old size may have wrapped on the new one:
		// repaint it all, so nothing of it stays on the screen.
		return m, tea.ClearScreen
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case clockMsg:
		if m.running {
			return m, spinClock()
		}
		return m, clock()
	case tea.PasteMsg:
		if m.focus != focusTree && len(m.asks) == 0 && m.approval == nil {
			return m, m.paste(msg.Content)
		}
		return m, nil
	case tickMsg:
		return m, nil
	}
	if m.engineMsg(redactMsg(msg, m.redact)) {
		if m.quitting {
			return m, tea.Quit
		}
		if _, ok := msg.(askMsg); ok && len(m.asks) == 1 {
			// Redraw when the question starts taking answers.
			return m, tea.Batch(m.eng.wait(), tea.Tick(askGuard, func(time.Time) tea.Msg { return tickMsg{} }))
		}
		return m, m.eng.wait()
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

// engineMsg handles what the engine reports; false if msg is not its.
func (m *Model) engineMsg(msg tea.Msg) bool {
	switch msg := msg.(type) {
	case agentMsg:
		m.agentEvent(msg.ev)
	case dispatchMsg:
		m.tree.apply(msg.ev, m.now())
		if msg.ev.Type == "dispatch_stop" {
			m.undelivered(msg.ev.TaskID)
			m.stopped(msg.ev.TaskID)
		}
	case resultMsg:
		m.tree.setResult(msg)
	case priorMsg:
		m.tree.addPrior(msg.nodes)
	case startedMsg:
		m.tree.start(msg.id, m.now())
	case taskModelMsg:
		m.tree.setModel(msg.id, msg.model, msg.desc)
	case turnDoneMsg:
		m.running = false
		m.conv.streaming = nil
		m.conv.settle()
		if o := msg.outcome; o != nil && o.Status != agent.StatusDone {
			kind := entryNotice
			text := fmt.Sprintf("turn ended: %s", o.Status)
			if o.Status == agent.StatusFailed {
				kind, text = entryError, "the model failed: "+o.Error
			}
			m.conv.add(&entry{kind: kind, text: text})
		}
		m.sendQueued()
	case sessionMsg:
		m.session = msg.path
		m.conv.replay(msg.records)
		// A reopened session's tokens so far, at the model it ran on.
		st := session.Replay(msg.records)
		m.usage, m.spent = st.Usage, spend.Ledger{}
		m.spent.Add(cmp.Or(st.Model, m.eng.modelSpec()), st.Usage)
	case killedMsg:
		m.stopped(msg.id)
		if msg.err != nil {
			m.notice(entryError, fmt.Sprintf("kill %s: %v", shortID(msg.id), msg.err))
		} else {
			m.notice(entryNotice, fmt.Sprintf("stopped task %s; it stays resumable (/resume %s \"...\")", msg.id, msg.id))
		}
	case askMsg:
		m.asks = append(m.asks, msg.req)
		if len(m.asks) == 1 {
			m.askShown = m.now()
		}
	case noticeMsg:
		m.notice(entryNotice, msg.text)
	case workflowMsg:
		m.workflowEvent(msg)
	case shutdownMsg:
		m.quitting = true
	default:
		return false
	}
	return true
}

func (m *Model) agentEvent(ev agent.Event) {
	switch ev.Type {
	case agent.EvTurn:
		m.turn = ev.Turn
	case agent.EvUsage:
		// One turn's tokens: each prompt is a new run of the agent, whose
		// own total starts again, so the session's are added up here.
		if ev.Usage != nil {
			m.usage = m.usage.Add(*ev.Usage)
			m.spent.Add(m.eng.modelSpec(), *ev.Usage)
		}
	}
	m.conv.event(ev)
}

// stopped takes the "stopping…" hint away once its task has stopped.
func (m *Model) stopped(id string) {
	if m.stopHint != "" && m.stopHint == id {
		m.hint, m.stopHint = "", ""
	}
}

func (m *Model) notice(kind entryKind, text string) {
	m.conv.add(&entry{kind: kind, text: text})
}

// submit handles a line the user entered: a slash command runs at once,
// a prompt starts a turn, or waits for the running one to end.
func (m *Model) submit(line string) tea.Cmd {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil
	}
	if err := m.hist.add(line); err != nil {
		m.hint = err.Error()
	}
	if strings.HasPrefix(line, "/") {
		m.conv.add(&entry{kind: entryUser, text: line})
		return m.slash(line)
	}
	if m.running {
		m.queuePrompt(line)
		return nil
	}
	m.startPrompt(line)
	return nil
}

// startPrompt sends a prompt to the root agent.
func (m *Model) startPrompt(line string) {
	m.conv.add(&entry{kind: entryUser, text: line})
	if m.eng.startTurn(line) {
		m.running, m.interrupted = true, false
		m.turnStart, m.turnUsage = m.now(), m.usage
	}
}
