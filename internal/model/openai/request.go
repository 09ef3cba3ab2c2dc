package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/broodhq/brood/internal/model"
)

// reasoningEffort maps Request.Effort onto reasoning_effort. Chat
// Completions stops at high, so the two steps above it become high.
func reasoningEffort(effort string) (shared.ReasoningEffort, bool) {
	switch effort {
	case "low":
		return shared.ReasoningEffortLow, true
	case "medium":
		return shared.ReasoningEffortMedium, true
	case "high", "xhigh", "max":
		return shared.ReasoningEffortHigh, true
	}
	return "", false
}

// IsReasoningModel reports whether id (optionally vendor-prefixed, as on
// OpenRouter: "openai/o3") names a model that takes reasoning_effort.
func IsReasoningModel(id string) bool {
	id = strings.ToLower(id[strings.LastIndex(id, "/")+1:])
	if strings.Contains(id, "-chat") {
		return false // the chat variants take no reasoning effort
	}
	if strings.HasPrefix(id, "gpt-5") || strings.HasPrefix(id, "gpt-6") || strings.HasPrefix(id, "gpt-7") {
		return true
	}
	// o1, o3, o4 and their variants (o3-mini, o4-mini-high, ...).
	for _, f := range []string{"o1", "o3", "o4"} {
		if id == f || strings.HasPrefix(id, f+"-") {
			return true
		}
	}
	return false
}

// effortWithToolsRefused reports models whose Chat Completions endpoint
// refuses reasoning_effort next to function tools (GPT-5.4 and later).
func effortWithToolsRefused(id string) bool {
	id = strings.ToLower(id[strings.LastIndex(id, "/")+1:])
	var major, minor int
	if n, _ := fmt.Sscanf(id, "gpt-%d.%d", &major, &minor); n == 2 {
		return major > 5 || (major == 5 && minor >= 4)
	}
	if n, _ := fmt.Sscanf(id, "gpt-%d", &major); n == 1 {
		return major > 5
	}
	return false
}

// buildParams turns req into the SDK's request. It is a pure function of
// cfg and req, so the same inputs give the same bytes on the wire.
func buildParams(cfg Config, req *model.Request) (sdk.ChatCompletionNewParams, error) {
	p := sdk.ChatCompletionNewParams{
		Model:         shared.ChatModel(cfg.Model),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	reasoning := cfg.Reasoning || IsReasoningModel(cfg.Model)
	if req.Effort != "" {
		effort, ok := reasoningEffort(req.Effort)
		if !ok {
			return p, fmt.Errorf("openai: unknown effort %q: use low, medium, high, xhigh or max", req.Effort)
		}
		// Chat Completions refuses function tools together with
		// reasoning_effort on GPT-5.4 and later: there the tools win and
		// the model uses its default effort.
		if reasoning && !(len(req.Tools) > 0 && effortWithToolsRefused(cfg.Model)) {
			p.ReasoningEffort = effort
		}
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = cfg.MaxTokens
	}
	if maxTokens > 0 {
		// Reasoning models reject max_tokens, and OpenAI itself deprecates
		// it; older compatible servers know only it.
		if reasoning || strings.Contains(cfg.BaseURL, "api.openai.com") || cfg.BaseURL == "" {
			p.MaxCompletionTokens = sdk.Int(int64(maxTokens))
		} else {
			p.MaxTokens = sdk.Int(int64(maxTokens))
		}
	}
	if req.System != "" {
		p.Messages = append(p.Messages, sdk.SystemMessage(req.System))
	}
	for _, t := range req.Tools {
		if t.Server != nil {
			// Chat Completions has no server tool; the agent loop does not
			// offer one to this model (see model.OffersServerTool).
			continue
		}
		fn, err := functionDefinition(t)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(fn))
	}
	for _, m := range req.Messages {
		msgs, err := messages(m)
		if err != nil {
			return p, err
		}
		p.Messages = append(p.Messages, msgs...)
	}
	return p, nil
}

// functionDefinition sends the tool's schema as given, without decoding it
// into a map, so numbers and key order survive untouched.
func functionDefinition(t model.ToolSpec) (shared.FunctionDefinitionParam, error) {
	schema := t.Schema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if !json.Valid(schema) {
		return shared.FunctionDefinitionParam{}, fmt.Errorf("openai: tool %s has an invalid JSON schema: fix its definition", t.Name)
	}
	raw, err := json.Marshal(struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}{t.Name, t.Description, schema})
	if err != nil {
		return shared.FunctionDefinitionParam{}, fmt.Errorf("openai: tool %s: %w", t.Name, err)
	}
	return param.Override[shared.FunctionDefinitionParam](json.RawMessage(raw)), nil
}

// messages converts one brood message. A user message's tool results become
// "tool" messages, placed first because they must directly follow the
// assistant message that made the calls; thinking is dropped, as Chat
// Completions has no place for it.
func messages(m model.Message) ([]sdk.ChatCompletionMessageParamUnion, error) {
	var out []sdk.ChatCompletionMessageParamUnion
	var text strings.Builder
	var calls []sdk.ChatCompletionMessageToolCallUnionParam
	for _, part := range m.Content {
		switch part.Type {
		case model.PartText:
			text.WriteString(part.Text)
		case model.PartThinking:
		case model.PartServerToolUse, model.PartWebSearchResult:
			// Another provider's server-side search (a session resumed on
			// this model): its call and results have no place in Chat
			// Completions; the text that used them stays.
		case model.PartToolResult:
			if m.Role != model.RoleUser {
				return nil, fmt.Errorf("openai: tool_result in a %s message: the session is corrupt", m.Role)
			}
			content := part.Text
			if part.IsError {
				content = "Error: " + content
			}
			out = append(out, sdk.ToolMessage(content, part.ToolUseID))
		case model.PartToolUse:
			if m.Role != model.RoleAssistant {
				return nil, fmt.Errorf("openai: tool_use in a %s message: the session is corrupt", m.Role)
			}
			args := string(part.Input)
			if args == "" {
				args = "{}"
			}
			calls = append(calls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID:       part.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: part.Name, Arguments: args},
				},
			})
		default:
			return nil, fmt.Errorf("openai: message part of unknown type %q", part.Type)
		}
	}
	switch m.Role {
	case model.RoleUser:
		if text.Len() > 0 {
			out = append(out, sdk.UserMessage(text.String()))
		}
	case model.RoleAssistant:
		if text.Len() == 0 && len(calls) == 0 {
			return out, nil
		}
		a := sdk.ChatCompletionAssistantMessageParam{ToolCalls: calls}
		if text.Len() > 0 {
			a.Content.OfString = sdk.String(text.String())
		}
		out = append(out, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
	default:
		return nil, fmt.Errorf("openai: message with unknown role %q: use user or assistant", m.Role)
	}
	return out, nil
}
