package retry

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/broodhq/brood/internal/model"
)

// hang is an attempt whose server sends the text deltas in text and then
// nothing more until its context ends, the way a server that accepted the
// connection and stopped answering does; the second attempt onwards answers
// when answer is set.
func hang(calls *int, answer bool, text ...string) Attempt {
	return func(ctx context.Context) iter.Seq2[model.Chunk, error] {
		*calls++
		n := *calls
		return func(yield func(model.Chunk, error) bool) {
			if n > 1 && answer {
				yield(model.Chunk{Done: &model.Response{StopReason: "end_turn"}}, nil)
				return
			}
			for _, s := range text {
				if !yield(model.Chunk{TextDelta: s}, nil) {
					return
				}
			}
			<-ctx.Done()
			yield(model.Chunk{}, ctx.Err())
		}
	}
}

// TestStreamIdleTimeout: an attempt that yields nothing for IdleTimeout is
// ended and retried as a lost connection is; when retries run out the error
// says the stream was idle and for how long. Runs in a synctest bubble: the
// timeouts pass in fake time.
func TestStreamIdleTimeout(t *testing.T) {
	classify := func(err error) Failure { return Transport("anthropic", "http://127.0.0.1:1", "", err) }
	tests := []struct {
		name      string
		policy    Policy
		answer    bool
		text      []string
		wantLog   string
		wantCalls int
		wantErr   string
		wantAfter time.Duration
	}{
		{"retried then answered", Policy{MaxRetries: 2, BaseDelay: time.Second, IdleTimeout: 30 * time.Second}, true, nil, "D", 2, "", 30*time.Second + time.Second},
		{"idle after text restarts", Policy{MaxRetries: 2, BaseDelay: time.Second, IdleTimeout: 30 * time.Second}, true, []string{"x"}, "xRD", 2, "", 30*time.Second + time.Second},
		{"gives up with a clear error", Policy{MaxRetries: 1, BaseDelay: time.Second, IdleTimeout: time.Minute}, false, nil, "", 2, "anthropic: no response from http://127.0.0.1:1: no data for 1m0s (stream idle timeout) (gave up after 2 attempts)", 2*time.Minute + time.Second},
		{"default is five minutes", Policy{MaxRetries: -1}, false, nil, "", 1, "anthropic: no response from http://127.0.0.1:1: no data for 5m0s (stream idle timeout)", 5 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				calls := 0
				start := time.Now()
				var log strings.Builder
				var gotErr error
				for c, err := range Stream(t.Context(), tt.policy, hang(&calls, tt.answer, tt.text...), classify) {
					switch {
					case err != nil:
						gotErr = err
					case c.Restart:
						log.WriteString("R")
					case c.Done != nil:
						log.WriteString("D")
					default:
						log.WriteString(c.TextDelta)
					}
				}
				took := time.Since(start)
				if log.String() != tt.wantLog || calls != tt.wantCalls {
					t.Errorf("chunks %q after %d attempts, want %q after %d", log.String(), calls, tt.wantLog, tt.wantCalls)
				}
				if (gotErr == nil) != (tt.wantErr == "") || gotErr != nil && gotErr.Error() != tt.wantErr {
					t.Errorf("error %v, want %q", gotErr, tt.wantErr)
				}
				if gotErr != nil && !errors.As(gotErr, new(*IdleError)) {
					t.Errorf("error %v does not unwrap to an *IdleError", gotErr)
				}
				// Backoff adds up to 25% jitter to BaseDelay.
				if took < tt.wantAfter || took > tt.wantAfter+time.Second/4 {
					t.Errorf("took %v (fake time), want %v", took, tt.wantAfter)
				}
			})
		})
	}
}

// TestStreamIdleTimeoutCountsOnlySilence: a stream that keeps sending is
// never cut, however long it runs, and the consumer's own time per chunk
// is not counted as silence.
func TestStreamIdleTimeoutCountsOnlySilence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		attempt := func(ctx context.Context) iter.Seq2[model.Chunk, error] {
			return func(yield func(model.Chunk, error) bool) {
				for range 10 {
					time.Sleep(50 * time.Second) // fake time: a slow but live server
					if !yield(model.Chunk{TextDelta: "."}, nil) {
						return
					}
				}
				yield(model.Chunk{Done: &model.Response{}}, nil)
			}
		}
		n := 0
		for c, err := range Stream(t.Context(), Policy{MaxRetries: -1, IdleTimeout: time.Minute}, attempt, retryable) {
			if err != nil {
				t.Fatalf("a live stream was cut: %v", err)
			}
			if c.TextDelta != "" {
				time.Sleep(2 * time.Minute) // fake time: a slow consumer
				n++
			}
		}
		if n != 10 {
			t.Errorf("%d chunks, want 10", n)
		}
	})
}

// TestKeepAlive: an attempt whose server keeps sending events that yield
// no chunk (pings, thinking, a long tool input) calls KeepAlive and is not
// cut, however long the silence in chunks; one that stops calling it is.
func TestKeepAlive(t *testing.T) {
	for _, alive := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			attempt := func(ctx context.Context) iter.Seq2[model.Chunk, error] {
				return func(yield func(model.Chunk, error) bool) {
					for range 20 {
						select {
						case <-ctx.Done():
							yield(model.Chunk{}, ctx.Err())
							return
						case <-time.After(20 * time.Second): // fake time: a ping
						}
						if alive {
							KeepAlive(ctx)
						}
					}
					yield(model.Chunk{Done: &model.Response{}}, nil)
				}
			}
			var gotErr error
			for _, err := range Stream(t.Context(), Policy{MaxRetries: -1, IdleTimeout: time.Minute}, attempt, retryable) {
				if err != nil {
					gotErr = err
				}
			}
			if alive && gotErr != nil {
				t.Errorf("a stream kept alive for 400s was cut: %v", gotErr)
			}
			if !alive && !errors.As(gotErr, new(*IdleError)) {
				t.Errorf("a stream with no sign of life: %v, want an *IdleError", gotErr)
			}
		})
	}
	KeepAlive(context.Background()) // outside an attempt: nothing to do
}
