package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
)

type entryKind int

const (
	entryUser entryKind = iota
	entryAssistant
	entryTool
	entryNotice
	entryError
)

// entry is one item of the conversation pane.
type entry struct {
	kind    entryKind
	text    string // user/assistant/notice text; a tool's output
	tool    string
	toolID  string
	summary string // a tool call's argument summary
	done    bool   // a tool call's result is in
	isError bool
	outcome string // how a subagent call ended (toolOutcome); "interrupted" when no result ever came

	cacheWidth int
	cache      []string
}

// conversation is the pane's content: entries, plus the assistant text of
// the turn that is streaming.
type conversation struct {
	entries   []*entry
	streaming *entry // the assistant entry receiving tokens, if any
	expand    bool   // tool calls show their output
	markdown  bool   // render assistant text as markdown
	color     bool
	scroll    int                 // lines scrolled up from the bottom
	redact    func(string) string // every entry's texts as drawn (redact.go)

	md      *mdRenderer
	mdWidth int
}

func (c *conversation) add(e *entry) { c.entries = append(c.entries, e); c.scroll = 0 }

// event folds one root-agent event into the pane.
func (c *conversation) event(ev agent.Event) {
	switch ev.Type {
	case agent.EvText:
		if c.streaming == nil {
			c.streaming = &entry{kind: entryAssistant}
			c.add(c.streaming)
		}
		c.streaming.text += ev.Text
		c.streaming.cache = nil
	case agent.EvRestart:
		if c.streaming != nil {
			c.streaming.text, c.streaming.cache = "", nil
		}
	case agent.EvTurn:
		c.streaming = nil
	case agent.EvToolCall:
		c.streaming = nil
		c.add(&entry{kind: entryTool, tool: clean(ev.Tool, false), toolID: ev.ToolID, summary: summarize(ev.Input)})
	case agent.EvToolResult:
		for i := len(c.entries) - 1; i >= 0; i-- {
			if e := c.entries[i]; e.kind == entryTool && e.toolID == ev.ToolID {
				e.text, e.done, e.isError, e.cache = ev.Text, true, ev.IsError, nil
				e.outcome = toolOutcome(ev.Text)
				break
			}
		}
	case agent.EvInjected:
		if n := noticeForPeople(ev.Text); n != "" {
			c.add(&entry{kind: entryNotice, text: "↘ " + n})
			break
		}
		c.add(&entry{kind: entryNotice, text: "✉ " + firstLine(ev.Text, 200)})
	case agent.EvBudgetWarning, agent.EvBudgetExceeded:
		c.add(&entry{kind: entryNotice, text: "! " + string(ev.Type) + ": " + ev.Text})
	case agent.EvNote:
		c.add(&entry{kind: entryNotice, text: "! " + firstLine(ev.Text, 200)})
	case agent.EvServerTool:
		// The provider ran it; its result is in the model's next text.
		if ev.Part != nil && ev.Part.Type == model.PartServerToolUse {
			c.streaming = nil
			c.add(&entry{kind: entryNotice, text: "⌕ " + clean(ev.Tool, false) + " " + summarize(ev.Input)})
		}
	}
}

// replay shows a reopened session's conversation.
func (c *conversation) replay(recs []session.Record) {
	for _, r := range recs {
		switch r.Type {
		case session.RecMessage:
			if r.Message == nil {
				continue
			}
			if r.Message.Role == model.RoleUser {
				c.replayUser(*r.Message)
			} else if t := strings.TrimSpace(r.Message.Text()); t != "" {
				c.add(&entry{kind: entryAssistant, text: t})
			}
		case session.RecToolCall:
			c.add(&entry{kind: entryTool, tool: clean(r.Tool, false), toolID: r.ToolID, summary: summarize(r.Input)})
		case session.RecToolResult:
			c.event(agent.Event{Type: agent.EvToolResult, ToolID: r.ToolID, Text: r.Output, IsError: r.IsError})
		}
	}
	c.settle() // a call the reopened run never answered (kill -9) will not be
}

