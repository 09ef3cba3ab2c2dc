package telemetry

import (
	"cmp"
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/broodhq/brood/internal/textline"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/broodhq/brood/internal/model"
)

// Attribute keys (the GenAI semantic conventions; the Go semconv packages
// dropped their constants after v1.41.0) and brood's own.
const (
	KeyOperation     = "gen_ai.operation.name"
	KeyProvider      = "gen_ai.provider.name"
	KeyAgentID       = "gen_ai.agent.id"
	KeyAgentName     = "gen_ai.agent.name"
	KeyRequestModel  = "gen_ai.request.model"
	KeyResponseModel = "gen_ai.response.model"
	KeyInputTokens   = "gen_ai.usage.input_tokens"
	KeyOutputTokens  = "gen_ai.usage.output_tokens"
	KeyCacheRead     = "gen_ai.usage.cache_read.input_tokens"
	KeyCacheWrite    = "gen_ai.usage.cache_creation.input_tokens"
	KeyTokenType     = "gen_ai.token.type"
	KeyToolName      = "gen_ai.tool.name"
	KeyToolCallID    = "gen_ai.tool.call.id"
	KeyWorkflowName  = "gen_ai.workflow.name"
	KeyErrorType     = "error.type"
	KeyTaskID        = "brood.task.id"
	KeyTaskStatus    = "brood.task.status"
	KeyDepth         = "brood.depth"
	KeyKilledBy      = "brood.killed_by"
	KeyChildAgent    = "brood.child.agent"
)

// Usage is a span's token counts.
type Usage struct{ Input, Output, CacheRead, CacheWrite int64 }

func (u Usage) attrs() []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.Int64(KeyInputTokens, u.Input), attribute.Int64(KeyOutputTokens, u.Output),
		attribute.Int64(KeyCacheRead, u.CacheRead), attribute.Int64(KeyCacheWrite, u.CacheWrite),
	}
}

// SplitModel splits brood's "provider/model" into the provider name of the
// conventions and the model ("script" for the scripted model).
func SplitModel(spec string) (provider, model string) {
	if strings.HasPrefix(spec, "script:") {
		return "brood.script", "script"
	}
	if p, m, ok := strings.Cut(spec, "/"); ok {
		switch p {
		case "anthropic", "openai":
		default:
			p = "openai" // OpenAI-compatible servers (ollama, vllm, ...)
		}
		return p, m
	}
	return "", spec
}

// Agent describes one agent run.
type Agent struct {
	Name  string // root, explore, ...
	ID    string // the task id, or the root's session id
	Model string // provider/model
	Depth int
}

// Span is a started span; nil when tracing is off (its methods are no-ops).
type Span struct {
	t     *Telemetry
	span  trace.Span
	start time.Time
	attrs []attribute.KeyValue // for the metrics
	spec  string               // a chat's provider/model, for its price
	// failedChild is set by MarkChild when the Task call's child failed or
	// was killed: its status and error.type are the child's, not a tool
	// error's.
	failedChild atomic.Bool
}

type spanKey struct{}

func (t *Telemetry) start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	s := &Span{t: t, start: time.Now()}
	if t.tracer != nil {
		ctx, s.span = t.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	}
	return context.WithValue(ctx, spanKey{}, s), s
}

// InvokeAgent starts "invoke_agent {name}".
func (t *Telemetry) InvokeAgent(ctx context.Context, a Agent) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	p, m := SplitModel(a.Model)
	if a.Depth == 0 && t.ccSessions != nil {
		t.ccSessions.Add(ctx, 1, metric.WithAttributes(attribute.String("session.id", a.ID)))
	}
	return t.start(ctx, "invoke_agent "+a.Name, trace.SpanKindInternal,
		attribute.String(KeyOperation, "invoke_agent"), attribute.String(KeyProvider, p),
		attribute.String(KeyAgentName, a.Name), attribute.String(KeyAgentID, a.ID),
		attribute.String(KeyRequestModel, m), attribute.Int(KeyDepth, a.Depth))
}

// EndAgent ends an invoke_agent span with the run's status and usage.
func (s *Span) EndAgent(status string, u Usage, errText string) {
	if s == nil || s.span == nil {
		return
	}
	s.span.SetAttributes(append(u.attrs(), attribute.String(KeyTaskStatus, status))...)
	if errText != "" || failed(status) {
		s.span.SetAttributes(attribute.String(KeyErrorType, cmp.Or(errorStatus(status), "_OTHER")))
		s.span.SetStatus(codes.Error, textline.Line(s.t.scrub.String(cmp.Or(errText, "the run ended "+status)), 200))
	}
	s.span.End()
}

// failed reports whether a run's or a child's status is a failure: the
// span's status is ERROR and error.type names the status.
func failed(status string) bool { return errorStatus(status) != "" }

func errorStatus(status string) string {
	switch status {
	case "failed", "killed", "cancelled", "error":
		return status
	}
	return ""
}

// Chat starts "chat {model}" for one model request.
func (t *Telemetry) Chat(ctx context.Context, spec string) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	p, m := SplitModel(spec)
	attrs := []attribute.KeyValue{attribute.String(KeyOperation, "chat"), attribute.String(KeyProvider, p), attribute.String(KeyRequestModel, m)}
	ctx, s := t.start(ctx, "chat "+m, trace.SpanKindClient, attrs...)
	if s != nil {
		s.attrs, s.spec = attrs, spec
	}
	return ctx, s
}

