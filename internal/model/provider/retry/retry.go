// Package retry is the one retry loop the model providers share. The SDKs
// retry some failures on their own, but only before a stream starts and with
// delays a test cannot shorten; brood turns those off and retries here, so a
// 429, a 5xx, a malformed stream and a connection reset mid-stream all follow
// the same bounded, configurable policy and end the same way: a successful
// retry or one clear error.
//
// This package knows nothing about HTTP or any SDK: each provider classifies
// its own errors into a Failure. It must never import a provider package.
package retry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/broodhq/brood/internal/model"
)

// Defaults used where a Policy field is zero.
const (
	DefaultMaxRetries = 4
	DefaultBaseDelay  = 500 * time.Millisecond
	DefaultMaxDelay   = 60 * time.Second
	// DefaultIdleTimeout is how long an attempt may go without a chunk
	// (before its first one included) before it counts as a lost
	// connection: a server that accepts and never answers must not hang
	// brood. Thinking models stream their thinking, so a silent minute is
	// already unusual; five leave room for a slow local model's first token.
	DefaultIdleTimeout = 5 * time.Minute
)

// Policy bounds how often and how patiently a request is retried.
type Policy struct {
	// MaxRetries is how many times a request is sent again after its first
	// attempt failed. Zero means DefaultMaxRetries; negative means never.
	MaxRetries int
	// BaseDelay is the wait before the first retry; it doubles each retry.
	// Zero means DefaultBaseDelay. A server's retry-after replaces it.
	BaseDelay time.Duration
	// MaxDelay caps the computed backoff. A server that asks for a longer
	// wait than this is not retried: the caller gets the error at once
	// instead of a silent multi-minute stall. Zero means DefaultMaxDelay.
	MaxDelay time.Duration
	// IdleTimeout ends an attempt that yields nothing for this long (the
	// time the consumer spends on a chunk does not count); the attempt is
	// then retried as a lost connection is. Zero means DefaultIdleTimeout;
	// negative means never.
	IdleTimeout time.Duration
}

func (p Policy) idleTimeout() time.Duration {
	if p.IdleTimeout == 0 {
		return DefaultIdleTimeout
	}
	return p.IdleTimeout
}

func (p Policy) maxRetries() int {
	switch {
	case p.MaxRetries < 0:
		return 0
	case p.MaxRetries == 0:
		return DefaultMaxRetries
	}
	return p.MaxRetries
}

// Delay is the backoff before retry number n (0-based), before any
// retry-after from the server is taken into account. It adds up to 25%
// jitter so that parallel subagents hitting the same limit do not retry in
// lockstep.
func (p Policy) Delay(n int) time.Duration {
	base, ceiling := p.BaseDelay, p.MaxDelay
	if base <= 0 {
		base = DefaultBaseDelay
	}
	if ceiling <= 0 {
		ceiling = DefaultMaxDelay
	}
	d := base
	for i := 0; i < n && d < ceiling; i++ {
		d *= 2
	}
	d = min(d, ceiling)
	if q := int64(d / 4); q > 0 {
		d += time.Duration(rand.Int64N(q))
	}
	return d
}

func (p Policy) ceiling() time.Duration {
	if p.MaxDelay <= 0 {
		return DefaultMaxDelay
	}
	return p.MaxDelay
}

// Failure is a provider's verdict on one failed attempt.
type Failure struct {
	// Err is the error to report if the request is not retried; it should
	// already be the provider's clear one-line message.
	Err error
	// Retryable says whether sending the same request again may succeed.
	Retryable bool
	// After is the wait the server asked for (retry-after); negative when
	// it asked for none.
	After time.Duration
}

// Attempt sends the request once and streams its chunks. It must end with a
// Done chunk or an error.
type Attempt func(ctx context.Context) iter.Seq2[model.Chunk, error]

// Classify turns an attempt's error into a Failure. It is never called with a
// context error of the caller's own context.
type Classify func(err error) Failure

// Request streams one request under policy p: params is the request as a
// provider built it, with the error building it (then the stream's only
// item); each attempt sends it again.
func Request[P any](ctx context.Context, p Policy, params P, err error, send func(context.Context, P) iter.Seq2[model.Chunk, error], classify Classify) iter.Seq2[model.Chunk, error] {
	if err != nil {
		return func(yield func(model.Chunk, error) bool) { yield(model.Chunk{}, err) }
	}
	return Stream(ctx, p, func(ctx context.Context) iter.Seq2[model.Chunk, error] { return send(ctx, params) }, classify)
}

