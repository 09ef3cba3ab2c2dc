package openai

import (
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/modeltest"
)

// TestStreamIdleTimeout points the model at a loopback server that accepts
// the connection and never answers: each attempt ends after the idle
// timeout, is retried as a lost connection is, and the run ends with one
// line saying what happened (today's main waited forever).
func TestStreamIdleTimeout(t *testing.T) {
	srv := modeltest.NewSilent(t)
	m, err := New(Config{Model: "gpt-5", APIKey: "k", BaseURL: srv.URL, MaxRetries: 1, RetryDelay: time.Millisecond, StreamIdleTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, m, &model.Request{Messages: []model.Message{model.UserText("hi")}})
	want := "openai: no response from " + srv.URL + ": no data for 200ms (stream idle timeout) (gave up after 2 attempts)"
	if r.err == nil || r.err.Error() != want || strings.Contains(r.err.Error(), "\n") {
		t.Fatalf("error = %v, want %q", r.err, want)
	}
	for i := range 2 {
		select {
		case <-srv.Conns:
		case <-t.Context().Done():
			t.Fatalf("the server saw %d connection(s), want 2 (one per attempt)", i)
		}
	}
}
