package render

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"github.com/broodhq/brood/internal/model"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/broodhq/brood/internal/agent"
)

// Result is the final object: the one line of --output-format json, the
// last line of stream-json. Its keys are Claude Code 2.1.332's
// (reference/claude-code-2.1.332/print-json.json), key for key; brood's
// additions are unpriced_models, subagent_usage, transcript_path and the
// extra subagent_stats counters (docs/cli.md lists the differences).
type Result struct {
	Type          string `json:"type"`
	Subtype       string `json:"subtype"` // success | error_max_turns | error_max_budget_usd | error_interrupted
	IsError       bool   `json:"is_error"`
	DurationMS    int64  `json:"duration_ms"`
	DurationAPIMS int64  `json:"duration_api_ms"` // the model calls' wall time, summed
	NumTurns      int    `json:"num_turns"`
	Result        string `json:"result,omitempty"`
	// StructuredOutput is the answer's JSON under --json-schema.
	StructuredOutput json.RawMessage `json:"structured_output,omitempty"`
	Errors           []string        `json:"errors,omitempty"`
	StopReason       string          `json:"stop_reason"`
	TerminalReason   string          `json:"terminal_reason"`
	SessionID        string          `json:"session_id"`
	UUID             string          `json:"uuid"`
	// APIErrorStatus is the HTTP status of a failed model call and
	// APIErrorType its Anthropic error type; null (and no type) when no
	// HTTP answer came or the run did not fail, absent at the turn cap, as
	// in Claude Code. APIError names a failure without HTTP status.
	APIErrorStatus json.RawMessage `json:"api_error_status,omitempty"`
	APIErrorType   string          `json:"api_error_type,omitempty"`
	APIError       string          `json:"api_error,omitempty"`
	// TotalCostUSD is the whole tree's estimated cost (the root and every
	// subagent below it) at the price table: list prices, or [prices] in
	// settings. Models without a price add nothing (0 when none has one);
	// UnpricedModels names them, and ModelUsage has their tokens.
	TotalCostUSD float64               `json:"total_cost_usd"`
	Usage        ResultUsage           `json:"usage"`
	ModelUsage   map[string]ModelUsage `json:"modelUsage"`
	// ModelUsageSinceLast is stream-json's: the usage since the previous
	// result line; brood prints one, so it is modelUsage.
	ModelUsageSinceLast map[string]ModelUsage `json:"model_usage_since_last_result,omitempty"`
	UnpricedModels      []string              `json:"unpriced_models,omitempty"`
	SubagentUsage       Usage                 `json:"subagent_usage"`
	PermissionDenials   []PermissionDenial    `json:"permission_denials"`
	SubagentStats       SubagentStats         `json:"subagent_stats"`
	SafetyStops         int                   `json:"safety_stops"`
	FastModeState       string                `json:"fast_mode_state"`
	FastModeReason      string                `json:"fast_mode_disabled_reason"`
	// The timings are absent at the turn cap, as in Claude Code.
	TTFTMS          *int64 `json:"ttft_ms,omitempty"`
	TTFTStreamMS    *int64 `json:"ttft_stream_ms,omitempty"`
	TimeToRequestMS *int64 `json:"time_to_request_ms,omitempty"`
	FirstFrameMS    *int64 `json:"first_content_frame_ms,omitempty"`
	QueuedTurnCount int    `json:"queued_turn_count"`
	ResultIndex     int    `json:"result_index"`
	// BegunMessageIDs are the messages whose stream events were sent
	// (--include-partial-messages), as Claude Code lists them.
	BegunMessageIDs []string `json:"begun_message_ids,omitempty"`
	TranscriptPath  string   `json:"transcript_path"`
}

