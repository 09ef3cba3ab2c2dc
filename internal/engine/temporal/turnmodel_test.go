package temporal_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/modeltest"
)

// turnModel is a loopback Anthropic model that the workers' children ask.
// Each call takes `tools` tool turns (a Glob each), then answers. Every
// request is keyed by its call (the "Begin: ..." line of its first user
// message: the call's description) and the turn it asks for (how many
// assistant messages it carries: 0 is the first turn), and counted. A test
// can hold the first request for a turn until it lets it go, and hears when
// it arrived: the fault tests kill and stop workers on these events, never
// after a sleep.
type turnModel struct {
	srv   *modeltest.Server
	tools int

	mu      sync.Mutex
	asked   map[turnKey]int
	holds   map[turnKey]chan struct{}      // closed: let the held request go
	arrived map[turnKey]chan struct{}      // closed when the turn was first asked
	calls   map[turnKey]modeltest.ToolCall // a tool call other than the Glob
	texts   map[turnKey]string             // a final answer other than the usual
}

// turnUsage is what every answer costs: a call's usage is its finished
// turns' (whichever attempt had them) times this.
var turnUsage = model.Usage{Input: 100, Output: 10}

type turnKey struct {
	call string
	turn int
}

func newTurnModel(t *testing.T, tools int) *turnModel {
	t.Helper()
	m := &turnModel{tools: tools, asked: map[turnKey]int{}, holds: map[turnKey]chan struct{}{}, arrived: map[turnKey]chan struct{}{}, calls: map[turnKey]modeltest.ToolCall{}, texts: map[turnKey]string{}}
	m.srv = modeltest.NewAnthropic(t)
	m.srv.SetResponder(m.respond)
	// Runs before the server's Close (cleanups run last first), which
	// waits for the handlers: nothing stays held.
	t.Cleanup(m.releaseAll)
	return m
}

// env is what a worker needs to use this model.
func (m *turnModel) env() []string {
	return []string{"BROOD_MODEL=anthropic/claude-test", "ANTHROPIC_BASE_URL=" + m.srv.URL, "ANTHROPIC_API_KEY=sk-ant-test-not-a-key"}
}

func (m *turnModel) respond(req modeltest.Recorded) modeltest.Reply {
	k, err := keyOf(req.Body)
	if err != nil {
		return modeltest.Reply{Status: 400, ErrorMessage: err.Error()}
	}
	m.mu.Lock()
	m.asked[k]++
	first := m.asked[k] == 1
	hold := m.holds[k]
	tc, other := m.calls[k]
	text, told := m.texts[k]
	if first {
		if ch, ok := m.arrived[k]; ok {
			close(ch)
		} else {
			ch := make(chan struct{})
			close(ch)
			m.arrived[k] = ch
		}
	}
	m.mu.Unlock()
	if first && hold != nil {
		<-hold
	}
	if k.turn < m.tools && other {
		return modeltest.Reply{Usage: turnUsage, ToolCalls: []modeltest.ToolCall{tc}}
	}
	if k.turn < m.tools {
		return modeltest.Reply{Usage: turnUsage, ToolCalls: []modeltest.ToolCall{{ID: fmt.Sprintf("toolu_%d", k.turn), Name: "Glob", Input: `{"pattern":"*"}`}}}
	}
	if told {
		return modeltest.Reply{Usage: turnUsage, Text: text}
	}
	return modeltest.Reply{Usage: turnUsage, Text: fmt.Sprintf("finished after %d tool turns", m.tools)}
}

// answerText makes the final answer to k text.
func (m *turnModel) answerText(k turnKey, text string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.texts[k] = text
}

// askedN is how many times turn k was asked.
func (m *turnModel) askedN(k turnKey) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.asked[k]
}

// answerWith makes the answer to k the tool call tc.
func (m *turnModel) answerWith(k turnKey, tc modeltest.ToolCall) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls[k] = tc
}

// hold holds the first request of k until release(k).
func (m *turnModel) hold(k turnKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.holds[k] = make(chan struct{})
}

func (m *turnModel) release(k turnKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ch, ok := m.holds[k]; ok {
		close(ch)
		delete(m.holds, k)
	}
}

func (m *turnModel) releaseAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, ch := range m.holds {
		close(ch)
		delete(m.holds, k)
	}
}

// arrivedAt is closed once turn k was asked.
func (m *turnModel) arrivedAt(k turnKey) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch, ok := m.arrived[k]
	if !ok {
		ch = make(chan struct{})
		m.arrived[k] = ch
	}
	return ch
}

// checkAskedOnce fails t unless every turn of call was asked exactly once,
// but the turn the fault interrupted (unfinished: -1 for none), which may
// be asked twice.
func (m *turnModel) checkAskedOnce(t *testing.T, call string, unfinished int) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	var got []string
	bad := false
	for turn := 0; turn <= m.tools; turn++ {
		n := m.asked[turnKey{call, turn}]
		got = append(got, fmt.Sprintf("turn %d: %d", turn, n))
		want := 1
		if turn == unfinished {
			want = 2
		}
		if n < 1 || n > want {
			bad = true
		}
	}
	for k := range m.asked {
		if k.call == call && k.turn > m.tools {
			bad = true
			got = append(got, fmt.Sprintf("turn %d: %d (past the last)", k.turn, m.asked[k]))
		}
	}
	if bad {
		t.Errorf("call %q asked the model %s; want each finished turn once (the interrupted turn %d at most twice)", call, strings.Join(got, ", "), unfinished)
	}
}

// keyOf reads a Messages request: the call and the turn it asks for.
func keyOf(body []byte) (turnKey, error) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		return turnKey{}, fmt.Errorf("turnModel: not a Messages request: %v", err)
	}
	k := turnKey{}
	for _, msg := range req.Messages {
		if msg.Role == "assistant" {
			k.turn++
		}
	}
	text := string(req.Messages[0].Content)
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(req.Messages[0].Content, &parts) == nil {
		text = ""
		for _, p := range parts {
			text += p.Text + "\n"
		}
	} else {
		_ = json.Unmarshal(req.Messages[0].Content, &text)
	}
	i := strings.Index(text, "Begin: ")
	if i < 0 {
		return turnKey{}, fmt.Errorf("turnModel: the first user message has no Begin line: %.200q", text)
	}
	k.call, _, _ = strings.Cut(text[i+len("Begin: "):], "\n")
	return k, nil
}
