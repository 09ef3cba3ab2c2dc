package anthropic

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/broodhq/brood/internal/model"
)

// thinkingBudget maps Request.Effort to an extended-thinking budget in
// tokens. The ladder roughly triples per step up to what the smallest output
// limit among current models (32k for Opus 4.1) still leaves room for:
// max_tokens is always at least budget plus answerRoom.
func thinkingBudget(effort string) (int64, bool) {
	switch effort {
	case "low":
		return 1024, true // the API's minimum
	case "medium":
		return 4096, true
	case "high":
		return 12000, true
	case "xhigh":
		return 20000, true
	case "max":
		return 27000, true
	}
	return 0, false
}

// budgetThinking reports models that take a thinking budget (Claude 4.5 and
// earlier); later ones think adaptively with an effort level, and refuse a
// budget.
func budgetThinking(id string) bool {
	m := claudeVersion().FindStringSubmatch(strings.ToLower(id))
	if m == nil {
		return false // an unknown (newer, or proxied) id: the current API
	}
	major, _ := strconv.Atoi(m[1])
	minor := 0
	if m[2] != "" {
		minor, _ = strconv.Atoi(m[2])
	}
	return major < 4 || (major == 4 && minor <= 5)
}

// claudeVersion matches claude-<family>-<major>[-<minor>] (a one-digit
// minor; a date is not a minor) and the older claude-<major>[-<minor>]-<family>.
var claudeVersion = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`claude-(?:[a-z]+-)?(\d+)(?:[-.](\d)(?:\D|$))?`)
})

// answerRoom is the output kept free for the answer itself when thinking is
// on, so a long think cannot leave no tokens for the reply.
const answerRoom = 4096

// buildParams turns req into the SDK's request. It is a pure function of
// cfg and req: the same inputs give byte-identical request bodies, which a
// forked child relies on to hit its parent's cached prefix.
func buildParams(cfg Config, req *model.Request) (sdk.MessageNewParams, error) {
	maxTokens := int64(req.MaxTokens)
	if maxTokens <= 0 {
		maxTokens = int64(cfg.MaxTokens)
	}
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	p := sdk.MessageNewParams{Model: sdk.Model(cfg.Model)}
	if req.Effort != "" {
		budget, ok := thinkingBudget(req.Effort)
		if !ok {
			return p, fmt.Errorf("anthropic: unknown effort %q: use low, medium, high, xhigh or max", req.Effort)
		}
		// Temperature is never set, which thinking requires.
		if budgetThinking(cfg.Model) {
			p.Thinking = sdk.ThinkingConfigParamOfEnabled(budget)
			maxTokens = max(maxTokens, budget+answerRoom)
		} else {
			// Claude 4.6 and later think adaptively; the effort level is
			// an output setting (a budget is refused there).
			p.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{}}
			p.OutputConfig = sdk.OutputConfigParam{Effort: sdk.OutputConfigEffort(req.Effort)}
		}
	}
	p.MaxTokens = maxTokens
	if req.System != "" {
		p.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam()}}
	}
	for _, t := range req.Tools {
		if t.Server != nil {
			tool, err := serverTool(t)
			if err != nil {
				return p, err
			}
			p.Tools = append(p.Tools, tool)
			continue
		}
		schema := t.Schema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		if !json.Valid(schema) {
			return p, fmt.Errorf("anthropic: tool %s has an invalid JSON schema: fix its definition", t.Name)
		}
		tool := sdk.ToolParam{
			Name: t.Name,
			// The schema goes out byte for byte as given, never re-encoded,
			// so its key order (and the cache prefix) cannot shift.
			InputSchema: param.Override[sdk.ToolInputSchemaParam](schema),
		}
		if t.Description != "" {
			tool.Description = sdk.String(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &tool})
	}
	for _, m := range req.Messages {
		blocks, err := contentBlocks(m)
		if err != nil {
			return p, err
		}
		if len(blocks) == 0 {
			continue
		}
		switch m.Role {
		case model.RoleUser:
			p.Messages = append(p.Messages, sdk.MessageParam{OfUser: &sdk.UserMessageParam{Content: blocks}})
		case model.RoleAssistant:
			p.Messages = append(p.Messages, sdk.MessageParam{OfAssistant: &sdk.AssistantMessageParam{Content: blocks}})
		default:
			return p, fmt.Errorf("anthropic: message with unknown role %q: use user or assistant", m.Role)
		}
	}
	markConversationPrefix(p.Messages)
	return p, nil
}