// ResultUsage is the root's usage in the result, in the Messages API's
// shape as Claude Code reports it. brood counts no thinking tokens and no
// cache tiers apart: those are zero; of the server tools it counts the
// provider's web searches (WebFetch is brood's own tool, not the server's).
type ResultUsage struct {
	Usage
	OutputTokensDetails struct {
		ThinkingTokens int64 `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
	ServerToolUse struct {
		WebSearchRequests int64 `json:"web_search_requests"`
		WebFetchRequests  int64 `json:"web_fetch_requests"`
	} `json:"server_tool_use"`
	ServiceTier   string `json:"service_tier"`
	CacheCreation struct {
		Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
		Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
	} `json:"cache_creation"`
	InferenceGeo   string   `json:"inference_geo"`
	Iterations     []string `json:"iterations"`
	Speed          string   `json:"speed"`
	FallbackCredit *int     `json:"fallback_credit"`
}

// Timing is what the run's model calls took: their summed wall time and
// the first turn's time to its first token (text or tool call).
type Timing struct {
	API  time.Duration
	TTFT time.Duration
}

// NewResult builds the result object of a run.
func NewResult(o *agent.Outcome, sessionPath string, t Totals, took time.Duration, stats SubagentStats, denials []PermissionDenial, tm Timing) Result {
	u := ResultUsage{Usage: usageOf(o.Usage), ServiceTier: "standard", Iterations: []string{}, Speed: "standard"}
	u.CacheCreation.Ephemeral5m = o.Usage.CacheWrite
	u.ServerToolUse.WebSearchRequests = o.Usage.WebSearches
	ttft, zero := tm.TTFT.Milliseconds(), int64(0)
	r := Result{
		Type: "result", Subtype: "success", DurationMS: took.Milliseconds(), DurationAPIMS: tm.API.Milliseconds(), NumTurns: o.Turns,
		StopReason: "end_turn", TerminalReason: "completed", SessionID: SessionID(sessionPath), UUID: newUUID(),
		Usage: u, SubagentUsage: usageOf(t.Children), SubagentStats: stats,
		TotalCostUSD: t.Cost.USD, ModelUsage: t.modelUsage(), UnpricedModels: t.Cost.Unpriced,
		PermissionDenials: denials, TranscriptPath: sessionPath,
		FastModeState: "off", FastModeReason: "unsupported",
		TTFTMS: &ttft, TTFTStreamMS: &ttft, FirstFrameMS: &ttft, TimeToRequestMS: &zero, APIErrorStatus: json.RawMessage("null"),
	}
	if r.PermissionDenials == nil {
		r.PermissionDenials = []PermissionDenial{}
	}
	if t.SchemaError != "" {
		r.Subtype, r.IsError = "error_max_structured_output_retries", true
		r.Errors = []string{t.SchemaError}
		return r
	}
	r.StructuredOutput = t.StructuredOutput
	if t.BudgetUSD > 0 {
		r.Subtype, r.IsError, r.TerminalReason = "error_max_budget_usd", true, "max_budget_usd"
		r.Errors = []string{"Reached maximum budget ($" + strconv.FormatFloat(t.BudgetUSD, 'f', -1, 64) + ")"}
		return r
	}
	switch o.Status {
	case agent.StatusDone:
		r.Result = o.Text
	case agent.StatusPartial:
		r.Subtype, r.IsError, r.StopReason, r.TerminalReason = "error_max_turns", true, "tool_use", "max_turns"
		r.Errors = []string{"Reached maximum number of turns (" + itoa(o.Turns) + ")"}
		r.APIErrorStatus, r.TTFTMS, r.TTFTStreamMS, r.TimeToRequestMS, r.FirstFrameMS = nil, nil, nil, nil, nil
		r.Result = o.Text
	case agent.StatusCancelled:
		r.Subtype, r.IsError, r.TerminalReason = "error_interrupted", true, "interrupted"
		r.Errors = []string{"interrupted"}
	default:
		// As Claude Code: an API error is subtype success, is_error true,
		// the error's text in result.
		r.IsError, r.TerminalReason, r.StopReason = true, "api_error", "stop_sequence"
		r.Result = "API Error: " + o.Error
		apiError(&r, o.Error)
	}
	return r
}

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// adapterStatus reads the HTTP status brood's model adapters put in their
// errors ("anthropic: 400 bad request: ...", "openai: 429 rate limited:
// ...").
var adapterStatus = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]*: ([1-5][0-9][0-9]) `) })

// apiError fills a failed model call's keys as Claude Code does: an HTTP
// error's status and Anthropic error type (api_error_status,
// api_error_type); otherwise a null status and what failed (api_error:
// connection_failed when nothing listened, else request_failed). The
// timings and models that did nothing are left out, as in Claude Code.
func apiError(r *Result, text string) {
	r.TTFTMS, r.TTFTStreamMS, r.TimeToRequestMS, r.FirstFrameMS = nil, nil, nil, nil
	for id, u := range r.ModelUsage {
		if u.InputTokens+u.OutputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens == 0 {
			delete(r.ModelUsage, id)
		}
	}
	if m := adapterStatus().FindStringSubmatch(text); m != nil {
		n, _ := strconv.Atoi(m[1])
		r.APIErrorStatus, r.APIErrorType = json.RawMessage(m[1]), model.AnthropicErrorType(n)
		return
	}
	r.APIError = "request_failed"
	if strings.Contains(text, "refused the connection") {
		r.APIError = "connection_failed"
	}
}
