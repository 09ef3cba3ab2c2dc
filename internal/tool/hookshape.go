package tool

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HookResponse is a tool call's tool_response as a PostToolUse hook reads
// it: Claude Code 2.1.332's shape for its tools (Bash, Read, Write, Edit,
// Agent/Task), built from the call's input and brood's result, so a hook
// written for Claude Code (`jq .tool_response.stdout`, `.filePath`,
// `.agentId`) reads the same fields. A failed call, and any other tool, is
// brood's own {"content", "is_error"}: Claude Code fires no PostToolUse for
// a failed call, so it has no shape to copy.
func HookResponse(name string, input json.RawMessage, r Result) any {
	plain := map[string]any{"content": r.Content}
	if r.IsError {
		plain["is_error"] = true
	}
	switch name {
	case "Bash":
		return bashResponse(r)
	case "Task", "Agent":
		if s := agentResponse(input, r); s != nil {
			return s
		}
		return plain
	}
	if r.IsError {
		return plain
	}
	var s map[string]any
	switch name {
	case "Read":
		s = readResponse(input, r.Content)
	case "Write":
		s = writeResponse(input, r.Content)
	case "Edit":
		s = editResponse(input, r.Content)
	}
	if s == nil {
		return plain
	}
	return s
}

// bashStatus matches the lines Bash adds after a command's output.
var bashStatus = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^(Exit code -?\d+|Command timed out after .*|Command cancelled; .*|Command killed by signal .*|Note: background processes the command started .*)$`)
})

// bashResponse is Claude Code's {stdout, stderr, interrupted, isImage,
// noOutputExpected}. brood's Bash gives a command's stdout and stderr to
// the model as one stream, so stdout holds both and stderr is empty (as
// Claude Code's own, which merges them too); brood's status lines are left
// out of stdout (as are trailing newlines, as Claude Code's) and a timeout
// or cancellation sets interrupted.
func bashResponse(r Result) map[string]any {
	out := strings.TrimRight(r.Content, "\n")
	interrupted := false
	for out != "" {
		i := strings.LastIndexByte(out, '\n')
		last := out[i+1:]
		if !bashStatus().MatchString(last) {
			break
		}
		interrupted = interrupted || strings.HasPrefix(last, "Command timed out") || strings.HasPrefix(last, "Command cancelled")
		out = out[:max(i, 0)]
	}
	if strings.HasPrefix(out, "(no output; finished in ") && !strings.Contains(strings.TrimSuffix(out, "\n"), "\n") {
		out = ""
	}
	s := map[string]any{"stdout": out, "stderr": "", "interrupted": interrupted, "isImage": false, "noOutputExpected": false}
	if r.IsError {
		s["is_error"] = true
		s["content"] = r.Content
	}
	return s
}

// readOutputLine matches one line of Read's output: "%6d\t%s".
var readOutputLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ *(\d+)\t(.*)$`) })