// Stream runs attempt under policy p. Chunks pass through as they arrive.
// When an attempt fails after it already yielded text, Stream yields
// Chunk{Restart: true} before retrying so the consumer drops the partial
// text. When retries are exhausted or the failure is permanent, the last
// Failure's Err is yielded, with the number of attempts added when there
// was more than one.
func Stream(ctx context.Context, p Policy, attempt Attempt, classify Classify) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		limit := p.maxRetries()
		for n := 0; ; n++ {
			started, ok, failErr := runAttempt(ctx, p.idleTimeout(), attempt, yield)
			if ok {
				return
			}
			if ctx.Err() != nil {
				yield(model.Chunk{}, ctx.Err())
				return
			}
			f := classify(failErr)
			if f.Err == nil {
				f.Err = failErr
			}
			if !f.Retryable || n >= limit {
				yield(model.Chunk{}, withAttempts(f.Err, n+1))
				return
			}
			wait := p.Delay(n)
			if f.After >= 0 {
				if f.After > p.ceiling() {
					yield(model.Chunk{}, &waitTooLongError{err: f.Err, after: f.After})
					return
				}
				wait = f.After
			}
			if started && !yield(model.Chunk{Restart: true}, nil) {
				return
			}
			if err := sleep(ctx, wait); err != nil {
				yield(model.Chunk{}, err)
				return
			}
		}
	}
}

// runAttempt runs one attempt, passing its chunks to yield, under an idle
// watchdog: when idle passes without a chunk the attempt's context is
// cancelled and its error is an *IdleError. ok means the caller is done
// (a Done chunk went through, or the consumer stopped); otherwise failErr
// says why the attempt failed and started whether it had yielded text.
func runAttempt(ctx context.Context, idle time.Duration, attempt Attempt, yield func(model.Chunk, error) bool) (started, ok bool, failErr error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var timer *time.Timer
	if idle > 0 {
		timer = time.AfterFunc(idle, func() { cancel(&IdleError{After: idle}) })
		defer timer.Stop()
		actx = context.WithValue(actx, watchdogKey{}, &watchdog{timer: timer, idle: idle})
	}
	for c, err := range attempt(actx) {
		if err != nil {
			failErr = err
			break
		}
		if timer != nil && !timer.Stop() {
			break // the watchdog fired as this chunk arrived
		}
		if c.TextDelta != "" {
			started = true
		}
		if !yield(c, nil) || c.Done != nil {
			return started, true, nil
		}
		if timer != nil {
			timer.Reset(idle)
		}
	}
	var ie *IdleError
	if ctx.Err() == nil && errors.As(context.Cause(actx), &ie) {
		return started, false, ie
	}
	if failErr == nil {
		failErr = model.ErrNoDone
	}
	return started, false, failErr
}

type watchdogKey struct{}

type watchdog struct {
	timer *time.Timer
	idle  time.Duration
}

// KeepAlive tells the idle watchdog of the attempt whose context ctx is
// that the server sent something, though nothing the attempt yields.
func KeepAlive(ctx context.Context) {
	if w, ok := ctx.Value(watchdogKey{}).(*watchdog); ok {
		w.timer.Reset(w.idle)
	}
}

// KeepAliveMiddleware is an SDK middleware (both SDKs' option.Middleware
// have this shape) that counts every byte of a response as a sign of life
// for the idle watchdog of the attempt the request belongs to: pings
// (which the SDKs swallow), thinking and a long tool input stream no text,
// and must not be taken for silence.
func KeepAliveMiddleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	resp, err := next(req)
	if err != nil || resp == nil || resp.Body == nil {
		return resp, err
	}
	if w, ok := req.Context().Value(watchdogKey{}).(*watchdog); ok {
		w.timer.Reset(w.idle) // the headers came
		resp.Body = &aliveBody{ReadCloser: resp.Body, w: w}
	}
	return resp, err
}

type aliveBody struct {
	io.ReadCloser
	w *watchdog
}

func (b *aliveBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.timer.Reset(b.w.idle)
	}
	return n, err
}

// IdleError is an attempt that yielded nothing for After: a server that
// accepted the request and stopped answering. It is a timeout (net.Error),
// so providers classify it as a lost connection and it is retried.
type IdleError struct{ After time.Duration }

