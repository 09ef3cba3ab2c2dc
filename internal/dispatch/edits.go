package dispatch

import (
	"encoding/json"
	"io"
	"slices"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/termsafe"
)

// TranscriptEdits are the files the task's transcript records a
// successful Write, Edit or MultiEdit of: what a task killed before its
// result named its files changed (its parent was kill -9ed) is known to
// have edited. The child's own record, so data: at most 20 names, each one
// line.
func (t *Task) TranscriptEdits() []string {
	if t.td == nil {
		return nil
	}
	files, _ := TranscriptWrites(t.td.File(taskdir.Session))
	return files[:min(len(files), 20)]
}

// fileTools are the tools whose every write the transcript names (Write,
// Edit, MultiEdit) or that write nothing in the tree.
var fileTools = []string{"Write", "Edit", "MultiEdit", "Read", "Grep", "Glob", "LS", "TodoWrite", "WebFetch", "WebSearch", "TaskOutput"}

// TranscriptWrites reads the transcript at path: the files it records a
// successful Write, Edit or MultiEdit of (each one line, as the model
// named them), and whether any other tool that may write (Bash,
// a nested Task, an MCP tool) was called. The child's own record, so data.
func TranscriptWrites(path string) (files []string, other bool) {
	recs, _, err := session.ReadFile(path)
	if err != nil {
		return nil, false
	}
	inputs := map[string]json.RawMessage{} // tool id -> the input the model gave
	for _, r := range recs {
		if r.Type == session.RecMessage && r.Message != nil {
			for _, u := range r.Message.ToolUses() {
				inputs[u.ID] = u.Input
				other = other || !slices.Contains(fileTools, u.Name)
			}
		}
		if r.Type != session.RecToolResult || r.IsError || (r.Tool != "Write" && r.Tool != "Edit" && r.Tool != "MultiEdit") {
			continue
		}
		var in struct {
			Path string `json:"file_path"`
		}
		raw := r.Input
		if len(raw) == 0 {
			raw = inputs[r.ToolID]
		}
		if json.Unmarshal(raw, &in) == nil && in.Path != "" && !slices.Contains(files, in.Path) {
			files = append(files, termsafe.Line(in.Path))
		}
	}
	return files, other
}

// transcriptTokens are the tokens the task's transcript records so far
// (one usage record per finished model turn, every run's): what a running
// task, which has no result yet, has spent. Its own subagents' come with
// its result.
func (t *Task) transcriptTokens() int64 {
	if t.td == nil {
		return 0
	}
	// The child's file, read as every child-writable file is (no link, no
	// FIFO) and bounded: a listing reads it for every running task
	// (review41 P2-5).
	f, err := t.td.OpenRead(taskdir.Session)
	if err != nil {
		return 0
	}
	defer f.Close()
	lines, _ := session.Stream(io.LimitReader(f, maxTokensRead), 1<<20)
	var u model.Usage
	for l := range lines {
		if r := l.Record; !l.Over && !l.Bad && r.Type == session.RecUsage && r.Usage != nil {
			u = u.Add(*r.Usage)
		}
	}
	return max(u.Total(), 0)
}

// maxTokensRead bounds what a listing reads of a running task's transcript
// for its tokens so far.
const maxTokensRead = 64 << 20
