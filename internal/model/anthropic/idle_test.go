package anthropic

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/modeltest/providertest"
)

// TestStreamIdleTimeoutPings: a server that sends only pings for longer
// than the idle timeout before its answer (as during a long thinking phase
// or tool input, which stream no text) is not cut off.
func TestStreamIdleTimeoutPings(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		ev := func(name, data string) {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
			fl.Flush()
		}
		ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`)
		// 3s of pings, 50ms apart, against a 2s idle timeout: the server
		// paces its stream as a thinking model does; only a stall of ~2s
		// on the machine could make this look idle.
		for range 60 {
			ev("ping", `{"type": "ping"}`)
			time.Sleep(50 * time.Millisecond)
		}
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"awake"}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`)
		ev("message_stop", `{"type":"message_stop"}`)
	}))
	t.Cleanup(srv.Close)
	m, err := New(Config{Model: "claude-haiku-4-5", APIKey: "k", BaseURL: srv.URL, MaxRetries: -1, StreamIdleTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r := providertest.Stream(m, &model.Request{Messages: []model.Message{model.UserText("hi")}})
	if r.Err != nil || r.Text != "awake" {
		t.Fatalf("text %q, error %v; want the answer after the pings", r.Text, r.Err)
	}
}