// EndChat ends a chat span and records the request's metrics.
func (s *Span) EndChat(ctx context.Context, responseModel string, u Usage, err error) {
	if s == nil {
		return
	}
	attrs := s.attrs
	if responseModel != "" {
		attrs = append(attrs, attribute.String(KeyResponseModel, responseModel))
	}
	if err != nil {
		attrs = append(attrs, attribute.String(KeyErrorType, errType(err)))
	}
	if s.t.duration != nil {
		s.t.duration.Record(ctx, time.Since(s.start).Seconds(), metric.WithAttributes(attrs...))
	}
	if s.t.tokens != nil && err == nil {
		s.t.tokens.Record(ctx, u.Input+u.CacheRead+u.CacheWrite, metric.WithAttributes(append(attrs, attribute.String(KeyTokenType, "input"))...))
		s.t.tokens.Record(ctx, u.Output, metric.WithAttributes(append(attrs, attribute.String(KeyTokenType, "output"))...))
	}
	if err == nil {
		s.recordUsage(ctx, u)
	}
	if s.span == nil {
		return
	}
	if responseModel != "" {
		s.span.SetAttributes(attribute.String(KeyResponseModel, responseModel))
	}
	s.span.SetAttributes(u.attrs()...)
	if err != nil {
		s.span.SetAttributes(attribute.String(KeyErrorType, errType(err)))
		s.span.SetStatus(codes.Error, err.Error())
	}
	s.span.End()
}

// recordUsage records a request's tokens and cost as Claude Code's
// claude_code.token.usage (type input, output, cacheRead, cacheCreation)
// and claude_code.cost.usage, with its model attribute (the bare model id),
// and the cost as brood.cost.usage with the GenAI attributes. A model the
// price table does not know has no cost: none is recorded.
func (s *Span) recordUsage(ctx context.Context, u Usage) {
	_, bare := SplitModel(s.spec)
	model := attribute.String("model", bare)
	if s.t.ccTokens != nil {
		for _, c := range []struct {
			kind string
			n    int64
		}{{"input", u.Input}, {"output", u.Output}, {"cacheRead", u.CacheRead}, {"cacheCreation", u.CacheWrite}} {
			s.t.ccTokens.Add(ctx, c.n, metric.WithAttributes(model, attribute.String("type", c.kind)))
		}
	}
	p, ok := s.t.prices.Lookup(s.spec)
	if !ok {
		return
	}
	usd := p.Cost(modelUsage(u))
	if s.t.ccCost != nil {
		s.t.ccCost.Add(ctx, usd, metric.WithAttributes(model))
	}
	if s.t.cost != nil {
		s.t.cost.Add(ctx, usd, metric.WithAttributes(s.attrs...))
	}
}

func errType(err error) string {
	if err == context.Canceled || err == context.DeadlineExceeded {
		return "cancelled"
	}
	return "_OTHER"
}

// Tool starts "execute_tool {name}" for one tool call.
func (t *Telemetry) Tool(ctx context.Context, name, callID string) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	return t.start(ctx, "execute_tool "+name, trace.SpanKindInternal,
		attribute.String(KeyOperation, "execute_tool"), attribute.String(KeyToolName, name), attribute.String(KeyToolCallID, callID))
}

// EndTool ends an execute_tool span.
func (s *Span) EndTool(isError bool, msg string) {
	if s == nil || s.span == nil {
		return
	}
	if isError && !s.failedChild.Load() {
		s.span.SetAttributes(attribute.String(KeyErrorType, "tool_error"))
		s.span.SetStatus(codes.Error, textline.Line(s.t.scrub.String(msg), 200)) // redacted before the cut
	}
	s.span.End()
}

// Workflow starts "invoke_workflow {name}".
func (t *Telemetry) Workflow(ctx context.Context, name, runID string) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	return t.start(ctx, "invoke_workflow "+name, trace.SpanKindInternal,
		attribute.String(KeyOperation, "invoke_workflow"), attribute.String(KeyWorkflowName, name), attribute.String("brood.workflow.run_id", runID))
}

// End ends any span with a status.
func (s *Span) End(status string) {
	if s == nil || s.span == nil {
		return
	}
	if status != "" {
		s.span.SetAttributes(attribute.String(KeyTaskStatus, status))
	}
	s.span.End()
}

// Child describes a dispatched child on the Task call's span: its task,
// agent, depth, status and who killed it.
type Child struct {
	TaskID, Agent, Status, KilledBy string
	Depth                           int
	Usage                           Usage
}

// MarkChild puts a child's record on ctx's span (the Task call's
// execute_tool span); a no-op when tracing is off.
func MarkChild(ctx context.Context, c Child) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := append(c.Usage.attrs(), attribute.String(KeyTaskID, c.TaskID), attribute.String(KeyChildAgent, c.Agent),
		attribute.String(KeyTaskStatus, c.Status), attribute.Int(KeyDepth, c.Depth))
	if c.KilledBy != "" {
		attrs = append(attrs, attribute.String(KeyKilledBy, c.KilledBy))
	}
	span.SetAttributes(attrs...)
	if failed(c.Status) {
		// The child's own span may never be exported (a killed process
		// exports nothing): its parent's Task call says it failed.
		span.SetAttributes(attribute.String(KeyErrorType, errorStatus(c.Status)))
		msg := "the child " + c.Agent + " ended " + c.Status
		if c.KilledBy != "" {
			msg += " (killed by " + c.KilledBy + ")"
		}
		span.SetStatus(codes.Error, msg)
		if s, _ := ctx.Value(spanKey{}).(*Span); s != nil {
			s.failedChild.Store(true)
		}
	}
}

func modelUsage(u Usage) model.Usage {
	return model.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
}