// contentBlocks converts one message's parts. Empty text and unsigned
// thinking are dropped: the API rejects both.
func contentBlocks(m model.Message) ([]sdk.ContentBlockParamUnion, error) {
	var out []sdk.ContentBlockParamUnion
	for _, part := range m.Content {
		if len(part.Raw) > 0 && (part.IsServerTool() || part.Type == model.PartText) {
			// A server tool's call or result, or cited text: back verbatim.
			b, err := rawBlock(part)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
			continue
		}
		switch part.Type {
		case model.PartText:
			// The API refuses text blocks of only white space (models often
			// emit "\n\n" before a tool call).
			if strings.TrimSpace(part.Text) != "" {
				out = append(out, sdk.NewTextBlock(part.Text))
			}
		case model.PartToolUse:
			input := part.Input
			if len(input) == 0 {
				input = json.RawMessage(`{}`)
			}
			if !json.Valid(input) {
				return nil, fmt.Errorf("anthropic: tool_use %s has invalid input JSON: the session is corrupt", part.ID)
			}
			out = append(out, sdk.ContentBlockParamUnion{OfToolUse: &sdk.ToolUseBlockParam{
				ID: part.ID, Name: part.Name, Input: input,
			}})
		case model.PartToolResult:
			res := sdk.ToolResultBlockParam{ToolUseID: part.ToolUseID}
			if strings.TrimSpace(part.Text) != "" {
				res.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: part.Text}}}
			}
			if part.IsError {
				res.IsError = sdk.Bool(true)
			}
			out = append(out, sdk.ContentBlockParamUnion{OfToolResult: &res})
		case model.PartThinking:
			if part.Signature != "" {
				out = append(out, sdk.NewThinkingBlock(part.Signature, part.Text))
			}
		case model.PartRedactedThinking:
			if part.Data != "" {
				out = append(out, sdk.NewRedactedThinkingBlock(part.Data))
			}
		case model.PartServerToolUse, model.PartWebSearchResult:
			// Without its provider block (written by another provider) it
			// cannot go back; its text is in the conversation already.
		default:
			return nil, fmt.Errorf("anthropic: message part of unknown type %q", part.Type)
		}
	}
	return out, nil
}

// markConversationPrefix puts a cache breakpoint on the last block of the
// last message, so the next turn (or a fork) reads the whole conversation so
// far from the cache, and one on the previous request's last message (two
// back), so that a turn adding many blocks (wide parallel tool calls) still
// finds the prefix cached before it, beyond the API's look-back window. With
// the one on the system prompt that makes three of the four allowed.
func markConversationPrefix(msgs []sdk.MessageParam) {
	if len(msgs) == 0 {
		return
	}
	if len(msgs) >= 3 {
		markLast(msgs[len(msgs)-3])
	}
	markLast(msgs[len(msgs)-1])
}

// markLast puts a cache breakpoint on the last block of m that can carry one.
func markLast(last sdk.MessageParam) {
	var blocks []sdk.ContentBlockParamUnion
	switch {
	case last.OfUser != nil:
		blocks = last.OfUser.Content
	case last.OfAssistant != nil:
		blocks = last.OfAssistant.Content
	}
	// Thinking blocks cannot carry cache_control; mark the last block that can.
	for i := len(blocks) - 1; i >= 0; i-- {
		if cc := blocks[i].GetCacheControl(); cc != nil {
			*cc = sdk.NewCacheControlEphemeralParam()
			return
		}
	}
}
