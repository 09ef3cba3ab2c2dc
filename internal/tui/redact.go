package tui

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"

	wf "github.com/broodhq/brood/internal/workflow"
)

// The screen shows no secret (docs/secrets.md, "the interactive mode's
// screen"): the project's redactor (Config.Redact: the environment's
// secret-looking values, the .env files' values, the key formats) is
// applied in three places, each before anything cuts the text short or
// wraps it, so that no part of a secret survives a cut:
//
//   - every message of the engine, as it arrives (redactMsg): the root's
//     events (its text, its tool calls' inputs and results, its notes and
//     errors), the subagents' events and results, notices, workflow news;
//   - the conversation's entries as they are drawn, whole (the model's
//     text streams in pieces: a secret split between two pieces is whole
//     in the entry), and the streaming entry's last word held back until
//     it is complete (streamShown);
//   - each line of the frame, for what the person's own keys put there
//     (the input line, the hint, a slash command's listing).
//
// What the TUI writes to disk passes the same redactor: the transcript
// (session.Options.Redact) and the prompt history (history.add).

// redactor is cfg.Redact, or the identity when there is none.
func (c Config) redactor() func(string) string {
	if c.Redact == nil {
		return func(s string) string { return s }
	}
	return c.Redact
}

// redactMsg is msg with the secrets in its texts replaced by their
// markers; what msg points to is not changed (an agent's Outcome is the
// engine's too).
func redactMsg(msg tea.Msg, r func(string) string) tea.Msg {
	switch m := msg.(type) {
	case agentMsg:
		ev := m.ev
		ev.Text, ev.Tool = r(ev.Text), r(ev.Tool)
		ev.Input = redactJSON(ev.Input, r)
		if ev.Outcome != nil {
			o := *ev.Outcome
			o.Text, o.Error = r(o.Text), r(o.Error)
			ev.Outcome = &o
		}
		return agentMsg{ev}
	case dispatchMsg:
		ev := m.ev
		ev.Agent, ev.Description, ev.Status, ev.Text = r(ev.Agent), r(ev.Description), r(ev.Status), r(ev.Text)
		ev.Tools = redactAll(ev.Tools, r)
		return dispatchMsg{ev}
	case resultMsg:
		m.summary, m.errText, m.desc, m.model = r(m.summary), r(m.errText), r(m.desc), r(m.model)
		return m
	case taskModelMsg:
		m.model, m.desc = r(m.model), r(m.desc)
		return m
	case turnDoneMsg:
		if m.outcome != nil {
			o := *m.outcome
			o.Text, o.Error = r(o.Text), r(o.Error)
			m.outcome = &o
		}
		return m
	case killedMsg:
		m.err = redactErr(m.err, r)
		return m
	case noticeMsg:
		m.text = r(m.text)
		return m
	case priorMsg:
		nodes := make([]*node, len(m.nodes))
		for i, n := range m.nodes {
			c := *n
			c.agent, c.desc, c.summary, c.errText, c.model = r(c.agent), r(c.desc), r(c.summary), r(c.errText), r(c.model)
			nodes[i] = &c
		}
		return priorMsg{nodes: nodes}
	case workflowMsg:
		m.name = r(m.name)
		m.err = redactErr(m.err, r)
		if m.event != nil {
			ev := *m.event
			ev.Phase, ev.Status = r(ev.Phase), r(ev.Status)
			m.event = &ev
		}
		if m.result != nil {
			res := *m.result
			res.Reason, res.Status = r(res.Reason), r(res.Status)
			m.result = &res
		}
		return m
	}
	return msg
}

func redactAll(ss []string, r func(string) string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r(s)
	}
	return out
}

func redactErr(err error, r func(string) string) error {
	if err == nil {
		return nil
	}
	if s := r(err.Error()); s != err.Error() {
		return errors.New(s)
	}
	return err
}

// redactJSON is a tool call's input with every string in it redacted
// after decoding (a value with quotes or a backslash is escaped in the
// raw JSON).
func redactJSON(raw json.RawMessage, r func(string) string) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	if out, ok := wf.RedactValue(raw, r).(json.RawMessage); ok {
		return out
	}
	return raw
}

// streamShown is the part of a streaming answer drawn while it streams:
// all but its last word, which may be the start of a secret whose end has
// not come yet (a token is one word: drawn now, its first characters would
// be on the screen before the redactor could know them for a secret).
func streamShown(text string) string {
	i := strings.LastIndexFunc(text, unicode.IsSpace)
	return text[:i+1]
}
