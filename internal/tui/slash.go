package tui

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/shortid"
	"github.com/broodhq/brood/internal/spawn"
)

// command is one slash command.
type command struct {
	name, args, help string
	// complete says what its first argument completes to.
	complete func(m *Model) []string
}

func commands() []command {
	agents := func(m *Model) []string {
		var out []string
		for _, d := range m.eng.agents() {
			out = append(out, d.Name)
		}
		return out
	}
	tasks := func(m *Model) []string { return m.tree.ids() }
	return []command{
		{name: "/subagent", args: `TYPE "prompt"`, help: "dispatch a subagent directly (validated against the registry)", complete: agents},
		{name: "/tasks", help: "list this session's subagents and the project's recent tasks"},
		{name: "/agents", help: "list the agent types you can dispatch"},
		{name: "/kill", args: "ID", help: "stop a running task (SIGTERM, then SIGKILL); it stays resumable", complete: tasks},
		{name: "/msg", args: "ID text", help: "send a steering message to a running task (at its next turn; you are told if it ends first)", complete: tasks},
		{name: "/resume", args: "ID text", help: "continue a finished task with a follow-up, its transcript intact", complete: tasks},
		{name: "/workflow", args: "FILE [name=value]", help: "check a workflow plan, say how many agents it starts, and run it once you agree"},
		{name: "/model", args: "[provider/model]", help: "switch the model (checked; alone: a picker)"},
		{name: "/clear", help: "start a new conversation (the old transcript stays)"},
		{name: "/help", help: "keys and commands"},
		{name: "/exit", help: "leave (stops running subagents in stages)"},
	}
}

// slash runs a slash command line.
func (m *Model) slash(line string) tea.Cmd {
	name, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	switch name {
	case "/subagent":
		m.subagent(rest)
	case "/tasks":
		m.listTasks()
	case "/agents":
		m.listAgents()
	case "/kill":
		if rest == "" {
			m.notice(entryError, "usage: /kill ID")
		} else {
			m.eng.kill(m.resolveID(rest))
		}
	case "/msg", "/resume":
		id, text, _ := strings.Cut(rest, " ")
		if id == "" || strings.TrimSpace(text) == "" {
			m.notice(entryError, "usage: "+name+" ID text")
			return nil
		}
		if name == "/msg" {
			m.sendTo(m.resolveID(id), unquote(text))
		} else {
			m.resume(m.resolveID(id), unquote(text))
		}
	case "/workflow":
		m.workflowCmd(rest)
	case "/model":
		m.model(rest)
	case "/clear":
		if err := m.eng.clear(); err != nil {
			m.notice(entryError, err.Error())
			return nil
		}
		m.conv.entries, m.conv.streaming, m.turn = nil, nil, 0
		m.tree.dropFinished() // running tasks stay; every record stays (brood tasks)
	case "/help":
		m.help()
	case "/exit", "/quit":
		m.lastCtrlC = m.now()
		return m.ctrlC()
	default:
		m.notice(entryError, fmt.Sprintf("unknown command %s; /help lists them", clean(name, false)))
	}
	return nil
}

// subagent parses `TYPE "prompt"` and dispatches it in the background.
func (m *Model) subagent(rest string) {
	agentName, prompt, _ := strings.Cut(rest, " ")
	prompt = unquote(prompt)
	if agentName == "" || strings.TrimSpace(prompt) == "" {
		m.notice(entryError, `usage: /subagent TYPE "prompt" (e.g. /subagent explore "How does the auth middleware work?")`)
		return
	}
	id, err := m.eng.dispatch(agentName, prompt)
	if err != nil {
		m.notice(entryError, err.Error())
		return
	}
	m.notice(entryNotice, fmt.Sprintf("dispatched %s as task %s (in the tree below; Ctrl-T to select it)", agentName, id))
}

func (m *Model) resume(id, text string) {
	if m.eng.disp == nil {
		m.notice(entryError, "delegation is off here: this process is at the subagent depth cap")
		return
	}
	if err := m.eng.disp.ResumeBackground(m.eng.life, id, text); err != nil {
		m.notice(entryError, err.Error())
		return
	}
	if n := m.tree.nodes[id]; n != nil {
		n.stopped, n.status = time.Time{}, "running"
	}
	m.notice(entryNotice, fmt.Sprintf("resumed task %s with: %s", id, firstLine(text, 100)))
}

// resolveID expands a short id (the prefix shown in the tree, or any
// unique prefix or tail, in any case) to the task's full id by the one
// rule the CLI shares (shortid.Match); s itself when no one task of the
// session has it.
func (m *Model) resolveID(s string) string {
	if m.tree.nodes[s] != nil {
		return s
	}
	if id, err := shortid.Match(s, m.tree.ids()); err == nil {
		return id
	}
	return s
}

// listTasks is /tasks: this session's tasks as a tree, each with what it
// was asked to do, and the project's recent ones.
func (m *Model) listTasks() {
	var b strings.Builder
	if ids := m.tree.visible(); len(ids) > 0 {
		b.WriteString("this session:\n")
		for _, id := range ids {
			n := m.tree.nodes[id]
			fmt.Fprintf(&b, "  %s%s  %s  %s", strings.Repeat("  ", m.tree.level(n)), id, n.agent, n.status)
			if n.desc != "" {
				b.WriteString("  " + n.desc)
			}
			b.WriteString("\n")
		}
	}
	if all, err := dispatch.ListTasks(m.eng.cfg.ProjectRoot); err == nil && len(all) > 0 {
		b.WriteString("recent in this project (brood tasks for all):\n")
		for i, t := range all {
			if i == 10 {
				break
			}
			fmt.Fprintf(&b, "  %s  %s  %s", t.ID, clean(t.Agent, false), t.Status)
			if t.Label != "" {
				b.WriteString("  " + firstLine(t.Label, 80))
			}
			b.WriteString("\n")
		}
	}
	if b.Len() == 0 {
		b.WriteString("no tasks yet")
	}
	m.notice(entryNotice, strings.TrimRight(b.String(), "\n"))
}

