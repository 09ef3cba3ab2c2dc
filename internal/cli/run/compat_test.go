package run_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli"
	"github.com/broodhq/brood/internal/cli/clitest"
)

// echoScript answers with what the model was given: the prompt, the tools
// offered and the system prompt's last line.
const echoScript = `agents:
  root:
    - say: "PROMPT={{.Prompt}} TOOLS={{join .Tools \",\"}} SYSTEM={{.System}}"
`

// writeScript calls Write once, then says the file's fate.
const writeScript = `agents:
  root:
    - tools:
        - Write: {file_path: out.txt, content: "hi"}
    - say: "RESULT={{result 0}}"
`

// TestClaudeFlags: every claude -p flag issue 27 lists is accepted (exit
// 0, never 2) and does what docs/cli.md says: works as in Claude Code, or
// a one-line note on stderr says what brood does instead.
func TestClaudeFlags(t *testing.T) {
	appendFile := filepath.Join(t.TempDir(), "extra.md")
	if err := os.WriteFile(appendFile, []byte("FROM-A-FILE"), 0o644); err != nil {
		t.Fatal(err)
	}
	noted := func(flag string) func(t *testing.T, out, errOut string) {
		return func(t *testing.T, out, errOut string) {
			if !strings.Contains(errOut, "brood: --"+flag+": accepted; ") {
				t.Errorf("stderr lacks the note for --%s:\n%s", flag, errOut)
			}
			if !strings.HasPrefix(out, "PROMPT=Say hello TOOLS=") {
				t.Errorf("stdout %q", out)
			}
		}
	}
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, out, errOut string)
	}{
		{"dangerously-skip-permissions", []string{"--dangerously-skip-permissions"}, func(t *testing.T, out, errOut string) {
			if !strings.HasPrefix(out, "PROMPT=Say hello ") || strings.Contains(errOut, "accepted;") {
				t.Errorf("stdout %q stderr %q", out, errOut)
			}
		}},
		{"append-system-prompt", []string{"--append-system-prompt", "APPENDED-LINE"}, func(t *testing.T, out, _ string) {
			if !strings.HasSuffix(strings.TrimSpace(out), "APPENDED-LINE") {
				t.Errorf("the system prompt does not end with the appended text: %q", out)
			}
		}},
		{"append-system-prompt-file", []string{"--append-system-prompt-file", appendFile}, func(t *testing.T, out, _ string) {
			if !strings.HasSuffix(strings.TrimSpace(out), "FROM-A-FILE") {
				t.Errorf("stdout %q", out)
			}
		}},
		{"system-prompt-file", []string{"--system-prompt-file", appendFile}, func(t *testing.T, out, _ string) {
			if !strings.Contains(out, "SYSTEM=FROM-A-FILE") {
				t.Errorf("stdout %q", out)
			}
		}},
		{"disallowedTools Task is off the list", []string{"--disallowedTools", "Task"}, toolGone("Task")},
		{"disallowedTools Agent is Task", []string{"--disallowedTools", "Agent"}, toolGone("Task")},
		{"disallowed-tools kebab", []string{"--disallowed-tools", "Grep,Glob"}, toolGone("Grep", "Glob")},
		{"disallowedTools variadic", []string{"--disallowedTools", "Grep", "Glob", "--"}, toolGone("Grep", "Glob")},
		{"rule is not a removal", []string{"--disallowedTools", "Bash(rm:*)"}, func(t *testing.T, out, _ string) {
			if !strings.Contains(out, ",Bash,") && !strings.Contains(out, "=Bash,") {
				t.Errorf("a rule on some calls took Bash off the list: %q", out)
			}
		}},
		{"allowed-tools kebab", []string{"--allowed-tools", "Read"}, func(t *testing.T, out, errOut string) {
			if !strings.HasPrefix(out, "PROMPT=Say hello TOOLS=") || errOut != "" && strings.Contains(errOut, "accepted;") {
				t.Errorf("stdout %q stderr %q", out, errOut)
			}
		}},
		{"verbose", []string{"--verbose"}, func(t *testing.T, out, _ string) {
			// Without --disallowedTools the model is offered Task: the
			// removals above prove something.
			if !strings.Contains(out, ",Task,") && !strings.Contains(out, "=Task,") {
				t.Errorf("Task is not offered by default: %q", out)
			}
		}},
		{"input-format text", []string{"--input-format", "text"}, nil},
		{"brood-exit-codes", []string{"--brood-exit-codes"}, nil},
		{"max-budget-usd", []string{"--max-budget-usd", "1.50"}, nil},                                                                    // TestMaxBudgetUSD checks the stop
		{"fallback-model", []string{"--fallback-model", "anthropic/claude-haiku-4-5"}, nil},                                              // TestFallbackModel checks the switch
		{"fork-session", []string{"--fork-session"}, works},                                                                              // TestForkSession checks the fork
		{"permission-prompt-tool", []string{"--mcp-config", approveConfig(t), "--permission-prompt-tool", "mcp__notes__approve"}, works}, // TestPermissionPromptTool
		{"setting-sources", []string{"--setting-sources", "user,project"}, works},                                                        // TestSettingSources
		{"agents", []string{"--agents", `{"r":{"description":"d","prompt":"p"}}`}, works},                                                // TestAgentsFlag checks them
	}
	for _, n := range []struct{ flag, val string }{
		{"allow-dangerously-skip-permissions", ""},
		{"debug", ""}, {"bare", ""},
		{"disable-slash-commands", ""}, {"betas", "x"}, {"name", "ci"},
	} {
		args := []string{"--" + n.flag}
		if n.val != "" {
			args = append(args, n.val)
		}
		tests = append(tests, struct {
			name  string
			args  []string
			check func(t *testing.T, out, errOut string)
		}{n.flag, args, noted(n.flag)})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := clitest.NewProject(t)
			args := append([]string{"-p", "--model", p.Script("s.yaml", echoScript)}, tc.args...)
			if tc.args[len(tc.args)-1] != "--" {
				args = append(args, "--")
			}
			code, out, errOut := p.Brood(append(args, "Say hello")...)
			if code != 0 {
				t.Fatalf("%v: exit %d, stderr:\n%s", tc.args, code, errOut)
			}
			if strings.Count(errOut, "accepted;") > 1 {
				t.Errorf("more than one note line:\n%s", errOut)
			}
			if tc.check != nil {
				tc.check(t, out, errOut)
			}
		})
	}
}

