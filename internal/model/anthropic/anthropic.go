// Package anthropic adapts Anthropic's Messages API (through the official
// anthropic-sdk-go) to brood's model.Model. It streams text as it arrives,
// returns the whole assistant message (text, tool calls, signed thinking) at
// the end, places prompt-cache breakpoints, and retries transient failures
// under one policy (see package retry).
//
// The package reads no environment variables: the provider resolver passes
// keys and URLs in. It must never import the agent loop or tools.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/provider"
	"github.com/broodhq/brood/internal/model/provider/retry"
)

// DefaultBaseURL is Anthropic's public API.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultMaxTokens is the output cap used when neither the request nor the
// config sets one. It fits every current Claude model's output limit.
const DefaultMaxTokens = 16384

// Config configures one Anthropic model.
type Config struct {
	// Model is the model id without the provider prefix, e.g. claude-sonnet-5-5.
	Model string
	// APIKey is sent as x-api-key. It is required.
	APIKey string
	// BaseURL overrides DefaultBaseURL (ANTHROPIC_BASE_URL, a proxy, a test server).
	BaseURL string
	// HTTPClient is used for every request; nil means a default client.
	HTTPClient *http.Client
	// MaxRetries, RetryDelay and MaxRetryDelay make up the retry policy; see
	// retry.Policy for the meaning of zero values.
	MaxRetries    int
	RetryDelay    time.Duration
	MaxRetryDelay time.Duration
	// StreamIdleTimeout ends and retries an attempt that receives nothing
	// for this long (retry.Policy.IdleTimeout; zero means its default).
	StreamIdleTimeout time.Duration
	// MaxTokens is the default output cap; Request.MaxTokens wins when set.
	MaxTokens int
}

// Model is an Anthropic model. It is safe for concurrent use.
type Model struct {
	cfg    Config
	client sdk.Client
	policy retry.Policy
}

// Adapter builds the model an endpoint names (provider.Adapters).
func Adapter(e provider.Endpoint) (model.Model, error) {
	return provider.Model(New(Config{Model: e.Model, APIKey: e.APIKey, BaseURL: e.BaseURL, HTTPClient: e.HTTPClient, StreamIdleTimeout: e.IdleTimeout}))
}

// New checks cfg and builds a client. It does not contact the server.
func New(cfg Config) (*Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("anthropic: no model id given: use e.g. anthropic/claude-sonnet-5-5")
	}
	if cfg.APIKey == "" {
		return nil, errors.New("anthropic: no API key: export ANTHROPIC_API_KEY")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	opts := []option.RequestOption{
		// The SDK would otherwise read ANTHROPIC_* variables itself; brood
		// resolves settings in one place (flag > env > file) and passes
		// them in, so the environment must not override them here.
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(httpClient),
		option.WithHeader("x-api-key", cfg.APIKey),
		option.WithBaseURL(cfg.BaseURL + "/"),
		// brood retries itself, so that failures in the middle of a stream
		// and before it follow one policy whose delays tests can shorten.
		option.WithMaxRetries(0),
		// Every byte of a response, pings included, resets the attempt's
		// stream idle timeout (retry.Policy.IdleTimeout).
		option.WithMiddleware(retry.KeepAliveMiddleware),
	}
	return &Model{
		cfg:    cfg,
		client: sdk.NewClient(opts...),
		policy: retry.Policy{MaxRetries: cfg.MaxRetries, BaseDelay: cfg.RetryDelay, MaxDelay: cfg.MaxRetryDelay, IdleTimeout: cfg.StreamIdleTimeout},
	}, nil
}

// Name returns "anthropic/<model id>".
func (m *Model) Name() string { return "anthropic/" + m.cfg.Model }

// Stream sends req to the Messages API under the retry policy
// (retry.Request: text deltas, then the whole message; a Restart chunk
// before a retry that follows text).
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	params, err := buildParams(m.cfg, req)
	return retry.Request(ctx, m.policy, params, err, m.attempt, m.classify)
}

// attempt sends params once and adapts the Messages API's SSE events.
func (m *Model) attempt(ctx context.Context, params sdk.MessageNewParams) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		// Breaking out of the consumer's loop must release the connection,
		// so the request gets its own cancellable context.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream := m.client.Messages.NewStreaming(ctx, params)
		defer stream.Close()
		var acc sdk.Message
		stopped := false
		for stream.Next() {
			ev := stream.Current()
			if err := acc.Accumulate(ev); err != nil {
				yield(model.Chunk{}, &malformedError{err: err})
				return
			}
			switch ev.Type {
			case "content_block_delta":
				if ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
					if !yield(model.Chunk{TextDelta: ev.Delta.Text}, nil) {
						return
					}
				}
			case "content_block_stop":
				if i := int(ev.Index); i < len(acc.Content) && acc.Content[i].Type != "text" {
					if p, ok := serverPart(acc.Content[i]); ok {
						if !yield(model.Chunk{Block: &p}, nil) {
							return
						}
					}
				}
			case "message_stop":
				stopped = true
			}
		}
		if err := stream.Err(); err != nil {
			yield(model.Chunk{}, err)
			return
		}
		if !stopped {
			yield(model.Chunk{}, retry.ErrStreamEnded)
			return
		}
		resp, err := toResponse(&acc)
		if err != nil {
			yield(model.Chunk{}, &malformedError{err: err})
			return
		}
		yield(model.Chunk{Done: resp}, nil)
	}
}

// toResponse converts the accumulated SDK message to brood's form, keeping
// thinking signatures so the next request can send them back verbatim.
func toResponse(msg *sdk.Message) (*model.Response, error) {
	out := model.Message{Role: model.RoleAssistant}
	for _, b := range msg.Content {
		if p, ok := serverPart(b); ok {
			out.Content = append(out.Content, p)
			continue
		}
		switch b.Type {
		case "text":
			out.Content = append(out.Content, model.Part{Type: model.PartText, Text: b.Text})
		case "tool_use":
			input := b.Input
			if len(input) == 0 {
				input = []byte("{}")
			}
			out.Content = append(out.Content, model.Part{
				Type: model.PartToolUse, ID: b.ID, Name: b.Name,
				Input: append([]byte(nil), input...),
			})
		case "thinking":
			out.Content = append(out.Content, model.Part{Type: model.PartThinking, Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			// Opaque, and required verbatim in the next request of a tool
			// loop: dropping it makes the API refuse the conversation.
			out.Content = append(out.Content, model.Part{Type: model.PartRedactedThinking, Data: b.Data})
		default:
			// Other server-side blocks (brood offers no other server
			// tool) are dropped.
		}
	}
	for _, p := range out.Content {
		if p.Type == model.PartToolUse && !json.Valid(p.Input) {
			return nil, fmt.Errorf("tool_use %s has invalid input JSON %q", p.ID, p.Input)
		}
	}
	return &model.Response{
		Message: out,
		Usage: model.Usage{
			Input:      msg.Usage.InputTokens,
			Output:     msg.Usage.OutputTokens,
			CacheRead:  msg.Usage.CacheReadInputTokens,
			CacheWrite: msg.Usage.CacheCreationInputTokens,
			// (web fetch is brood's own tool, never the server's)
			WebSearches: msg.Usage.ServerToolUse.WebSearchRequests,
		},
		StopReason: string(msg.StopReason),
		Model:      string(msg.Model),
	}, nil
}
