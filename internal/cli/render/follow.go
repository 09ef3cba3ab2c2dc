package render

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/taskdir"
)

// maxFollow bounds the part of a subagent's transcript stream-json reads.
const maxFollow = 16 << 20

// follower is how far a subagent's transcript has been read, and what of
// it is not sent yet: an assistant message waits for its turn's usage.
type follower struct {
	offset  int64
	pending *session.Record
	usage   map[int]model.Usage
	ids     map[int]string // message id by turn
	model   string
	tools   map[string]string // tool name by tool_use id
}

// follow sends the subagent's own messages its transcript gained since
// the last call, each tagged with the Agent call's id
// (parent_tool_use_id), its task id, type and description, as Claude Code
// streams a subagent's messages. It runs at each of the subagent's
// progress events and when it ends (final: nothing is held back then).
// The transcript is the child's: read beneath its task directory without
// following links, complete lines only, bad lines skipped, capped.
func (h *Headless) follow(id string, t *taskState, final bool) {
	if t.call == nil || !h.stream {
		return
	}
	fw := &t.follow
	if fw.usage == nil {
		fw.usage, fw.ids, fw.tools = map[int]model.Usage{}, map[int]string{}, map[string]string{}
	}
	if d := h.taskDir(spawn.Event{TaskID: id}); d != nil && fw.offset < maxFollow {
		if f, err := d.OpenRead(taskdir.Session); err == nil {
			b, _ := io.ReadAll(io.LimitReader(io.NewSectionReader(f, fw.offset, maxFollow-fw.offset), maxFollow))
			f.Close()
			b = b[:bytes.LastIndexByte(b, '\n')+1]
			fw.offset += int64(len(b))
			for _, ln := range bytes.Split(b, []byte("\n")) {
				var r session.Record
				if len(bytes.TrimSpace(ln)) > 0 && json.Unmarshal(ln, &r) == nil {
					h.followRecord(id, t, r)
				}
			}
		}
	}
	if final {
		h.flushPending(id, t)
	}
}

// followRecord takes one record of a subagent's transcript.
func (h *Headless) followRecord(id string, t *taskState, r session.Record) {
	fw := &t.follow
	switch r.Type {
	case session.RecMeta:
		if fw.model == "" {
			fw.model = r.Model
		}
	case session.RecUsage:
		if r.Usage != nil {
			fw.usage[r.Turn] = *r.Usage
		}
		if fw.pending != nil && fw.pending.Turn == r.Turn {
			h.flushPending(id, t)
		}
	case session.RecMessage:
		if r.Message == nil {
			return
		}
		h.flushPending(id, t)
		switch r.Message.Role {
		case model.RoleAssistant:
			fw.pending = &r
		case model.RoleUser:
			var content []Content
			for _, p := range r.Message.Content {
				if p.Type == model.PartToolResult {
					content = append(content, toolResult(fw.tools[p.ToolUseID], p.ToolUseID, p.Text, p.IsError))
				}
			}
			if len(content) > 0 {
				line := h.childLine(id, t, r)
				line.Type, line.Message = "user", UserMessage{Role: "user", Content: content}
				h.line(line)
			}
		}
	}
}

// flushPending sends the assistant message that waited for its usage.
func (h *Headless) flushPending(id string, t *taskState) {
	fw := &t.follow
	r := fw.pending
	if r == nil {
		return
	}
	fw.pending = nil
	content := blocks(r.Message.Content)
	if len(content) == 0 {
		return
	}
	var meta []ToolUseMeta
	for _, p := range r.Message.Content {
		if p.Type == model.PartToolUse {
			fw.tools[p.ID] = p.Name
			meta = append(meta, toolUseMeta(p.ID, p.Name)...)
		}
	}
	if fw.ids[r.Turn] == "" {
		fw.ids[r.Turn] = newMessageID()
	}
	line := h.childLine(id, t, *r)
	line.Type, line.Message = "assistant", assistantMessage(content, fw.ids[r.Turn], fw.model, fw.usage[r.Turn])
	line.ToolUseMeta = meta
	h.line(line)
}

// childLine is a line of a subagent's, tagged as Claude Code tags them.
func (h *Headless) childLine(id string, t *taskState, r session.Record) MessageLine {
	return MessageLine{ParentToolUseID: &t.call.id, AgentID: id, SessionID: SessionID(h.info.SessionPath),
		UUID: newUUID(), Timestamp: stamp(r.Time), SubagentType: t.agent, TaskDescription: t.desc}
}