// works checks that a flag brood implements prints no note.
func works(t *testing.T, _, errOut string) {
	if strings.Contains(errOut, "accepted;") {
		t.Errorf("a note for a flag that works:\n%s", errOut)
	}
}

func toolGone(names ...string) func(t *testing.T, out, errOut string) {
	return func(t *testing.T, out, _ string) {
		_, after, _ := strings.Cut(out, "TOOLS=")
		list, _, _ := strings.Cut(after, " ")
		tools := strings.Split(list, ",")
		if len(tools) < 5 {
			t.Fatalf("tools %q: too few, the check would prove nothing", list)
		}
		for _, n := range names {
			for _, have := range tools {
				if have == n {
					t.Errorf("%s is still offered to the model: %s", n, list)
				}
			}
		}
	}
}

// TestSettingsDenyAgent: a bare "Agent" deny rule in .claude/settings.json
// (a narrowing: no trust needed) takes Task off the model's list too.
func TestSettingsDenyAgent(t *testing.T) {
	p := clitest.NewProject(t)
	clitest.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.json"), `{"permissions": {"deny": ["Agent"]}}`)
	code, out, errOut := p.Brood("-p", "--model", p.Script("s.yaml", echoScript), "Say hello")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	toolGone("Task", "Agent")(t, out, errOut)
}

