// Package openai adapts any OpenAI-compatible Chat Completions server
// (OpenAI itself, OpenRouter, Ollama, vLLM, llama.cpp's server, LM Studio)
// to brood's model.Model through the official openai-go SDK. It streams
// text, accumulates streamed tool-call deltas by index, reports cached
// prompt tokens, and retries transient failures under one policy (see
// package retry).
//
// The package reads no environment variables: the provider resolver passes
// keys and URLs in. It must never import the agent loop or tools.
package openai

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/provider"
	"github.com/broodhq/brood/internal/model/provider/retry"
)

// DefaultBaseURL is OpenAI's public API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures one model on an OpenAI-compatible server.
type Config struct {
	// Model is the model id as the server knows it, e.g. gpt-5 or qwen3:8b.
	Model string
	// Name is what Name() reports, e.g. "ollama/qwen3:8b"; empty means
	// "openai/<Model>".
	Name string
	// APIKey is sent as a bearer token. It may be empty only when BaseURL
	// is set: local servers take no key.
	APIKey string
	// BaseURL overrides DefaultBaseURL; it includes the /v1 path.
	BaseURL string
	// KeyEnv names the variable the key comes from, for error messages
	// (OPENAI_API_KEY when empty).
	KeyEnv string
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
	// Zero sends none and leaves the server's default.
	MaxTokens int
	// Reasoning forces sending reasoning_effort even for a model id that
	// is not a known reasoning family (o1, o3, o4, gpt-5).
	Reasoning bool
}

// Model is a model on an OpenAI-compatible server. It is safe for
// concurrent use.
type Model struct {
	cfg    Config
	chat   sdk.ChatCompletionService
	policy retry.Policy
}

// Adapter builds the model an endpoint names (provider.Adapters).
func Adapter(e provider.Endpoint) (model.Model, error) {
	return provider.Model(New(Config{Model: e.Model, Name: e.Name, APIKey: e.APIKey, KeyEnv: e.KeyEnv, BaseURL: e.BaseURL, HTTPClient: e.HTTPClient, StreamIdleTimeout: e.IdleTimeout}))
}

// New checks cfg and builds a client. It does not contact the server.
func New(cfg Config) (*Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("openai: no model id given: use e.g. openai/gpt-5 or ollama/qwen3:8b")
	}
	if cfg.KeyEnv == "" {
		cfg.KeyEnv = "OPENAI_API_KEY"
	}
	if cfg.APIKey == "" && cfg.BaseURL == "" {
		return nil, errors.New("openai: no API key: export " + cfg.KeyEnv + ", or set OPENAI_BASE_URL for a local server")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.Name == "" {
		cfg.Name = "openai/" + cfg.Model
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(httpClient),
		option.WithBaseURL(cfg.BaseURL + "/"),
		// brood retries itself, so that failures in the middle of a stream
		// and before it follow one policy whose delays tests can shorten.
		option.WithMaxRetries(0),
		// Every byte of a response, pings included, resets the attempt's
		// stream idle timeout (retry.Policy.IdleTimeout).
		option.WithMiddleware(retry.KeepAliveMiddleware),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &Model{
		cfg: cfg,
		// The service is built directly rather than through NewClient,
		// which would read OPENAI_* variables behind the resolver's back.
		chat:   sdk.NewChatCompletionService(opts...),
		policy: retry.Policy{MaxRetries: cfg.MaxRetries, BaseDelay: cfg.RetryDelay, MaxDelay: cfg.MaxRetryDelay, IdleTimeout: cfg.StreamIdleTimeout},
	}, nil
}

// Stream sends req as one streamed chat completion, retried as
// retry.Request says (a Restart chunk first when text had gone out).
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	params, err := buildParams(m.cfg, req)
	return retry.Request(ctx, m.policy, params, err, m.attempt, m.classify)
}

// Name returns the provider/model string, e.g. "ollama/qwen3:8b".
func (m *Model) Name() string { return m.cfg.Name }

// attempt sends params once and folds the completion's chunks into text
// deltas and one response.
func (m *Model) attempt(ctx context.Context, params sdk.ChatCompletionNewParams) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream := m.chat.NewStreaming(ctx, params)
		defer stream.Close()
		var acc accumulator
		for stream.Next() {
			chunk := stream.Current()
			text := acc.add(&chunk)
			if text != "" && !yield(model.Chunk{TextDelta: text}, nil) {
				return
			}
		}
		if err := stream.Err(); err != nil {
			yield(model.Chunk{}, err)
			return
		}
		// [DONE] and the usage chunk are optional on some servers; the
		// finish_reason is what says the answer is complete.
		if acc.finish == "" {
			yield(model.Chunk{}, retry.ErrStreamEnded)
			return
		}
		yield(model.Chunk{Done: acc.response()}, nil)
	}
}
