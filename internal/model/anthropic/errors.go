package anthropic

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/broodhq/brood/internal/model/provider/retry"
)

// malformedError is a stream whose events did not parse or did not fit
// together. A proxy that mangled one response may not mangle the next, so it
// is retried.
type malformedError struct{ err error }

func (e *malformedError) Error() string { return "malformed response stream: " + e.err.Error() }
func (e *malformedError) Unwrap() error { return e.err }

// classify turns any attempt error into a retry verdict and a one-line
// message that says what to do.
func (m *Model) classify(err error) retry.Failure {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return m.classifyAPI(apiErr)
	}
	var mal *malformedError
	if errors.As(err, &mal) {
		return retry.Failure{Err: fmt.Errorf("anthropic: malformed response stream from %s: %w", m.cfg.BaseURL, mal.err), Retryable: true, After: -1}
	}
	return retry.Transport("anthropic", m.cfg.BaseURL, "check ANTHROPIC_BASE_URL", err)
}

func (m *Model) classifyAPI(e *sdk.Error) retry.Failure {
	after := time.Duration(-1)
	if e.Response != nil {
		after = retry.ParseRetryAfter(e.Response.Header.Get, time.Now())
	}
	msg := retry.APIMessage(e.Message, e.RawJSON(), e.StatusCode)
	status := e.StatusCode
	etype := string(e.Type())
	// An error event inside a 200 stream carries its kind only in its type.
	if status == http.StatusOK || status == 0 {
		switch etype {
		case "overloaded_error":
			status = 529
		case "rate_limit_error":
			status = http.StatusTooManyRequests
		case "api_error":
			status = http.StatusInternalServerError
		default:
			status = http.StatusBadRequest
		}
	}
	f := retry.Failure{After: after}
	switch {
	case status == http.StatusUnauthorized:
		f.Err = fmt.Errorf("anthropic: 401 authentication failed: check ANTHROPIC_API_KEY")
	case status == http.StatusForbidden:
		f.Err = fmt.Errorf("anthropic: 403 permission denied: %s: check the key's workspace and model access", msg)
	case status == http.StatusNotFound:
		f.Err = fmt.Errorf("anthropic: 404 not found: %s: check the model id %q or ANTHROPIC_BASE_URL", msg, m.cfg.Model)
	case status == http.StatusRequestEntityTooLarge:
		f.Err = fmt.Errorf("anthropic: 413 request too large: %s: shorten the conversation", msg)
	case status == http.StatusTooManyRequests:
		f.Err = fmt.Errorf("anthropic: 429 rate limited: %s: wait, or run fewer subagents at once", msg)
		f.Retryable = true
	case status == 529:
		f.Err = fmt.Errorf("anthropic: 529 overloaded: %s: try again later", msg)
		f.Retryable = true
	case status == http.StatusRequestTimeout || status == http.StatusConflict || status >= 500:
		f.Err = fmt.Errorf("anthropic: %d server error: %s: try again later", status, msg)
		f.Retryable = true
	default:
		f.Err = fmt.Errorf("anthropic: %d bad request: %s", status, msg)
	}
	return f
}
