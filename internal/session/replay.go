package session

import (
	"github.com/broodhq/brood/internal/model"
)

// Interrupted is the tool result text given to a tool call whose result never
// reached the transcript, because the run was killed while it ran.
const Interrupted = "interrupted: the run stopped before this tool call finished, so its result was lost. Run it again if you still need it."

// State is what a transcript says about a conversation so far.
type State struct {
	System   string          // the system prompt of the latest run
	Agent    string          // the agent of the latest run
	Model    string          // the model of the latest run
	Messages []model.Message // valid to send to a model as they are
	Turns    int             // assistant turns so far
	Usage    model.Usage     // tokens used so far, all runs
	Status   string          // status of the last finished run, "" if it never finished
	Skipped  int             // torn or garbled lines skipped
}

// Replay rebuilds the conversation from records. A run killed mid-turn leaves
// an assistant message whose tool calls have no results; Replay completes
// them from the tool_result records that did reach the disk, and marks the
// rest Interrupted, so the messages always form a valid request.
func Replay(recs []Record) State {
	var st State
	pending := map[string]Record{}
	for _, r := range recs {
		switch r.Type {
		case RecMeta:
			st.System, st.Agent, st.Model = r.System, r.Agent, r.Model
			st.Status = ""
		case RecMessage:
			if r.Message == nil {
				continue
			}
			if r.Message.Role == model.RoleAssistant {
				st.Turns++
				clear(pending)
			}
			st.Messages = AppendMessage(st.Messages, *r.Message)
		case RecToolResult:
			pending[r.ToolID] = r
		case RecUsage:
			if r.Usage != nil {
				st.Usage = st.Usage.Add(*r.Usage)
			}
		case RecEnd:
			st.Status = r.Status
		}
	}
	st.Messages = completeToolCalls(st.Messages, pending)
	return st
}

// completeToolCalls adds a tool_result message after a trailing assistant
// message that asked for tools.
func completeToolCalls(msgs []model.Message, done map[string]Record) []model.Message {
	if len(msgs) == 0 {
		return msgs
	}
	last := msgs[len(msgs)-1]
	if last.Role != model.RoleAssistant {
		return msgs
	}
	uses := last.ToolUses()
	if len(uses) == 0 {
		return msgs
	}
	var parts []model.Part
	for _, u := range uses {
		if r, ok := done[u.ID]; ok {
			parts = append(parts, model.Part{Type: model.PartToolResult, ToolUseID: u.ID, Text: r.Output, IsError: r.IsError})
			continue
		}
		parts = append(parts, model.Part{Type: model.PartToolResult, ToolUseID: u.ID, Text: Interrupted, IsError: true})
	}
	return append(msgs, model.Message{Role: model.RoleUser, Content: parts})
}

// AppendMessage appends m to msgs, merging it into the last message when both
// are from the same role: providers want roles to alternate, and a resumed or
// steered run can produce two user turns in a row.
func AppendMessage(msgs []model.Message, m model.Message) []model.Message {
	if n := len(msgs); n > 0 && msgs[n-1].Role == m.Role {
		merged := model.Message{Role: m.Role}
		merged.Content = append(append([]model.Part(nil), msgs[n-1].Content...), m.Content...)
		out := append([]model.Message(nil), msgs[:n-1]...)
		return append(out, merged)
	}
	return append(msgs, m)
}
