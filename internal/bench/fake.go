package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/fakewire"
	"github.com/broodhq/brood/internal/spawntrace"
)

// childMarker is what every explore child's system prompt contains (see
// delegate's envelope builder); it is how the fake tells a child's request
// from the parent's without any cooperation from brood.
const childMarker = "You are a focused subagent (explore)"

// taskMarker tags each Task prompt with its index, so a child's requests
// can be matched to the Task call (and dispatch directory) that made it.
var taskMarker = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`bench-task-(\d+)`) })

// Role says whose turn a request was.
type Role string

// Roles of the scripted conversation.
const (
	RoleParent Role = "parent"
	RoleChild  Role = "child"
)

// Request is one request the fake received, with the time its response was
// fully written.
type Request struct {
	Role  Role
	Turn  int // 1 = first turn of that agent
	Index int // the child's task index (-1 for the parent)
	// Arrived is when the request line arrived; Sent when the last byte of
	// the response was flushed.
	Arrived time.Time
	Sent    time.Time
	// ArrivedMono and SentMono are the same instants on CLOCK_MONOTONIC
	// (ns), the clock of brood's spawn traces.
	ArrivedMono, SentMono int64
	Err                   string // set when the fake could not answer as scripted
}

// Fake is a loopback model server that speaks the Anthropic Messages API
// and OpenAI Chat Completions, both streamed as SSE, and plays the
// delegation script: the parent asks for K explore subagents in one turn,
// each child reads one file and answers in about 200 tokens, and the
// parent answers. It is a plain server (not a test helper) so that the
// bench command can run it. Its methods are safe for concurrent use.
type Fake struct {
	URL string // http://127.0.0.1:port, no trailing slash

	srv *http.Server
	ln  net.Listener

	mu       sync.Mutex
	k        int
	latency  time.Duration
	readPath string
	// writer, when set, makes each child a general-purpose writer with
	// that isolation ("none" or "worktree") that writes one new file
	// beside readPath instead of reading it.
	writer string
	log    []Request
}

// NewFake starts a fake on a loopback port. Close stops it.
func NewFake() (*Fake, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &Fake{ln: ln, URL: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) { f.handle(w, r, fakewire.WriteAnthropic) })
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { f.handle(w, r, fakewire.WriteOpenAI) })
	f.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = f.srv.Serve(ln) }()
	return f, nil
}

// Close stops the server.
func (f *Fake) Close() error { return f.srv.Close() }

// Reset starts a new scripted run: k Task calls, latency before each
// response's first byte, and the absolute path each child reads. It clears
// the request log.
func (f *Fake) Reset(k int, latency time.Duration, readPath string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.k, f.latency, f.readPath, f.log, f.writer = k, latency, readPath, nil, ""
}

// Writers makes the children of the current run writers with isolation
// ("none" or "worktree"); call it after Reset.
func (f *Fake) Writers(isolation string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writer = isolation
}

// WrittenPath is the file child i of a writer run creates beside readPath.
func WrittenPath(readPath string, i int) string {
	return filepath.Join(filepath.Dir(readPath), fmt.Sprintf("bench-out-%d.txt", i))
}

// Log returns a copy of the requests of the current run, in arrival order.
func (f *Fake) Log() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.log...)
}

// wire writes a reply in one provider's format (fakewire's: the one fake
// model's wire, which modeltest serves to tests).
type wire func(w http.ResponseWriter, n int, model string, r fakewire.Reply)

// reply is a scripted response: text, tool calls and usage.
func reply(text string, in, out int64, calls ...fakewire.ToolCall) fakewire.Reply {
	return fakewire.Reply{Text: text, ToolCalls: calls, Usage: model.Usage{Input: in, Output: out}}
}