// listAgents is /agents: each type with its description, its tools, its
// model when it has its own, and the file it comes from.
func (m *Model) listAgents() {
	var b strings.Builder
	for _, d := range m.eng.agents() {
		ro := ""
		if d.ReadOnly {
			ro = " (read-only)"
		}
		fmt.Fprintf(&b, "%s%s\n    %s\n", clean(d.Name, false), ro, firstLine(d.Description, 200))
		tools := "all of the parent's"
		if !d.AllTools {
			tools = strings.Join(d.Tools, ", ")
			if tools == "" {
				tools = "none"
			}
		}
		if len(d.DisallowedTools) > 0 {
			tools += " (not " + strings.Join(d.DisallowedTools, ", ") + ")"
		}
		fmt.Fprintf(&b, "    tools: %s\n", clean(tools, false))
		if d.Model != "" {
			fmt.Fprintf(&b, "    model: %s\n", clean(d.Model, false))
		}
		fmt.Fprintf(&b, "    from: %s\n", clean(rel(m.eng.cfg.ProjectRoot, d.Path), false))
	}
	if b.Len() == 0 {
		b.WriteString("no agents")
	}
	m.notice(entryNotice, "agents (/subagent TYPE \"prompt\" dispatches one):\n"+strings.TrimRight(b.String(), "\n"))
}

func (m *Model) help() {
	var b strings.Builder
	b.WriteString("commands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-10s %-18s %s\n", c.name, c.args, c.help)
	}
	b.WriteString(`keys:
  Enter send (during a turn: queued) · Tab complete · ↑↓ earlier prompts · Shift+Tab permission mode
  Ctrl-T subagent tree (↑↓ move, PgUp/PgDn scroll, Enter expand, x kill, m message/resume, Esc back)
  Ctrl-O expand tool output · PgUp/PgDn scroll · Esc interrupt · Ctrl-C interrupt (twice: exit) · Ctrl-Z suspend
permission questions: y once · a always (kept in .brood/settings.local.toml) · n deny`)
	m.notice(entryNotice, b.String())
}

// complete completes the word under the cursor: a command, then its first
// argument (an agent type or a task id).
func (m *Model) complete() {
	v := m.input.Value()
	if !strings.HasPrefix(v, "/") {
		return
	}
	fields := strings.Fields(v)
	trailing := strings.HasSuffix(v, " ")
	var cands []string
	var word string
	switch {
	case len(fields) == 1 && !trailing:
		word = fields[0]
		for _, c := range commands() {
			cands = append(cands, c.name)
		}
	case len(fields) == 1 || (len(fields) == 2 && !trailing):
		for _, c := range commands() {
			if c.name == fields[0] && c.complete != nil {
				cands = c.complete(m)
			}
		}
		if len(fields) == 2 {
			word = fields[1]
		}
	default:
		return
	}
	var hits []string
	for _, c := range cands {
		if strings.HasPrefix(c, word) || (len(word) >= 2 && strings.HasPrefix(shortID(c), word)) {
			hits = append(hits, c)
		}
	}
	sort.Strings(hits)
	hits = slices.Compact(hits)
	switch len(hits) {
	case 0:
		m.hint = "no completion"
		return
	case 1:
		m.setLastWord(v, word, hits[0]+" ")
		return
	}
	if p := commonPrefix(hits); len(p) > len(word) {
		m.setLastWord(v, word, p)
	}
	m.hint = truncate(strings.Join(hits, "  "), m.width)
}

func (m *Model) setLastWord(v, word, repl string) {
	v = strings.TrimSuffix(v, word) + repl
	m.input.SetValue(v)
	m.input.CursorEnd()
}

func commonPrefix(ss []string) string {
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// askText is the question box for the first pending ask.
func askText(a spawn.Ask, ready bool) string {
	who := "the root agent"
	if a.TaskID != "" {
		who = fmt.Sprintf("%s (task %s)", clean(a.Agent, false), a.TaskID)
		if len(a.Via) > 0 {
			who += ", via task " + strings.Join(a.Via, " ← ")
		}
	}
	what := clean(a.Subject, false)
	if what == "" {
		what = "(no argument)"
	}
	rule := ""
	if len(a.Rules) > 0 {
		rule = " (adds " + clean(strings.Join(a.Rules, ", "), false) + ")"
	}
	keys := fmt.Sprintf("y allow once · a allow always%s · n deny", rule)
	if !ready {
		keys = "(a moment…)"
	}
	why := ""
	if a.Reason != "" {
		// Why it needs asking: for a command a prefix rule covers, the
		// option that writes a file or runs a program.
		why = "  why: " + clean(a.Reason, false) + "\n"
	}
	return fmt.Sprintf("%s asks to use %s:\n  %s\n%s%s", who, clean(a.Tool, false), what, why, keys)
}