// readResponse is Claude Code's {type: "text", file: {filePath, content,
// numLines, startLine, totalLines}}: content is the lines read, without
// Read's line numbers. totalLines is there only when the read reached the
// end of the file (brood does not count the rest).
func readResponse(input json.RawMessage, content string) map[string]any {
	var in readInput
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	file := map[string]any{"filePath": in.FilePath, "content": "", "numLines": 0, "startLine": max(in.Offset, 1)}
	if strings.HasPrefix(content, "(") && strings.HasSuffix(content, "exists but is empty)") {
		file["totalLines"] = 0
		return map[string]any{"type": "text", "file": file}
	}
	var lines []string
	start, last, more := 0, 0, false
	for _, l := range strings.Split(content, "\n") {
		m := readOutputLine().FindStringSubmatch(l)
		if m == nil {
			more = more || strings.Contains(l, "the file continues")
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if start == 0 {
			start = n
		}
		last = n
		lines = append(lines, m[2])
	}
	if len(lines) == 0 {
		return nil
	}
	file["content"] = strings.Join(lines, "\n")
	file["numLines"] = len(lines)
	file["startLine"] = start
	if !more {
		file["totalLines"] = last
	}
	return map[string]any{"type": "text", "file": file}
}

// writeResponse is Claude Code's {type: "create"|"update", filePath,
// content, structuredPatch, originalFile}. brood keeps no copy of an
// overwritten file's old content, so an update has no originalFile.
func writeResponse(input json.RawMessage, content string) map[string]any {
	var in writeInput
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	s := map[string]any{"filePath": resultPath(content, in.FilePath), "content": in.Content, "structuredPatch": []any{}}
	if strings.HasPrefix(content, "Created ") {
		s["type"], s["originalFile"] = "create", nil
	} else {
		s["type"] = "update"
	}
	return s
}

// editResponse is Claude Code's {filePath, oldString, newString,
// replaceAll, userModified}; brood has no originalFile or structuredPatch
// to give.
func editResponse(input json.RawMessage, content string) map[string]any {
	var in editInput
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	return map[string]any{
		"filePath": resultPath(content, in.FilePath), "oldString": in.OldString, "newString": in.NewString,
		"replaceAll": in.ReplaceAll, "userModified": false,
	}
}

// resultPath is the absolute path Write's or Edit's result names
// ("Created /abs (…", "Edited /abs: replaced …"), else the input's.
func resultPath(content, fallback string) string {
	first, _, _ := strings.Cut(content, "\n")
	for _, verb := range []string{"Created ", "Overwrote ", "Edited "} {
		rest, ok := strings.CutPrefix(first, verb)
		if !ok {
			continue
		}
		for _, sep := range []string{": replaced ", " ("} {
			if i := strings.LastIndex(rest, sep); i > 0 && strings.HasPrefix(rest, "/") {
				return rest[:i]
			}
		}
	}
	return fallback
}

// agentInput is the part of a Task/Agent call's input the response repeats.
type agentInput struct {
	SubagentType string `json:"subagent_type"`
	Description  string `json:"description"`
	Prompt       string `json:"prompt"`
}

var (
	backgroundNote = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^Task (\S+) (?:started|resumed) in the background`)
	})
	subagentResult = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^<subagent-result task-id="([^"]*)" agent="[^"]*" status="([^"]*)"[^>]*? duration="([^"]*)" tokens-in="(\d+)" tokens-out="(\d+)">`)
	})
)

// agentResponse is Claude Code's Agent response: for a subagent started in
// the background {isAsync: true, status: "async_launched", agentId,
// description, prompt}; for one waited for {status: "completed" (brood's
// other endings by brood's name: failed, killed, partial, …), agentId,
// prompt, content: [{type: "text", text}], totalDurationMs, totalTokens}.
// nil when the result is neither (a refused call).
func agentResponse(input json.RawMessage, r Result) map[string]any {
	var in agentInput
	_ = json.Unmarshal(input, &in)
	if m := backgroundNote().FindStringSubmatch(r.Content); m != nil {
		return map[string]any{
			"isAsync": true, "status": "async_launched", "agentId": m[1],
			"description": in.Description, "prompt": in.Prompt,
		}
	}
	m := subagentResult().FindStringSubmatch(r.Content)
	if m == nil {
		return nil
	}
	status := m[2]
	if status == "done" {
		status = "completed"
	}
	s := map[string]any{
		"isAsync": false, "status": status, "agentId": m[1], "description": in.Description, "prompt": in.Prompt,
		"content": []any{map[string]any{"type": "text", "text": r.Content}},
	}
	if d, err := time.ParseDuration(m[3]); err == nil {
		s["totalDurationMs"] = d.Milliseconds()
	}
	in1, _ := strconv.ParseInt(m[4], 10, 64)
	out, _ := strconv.ParseInt(m[5], 10, 64)
	s["totalTokens"] = in1 + out
	if r.IsError {
		s["is_error"] = true
	}
	return s
}
