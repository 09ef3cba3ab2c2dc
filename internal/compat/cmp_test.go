package compat_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// lines are the JSON objects of a file, one per line (blank lines and
// lines that are no JSON object are skipped: Claude Code prints none).
func lines(ts *testscript.TestScript, file string) []map[string]any {
	var out []map[string]any
	for _, ln := range strings.Split(ts.ReadFile(file), "\n") {
		var v map[string]any
		if strings.TrimSpace(ln) != "" && json.Unmarshal([]byte(ln), &v) == nil {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		ts.Fatalf("%s holds no JSON object", file)
	}
	return out
}

// result is the file's result object: the last line of type result.
func result(ts *testscript.TestScript, file string) map[string]any {
	ls := lines(ts, file)
	for i := len(ls) - 1; i >= 0; i-- {
		if ls[i]["type"] == "result" {
			return ls[i]
		}
	}
	ts.Fatalf("%s has no result object", file)
	return nil
}

// cmdJSONGet is `jsonget FILE KEY VAR`: set $VAR to the result object's
// KEY (a string) in FILE.
func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: jsonget FILE KEY VAR")
	}
	v, ok := result(ts, args[0])[args[1]].(string)
	if !ok || v == "" {
		ts.Fatalf("%s: the result has no string %s", args[0], args[1])
	}
	ts.Setenv(args[2], v)
}

// sameValue are the result's keys whose values must be equal in both
// (given the same model's answers); every other key must be there in both
// (but for the allowlist) with a value of the same JSON type.
var sameValue = []string{"type", "subtype", "is_error", "result", "stop_reason", "terminal_reason", "structured_output", "errors", "num_turns"}

// cmdCmpResult is `cmpresult CLAUDE BROOD`: the result objects of the two
// files (json, or stream-json's last result line) compared field by field.
func cmdCmpResult(ts *testscript.TestScript, neg bool, args []string) {
	story, args := storyOf(args)
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmpresult [-as STORY] CLAUDE_FILE BROOD_FILE")
	}
	cc, br := result(ts, args[0]), result(ts, args[1])
	diffs := compareResult(story, cc, br, paths(cc), paths(br))
	if len(diffs) > 0 {
		ts.Fatalf("the results differ beyond the allowlist (docs/cli.md):\n%s\nclaude: %s\nbrood:  %s", strings.Join(diffs, "\n"), enc(cc), enc(br))
	}
}

// storyOf takes -as STORY off args: the story whose valueDiffers apply.
func storyOf(args []string) (string, []string) {
	if len(args) > 2 && args[0] == "-as" {
		return args[1], args[2:]
	}
	return "", args
}

// compareResult compares the values of the last results cc and br and
// the key paths ccPaths and brPaths: a stream's are every result line's
// (Claude Code prints a result again when a background subagent's
// notification arrives after the first, its model_usage_since_last_result
// then empty, so its last alone may lack keys its first has).
func compareResult(story string, cc, br map[string]any, ccPaths, brPaths map[string]string) []string {
	var diffs []string
	for _, k := range sameValue {
		if !reflect.DeepEqual(cc[k], br[k]) && !allowed(valueDiffers, story, k) {
			diffs = append(diffs, fmt.Sprintf("%s: claude %s, brood %s", k, enc(cc[k]), enc(br[k])))
		}
	}
	if a, b := denied(cc), denied(br); !slices.Equal(a, b) {
		diffs = append(diffs, fmt.Sprintf("permission_denials: claude %v, brood %v", a, b))
	}
	return append(diffs, compareKeys("result", ccPaths, brPaths)...)
}

// denied are the tool names of a result's permission_denials, sorted.
func denied(r map[string]any) []string {
	var out []string
	ds, _ := r["permission_denials"].([]any)
	for _, d := range ds {
		if m, ok := d.(map[string]any); ok {
			out = append(out, fmt.Sprint(m["tool_name"]))
		}
	}
	slices.Sort(out)
	return out
}

