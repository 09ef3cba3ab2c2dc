package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// maxMessage bounds one message from a server (a line on stdio, an event
// or a body over HTTP): a server is not trusted to bound its own.
const maxMessage = 32 << 20

// wire carries JSON-RPC messages to a server; what the server sends (on
// its stdout, an SSE stream or a POST's response) goes to the deliver
// function it was made with, and a broken connection to fail.
type wire interface {
	send(ctx context.Context, msg []byte) error
	close() error
}

// message is any JSON-RPC 2.0 message: a request (method and id), a
// notification (method, no id) or a response (id, result or error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// incoming is a message as read: params kept raw.
type incoming struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code)
}

type reply struct {
	result json.RawMessage
	err    error
}

// conn is the client's side of one server's JSON-RPC session: requests
// numbered from 1, each waiting for its response; the server's own
// requests answered (ping, roots/list) or refused; its notifications
// dropped (no handler asked for them).
type conn struct {
	w       wire
	mu      sync.Mutex
	next    int64
	pending map[int64]chan reply
	broken  error
	// answering bounds the server's requests being answered at once; one
	// past it is dropped (the server times it out).
	answering chan struct{}
}

func newConn() *conn {
	return &conn{pending: map[int64]chan reply{}, answering: make(chan struct{}, 8)}
}

// call sends a request and waits for its response or ctx; a cancelled
// call is said to the server (notifications/cancelled).
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	if c.broken != nil {
		c.mu.Unlock()
		return c.broken
	}
	c.next++
	id := c.next
	ch := make(chan reply, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	msg, err := json.Marshal(message{JSONRPC: "2.0", ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method, Params: params})
	if err == nil {
		err = c.w.send(ctx, msg)
	}
	if err != nil {
		c.forget(id)
		return err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return r.err
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(r.result, result); err != nil {
			return fmt.Errorf("%s: the server's result is not what MCP says: %v", method, err)
		}
		return nil
	case <-ctx.Done():
		c.forget(id)
		_ = c.notify(context.WithoutCancel(ctx), "notifications/cancelled", map[string]any{"requestId": id, "reason": ctx.Err().Error()})
		return ctx.Err()
	}
}

func (c *conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *conn) notify(ctx context.Context, method string, params any) error {
	msg, err := json.Marshal(message{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return err
	}
	return c.w.send(ctx, msg)
}

// deliver takes one message from the server. A request of the server's
// is answered on a goroutine of its own: the reply may block on the wire.
func (c *conn) deliver(data []byte) {
	var m incoming
	if err := json.Unmarshal(data, &m); err != nil {
		return // not JSON-RPC: nothing to match it to
	}
	switch {
	case m.Method != "" && len(m.ID) > 0:
		select {
		case c.answering <- struct{}{}:
			go func() {
				defer func() { <-c.answering }()
				c.answer(m)
			}()
		default:
		}
	case m.Method != "":
		// a notification: logging, progress, list changes; none asked for
	default:
		id, ok := parseID(m.ID)
		if !ok {
			return
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch == nil {
			return
		}
		if m.Error != nil {
			ch <- reply{err: m.Error}
			return
		}
		ch <- reply{result: m.Result}
	}
}

// answer replies to the server's request: ping and roots/list (brood
// offers no roots) as MCP's clients must; anything else (sampling,
// elicitation) is a method brood does not serve.
func (c *conn) answer(m incoming) {
	out := message{JSONRPC: "2.0", ID: m.ID}
	switch m.Method {
	case "ping":
		out.Result = json.RawMessage(`{}`)
	case "roots/list":
		out.Result = json.RawMessage(`{"roots":[]}`)
	default:
		out.Error = &rpcError{Code: -32601, Message: "brood does not serve " + m.Method}
	}
	if msg, err := json.Marshal(out); err == nil {
		_ = c.w.send(context.Background(), msg)
	}
}

// unanswered ends the call msg made, if it still waits: the response
// that was to carry its answer ended without it.
func (c *conn) unanswered(msg []byte) {
	var m incoming
	if json.Unmarshal(msg, &m) != nil || m.Method == "" {
		return
	}
	id, ok := parseID(m.ID)
	if !ok {
		return
	}
	c.mu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- reply{err: fmt.Errorf("%s: the MCP server's response ended without its answer", m.Method)}
	}
}

// fail ends every waiting call with err: the connection is gone.
func (c *conn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken == nil {
		c.broken = err
	}
	for id, ch := range c.pending {
		ch <- reply{err: c.broken}
		delete(c.pending, id)
	}
}

// parseID reads a response's id: the number brood sent, or (from a lax
// server) that number as a string.
func parseID(raw json.RawMessage) (int64, bool) {
	raw = bytes.Trim(bytes.TrimSpace(raw), `"`)
	id, err := strconv.ParseInt(string(raw), 10, 64)
	return id, err == nil
}

var errClosed = errors.New("the MCP server closed the connection")
