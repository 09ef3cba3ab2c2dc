package retry

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/broodhq/brood/internal/model"
)

var errFlaky = errors.New("flaky")

// script returns an Attempt whose n-th call yields the text deltas in
// steps[n] and then fails with errFlaky, or succeeds when fail is false.
type step struct {
	text []string
	fail bool
}

func script(calls *int, steps ...step) Attempt {
	return func(context.Context) iter.Seq2[model.Chunk, error] {
		s := steps[min(*calls, len(steps)-1)]
		*calls++
		return func(yield func(model.Chunk, error) bool) {
			for _, t := range s.text {
				if !yield(model.Chunk{TextDelta: t}, nil) {
					return
				}
			}
			if s.fail {
				yield(model.Chunk{}, errFlaky)
				return
			}
			yield(model.Chunk{Done: &model.Response{StopReason: "end_turn"}}, nil)
		}
	}
}

func retryable(err error) Failure { return Failure{Err: err, Retryable: true, After: -1} }

func TestStream(t *testing.T) {
	fast := Policy{MaxRetries: 2, BaseDelay: time.Nanosecond}
	tests := []struct {
		name      string
		policy    Policy
		steps     []step
		classify  Classify
		wantLog   string // chunks seen: text, R for restart, D for done
		wantCalls int
		wantErr   string
	}{
		{"success", fast, []step{{text: []string{"a", "b"}}}, retryable, "abD", 1, ""},
		{"fail before text retries silently", fast, []step{{fail: true}, {text: []string{"a"}}}, retryable, "aD", 2, ""},
		{"fail after text restarts", fast, []step{{text: []string{"x"}, fail: true}, {text: []string{"a"}}}, retryable, "xRaD", 2, ""},
		{"gives up after MaxRetries", fast, []step{{text: []string{"x"}, fail: true}}, retryable, "xRxRx", 3, "flaky (gave up after 3 attempts)"},
		{"permanent error is not retried", fast, []step{{fail: true}}, func(err error) Failure { return Failure{Err: err, After: -1} }, "", 1, "flaky"},
		{"negative MaxRetries never retries", Policy{MaxRetries: -1}, []step{{fail: true}, {}}, retryable, "", 1, "flaky"},
		{"retry-after beyond MaxDelay fails at once", Policy{MaxDelay: time.Second}, []step{{fail: true}, {}},
			func(err error) Failure { return Failure{Err: err, Retryable: true, After: time.Hour} }, "", 1, "server asked to wait 1h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			var log strings.Builder
			var gotErr error
			for c, err := range Stream(context.Background(), tt.policy, script(&calls, tt.steps...), tt.classify) {
				if err != nil {
					gotErr = err
					break
				}
				switch {
				case c.Restart:
					log.WriteString("R")
				case c.Done != nil:
					log.WriteString("D")
				default:
					log.WriteString(c.TextDelta)
				}
			}
			if log.String() != tt.wantLog || calls != tt.wantCalls {
				t.Errorf("chunks %q after %d calls, want %q after %d", log.String(), calls, tt.wantLog, tt.wantCalls)
			}
			if tt.wantErr == "" && gotErr != nil || tt.wantErr != "" && (gotErr == nil || !strings.Contains(gotErr.Error(), tt.wantErr)) {
				t.Errorf("error = %v, want %q", gotErr, tt.wantErr)
			}
			if gotErr != nil && !errors.Is(gotErr, errFlaky) {
				t.Errorf("error %v does not wrap the cause", gotErr)
			}
		})
	}
}

// TestStreamHonoursRetryAfter runs in a synctest bubble, so the waits are
// on a fake clock: the retry must come exactly when the server said.
func TestStreamHonoursRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		var times []time.Time
		attempt := func(ctx context.Context) iter.Seq2[model.Chunk, error] {
			times = append(times, time.Now())
			return script(&calls, step{fail: true}, step{})(ctx)
		}
		classify := func(err error) Failure { return Failure{Err: err, Retryable: true, After: 7 * time.Second} }
		for _, err := range Stream(context.Background(), Policy{BaseDelay: time.Millisecond}, attempt, classify) {
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(times) != 2 || times[1].Sub(times[0]) != 7*time.Second {
			t.Fatalf("attempts at %v, want two 7s apart", times)
		}
	})
}

func TestStreamCancelledDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		classify := func(err error) Failure {
			time.AfterFunc(time.Second, cancel) // cancel while Stream waits 1 minute
			return Failure{Err: err, Retryable: true, After: time.Minute}
		}
		var got error
		for _, err := range Stream(ctx, Policy{MaxDelay: time.Hour}, script(&calls, step{fail: true}, step{}), classify) {
			got = err
		}
		if !errors.Is(got, context.Canceled) || calls != 1 {
			t.Fatalf("error %v after %d calls, want context.Canceled after 1", got, calls)
		}
	})
}

func TestDelay(t *testing.T) {
	p := Policy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	for n, want := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		want *= time.Millisecond
		if d := p.Delay(n); d < want || d > want+want/4 {
			t.Errorf("Delay(%d) = %v, want %v plus up to 25%%", n, d, want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		header http.Header
		want   time.Duration
	}{
		{http.Header{}, -1},
		{http.Header{"Retry-After": {"0"}}, 0},
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"3"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(10 * time.Second).Format(time.RFC1123)}}, 10 * time.Second},
		{http.Header{"Retry-After": {"soon"}}, -1},
	}
	for _, tt := range tests {
		if got := ParseRetryAfter(tt.header.Get, now); got != tt.want {
			t.Errorf("ParseRetryAfter(%v) = %v, want %v", tt.header, got, tt.want)
		}
	}
}