// compareKeys lists the key paths (with their JSON types) of one kind of
// object that differ between the two, less the allowlist.
func compareKeys(kind string, cc, br map[string]string) []string {
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(cc)) {
		bt, ok := br[k]
		switch {
		case !ok && !allowed(claudeOnly, kind, k):
			diffs = append(diffs, fmt.Sprintf("%s: brood lacks %s", kind, k))
		case ok && bt != cc[k] && !allowed(typeDiffers, kind, k):
			diffs = append(diffs, fmt.Sprintf("%s: %s is %s in claude, %s in brood", kind, k, cc[k], bt))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(br)) {
		if _, ok := cc[k]; !ok && !allowed(broodOnly, kind, k) {
			diffs = append(diffs, fmt.Sprintf("%s: brood adds %s", kind, k))
		}
	}
	return diffs
}

// paths are v's key paths with the JSON type of each value; array
// elements are path[], and the keys of modelUsage and
// subagent_stats.by_type are data (model ids, agent types) and read *.
func paths(v any) map[string]string {
	out := map[string]string{}
	walk("", v, out)
	return out
}

func walk(prefix string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			if prefix == "modelUsage." || prefix == "model_usage_since_last_result." || prefix == "subagent_stats.by_type." {
				k = "*"
			}
			out[prefix+k] = typeOf(sub)
			walk(prefix+k+".", sub, out)
		}
	case []any:
		p := strings.TrimSuffix(prefix, ".") + "[]."
		for _, e := range x {
			walk(p, e, out)
		}
	}
}

func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

func enc(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// kindOf names a stream-json line: its type, and its subtype for system
// lines; a subagent's own messages are apart from the root's.
func kindOf(l map[string]any) string {
	k := fmt.Sprint(l["type"])
	if s, ok := l["subtype"].(string); ok && k == "system" {
		k += "/" + s
	}
	if p, ok := l["parent_tool_use_id"].(string); ok && p != "" {
		k += " (subagent)"
	}
	return k
}

// cmdCmpStream is `cmpstream CLAUDE BROOD`: two stream-json outputs
// compared kind by kind (the same kinds of line, each with the same keys
// and types, less the allowlist), their results as cmpresult does, and in
// each every subagent line matchable to an Agent call of the same stream.
func cmdCmpStream(ts *testscript.TestScript, neg bool, args []string) {
	story, args := storyOf(args)
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmpstream [-as STORY] CLAUDE_FILE BROOD_FILE")
	}
	cc, br := lines(ts, args[0]), lines(ts, args[1])
	kinds := func(ls []map[string]any) map[string]map[string]string {
		out := map[string]map[string]string{}
		for _, l := range ls {
			k := kindOf(l)
			if out[k] == nil {
				out[k] = map[string]string{}
			}
			maps.Copy(out[k], paths(l))
		}
		return out
	}
	ck, bk := kinds(cc), kinds(br)
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(ck)) {
		if k == "result" {
			continue
		}
		if _, ok := bk[k]; !ok {
			if !allowed(claudeOnly, "stream", k) {
				diffs = append(diffs, "brood prints no "+k+" line")
			}
			continue
		}
		diffs = append(diffs, compareKeys(k, ck[k], bk[k])...)
	}
	for _, k := range slices.Sorted(maps.Keys(bk)) {
		if _, ok := ck[k]; !ok && !allowed(broodOnly, "stream", k) {
			diffs = append(diffs, "claude prints no "+k+" line")
		}
	}
	diffs = append(diffs, compareResult(story, result(ts, args[0]), result(ts, args[1]), ck["result"], bk["result"])...)
	diffs = append(diffs, unmatched("claude", cc)...)
	diffs = append(diffs, unmatched("brood", br)...)
	if len(diffs) > 0 {
		ts.Fatalf("the streams differ beyond the allowlist (docs/cli.md):\n%s", strings.Join(diffs, "\n"))
	}
}

