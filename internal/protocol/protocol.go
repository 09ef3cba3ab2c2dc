// Package protocol is the child protocol: every message a brood child and
// its parent exchange, as Go types both ends use. One JSON object per line.
//
// Up (child → parent, on the child's stdout): Ping, Started, Progress,
// ToolCall, Usage, BudgetWarning, BudgetExceeded, Ask, Hook, Nested and
// Result. Down
// (parent → child, on the child's stdin): Answer, HookReply and TurnReply.
// EOF on the child's stdin means its parent is gone.
//
// Two of the up kinds are requests that wait for a reply down the same pipe
// (never through a file the child can write): Ask, a permission question
// for the person at the top of the tree, answered by Answer; and Hook, a
// request that the root run the user's PreToolUse or PostToolUse hooks for
// one of the child's own tool calls, answered by HookReply. Each process on
// the way relays a descendant's request under an id of its own, stamps who
// asks from what it knows itself, and relays the reply back down.
//
// Everything that comes up is data from an untrusted process: the parent
// reads kinds and tool names from it, relays it, counts it, but takes no
// pid, model, agent, privilege or final status from it (see package
// taskdir for the boundary). Each type says whether the parent relays it up
// the tree or why it stays local.
package protocol

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"sync"

	"github.com/broodhq/brood/internal/jsonstr"
	"github.com/broodhq/brood/internal/model"
)

// Kind names a message on the wire (its "type" field).
type Kind string

// The kinds.
const (
	KindPing           Kind = "ping"
	KindStarted        Kind = "started"
	KindProgress       Kind = "progress"
	KindToolCall       Kind = "tool_call"
	KindUsage          Kind = "usage"
	KindBudgetWarning  Kind = "budget_warning"
	KindBudgetExceeded Kind = "budget_exceeded"
	KindAsk            Kind = "ask"
	KindHook           Kind = "hook"
	KindNested         Kind = "nested"
	KindResult         Kind = "result"
	KindAnswer         Kind = "answer"
	KindHookReply      Kind = "hook_reply"
	KindTurn           Kind = "turn"
	KindTurnReply      Kind = "turn_reply"
)

// Message is one line of the protocol.
type Message interface{ Kind() Kind }

// Ping is the heartbeat, {"ping":true} on the wire. Local: it proves this
// one child alive to its own parent's lifeguard, and means nothing further
// up the tree.
type Ping struct{}

// Started is the child's first line. Local and diagnostic only: the parent
// knows its child by its own process handle, never by this pid.
type Started struct {
	TaskID string `json:"task_id"`
	PID    int    `json:"pid"`
}

// Progress names tools the child called since its last Progress (in
// batches), never their inputs or outputs. Relayed up as an Event.
type Progress struct {
	Tools []string `json:"tools"`
}

