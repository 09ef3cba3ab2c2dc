package childrun

import (
	"encoding/json"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/protocol"
)

// callWire tells the parent of each of this child's tool calls as it
// starts and as it ends (protocol.ToolCall), on the protocol pipe: the
// parent's record of them, which its guardrails judge, is made from these
// lines and never from the transcript, which this child's tools can write.
// Used from the agent loop's goroutine only.
type callWire struct {
	send func(protocol.Message)
	seq  int
	// open are the calls started and not ended, by tool id (a model may
	// reuse an id: the earliest open call of an id ends first).
	open map[string][]int
}

func newCallWire(send func(protocol.Message)) *callWire {
	return &callWire{send: send, open: map[string][]int{}}
}

// start says a call starts: its place in this run, its tool and input.
func (w *callWire) start(id, tool string, input json.RawMessage) {
	w.seq++
	w.open[id] = append(w.open[id], w.seq)
	cmd, path := protocol.CallInput(input)
	w.send(protocol.ToolCall{Seq: w.seq, Tool: tool, Command: cmd, Path: path})
}

// end says how the call of ev (an EvToolResult) ended.
func (w *callWire) end(ev agent.Event) {
	q := w.open[ev.ToolID]
	if len(q) == 0 {
		return // no start said: nothing to end
	}
	seq := q[0]
	if len(q) == 1 {
		delete(w.open, ev.ToolID)
	} else {
		w.open[ev.ToolID] = q[1:]
	}
	m := protocol.ToolCall{Seq: seq, Tool: ev.Tool, Ended: true, IsError: ev.IsError, Refused: ev.Refused, Output: protocol.ClipOutput(ev.Text)}
	if len(ev.Ran) > 0 {
		// A hook replaced the model's input: this is what ran.
		m.Command, m.Path = protocol.CallInput(ev.Ran)
	}
	w.send(m)
}
