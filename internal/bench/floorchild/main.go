// Command floorchild is the floor a brood child is measured against: a bare
// Go program that streams the two requests of an explore child (a tool call,
// then the answer) through anthropic-sdk-go and writes a result file
// tmp+rename, with nothing else — no settings, registry, tools or
// transcript. The bench harness builds and runs it; it is not part of brood.
//
// Usage: floorchild BASE_URL RESULT_PATH
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: floorchild BASE_URL RESULT_PATH")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "floorchild:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, base, out string) error {
	c := sdk.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(base+"/"),
		option.WithHeader("x-api-key", "bench-key"), option.WithMaxRetries(0))
	system := []sdk.TextBlockParam{{Text: "You are a focused subagent (explore) working on bench-task-0."}}
	msgs := []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("Begin: bench-task-0"))}
	first, err := stream(ctx, c, system, msgs)
	if err != nil {
		return err
	}
	msgs = append(msgs, first.ToParam())
	var results []sdk.ContentBlockParamUnion
	for _, b := range first.Content {
		if b.Type == "tool_use" {
			results = append(results, sdk.NewToolResultBlock(b.ID, "1\t# bench project", false))
		}
	}
	msgs = append(msgs, sdk.NewUserMessage(results...))
	second, err := stream(ctx, c, system, msgs)
	if err != nil {
		return err
	}
	var text string
	for _, b := range second.Content {
		if b.Type == "text" {
			text += b.Text
		}
	}
	data, err := json.Marshal(map[string]any{"status": "done", "summary": text, "usage": second.Usage})
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(out), ".result.tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

func stream(ctx context.Context, c sdk.Client, system []sdk.TextBlockParam, msgs []sdk.MessageParam) (sdk.Message, error) {
	s := c.Messages.NewStreaming(ctx, sdk.MessageNewParams{
		Model: "claude-bench", MaxTokens: 1024, System: system, Messages: msgs,
		Tools: []sdk.ToolUnionParam{{OfTool: &sdk.ToolParam{Name: "Read",
			InputSchema: sdk.ToolInputSchemaParam{Properties: map[string]any{"file_path": map[string]any{"type": "string"}}}}}},
	})
	defer s.Close()
	var acc sdk.Message
	for s.Next() {
		if err := acc.Accumulate(s.Current()); err != nil {
			return acc, err
		}
	}
	return acc, s.Err()
}