// ToolCall is one of the child's own tool calls, said by the child's own
// code (brood's, which its tools cannot reach: this pipe is not in their
// file table, and the child is not dumpable, so no /proc/PID/fd of it
// opens for them) twice: when the call starts (Seq, Tool, Command, Path)
// and when it ends (Ended, with IsError, Refused, Output, and Command or
// Path again when a hook replaced the input that ran). Seq counts this
// run's calls from 1 in the order the model made them. Local: the parent
// keeps its own record of them (dispatch.Calls, in its records, beyond
// every child's reach) and its guardrails judge that record, never the
// child's transcript, which the child's tools can write; never relayed.
type ToolCall struct {
	Seq     int    `json:"seq"`
	Tool    string `json:"tool"`
	Command string `json:"command,omitempty"`
	Path    string `json:"path,omitempty"`
	Ended   bool   `json:"ended,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	Refused bool   `json:"refused,omitempty"`
	// Output is what the call returned, bounded (MaxCallOutput: its head
	// and its tail).
	Output string `json:"output,omitempty"`
}

// CallInput is the command (Bash) and the file path (the file tools) of a
// tool call's input, as a ToolCall carries them.
func CallInput(raw json.RawMessage) (command, path string) {
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(raw, &in)
	return in.Command, in.FilePath
}

// MaxCallOutput bounds a ToolCall's Output: what the guardrails read of it
// is a refusal's words (its head) and a test run's last lines (its tail).
const MaxCallOutput = 8 << 10

// ClipOutput is s bounded to MaxCallOutput: its first quarter and its last
// three, joined by a line that says how much was left out.
func ClipOutput(s string) string {
	if len(s) <= MaxCallOutput {
		return s
	}
	head, tail := MaxCallOutput/4, MaxCallOutput*3/4
	return s[:head] + fmt.Sprintf("\n… (%d bytes left out) …\n", len(s)-head-tail) + s[len(s)-tail:]
}

// Usage is one model turn's tokens. Relayed up as an Event, so every
// ancestor sees its descendants' spending as it happens.
type Usage struct {
	Turn  int         `json:"turn"`
	Usage model.Usage `json:"usage"`
	Total model.Usage `json:"total"`
}

// BudgetWarning says the child used 80% of its token budget. Relayed up.
type BudgetWarning struct {
	Text string `json:"text"`
}

// BudgetExceeded says the child used all of its token budget. Relayed up.
type BudgetExceeded struct {
	Text string `json:"text"`
}

// Ask is a child's permission question (a Bash command or a write that no
// rule allows), on its way to the user. Relayed up until a process with a
// person (the TUI) answers it; the answer comes back down as an Answer with
// the same ID. TaskID and Agent name the asking task as far as the
// receiving process can tell: for its direct child they are its own
// knowledge, whatever the line said; for a relayed ask they are what the
// relaying child says, and Via lists the tasks it came through (the direct
// child last).
type Ask struct {
	ID      string   `json:"id"`
	TaskID  string   `json:"task_id"`
	Agent   string   `json:"agent"`
	Via     []string `json:"via,omitempty"`
	Tool    string   `json:"tool"`
	Subject string   `json:"subject,omitempty"`
	// Reason says why the call needs asking: for a command a prefix rule
	// covers, the option that writes a file or runs a program.
	Reason string `json:"reason,omitempty"`
	// Rules are the narrowest permission rules that together would allow
	// the call, for an "always" answer.
	Rules []string `json:"rules,omitempty"`
}

// Answer is the reply to an Ask, on the child's stdin.
type Answer struct {
	ID    string `json:"id"`
	Allow bool   `json:"allow"`
	// Always is set when the user allowed the ask's Rules for good.
	Always bool `json:"always,omitempty"`
	// Wrote are the configuration files the user's process wrote to keep
	// an "always" (.brood/settings.local.toml): each process on the way
	// down takes them into its configuration guards, so they are not
	// undone as a child's change (spawn.Dispatcher.AcceptConfig).
	Wrote []ConfigWrite `json:"wrote,omitempty"`
}

// ConfigWrite is one configuration file the user's own process wrote
// while subagents may run in place.
type ConfigWrite struct {
	Path string      `json:"path"` // project-relative, slash-separated
	Data []byte      `json:"data"`
	Perm fs.FileMode `json:"perm"`
}

// The hook events a child may ask the root to run (see package hooks).
const (
	HookPreToolUse  = "PreToolUse"
	HookPostToolUse = "PostToolUse"
)

// Hook asks the root to run the user's hooks of Event for one of the
// child's own tool calls. It is relayed up to the root, which alone runs
// hooks, from its own configuration; the reply comes back down as a
// HookReply with the same ID. The child waits (its heartbeat goes on).
// TaskID, Agent and Depth are stamped by each receiving process from what
// it knows: its own knowledge for its direct child, and for a descendant
// the tree its child reported to it (a request naming a task the receiver
// never saw below that child is refused), never the line's word.
type Hook struct {
	ID        string          `json:"id"`
	Event     string          `json:"event"` // HookPreToolUse | HookPostToolUse
	TaskID    string          `json:"task_id"`
	Agent     string          `json:"agent"`
	Depth     int             `json:"depth"`
	Via       []string        `json:"via,omitempty"`
	Tool      string          `json:"tool"`
	ToolUseID string          `json:"tool_use_id"`
	Input     json.RawMessage `json:"input"`
	// Mode is the child's permission mode (the payload's permission_mode).
	Mode string `json:"permission_mode,omitempty"`
	// Response and DurationMS are PostToolUse's: what the tool returned.
	Response   *ToolResponse `json:"response,omitempty"`
	DurationMS int64         `json:"duration_ms,omitempty"`
	// Failed, when set, runs no hook: it reports that a hook the root
	// chose for this call (HookRun) failed where the child ran it, for the
	// root to say on the user's terminal. The reply is empty.
	Failed *HookFailure `json:"failed,omitempty"`
}

// HookFailure is one hook command that failed in a child (it exited
// non-zero other than 2, timed out, could not start or was not run).
type HookFailure struct {
	// Command is the hook's command, as the root sent it in HookRun.
	Command string `json:"command"`
	// Line is the first line of its stderr, or why it did not run.
	Line string `json:"line"`
}

// ToolResponse is what a tool returned, for PostToolUse.
type ToolResponse struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// HookReply is what the root's hooks decided, on the child's stdin.
type HookReply struct {
	ID string `json:"id"`
	// Deny, when set, refuses the call (PreToolUse): the text the model
	// sees. A hook's exit 2, a deny decision, a refused request.
	Deny string `json:"deny,omitempty"`
	// Verdict is PreToolUse's "allow" or "ask" (or ""): where the child's
	// permission layer starts from. Its deny rules and read-only scope
	// still hold whatever it says.
	Verdict string `json:"verdict,omitempty"`
	// Input replaces the call's input (updatedInput).
	Input json.RawMessage `json:"updated_input,omitempty"`
	// Context is added to the tool result the child's model sees
	// (additionalContext, a PostToolUse block's reason).
	Context string `json:"context,omitempty"`
	// Run, when set, is the hooks the root chose for the call, for the
	// child to run where the call ran (HookRun); what they say is added to
	// the fields above.
	Run *HookRun `json:"run,omitempty"`
}

// Turn says a sync point is reached — a model answer is in the child's
// transcript (before its tools run or the run ends with it), or a turn
// boundary (before the next model request) — and the child waits for a
// TurnReply with the same ID before it goes on (its heartbeat goes on). A child sends it
// only when its envelope asks (SyncTurns: a fleet worker, which makes the
// transcript durable elsewhere first, so a retry never asks a finished turn
// again). Local: answered by the child's own parent, never relayed. The
// parent takes nothing from it but the ID; Turn is the child's word, for
// logs.
type Turn struct {
	ID   string `json:"id"`
	Turn int    `json:"turn"`
	// Final: the answer ends the run, and the child does not wait for
	// the reply (it writes its result and exits meanwhile).
	Final bool `json:"final,omitempty"`
}

// TurnReply lets the child make its next model request.
type TurnReply struct {
	ID string `json:"id"`
}

// Nested carries a descendant's Event, relayed by this child as it got it
// (the parent relays it further). The parent believes it only so far: it
// relays a Nested only from a child that may delegate, only about a task
// that child reported starting below itself (a dispatch_start naming the
// child or a task already under it as its parent), and stamps it with the
// agent and depth where that task hangs and Via = the child; names and
// texts are escaped and bounded, a status outside the record statuses is
// dropped, and nothing more is relayed about a task after its stop.
type Nested struct {
	Event Event `json:"event"`
}

// Result is the child's last line. Local: a hint that result.json is
// written; the parent judges result.json itself and announces the outcome
// (a dispatch_stop Event) from its own verdict, never from this line.
type Result struct {
	Status     string      `json:"status"`
	Usage      model.Usage `json:"usage"`
	ChildUsage model.Usage `json:"child_usage"`
	// Error is set when the child could not write result.json (a full
	// disk): the parent quotes it as the child's words.
	Error string `json:"error,omitempty"`
}

// Unknown is a line of a kind this build does not know (a newer child):
// ignored, never an error.
type Unknown struct {
	Type string
	Raw  json.RawMessage
}

func (Ping) Kind() Kind           { return KindPing }
func (Started) Kind() Kind        { return KindStarted }
func (Progress) Kind() Kind       { return KindProgress }
func (ToolCall) Kind() Kind       { return KindToolCall }
func (Usage) Kind() Kind          { return KindUsage }
func (BudgetWarning) Kind() Kind  { return KindBudgetWarning }
func (BudgetExceeded) Kind() Kind { return KindBudgetExceeded }
func (Ask) Kind() Kind            { return KindAsk }
func (Answer) Kind() Kind         { return KindAnswer }
func (Hook) Kind() Kind           { return KindHook }
func (HookReply) Kind() Kind      { return KindHookReply }
func (Turn) Kind() Kind           { return KindTurn }
func (TurnReply) Kind() Kind      { return KindTurnReply }
func (Nested) Kind() Kind         { return KindNested }
func (Result) Kind() Kind         { return KindResult }
func (u Unknown) Kind() Kind      { return Kind(u.Type) }

// Event is what a parent learns about a dispatch below it, and what it
// relays further up inside Nested.
type Event struct {
	Type   EventType `json:"type"`
	TaskID string    `json:"task_id"`
	// Parent is the task that dispatched it ("" for this process's own
	// children). A nested event's parent is as the relaying child said in
	// the task's start, which the receiver checked hangs below that child.
	Parent   string   `json:"parent,omitempty"`
	Agent    string   `json:"agent"`
	Depth    int      `json:"depth"`
	MaxDepth int      `json:"max_depth,omitempty"`
	Tools    []string `json:"tools,omitempty"`
	Status   string   `json:"status,omitempty"`
	// Usage is a stop's total, or a usage event's running total so far.
	Usage       model.Usage `json:"usage,omitzero"`
	WallMS      int64       `json:"wall_ms,omitempty"`
	Description string      `json:"description,omitempty"`
	// ToolUseID is, on a dispatch_start of this process's own child, the
	// id of the Task (Agent) call that asked for it (never relayed).
	ToolUseID string `json:"tool_use_id,omitempty"`
	KilledBy  string `json:"killed_by,omitempty"` // dispatch_stop of a killed child
	// Via is set by the process that relays a grandchild's event: the
	// child that relayed it (whatever a child wrote there is replaced).
	Via string `json:"via,omitempty"`
	// Text is a budget event's message or a stop's reason.
	Text string `json:"text,omitempty"`
	// Ask is set on an ask event.
	Ask *Ask `json:"ask,omitempty"`
}

// EventType names an Event.
type EventType = string

// The event types.
const (
	EvDispatchStart  EventType = "dispatch_start"
	EvProgress       EventType = "progress"
	EvUsage          EventType = "usage"
	EvBudgetWarning  EventType = "budget_warning"
	EvBudgetExceeded EventType = "budget_exceeded"
	EvAsk            EventType = "ask"
	EvDispatchStop   EventType = "dispatch_stop"
	EvBackgroundDone EventType = "background_done"
)

var pingLine = []byte(`{"ping":true}`)

// Marshal encodes m as one line (without the newline).
func Marshal(m Message) ([]byte, error) {
	if _, ok := m.(Ping); ok {
		return bytes.Clone(pingLine), nil
	}
	if u, ok := m.(Unknown); ok {
		return bytes.Clone(u.Raw), nil
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("protocol: encode %s: %w", m.Kind(), err)
	}
	kind, _ := json.Marshal(string(m.Kind()))
	out := append([]byte(`{"type":`), kind...)
	if len(body) > 2 {
		out = append(out, ',')
		out = append(out, body[1:]...)
	} else {
		out = append(out, '}')
	}
	return out, nil
}

// Unmarshal decodes one line. A line that is not a JSON object is an error;
// a kind this build does not know is an Unknown.
func Unmarshal(line []byte) (Message, error) {
	var head struct {
		Type string `json:"type"`
		Ping bool   `json:"ping"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return nil, fmt.Errorf("protocol: not a message: %w", err)
	}
	if head.Type == "" && head.Ping {
		return Ping{}, nil
	}
	var m Message
	var err error
	switch Kind(head.Type) {
	case KindPing:
		return Ping{}, nil
	case KindStarted:
		m, err = decode[Started](line)
	case KindProgress:
		m, err = decode[Progress](line)
	case KindToolCall:
		m, err = decode[ToolCall](line)
	case KindUsage:
		m, err = decode[Usage](line)
	case KindBudgetWarning:
		m, err = decode[BudgetWarning](line)
	case KindBudgetExceeded:
		m, err = decode[BudgetExceeded](line)
	case KindAsk:
		m, err = decode[Ask](line)
	case KindAnswer:
		m, err = decode[Answer](line)
	case KindHook:
		m, err = decode[Hook](line)
	case KindHookReply:
		m, err = decode[HookReply](line)
	case KindTurn:
		m, err = decode[Turn](line)
	case KindTurnReply:
		m, err = decode[TurnReply](line)
	case KindNested:
		m, err = decode[Nested](line)
	case KindResult:
		m, err = decode[Result](line)
	default:
		return Unknown{Type: head.Type, Raw: bytes.Clone(line)}, nil
	}
	return m, err
}

