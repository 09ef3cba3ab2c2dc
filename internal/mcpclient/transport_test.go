package mcpclient_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/broodhq/brood/internal/mcpclient"
	"github.com/broodhq/brood/internal/mcpclient/mcptest"
	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/tool"
)

// TestEveryTransportAgainstTheSDKServer: brood's client lists and calls
// the notes server (the official Go SDK's server) over Streamable HTTP
// answering in SSE streams and in JSON, stateless, and the older HTTP+SSE
// transport; a call that breaks the tool's schema is an error result.
func TestEveryTransportAgainstTheSDKServer(t *testing.T) {
	notes := func(*http.Request) *mcp.Server { return mcptest.Notes() }
	for _, tc := range []struct {
		name    string
		kind    string
		handler http.Handler
	}{
		{"streamable, SSE answers", "http", mcp.NewStreamableHTTPHandler(notes, nil)},
		{"streamable, JSON answers", "http", mcp.NewStreamableHTTPHandler(notes, &mcp.StreamableHTTPOptions{JSONResponse: true})},
		{"streamable, stateless", "http", mcp.NewStreamableHTTPHandler(notes, &mcp.StreamableHTTPOptions{Stateless: true})},
		{"HTTP+SSE", "sse", mcp.NewSSEHandler(notes, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			s := mcpclient.Connect(ctx, []mcpspec.Server{{Name: "n", Spec: mcpspec.Spec{Type: tc.kind, URL: srv.URL}}}, mcpclient.Options{})
			if got := names(s.Tools()); got != "mcp__n__echo,mcp__n__has_env,mcp__n__write_note" {
				t.Fatalf("tools = %s (notes %v)", got, s.Notes)
			}
			set := tool.NewSet(s.Tools()...)
			for i := range 3 {
				want := fmt.Sprintf("echo: %d", i)
				if r := set.Run(ctx, nil, "mcp__n__echo", json.RawMessage(fmt.Sprintf(`{"text":"%d"}`, i))); r.IsError || r.Content != want {
					t.Errorf("echo = %+v, want %q", r, want)
				}
			}
			if r := set.Run(ctx, nil, "mcp__n__echo", json.RawMessage(`{"text":7}`)); !r.IsError {
				t.Errorf("echo with a number for its text = %+v", r)
			}
			if err := s.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
}

// rawServer is a Streamable HTTP server written by hand: it asks the
// client for a ping before it answers tools/list, gives its tools in two
// pages, and ends the stream of a call to "drop" without an answer.
func rawServer(t *testing.T, pinged chan<- string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Params struct {
				Cursor string `json:"cursor"`
				Name   string `json:"name"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if m.Method == "" || len(m.ID) == 0 { // a notification, or the answer to the ping
			if m.Method == "" {
				pinged <- string(m.ID) + " " + string(m.Result)
			}
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		bw := bufio.NewWriter(w)
		event := func(v string) { fmt.Fprintf(bw, "event: message\ndata: %s\n\n", v) }
		answer := func(result string) { event(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`) }
		switch {
		case m.Method == "initialize":
			answer(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`)
		case m.Method == "tools/list" && m.Params.Cursor == "":
			event(`{"jsonrpc":"2.0","id":"p1","method":"ping"}`)
			event(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`)
			answer(`{"tools":[{"name":"first","inputSchema":{"type":"object"}}],"nextCursor":"two"}`)
		case m.Method == "tools/list":
			answer(`{"tools":[{"name":"drop"},{"name":"multi","inputSchema":"not a schema"}]}`)
		case m.Method == "tools/call" && m.Params.Name == "multi":
			answer(`{"content":[{"type":"text","text":"a"},{"type":"image","mimeType":"image/png","data":"AAECAw=="},{"type":"resource_link","uri":"file:///x"},{"type":"resource","resource":{"uri":"file:///y","text":"why"}},{"type":"hologram"}]}`)
		case m.Method == "tools/call":
			// "drop": the stream ends with no answer
		}
		bw.Flush()
	}))
}

// TestAHandWrittenServer: the server's ping is answered while the client
// waits for tools/list, both pages of tools are had, every kind of content
// is rendered, a tool with a broken schema gets an object schema, and a
// call whose answer never comes ends in an error, not a hang.
func TestAHandWrittenServer(t *testing.T) {
	pinged := make(chan string, 1)
	srv := rawServer(t, pinged)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s := mcpclient.Connect(ctx, []mcpspec.Server{{Name: "raw", Spec: mcpspec.Spec{Type: "http", URL: srv.URL}}}, mcpclient.Options{})
	defer s.Close()
	if got := names(s.Tools()); got != "mcp__raw__first,mcp__raw__drop,mcp__raw__multi" {
		t.Fatalf("tools = %s (notes %v)", got, s.Notes)
	}
	select {
	case got := <-pinged:
		if got != `"p1" {}` {
			t.Errorf("the ping's answer = %s", got)
		}
	case <-ctx.Done():
		t.Fatal("the server's ping was not answered")
	}
	for _, tl := range s.Tools() {
		if sp := tl.Spec(); !strings.HasPrefix(string(sp.Schema), "{") {
			t.Errorf("%s's schema = %s", sp.Name, sp.Schema)
		}
	}
	set := tool.NewSet(s.Tools()...)
	want := "a\n[image image/png, 4 bytes]\n[resource file:///x]\n[resource file:///y]\nwhy\n[content of an unsupported type]"
	if r := set.Run(ctx, nil, "mcp__raw__multi", json.RawMessage(`{}`)); r.IsError || r.Content != want {
		t.Errorf("multi = %+v, want %q", r, want)
	}
	if r := set.Run(ctx, nil, "mcp__raw__drop", json.RawMessage(`{}`)); !r.IsError || !strings.Contains(r.Content, "without its answer") {
		t.Errorf("drop = %+v", r)
	}
}
