package childrun

import (
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
)

// pickUpAnswer is the conversation a child starts from and, for a fleet
// call picked up after its worker died at a model answer (made durable at
// the answer's sync point), the tool results of that answer that are kept
// (non-nil: the run acts on the answer, never asks it again). Of the
// answer's other calls, the run (agent.Config.Answered) runs again only
// those safe to run again (tool.SafeToRerun: a read-only built-in's, not
// SendMessage's nor an MCP tool's); the others get session.Interrupted,
// as in a replay.
func pickUpAnswer(env *dispatch.Envelope, path string, prior []model.Message) ([]model.Message, map[string]model.Part) {
	if env.SyncTurns && env.Prompt == call.ContinuePrompt {
		if msgs, done, ok := answeredTurn(path, prior); ok {
			return msgs, done
		}
	}
	return prior, nil
}

// answeredTurn looks at the transcript of a call picked up after the
// process that ran it died. When its last message is the model's answer
// (made durable before anything else, on the fleet), that answer is not
// asked again: msgs is the conversation up to and including it (without
// the results Replay made up for its tool calls) and done holds the tool
// results that did reach the transcript; ok is false when the transcript
// ends elsewhere (a user turn: the model is asked as usual).
func answeredTurn(path string, prior []model.Message) (msgs []model.Message, done map[string]model.Part, ok bool) {
	recs, _, err := session.ReadFile(path)
	if err != nil || len(prior) == 0 {
		return nil, nil, false
	}
	last := -1
	for i, r := range recs {
		if r.Type == session.RecMessage && r.Message != nil {
			last = i
		}
	}
	if last < 0 || recs[last].Message.Role != model.RoleAssistant {
		return nil, nil, false
	}
	msgs = prior
	if msgs[len(msgs)-1].Role == model.RoleUser {
		msgs = msgs[:len(msgs)-1] // Replay's stand-in results
	}
	if msgs[len(msgs)-1].Role != model.RoleAssistant {
		return nil, nil, false
	}
	done = map[string]model.Part{}
	for _, r := range recs[last+1:] {
		if r.Type == session.RecToolResult && r.ToolID != "" {
			done[r.ToolID] = model.Part{Type: model.PartToolResult, ToolUseID: r.ToolID, Text: r.Output, IsError: r.IsError}
		}
	}
	return msgs, done, true
}