// replayUser shows a reopened user message part by part: the person's
// prompt as theirs, and each notice brood added for the model (a finished
// background task, the turn cap) on a line of its own, in a person's words,
// never glued onto the prompt.
func (c *conversation) replayUser(m model.Message) {
	for _, p := range m.Content {
		t := strings.TrimSpace(p.Text)
		switch {
		case p.Type != model.PartText || t == "":
		case noticeForPeople(t) != "":
			c.add(&entry{kind: entryNotice, text: "↘ " + noticeForPeople(t)})
		case strings.HasPrefix(t, "[brood] "):
			c.add(&entry{kind: entryNotice, text: firstLine(strings.TrimPrefix(t, "[brood] "), 200)})
		default:
			c.add(&entry{kind: entryUser, text: t})
		}
	}
}

// lines renders every entry at width.
func (c *conversation) lines(st styles, width int) []string {
	var out []string
	for _, e := range c.entries {
		if e == c.streaming {
			// Drawn afresh each time and never kept: its last word is held
			// back while it streams (streamShown).
			out = append(out, c.render(st, e, width)...)
			continue
		}
		if e.cache == nil || e.cacheWidth != width || e.kind == entryTool {
			e.cache, e.cacheWidth = c.render(st, e, width), width
		}
		out = append(out, e.cache...)
	}
	return out
}

func (c *conversation) render(st styles, e *entry, width int) []string {
	e = c.redacted(e)
	switch e.kind {
	case entryUser:
		return wrapLines(st.user.Render("› ")+clean(e.text, true), width)
	case entryAssistant:
		return c.renderMarkdown(e.text, width)
	case entryTool:
		return c.renderTool(st, e, width)
	case entryError:
		return wrapLines(st.err.Render("✗ "+clean(e.text, true)), width)
	}
	return wrapLines(st.dim.Render(clean(e.text, true)), width)
}

// redacted is a copy of e to draw: its texts redacted whole, and a
// streaming answer's last word held back (streamShown).
func (c *conversation) redacted(e *entry) *entry {
	d := *e
	if c.redact != nil {
		d.text, d.tool, d.summary = c.redact(e.text), c.redact(e.tool), c.redact(e.summary)
	}
	if e == c.streaming {
		d.text = streamShown(d.text)
	}
	return &d
}

func (c *conversation) renderTool(st styles, e *entry, width int) []string {
	mark, word := toolMark(st, e)
	if word != "" {
		word = "  " + word
	}
	head := truncate(fmt.Sprintf("%s %s %s%s", mark, st.tool.Render(e.tool), e.summary, word), width)
	if !e.done || e.outcome == "interrupted" {
		return []string{head}
	}
	out := clean(forPeople(strings.TrimRight(e.text, "\n")), true)
	n := strings.Count(out, "\n") + 1
	if out == "" {
		n = 0
	}
	if !c.expand {
		if e.outcome == "background" {
			return []string{head} // a launch note: the tree follows the task
		}
		return []string{head + st.dim.Render(fmt.Sprintf("  (%d lines)", n))}
	}
	// The whole output, wrapped to the window (PgUp/PgDn scroll it).
	lines := []string{head}
	for _, l := range strings.Split(out, "\n") {
		for _, w := range wrapLines(l, max(10, width-4)) {
			lines = append(lines, "    "+w)
		}
	}
	return lines
}

// renderMarkdown renders the model's text (its escape sequences removed
// first) as markdown (markdown.go).
func (c *conversation) renderMarkdown(text string, width int) []string {
	text = clean(text, true)
	if !c.markdown {
		return wrapLines(text, width)
	}
	if c.md == nil || c.mdWidth != width {
		c.md, c.mdWidth = newMDRenderer(c.color, width), width
	}
	return c.md.render(text)
}

// summarize renders a tool call's input as a short label.
func summarize(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "file_path", "pattern", "path", "subagent_type", "task_id", "description", "query"} {
		if v, ok := m[k].(string); ok && v != "" {
			s := firstLine(v, 100)
			if k == "subagent_type" {
				if d, ok := m["description"].(string); ok && d != "" {
					s += ": " + firstLine(d, 80)
				}
			}
			return s
		}
	}
	return ""
}