func decode[T Message](line []byte) (Message, error) {
	var v T
	if err := json.Unmarshal(line, &v); err != nil {
		return nil, fmt.Errorf("protocol: %s: %w", v.Kind(), err)
	}
	return v, nil
}

// Writer sends messages, one per line, from any goroutine.
type Writer struct {
	mu     sync.Mutex
	w      io.Writer
	redact func(string) string
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// NewRedactingWriter returns a Writer on w that passes every string of
// every message through redact (nil: none) before it leaves the process: a
// hook request's tool input and response, an ask's command, a budget
// message. A child's messages go to a parent that hands them on to hooks,
// people and models; no secret the child could see goes with them.
func NewRedactingWriter(w io.Writer, redact func(string) string) *Writer {
	return &Writer{w: w, redact: redact}
}

// Send writes m as one line.
func (w *Writer) Send(m Message) error {
	b, err := Marshal(m)
	if err != nil {
		return err
	}
	b = jsonstr.Map(b, w.redact)
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.w.Write(append(b, '\n'))
	return err
}

// MaxLine bounds one message.
const MaxLine = 64 << 20

// Read yields the messages of r, one per line, until EOF (a nil error
// ends it cleanly). Blank lines are skipped; a line that does not decode is
// yielded as an error and reading goes on.
func Read(r io.Reader) iter.Seq2[Message, error] {
	return func(yield func(Message, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 4<<10), MaxLine) // grown as a line needs: most are short
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			if !yield(Unmarshal(line)) {
				return
			}
		}
		if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
			yield(nil, err)
		}
	}
}

// NewAskID returns a fresh id for an Ask.
func NewAskID() string { return newID("ask-") }

// NewHookID returns a fresh id for a Hook request.
func NewHookID() string { return newID("hook-") }

// NewTurnID returns a fresh id for a Turn request.
func NewTurnID() string { return newID("turn-") }

func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// MaxID bounds a request's id; a longer one is not a request.
const MaxID = 64
