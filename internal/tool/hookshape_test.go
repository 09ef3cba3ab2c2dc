package tool

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestHookResponse(t *testing.T) {
	for _, tc := range []struct {
		name, tool, input string
		res               Result
		want              map[string]any
	}{
		{"bash ok", "Bash", `{"command":"x"}`, Result{Content: "a\nb\n"},
			map[string]any{"stdout": "a\nb", "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false}},
		{"bash no output", "Bash", `{"command":"true"}`, Result{Content: "(no output; finished in 3ms)"},
			map[string]any{"stdout": "", "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false}},
		{"bash exit", "Bash", `{"command":"x"}`, Result{Content: "boom\nExit code 3", IsError: true},
			map[string]any{"stdout": "boom", "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false, "is_error": true, "content": "boom\nExit code 3"}},
		{"bash timeout", "Bash", `{"command":"x"}`, Result{Content: "part\nCommand timed out after 1s; it and every process it started were killed. Pass a larger timeout", IsError: true},
			map[string]any{"stdout": "part", "stderr": "", "interrupted": true, "isImage": false, "noOutputExpected": false, "is_error": true,
				"content": "part\nCommand timed out after 1s; it and every process it started were killed. Pass a larger timeout"}},
		{"read whole", "Read", `{"file_path":"a.txt"}`, Result{Content: "     1\tone\n     2\ttwo\n"},
			map[string]any{"type": "text", "file": map[string]any{"filePath": "a.txt", "content": "one\ntwo", "numLines": 2, "startLine": 1, "totalLines": 2}}},
		{"read part", "Read", `{"file_path":"/a.txt","offset":5,"limit":1}`, Result{Content: "     5\tfive\n\n(showing lines 5-5; the file continues: call Read with offset=6 to read on)"},
			map[string]any{"type": "text", "file": map[string]any{"filePath": "/a.txt", "content": "five", "numLines": 1, "startLine": 5}}},
		{"read empty", "Read", `{"file_path":"/e"}`, Result{Content: "(/e exists but is empty)"},
			map[string]any{"type": "text", "file": map[string]any{"filePath": "/e", "content": "", "numLines": 0, "startLine": 1, "totalLines": 0}}},
		{"read error", "Read", `{"file_path":"/e"}`, Result{Content: "file does not exist: /e", IsError: true},
			map[string]any{"content": "file does not exist: /e", "is_error": true}},
		{"write create", "Write", `{"file_path":"n.txt","content":"x"}`, Result{Content: "Created /w/n (1).txt (1 bytes, 1 lines)"},
			map[string]any{"type": "create", "filePath": "/w/n (1).txt", "content": "x", "structuredPatch": []any{}, "originalFile": nil}},
		{"write update", "Write", `{"file_path":"/w/n.txt","content":"x"}`, Result{Content: "Overwrote /w/n.txt (1 bytes, 1 lines)"},
			map[string]any{"type": "update", "filePath": "/w/n.txt", "content": "x", "structuredPatch": []any{}}},
		{"edit", "Edit", `{"file_path":"n.txt","old_string":"a","new_string":"b","replace_all":true}`, Result{Content: "Edited /w/n.txt: replaced 2 occurrences. The changed region now reads:\n1 b"},
			map[string]any{"filePath": "/w/n.txt", "oldString": "a", "newString": "b", "replaceAll": true, "userModified": false}},
		{"agent async", "Agent", `{"description":"d","prompt":"p","subagent_type":"x"}`, Result{Content: `Task 01J started in the background (task_id="01J"). Carry on`},
			map[string]any{"isAsync": true, "status": "async_launched", "agentId": "01J", "description": "d", "prompt": "p"}},
		{"task sync", "Task", `{"description":"d","prompt":"p"}`, Result{Content: "<subagent-result task-id=\"01K\" agent=\"scout\" status=\"failed\" trust=\"untrusted\" duration=\"1.5s\" tokens-in=\"10\" tokens-out=\"5\">\nx\n</subagent-result>\n"},
			map[string]any{"isAsync": false, "status": "failed", "agentId": "01K", "description": "d", "prompt": "p", "totalDurationMs": 1500, "totalTokens": 15,
				"content": []any{map[string]any{"type": "text", "text": "<subagent-result task-id=\"01K\" agent=\"scout\" status=\"failed\" trust=\"untrusted\" duration=\"1.5s\" tokens-in=\"10\" tokens-out=\"5\">\nx\n</subagent-result>\n"}}}},
		{"task refused", "Task", `{}`, Result{Content: "no such agent", IsError: true},
			map[string]any{"content": "no such agent", "is_error": true}},
		{"other tool", "Grep", `{}`, Result{Content: "a:1"}, map[string]any{"content": "a:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(HookResponse(tc.tool, json.RawMessage(tc.input), tc.res))
			if err != nil {
				t.Fatal(err)
			}
			wb, _ := json.Marshal(tc.want)
			var got, want any
			_ = json.Unmarshal(b, &got)
			_ = json.Unmarshal(wb, &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("HookResponse =\n%s\nwant\n%s", b, wb)
			}
		})
	}
}
