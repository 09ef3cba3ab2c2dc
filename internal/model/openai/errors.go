package openai

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/broodhq/brood/internal/model/provider/retry"
)

// classify turns any attempt error into a retry verdict and a one-line
// message that says what to do.
func (m *Model) classify(err error) retry.Failure {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return m.classifyAPI(apiErr)
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		// Proxies such as OpenRouter report upstream failures inside the
		// stream; another attempt may reach a healthy upstream.
		return retry.Failure{Err: fmt.Errorf("openai: %s reported an error mid-stream: %s", m.cfg.BaseURL, retry.OneLine(streamErr.Message)), Retryable: true, After: -1}
	}
	return retry.Transport("openai", m.cfg.BaseURL, "", err)
}

func (m *Model) classifyAPI(e *sdk.Error) retry.Failure {
	after := time.Duration(-1)
	if e.Response != nil {
		after = retry.ParseRetryAfter(e.Response.Header.Get, time.Now())
	}
	msg := retry.APIMessage(e.Message, e.RawJSON(), e.StatusCode)
	f := retry.Failure{After: after}
	switch s := e.StatusCode; {
	case s == http.StatusUnauthorized:
		f.Err = fmt.Errorf("openai: 401 authentication failed at %s: check %s", m.cfg.BaseURL, m.cfg.KeyEnv)
	case s == http.StatusForbidden:
		f.Err = fmt.Errorf("openai: 403 permission denied: %s: check the key's access to %q", msg, m.cfg.Model)
	case s == http.StatusNotFound:
		f.Err = fmt.Errorf("openai: 404 not found at %s: %s: check the model id %q (pulled/served there?)", m.cfg.BaseURL, msg, m.cfg.Model)
	case s == http.StatusTooManyRequests:
		f.Err = fmt.Errorf("openai: 429 rate limited: %s: wait, or run fewer subagents at once", msg)
		f.Retryable = true
	case s == http.StatusRequestTimeout || s == http.StatusConflict || s >= 500:
		f.Err = fmt.Errorf("openai: %d server error: %s: try again later", s, msg)
		f.Retryable = true
	default:
		f.Err = fmt.Errorf("openai: %d bad request: %s", s, msg)
	}
	return f
}