func (e *IdleError) Error() string {
	return "no data for " + e.After.String() + " (stream idle timeout)"
}

// Timeout makes an IdleError a net.Error timeout.
func (e *IdleError) Timeout() bool { return true }

// Temporary is part of net.Error.
func (e *IdleError) Temporary() bool { return true }

// sleep waits d or until ctx ends, whichever is first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// attemptsError adds "after N attempts" to a final error without hiding the
// cause from errors.Is/As.
type attemptsError struct {
	err      error
	attempts int
}

func (e *attemptsError) Error() string {
	return e.err.Error() + " (gave up after " + strconv.Itoa(e.attempts) + " attempts)"
}

func (e *attemptsError) Unwrap() error { return e.err }

func withAttempts(err error, attempts int) error {
	if attempts <= 1 {
		return err
	}
	return &attemptsError{err: err, attempts: attempts}
}

type waitTooLongError struct {
	err   error
	after time.Duration
}

func (e *waitTooLongError) Error() string {
	return e.err.Error() + " (server asked to wait " + e.after.String() + ", longer than the retry limit)"
}

func (e *waitTooLongError) Unwrap() error { return e.err }

// ParseRetryAfter reads the retry-after-ms and retry-after headers (seconds
// or an HTTP date) through get, returning -1 when neither is usable.
func ParseRetryAfter(get func(string) string, now time.Time) time.Duration {
	if v := strings.TrimSpace(get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(get("Retry-After"))
	if v == "" {
		return -1
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := time.Parse(time.RFC1123, v); err == nil {
		return max(0, t.Sub(now))
	}
	return -1
}

// ErrStreamEnded marks a stream that closed cleanly but before its final
// event: a proxy or server that gave up mid-response. It is retryable.
var ErrStreamEnded = errors.New("response stream ended before the final event")

// IsRefused reports whether err is a refused TCP connection. Providers do not
// retry it: a local server that is not running will not start by itself, and
// the user should hear so at once.
func IsRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

// IsTransient reports whether err is a transport failure that a fresh
// attempt may not meet again: a reset or dropped connection, a body cut
// short, or a stream that ended early.
func IsTransient(err error) bool {
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, ErrStreamEnded) || errors.Is(err, model.ErrNoDone) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	// net/http reports some cut connections only as text.
	msg := err.Error()
	return strings.Contains(msg, "connection reset") || strings.Contains(msg, "unexpected EOF") ||
		strings.Contains(msg, "server closed idle connection") || strings.Contains(msg, "broken pipe")
}

// OneLine collapses whitespace and caps length, so that a server's error
// body cannot turn a provider's one-line error into a page of text.
func OneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// Transport classifies an error that happened below the API (no HTTP status
// from the provider): a refused connection (not retried: nothing listens),
// a connection lost mid-way, or a stream whose data was not JSON (both
// retried). provider names the adapter in the message; hint says what to
// check when nothing listens (e.g. "check ANTHROPIC_BASE_URL").
func Transport(provider, baseURL, hint string, err error) Failure {
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case IsRefused(err):
		msg := fmt.Sprintf("%s: server at %s refused the connection: is it running?", provider, baseURL)
		if hint != "" {
			msg += " " + hint
		}
		return Failure{Err: errors.New(msg), After: -1}
	case errors.As(err, new(*IdleError)):
		return Failure{Err: fmt.Errorf("%s: no response from %s: %w", provider, baseURL, err), Retryable: true, After: -1}
	case IsTransient(err):
		return Failure{Err: fmt.Errorf("%s: connection to %s lost: %v", provider, baseURL, err), Retryable: true, After: -1}
	case errors.As(err, &syntaxErr) || errors.As(err, &typeErr):
		return Failure{Err: fmt.Errorf("%s: malformed response stream from %s: %v", provider, baseURL, err), Retryable: true, After: -1}
	}
	return Failure{Err: fmt.Errorf("%s: request to %s failed: %v", provider, baseURL, err), After: -1}
}

// APIMessage is the one-line text of an API error: its message, else its
// raw JSON, else the status text.
func APIMessage(message, rawJSON string, status int) string {
	msg := message
	if msg == "" {
		msg = rawJSON
	}
	msg = OneLine(msg)
	if msg == "" {
		msg = http.StatusText(status)
	}
	return msg
}
