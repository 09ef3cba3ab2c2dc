package modeltest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/anthropic"
	"github.com/broodhq/brood/internal/model/modeltest"
	"github.com/broodhq/brood/internal/model/openai"
)

func TestResponderLatencyAndRecording(t *testing.T) {
	const latency = 30 * time.Millisecond
	srv := modeltest.NewAnthropic(t, modeltest.Reply{Text: "scripted first"})
	srv.SetLatency(latency)
	srv.SetResponder(func(r modeltest.Recorded) modeltest.Reply {
		return modeltest.Reply{Text: fmt.Sprintf("answer %d", r.N)}
	})
	m, err := anthropic.New(anthropic.Config{Model: "claude-haiku-4-5", APIKey: "k", BaseURL: srv.URL, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	var wg sync.WaitGroup
	texts := make(chan string, n)
	for i := range n {
		wg.Go(func() {
			start := time.Now()
			resp, err := model.Collect(context.Background(), m, &model.Request{Messages: []model.Message{model.UserText(fmt.Sprint(i))}}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			if d := time.Since(start); d < latency {
				t.Errorf("answered in %v, before the %v latency", d, latency)
			}
			texts <- resp.Message.Text()
		})
	}
	wg.Wait()
	close(texts)
	seen := map[string]bool{}
	for s := range texts {
		seen[s] = true
	}
	if !seen["scripted first"] || len(seen) != n {
		t.Errorf("answers = %v, want the scripted one and %d from the responder", seen, n-1)
	}
	recs := srv.Requests()
	if len(recs) != n {
		t.Fatalf("recorded %d requests, want %d", len(recs), n)
	}
	for i, r := range recs {
		if r.N != i || r.At.IsZero() || r.Path != "/v1/messages" || len(r.Body) == 0 {
			t.Errorf("record %d = N %d at %v path %s body %d bytes", i, r.N, r.At, r.Path, len(r.Body))
		}
		if i > 0 && r.At.Before(recs[i-1].At) {
			t.Errorf("records out of arrival order")
		}
	}
}

func TestCancelDuringLatency(t *testing.T) {
	srv := modeltest.NewOpenAI(t)
	arrived := make(chan struct{})
	srv.SetResponder(func(modeltest.Recorded) modeltest.Reply {
		close(arrived)
		return modeltest.Reply{Text: "late", Latency: time.Hour}
	})
	m, err := openai.New(openai.Config{Model: "m", BaseURL: srv.URL, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := model.Collect(ctx, m, &model.Request{Messages: []model.Message{model.UserText("x")}}, nil)
		done <- err
	}()
	// Wait until the request is in the server, then give up on it.
	<-arrived
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}