func (f *Fake) handle(w http.ResponseWriter, r *http.Request, write wire) {
	arrived, arrivedMono := time.Now(), spawntrace.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	k, latency, readPath, writer := f.k, f.latency, f.readPath, f.writer
	n := len(f.log)
	req := classify(body)
	req.Arrived, req.ArrivedMono = arrived, arrivedMono
	f.log = append(f.log, req)
	f.mu.Unlock()

	rep, err := script(req, k, readPath, writer)
	if err != nil {
		f.setErr(n, err.Error())
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bench fake: `+err.Error()+`"}}`, http.StatusBadRequest)
		return
	}
	if latency > 0 {
		t := time.NewTimer(latency)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	write(w, n, fakewire.RequestModel(body), rep)
	f.mu.Lock()
	f.log[n].Sent, f.log[n].SentMono = time.Now(), spawntrace.Now()
	f.mu.Unlock()
}

func (f *Fake) setErr(n int, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log[n].Err = msg
}

// classify tells who is asking and at which turn, from the raw body: a
// child's system prompt carries childMarker; the turn is one more than the
// number of tool results already in the conversation's tool rounds.
func classify(body []byte) Request {
	req := Request{Role: RoleParent, Index: -1, Turn: 1}
	// brood's explore children say so in their system prompt; any other
	// agent's subagent is known by its task's tag with none of the
	// parent's Task call ids in its conversation.
	if bytes.Contains(body, []byte(childMarker)) || (taskMarker().Match(body) && !bytes.Contains(body, []byte("toolu_task_"))) {
		req.Role = RoleChild
		if m := taskMarker().FindSubmatch(body); m != nil {
			req.Index, _ = strconv.Atoi(string(m[1]))
		}
	}
	// Anthropic sends tool results as user content blocks; OpenAI as
	// messages with role tool. Either way one round of results means turn 2.
	if bytes.Contains(body, []byte(`"tool_result"`)) || bytes.Contains(body, []byte(`"role":"tool"`)) {
		req.Turn = 2
	}
	return req
}

// script is the scripted conversation.
func script(req Request, k int, readPath, writer string) (fakewire.Reply, error) {
	switch {
	case req.Role == RoleParent && req.Turn == 1 && k > 0:
		r := reply("I'll explore these in parallel.", 3200, int64(40+60*k))
		for i := range k {
			task := map[string]string{
				"subagent_type": "explore",
				"description":   fmt.Sprintf("explore area %d", i),
				"prompt":        fmt.Sprintf("bench-task-%d: read %s and report what it says about area %d, with file:line evidence.", i, readPath, i),
			}
			if writer != "" {
				task = map[string]string{
					"subagent_type": "general-purpose",
					"isolation":     writer,
					"description":   fmt.Sprintf("write area %d", i),
					"prompt":        fmt.Sprintf("bench-task-%d: write %s saying that area %d is documented.", i, WrittenPath(readPath, i), i),
				}
			}
			in, _ := json.Marshal(task)
			r.ToolCalls = append(r.ToolCalls, fakewire.ToolCall{ID: fmt.Sprintf("toolu_task_%04d", i), Name: "Task", Input: string(in)})
		}
		return r, nil
	case req.Role == RoleParent:
		return reply("All subagents reported; the areas are documented in the README.", int64(3400+300*k), 30), nil
	case req.Turn == 1 && writer != "":
		in, _ := json.Marshal(map[string]string{"file_path": WrittenPath(readPath, req.Index), "content": fmt.Sprintf("Area %d is documented.\n", req.Index)})
		return reply("", 1800, 45, fakewire.ToolCall{ID: fmt.Sprintf("toolu_write_%04d", req.Index), Name: "Write", Input: string(in)}), nil
	case req.Turn == 1:
		in, _ := json.Marshal(map[string]string{"file_path": readPath})
		return reply("", 1800, 45, fakewire.ToolCall{ID: fmt.Sprintf("toolu_read_%04d", req.Index), Name: "Read", Input: string(in)}), nil
	default:
		return reply(childAnswer(req.Index), 2100, 200), nil
	}
}

// childAnswer is a report of about 200 tokens (150 words).
func childAnswer(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Area %d: the README documents it.\n\n", i)
	for j := 0; b.Len() < 900; j++ {
		fmt.Fprintf(&b, "- README.md:%d describes step %d of area %d and how it connects to the rest of the project. ", j+1, j, i)
	}
	b.WriteString("\n\nConfidence: high")
	return b.String()
}

// Probe sends one request and waits for the whole response, for the
// loopback round-trip floor. It uses a parent final-turn reply.
func (f *Fake) Probe(ctx context.Context, c *http.Client) error {
	body := `{"model":"bench","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"ok"}]}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.URL+"/v1/messages", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("probe: status %d", resp.StatusCode)
	}
	return nil
}
