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
			m := *r.Message
			if m.Role == model.RoleAssistant {
				st.Turns++
				clear(pending)
			} else {
				// A resumed run appends its prompt after an assistant turn
				// whose tool calls were cut off by a crash: their results
				// (recorded or Interrupted) must come first, or the
				// conversation is not a valid request.
				m.Content = append(missingResults(st.Messages, m, pending), m.Content...)
			}
			st.Messages = AppendMessage(st.Messages, m)
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
	parts := missingResults(msgs, model.Message{Role: model.RoleUser}, done)
	if len(parts) == 0 {
		return msgs
	}
	return append(msgs, model.Message{Role: model.RoleUser, Content: parts})
}

// missingResults returns the tool_result parts that next (a user message)
// lacks for the tool calls of the last message of msgs, when that is an
// assistant message: the recorded result where one reached the disk, else
// Interrupted.
func missingResults(msgs []model.Message, next model.Message, done map[string]Record) []model.Part {
	if len(msgs) == 0 {
		return nil
	}
	last := msgs[len(msgs)-1]
	if last.Role != model.RoleAssistant {
		return nil
	}
	answered := map[string]bool{}
	for _, p := range next.Content {
		if p.Type == model.PartToolResult {
			answered[p.ToolUseID] = true
		}
	}
	var parts []model.Part
	for _, u := range last.ToolUses() {
		if answered[u.ID] {
			continue
		}
		if r, ok := done[u.ID]; ok {
			parts = append(parts, model.Part{Type: model.PartToolResult, ToolUseID: u.ID, Text: r.Output, IsError: r.IsError})
			continue
		}
		parts = append(parts, model.Part{Type: model.PartToolResult, ToolUseID: u.ID, Text: Interrupted, IsError: true})
	}
	return parts
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