// unmatched lists a stream's subagent lines whose tool_use_id or
// parent_tool_use_id names no Agent call of the stream.
func unmatched(who string, ls []map[string]any) []string {
	calls := map[string]bool{}
	for _, l := range ls {
		msg, _ := l["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			if b, ok := c.(map[string]any); ok && b["type"] == "tool_use" && b["name"] == "Agent" {
				calls[fmt.Sprint(b["id"])] = true
			}
		}
	}
	var out []string
	for i, l := range ls {
		for _, key := range []string{"tool_use_id", "parent_tool_use_id"} {
			id, ok := l[key].(string)
			if ok && id != "" && !calls[id] {
				out = append(out, fmt.Sprintf("%s line %d (%s): %s %q is no Agent call of the stream", who, i+1, kindOf(l), key, id))
			}
		}
		if k := kindOf(l); (k == "system/task_started" || k == "system/task_notification") && l["tool_use_id"] == nil {
			out = append(out, fmt.Sprintf("%s line %d (%s) has no tool_use_id", who, i+1, k))
		}
	}
	return append(out, misattributed(who, ls)...)
}

// misattributed lists the Agent calls whose result names another
// subagent (tool_use_result.agentId) than the task_started line with the
// call's tool_use_id: a task matched to the wrong call.
func misattributed(who string, ls []map[string]any) []string {
	taskOf := map[string]string{}
	for _, l := range ls {
		if kindOf(l) == "system/task_started" {
			taskOf[fmt.Sprint(l["tool_use_id"])] = fmt.Sprint(l["task_id"])
		}
	}
	var out []string
	for i, l := range ls {
		res, _ := l["tool_use_result"].(map[string]any)
		msg, _ := l["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			b, _ := c.(map[string]any)
			id := fmt.Sprint(b["tool_use_id"])
			task, ok := taskOf[id]
			if !ok {
				continue
			}
			named := []string{}
			if a, ok := res["agentId"].(string); ok {
				named = append(named, a)
			}
			for _, m := range agentInText.FindAllStringSubmatch(enc(b["content"]), -1) {
				named = append(named, m[1])
			}
			for _, n := range named {
				if n != task {
					out = append(out, fmt.Sprintf("%s line %d: the result of %s names agent %s, its task_started says %s", who, i+1, id, n, task))
				}
			}
		}
	}
	return out
}

// agentInText finds the subagent a result's text names: brood's
// <subagent-result task-id="…">, Claude Code's "agentId: …".
var agentInText = regexp.MustCompile(`(?:task-id=\\"|agentId: )([0-9A-Za-z]+)`)

// cmdCmpHooks is `cmphooks CLAUDE_DIR BROOD_DIR`: the hook payloads each
// program gave its command hooks (DIR/EVENT.jsonl, one payload a line,
// written by the story's hooks) compared event by event: the same events
// fired, and each event's payloads with the same keys and types, less the
// allowlist (kind hook/EVENT).
func cmdCmpHooks(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmphooks CLAUDE_DIR BROOD_DIR")
	}
	events := func(dir string) map[string]map[string]string {
		out := map[string]map[string]string{}
		files, _ := filepath.Glob(filepath.Join(ts.MkAbs(dir), "*.jsonl"))
		for _, f := range files {
			ev := strings.TrimSuffix(filepath.Base(f), ".jsonl")
			out[ev] = map[string]string{}
			for _, l := range lines(ts, f) {
				maps.Copy(out[ev], paths(l))
			}
		}
		return out
	}
	cc, br := events(args[0]), events(args[1])
	if len(cc) == 0 {
		ts.Fatalf("%s holds no hook payloads: the check would prove nothing", args[0])
	}
	var diffs []string
	for _, ev := range slices.Sorted(maps.Keys(cc)) {
		if _, ok := br[ev]; !ok {
			diffs = append(diffs, "brood fired no "+ev+" hook")
			continue
		}
		diffs = append(diffs, compareKeys("hook/"+ev, cc[ev], br[ev])...)
	}
	for _, ev := range slices.Sorted(maps.Keys(br)) {
		if _, ok := cc[ev]; !ok {
			diffs = append(diffs, "claude fired no "+ev+" hook")
		}
	}
	if len(diffs) > 0 {
		ts.Fatalf("the hook payloads differ beyond the allowlist (docs/cli.md):\n%s", strings.Join(diffs, "\n"))
	}
}