// TestAllowedToolsVariadic: --allowedTools takes every following argument
// up to the next flag, as Claude Code (commander.js) does: `Write` is
// allowed and not part of the prompt. A prompt written after the values
// is taken as one too, with Claude Code's note, and the run stops for
// want of a prompt (exit 1, as claude -p).
func TestAllowedToolsVariadic(t *testing.T) {
	p := clitest.NewProject(t)
	spec := p.Script("w.yaml", writeScript)
	// Without the allow, headless Write is refused (and listed with its input).
	code, out, errOut := p.Brood("-p", "--output-format", "json", "--model", spec, "make it")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Result  string `json:"result"`
		Denials []struct {
			ToolName  string          `json:"tool_name"`
			ToolInput json.RawMessage `json:"tool_input"`
		} `json:"permission_denials"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err, out)
	}
	if len(res.Denials) != 1 || res.Denials[0].ToolName != "Write" || !strings.Contains(string(res.Denials[0].ToolInput), `"file_path":"out.txt"`) {
		t.Fatalf("denials %+v (result %q)", res.Denials, res.Result)
	}
	// With it, given Claude Code's way: two values after one flag.
	code, out, errOut = p.Brood("-p", "--allowedTools", "Bash(git log:*)", "Write", "--model", spec, "make it")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(p.Root, "out.txt")); err != nil || string(b) != "hi" {
		t.Fatalf("Write was not allowed: %v %q; stdout %q", err, b, out)
	}
	// The prompt after the values is a value, as in Claude Code.
	code, out, errOut = p.Brood("-p", "--model", spec, "--allowedTools", "Bash(git log:*)", "Write", "Say hello")
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for _, w := range []string{`"Say hello" was read as a value of --allowedTools, not as a prompt`, "no prompt:"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
}

// loopScript lists the directory five times, then answers.
const loopScript = `agents:
  root:
    - tools: [{LS: {path: "."}}]
    - tools: [{LS: {path: "."}}]
    - tools: [{LS: {path: "."}}]
    - tools: [{LS: {path: "."}}]
    - tools: [{LS: {path: "."}}]
    - say: "all done"
`

// TestMaxBudgetUSD: --max-budget-usd stops the run once the spend at the
// price table reaches the cap: error_max_budget_usd, exit 1, fewer turns
// than the script has; a cap above the spend changes nothing.
func TestMaxBudgetUSD(t *testing.T) {
	p := clitest.NewProject(t)
	// A dollar per input token: the first turn alone costs more than $10.
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "[prices.script]\ninput = 1000000.0\noutput = 0.0\n")
	spec := p.Script("loop.yaml", loopScript)
	code, out, errOut := p.Brood("-p", "--output-format", "json", "--max-budget-usd", "10", "--model", spec, "list it")
	var r struct {
		Subtype  string   `json:"subtype"`
		IsError  bool     `json:"is_error"`
		NumTurns int      `json:"num_turns"`
		Errors   []string `json:"errors"`
		Cost     float64  `json:"total_cost_usd"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("exit %d: %v %q %s", code, err, out, errOut)
	}
	if code != 1 || r.Subtype != "error_max_budget_usd" || !r.IsError || r.NumTurns >= 6 || r.Cost < 10 || len(r.Errors) != 1 {
		t.Errorf("exit %d, result %+v, stderr:\n%s", code, r, errOut)
	}
	if !strings.Contains(errOut, "--max-budget-usd: the run has spent $") {
		t.Errorf("stderr:\n%s", errOut)
	}
	code, out, errOut = p.Brood("-p", "--output-format", "json", "--max-budget-usd", "1000000", "--model", spec, "list it")
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || r.Subtype != "success" || r.NumTurns != 6 {
		t.Errorf("under the cap: exit %d, %+v, %v\n%s", code, r, err, errOut)
	}
}

