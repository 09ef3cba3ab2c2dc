package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// streamableWire is MCP's Streamable HTTP transport: each message a POST
// to the endpoint, the server's answer in the POST's response (one JSON
// message, or an SSE stream ending with it), the session named by the
// Mcp-Session-Id the server gave on initialize. The server's own stream
// (a GET) is not opened: brood asks, it is not asked.
type streamableWire struct {
	endpoint string
	client   *http.Client
	headers  map[string]string
	c        *conn

	mu        sync.Mutex
	session   string
	version   string // the negotiated protocol version, sent once known
	lifetime  context.Context
	endStream context.CancelFunc
}

func newStreamable(endpoint string, headers map[string]string, c *conn) *streamableWire {
	life, end := context.WithCancel(context.Background())
	return &streamableWire{endpoint: endpoint, client: http.DefaultClient, headers: headers, c: c, lifetime: life, endStream: end}
}

func (w *streamableWire) setVersion(v string) {
	w.mu.Lock()
	w.version = v
	w.mu.Unlock()
}

func (w *streamableWire) request(ctx context.Context, method string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, w.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range w.headers {
		req.Header.Set(k, v)
	}
	w.mu.Lock()
	if w.session != "" {
		req.Header.Set("Mcp-Session-Id", w.session)
	}
	if w.version != "" {
		req.Header.Set("Mcp-Protocol-Version", w.version)
	}
	w.mu.Unlock()
	return req, nil
}

func (w *streamableWire) send(ctx context.Context, msg []byte) error {
	// A response's stream lasts until the answer or the sender's ctx, and
	// no longer than the session.
	stream, stop := context.WithCancel(w.lifetime)
	release := context.AfterFunc(ctx, stop)
	finish := func() {
		release()
		stop()
		w.c.unanswered(msg)
	}
	req, err := w.request(stream, http.MethodPost, msg)
	if err != nil {
		finish()
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := w.client.Do(req)
	if err != nil {
		finish()
		return err
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		w.mu.Lock()
		if w.session == "" {
			w.session = s
		}
		w.mu.Unlock()
	}
	if resp.StatusCode/100 != 2 {
		finish()
		return httpError(resp)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "text/event-stream" {
		go func() {
			defer finish()
			defer resp.Body.Close()
			_ = readEvents(resp.Body, func(_, data string) bool { w.c.deliver([]byte(data)); return true })
		}()
		return nil
	}
	defer finish()
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxMessage+1))
	if err != nil {
		return err
	}
	if len(b) > maxMessage {
		return fmt.Errorf("the MCP server's response is over %d bytes", maxMessage)
	}
	if resp.StatusCode != http.StatusAccepted && len(bytes.TrimSpace(b)) > 0 {
		w.c.deliver(b)
	}
	return nil
}

// close ends the session (a DELETE, which a server may refuse) and any
// stream still open.
func (w *streamableWire) close() error {
	defer w.endStream()
	w.mu.Lock()
	session := w.session
	w.mu.Unlock()
	if session == "" {
		return nil
	}
	req, err := w.request(context.Background(), http.MethodDelete, nil)
	if err != nil {
		return err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return err
	}
	drain(resp.Body)
	return nil
}

// sseWire is MCP's older HTTP+SSE transport (protocol 2024-11-05): a GET
// stream whose first event names the endpoint to POST messages to, and on
// which every answer comes.
type sseWire struct {
	headers map[string]string
	post    string
	end     context.CancelFunc
}

// connectSSE opens the stream and waits, within ctx, for its endpoint;
// the stream then lasts until close.
func connectSSE(ctx context.Context, endpoint string, headers map[string]string, c *conn) (*sseWire, error) {
	base, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	life, end := context.WithCancel(context.Background())
	defer context.AfterFunc(ctx, end)()
	req, err := http.NewRequestWithContext(life, http.MethodGet, endpoint, nil)
	if err != nil {
		end()
		return nil, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		end()
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		end()
		return nil, httpError(resp)
	}
	found := make(chan string, 1)
	go func() {
		defer resp.Body.Close()
		named := false
		err := readEvents(resp.Body, func(event, data string) bool {
			switch {
			case event == "endpoint" && !named:
				named = true
				found <- data
			case event == "" || event == "message":
				c.deliver([]byte(data))
			}
			return true
		})
		if !named {
			close(found)
		}
		c.fail(errors.Join(errClosed, err))
	}()
	at, ok := <-found
	if !ok {
		end()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errors.New("the SSE stream ended before it named its endpoint")
	}
	rel, err := url.Parse(strings.TrimSpace(at))
	if err != nil {
		end()
		return nil, fmt.Errorf("the SSE stream's endpoint %q: %v", at, err)
	}
	return &sseWire{headers: headers, post: base.ResolveReference(rel).String(), end: end}, nil
}

func (w *sseWire) send(ctx context.Context, msg []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.post, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	for k, v := range w.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return httpError(resp)
	}
	drain(resp.Body)
	return nil
}

func (w *sseWire) close() error {
	w.end()
	return nil
}

// readEvents reads a text/event-stream, calling on with each event's type
// and data until it returns false or the stream ends. A line or an
// event's data over maxMessage ends it with an error.
func readEvents(r io.Reader, on func(event, data string) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), maxMessage)
	var event string
	var data strings.Builder
	has := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if has && !on(event, data.String()) {
				return nil
			}
			event, has = "", false
			data.Reset()
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			event = value
		case "data":
			if data.Len()+len(value) > maxMessage {
				return fmt.Errorf("an SSE event of more than %d bytes", maxMessage)
			}
			if has {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			has = true
		}
	}
	return sc.Err()
}

// httpError is a refused request, with the start of what the server said.
func httpError(resp *http.Response) error {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	msg := strings.TrimSpace(string(b))
	if msg != "" {
		msg = ": " + msg
	}
	return fmt.Errorf("HTTP %s%s", resp.Status, msg)
}

// drain reads what is left of a body (up to a bound) so its connection
// can be reused, and closes it.
func drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	body.Close()
}
