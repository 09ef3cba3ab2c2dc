package delegate

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"sync"
)

// Ask is a child's permission question (a Bash command or a write that no
// rule allows), on its way to the user. TaskID and Agent name the asking
// task as far as this process can tell: for a direct child they are the
// parent's own knowledge; for a nested ask they are what the relaying child
// says, and Via lists the tasks it came through (the direct child last).
type Ask struct {
	TaskID  string   `json:"task_id"`
	Agent   string   `json:"agent"`
	Via     []string `json:"via,omitempty"`
	Tool    string   `json:"tool"`
	Subject string   `json:"subject,omitempty"`
	// Rules are the narrowest permission rules that together would allow
	// the call, for an "always" answer.
	Rules []string `json:"rules,omitempty"`
}

// Answer is the user's answer to an Ask.
type Answer struct {
	Allow bool `json:"allow"`
	// Always is set when the user allowed the ask's Rules for good.
	Always bool `json:"always,omitempty"`
	// Wrote are the configuration files the user's process wrote to keep
	// an "always" (.brood/settings.local.toml): each process on the way
	// down takes them into its configuration guards, so they are not
	// undone as a child's change (Dispatcher.AcceptConfig).
	Wrote []ConfigWrite `json:"wrote,omitempty"`
}

// AskFunc puts a child's question to the user and waits for the answer (or
// for ctx to end: a denial).
type AskFunc func(ctx context.Context, a Ask) Answer

// EnvAskParent tells a child that its parent takes its permission
// questions (a person is at the top of the tree). Without it a child denies
// what needs approval, as a run without a person does. The answers come down
// the child's stdin, the pipe only the parent holds.
const EnvAskParent = "BROOD_ASK_PARENT"

// maxPendingAsks bounds the questions one child may have open at once; more
// are denied at once (a child cannot flood its user).
const maxPendingAsks = 4

// askLine is an Ask on the wire (child → parent, on the child's stdout).
type askLine struct {
	Type string `json:"type"` // "ask"
	ID   string `json:"id"`
	Ask
}

// answerLine is an Answer on the wire (parent → child, on its stdin).
type answerLine struct {
	Type string `json:"type"` // "answer"
	ID   string `json:"id"`
	Answer
}

func newAskID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "ask-" + hex.EncodeToString(b[:])
}

// childAsks is the parent's end of one child's questions: each is put to
// the dispatcher's AskFunc (or denied, without one) and answered down the
// child's stdin.
type childAsks struct {
	d         *Dispatcher
	ctx       context.Context // ends when the child's run does
	id, agent string
	input     chan []byte
	mu        sync.Mutex
	pending   int
}

func (c *childAsks) handle(b []byte) {
	var m askLine
	if json.Unmarshal(b, &m) != nil || m.ID == "" || len(m.ID) > 64 {
		return
	}
	a := m.Ask
	a.Subject = clip(a.Subject, 4096)
	if len(a.Rules) > 8 {
		a.Rules = a.Rules[:8]
	}
	for i := range a.Rules {
		a.Rules[i] = clip(a.Rules[i], 512)
	}
	if a.TaskID == "" || a.TaskID == c.id {
		// The child's own question: who asks is what this process knows.
		a.TaskID, a.Agent, a.Via = c.id, c.agent, nil
	} else {
		// A descendant's, relayed by the child: as it says, and through it.
		if len(a.Via) > 16 {
			a.Via = a.Via[:16]
		}
		a.TaskID, a.Agent, a.Via = clip(a.TaskID, 64), clip(a.Agent, 128), append(a.Via, c.id)
	}
	c.mu.Lock()
	over := c.pending >= maxPendingAsks
	if !over {
		c.pending++
	}
	c.mu.Unlock()
	if over || c.d.cfg.Ask == nil {
		c.reply(m.ID, Answer{})
		return
	}
	go func() {
		ans := c.d.cfg.Ask(c.ctx, a)
		c.d.AcceptConfig(ans.Wrote...)
		c.mu.Lock()
		c.pending--
		c.mu.Unlock()
		c.reply(m.ID, ans)
	}()
}

func (c *childAsks) reply(id string, a Answer) {
	b, err := json.Marshal(answerLine{Type: "answer", ID: id, Answer: a})
	if err != nil {
		return
	}
	select {
	case c.input <- append(b, '\n'):
	case <-c.ctx.Done():
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// parentLink is the child's end: it sends questions up and reads the
// answers from stdin, whose end (EOF) means the parent is gone.
type parentLink struct {
	out     *events
	mu      sync.Mutex
	pending map[string]chan Answer
	gone    bool
}

// read delivers answers until stdin ends, then calls gone.
func (l *parentLink) read(r io.Reader, gone func()) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		var m answerLine
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.Type != "answer" {
			continue
		}
		l.mu.Lock()
		ch := l.pending[m.ID]
		delete(l.pending, m.ID)
		l.mu.Unlock()
		if ch != nil {
			ch <- m.Answer
		}
	}
	l.mu.Lock()
	l.gone = true
	for id, ch := range l.pending {
		close(ch)
		delete(l.pending, id)
	}
	l.mu.Unlock()
	gone()
}

// ask sends a question up and waits for its answer; the parent gone or ctx
// ended is a denial.
func (l *parentLink) ask(ctx context.Context, a Ask) Answer {
	id := newAskID()
	ch := make(chan Answer, 1)
	l.mu.Lock()
	if l.gone {
		l.mu.Unlock()
		return Answer{}
	}
	if l.pending == nil {
		l.pending = map[string]chan Answer{}
	}
	l.pending[id] = ch
	l.mu.Unlock()
	l.out.send(askLine{Type: "ask", ID: id, Ask: a})
	select {
	case ans, ok := <-ch:
		if ok {
			return ans
		}
	case <-ctx.Done():
		l.mu.Lock()
		delete(l.pending, id)
		l.mu.Unlock()
	}
	return Answer{}
}

// relay is the AskFunc of a child's own dispatcher: its children's
// questions go on up (nil when no one above takes them).
func (l *parentLink) relay() AskFunc {
	if l == nil {
		return nil
	}
	return l.ask
}