// TestJSONSchema: --json-schema asks for a JSON answer, sends one that
// does not validate back (the conversation intact) and puts the valid
// value in structured_output; after the retries the run fails with
// error_max_structured_output_retries, exit 1.
func TestJSONSchema(t *testing.T) {
	const schema = `{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`
	tests := []struct {
		name, script, subtype, structured string
		code, turns                       int
	}{
		{"second answer validates", "agents:\n  root:\n    - say: \"no json here\"\n    - say: \"Here:\\n```json\\n{\\\"n\\\": 3}\\n```\"\n",
			"success", `{"n":3}`, 0, 2},
		{"never validates", "agents:\n  root:\n    - say: \"no\"\n    - say: \"still no\"\n    - say: \"{\\\"n\\\": \\\"three\\\"}\"\n",
			"error_max_structured_output_retries", "", 1, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := clitest.NewProject(t)
			code, out, errOut := p.Brood("-p", "--output-format", "json", "--json-schema", schema, "--model", p.Script("s.yaml", tc.script), "count")
			var r struct {
				Subtype    string          `json:"subtype"`
				NumTurns   int             `json:"num_turns"`
				Structured json.RawMessage `json:"structured_output"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("exit %d: %v %q\n%s", code, err, out, errOut)
			}
			if code != tc.code || r.Subtype != tc.subtype || r.NumTurns != tc.turns || string(r.Structured) != tc.structured {
				t.Errorf("exit %d, %+v (structured %s), stderr:\n%s", code, r, r.Structured, errOut)
			}
		})
	}
	// A schema refused says so in one line: the hint of an example for
	// one that is no JSON, what to write for one the validator would
	// skip part of (draft-07's tuple items, unchecked under 2020-12).
	p := clitest.NewProject(t)
	for _, tc := range []struct{ schema, want string }{
		{"{not json", `brood: --json-schema: output schema is not JSON: invalid character 'n' looking for beginning of object key string; give a JSON Schema object, e.g. '{"type":"object"}'`},
		{`{"type":"array","items":[{"type":"string"},{"type":"integer"}]}`, `brood: --json-schema: output schema: "items" at / is an array of schemas (the tuple form of draft-04 and draft-07), which draft 2020-12 does not read: write it as "prefixItems"`},
	} {
		code, _, errOut := p.Brood("-p", "--json-schema", tc.schema, "--model", p.Script("s.yaml", echoScript), "x")
		if code != 1 || !strings.HasPrefix(errOut, tc.want) || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "prefixItems") && strings.Contains(errOut, "e.g.") {
			t.Errorf("bad schema %s: exit %d, %q\nwant one line starting %q", tc.schema, code, errOut, tc.want)
		}
	}
}

// TestFallbackModel: when the model's calls fail, --fallback-model takes
// the same conversation over and the run succeeds; without it the run
// fails (exit 1).
func TestFallbackModel(t *testing.T) {
	p := clitest.NewProject(t)
	broken := p.Script("broken.yaml", "agents:\n  root:\n    - say: \"{{nosuch}}\"\n")
	good := p.Script("good.yaml", echoScript)
	code, out, errOut := p.Brood("-p", "--model", broken, "--fallback-model", good, "Say hello")
	if code != 0 || !strings.HasPrefix(out, "PROMPT=Say hello ") || !strings.Contains(errOut, "continuing with --fallback-model") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if code, _, _ := p.Brood("-p", "--model", broken, "Say hello"); code != 1 {
		t.Errorf("without a fallback: exit %d, want 1", code)
	}
}

// TestInputFormatStreamJSON: --input-format stream-json reads the prompt
// from JSON lines on stdin (the user messages' text, a string or text
// blocks, in order); a line that is not JSON exits 1 naming the line.
func TestInputFormatStreamJSON(t *testing.T) {
	p := clitest.NewProject(t)
	spec := p.Script("s.yaml", echoScript)
	run := func(stdin string) (int, string, string) {
		var out, errb clitest.SyncBuffer
		code := cli.Main(t.Context(), cli.IO{In: strings.NewReader(stdin), Out: &out, Err: &errb,
			Getenv: func(k string) string { return p.Env[k] }},
			[]string{"-p", "--input-format", "stream-json", "--model", spec})
		return code, out.String(), errb.String()
	}
	code, out, errOut := run(`{"type":"user","message":{"role":"user","content":"Say"}}
{"type":"system","subtype":"noise"}
{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hello"},{"type":"image","source":{}}]}}
`)
	if code != 0 || !strings.HasPrefix(out, "PROMPT=Say\nhello TOOLS=") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	code, _, errOut = run("{\"type\":\"user\",\"message\":{\"content\":\"x\"}}\nnot json\n")
	if code != 1 || !strings.Contains(errOut, "stdin line 2") {
		t.Errorf("bad line: exit %d, stderr %q", code, errOut)
	}
}
