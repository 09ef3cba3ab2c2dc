package openai

import (
	"encoding/json"
	"fmt"
	"slices"

	sdk "github.com/openai/openai-go/v3"

	"github.com/broodhq/brood/internal/model"
)

// toolCall is one tool call being assembled from deltas.
type toolCall struct {
	id, name string
	args     []byte
}

// accumulator assembles a streamed chat completion. Tool calls arrive as
// fragments keyed by index (the id and name once, the arguments in pieces,
// parallel calls possibly interleaved), so they are collected by index.
type accumulator struct {
	text   []byte
	calls  map[int64]*toolCall
	finish string
	usage  model.Usage
	// current maps a server's index to the key of the call being filled;
	// extra numbers the calls that servers (Ollama) send under one index.
	current map[int64]int64
	extra   int64
}

// add folds one chunk in and returns the text it carried.
func (a *accumulator) add(c *sdk.ChatCompletionChunk) string {
	if c.JSON.Usage.Valid() && c.Usage.JSON.PromptTokens.Valid() {
		cached := c.Usage.PromptTokensDetails.CachedTokens
		a.usage = model.Usage{
			// brood counts cache reads apart from fresh input, as Anthropic
			// does; OpenAI's prompt_tokens includes them.
			Input:     c.Usage.PromptTokens - cached,
			Output:    c.Usage.CompletionTokens,
			CacheRead: cached,
		}
	}
	var text string
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // brood never asks for n > 1
		}
		text += ch.Delta.Content
		for _, d := range ch.Delta.ToolCalls {
			if a.calls == nil {
				a.calls = map[int64]*toolCall{}
				a.current = map[int64]int64{}
			}
			key, seen := a.current[d.Index]
			if !seen {
				key = d.Index
				a.current[d.Index] = key
			}
			tc := a.calls[key]
			if tc != nil && d.ID != "" && tc.id != "" && d.ID != tc.id {
				// A new call under an index already in use (Ollama sends
				// every parallel call as index 0): keep it apart, after
				// the others.
				a.extra++
				key = 1<<32 + a.extra
				a.current[d.Index] = key
				tc = nil
			}
			if tc == nil {
				tc = &toolCall{}
				a.calls[key] = tc
			}
			if d.ID != "" {
				tc.id = d.ID
			}
			if d.Function.Name != "" {
				tc.name = d.Function.Name
			}
			tc.args = append(tc.args, d.Function.Arguments...)
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
	a.text = append(a.text, text...)
	return text
}

// stopReason maps finish_reason to the Anthropic vocabulary brood uses
// everywhere, so the agent loop has one set of values to check.
func stopReason(finish string) string {
	switch finish {
	case "stop":
		return "end_turn"
	case "tool_calls", "function_call":
		return "tool_use"
	case "length":
		return "max_tokens"
	case "content_filter":
		return "refusal"
	}
	return finish
}

func (a *accumulator) response() *model.Response {
	msg := model.Message{Role: model.RoleAssistant}
	if len(a.text) > 0 {
		msg.Content = append(msg.Content, model.Part{Type: model.PartText, Text: string(a.text)})
	}
	indexes := make([]int64, 0, len(a.calls))
	for i := range a.calls {
		indexes = append(indexes, i)
	}
	slices.Sort(indexes)
	for _, i := range indexes {
		tc := a.calls[i]
		id := tc.id
		if id == "" {
			// Some local servers send no ids; the tool_result must still
			// name its call, so make one up that is stable for this turn.
			id = fmt.Sprintf("call_%d", i)
		}
		msg.Content = append(msg.Content, model.Part{Type: model.PartToolUse, ID: id, Name: tc.name, Input: toolInput(tc.args)})
	}
	stop := stopReason(a.finish)
	if len(a.calls) > 0 && a.finish == "stop" {
		stop = "tool_use" // some servers say stop even when they called tools
	}
	return &model.Response{Message: msg, Usage: a.usage, StopReason: stop}
}

// toolInput makes streamed arguments safe to store as JSON. Small local
// models sometimes emit broken JSON; it is kept as a JSON string so the tool
// layer can reject it back to the model instead of the session breaking.
func toolInput(args []byte) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage(`{}`)
	}
	if json.Valid(args) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(string(args))
	return b
}
