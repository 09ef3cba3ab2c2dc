// Command floorchild is the floor a brood child is measured against: a bare
// Go program that streams the two requests of an explore child (a tool call,
// then the answer) through anthropic-sdk-go and writes a result file
// tmp+rename, with nothing else — no settings, registry, tools or
// transcript. The bench harness builds and runs it; it is not part of brood.
//
// With -parent K it is the floor of a whole run instead: a bare parent
// that streams one turn, runs K copies of itself as children at once (each
// with its task index, as brood's explore children), waits for them, and
// streams its answer; with K=0 it is the floor of a root alone, one turn.
//
// Usage: floorchild BASE_URL RESULT_PATH [INDEX]
//
//	floorchild -parent K BASE_URL DIR [PROMPT]
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

func main() {
	mainAt := monotonic()
	var err error
	switch a := os.Args[1:]; {
	case len(a) >= 4 && a[0] == "-parent":
		err = parent(context.Background(), a[1], a[2], a[3])
		if err == nil && a[1] == "0" {
			err = writeTrace(a[3], mainAt) // the root alone: brood's K=0
		}
	case len(a) == 2 || len(a) == 3:
		index := "0"
		if len(a) == 3 {
			index = a[2]
		}
		err = run(context.Background(), a[0], a[1], index)
	default:
		fmt.Fprintln(os.Stderr, "usage: floorchild BASE_URL RESULT_PATH [INDEX] | floorchild -parent K BASE_URL DIR [PROMPT]")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "floorchild:", err)
		os.Exit(1)
	}
}

// The floor's own run, traced as brood's root traces its own (package
// spawntrace, which the floor does not link): the instant its starter took
// before the exec, its main and the end of its run.
const (
	rootTraceEnv  = "BROOD_SPAWNTRACE_ROOT"
	rootTraceFile = "floor.spawntrace.json"
)

// writeTrace writes the floor parent's marks into dir when its starter
// asked (rootTraceEnv holds its instant).
func writeTrace(dir string, mainAt int64) error {
	start, err := strconv.ParseInt(os.Getenv(rootTraceEnv), 10, 64)
	if err != nil || start <= 0 || mainAt <= 0 {
		return nil
	}
	rec := fmt.Sprintf(`{"start":%d,"marks":[{"stage":"main","at":%d},{"stage":"done","at":%d}]}`, start, mainAt, monotonic())
	return os.WriteFile(filepath.Join(dir, rootTraceFile), []byte(rec), 0o644)
}

func client(base string) sdk.Client {
	return sdk.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(base+"/"),
		option.WithHeader("x-api-key", "bench-key"), option.WithMaxRetries(0))
}

// parent is the floor of a run: one turn, k children at once, the answer.
func parent(ctx context.Context, ks, base, dir string) error {
	k, err := strconv.Atoi(ks)
	if err != nil || k < 0 {
		return fmt.Errorf("-parent %q: not a count", ks)
	}
	c := client(base)
	system := []sdk.TextBlockParam{{Text: "You are the bench's floor parent."}}
	msgs := []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("explore the project's areas"))}
	first, err := stream(ctx, c, system, msgs)
	if err != nil || k == 0 {
		return err
	}
	errs := make(chan error, k)
	for i := range k {
		go func() {
			cmd := exec.CommandContext(ctx, os.Args[0], base, filepath.Join(dir, fmt.Sprintf("floor-result-%d.json", i)), strconv.Itoa(i))
			cmd.Stderr = os.Stderr
			err := cmd.Run()
			if err == nil {
				// The child's own CPU, for the bench's split of the floor's.
				u := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				err = os.WriteFile(filepath.Join(dir, fmt.Sprintf("floor-cpu-%d", i)), []byte(strconv.FormatInt(int64(u), 10)), 0o644)
			}
			errs <- err
		}()
	}
	for range k {
		if err := <-errs; err != nil {
			return fmt.Errorf("a floor child: %w", err)
		}
	}
	msgs = append(msgs, first.ToParam())
	var results []sdk.ContentBlockParamUnion
	for _, b := range first.Content {
		if b.Type == "tool_use" {
			results = append(results, sdk.NewToolResultBlock(b.ID, "the area is documented in the README", false))
		}
	}
	msgs = append(msgs, sdk.NewUserMessage(results...))
	_, err = stream(ctx, c, system, msgs)
	return err
}

func run(ctx context.Context, base, out, index string) error {
	c := client(base)
	system := []sdk.TextBlockParam{{Text: "You are a focused subagent (explore) working on bench-task-" + index + "."}}
	msgs := []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("Begin: bench-task-" + index))}
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
	tmp := out + ".tmp"
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
