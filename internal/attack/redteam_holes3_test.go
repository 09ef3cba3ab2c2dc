// The red team's holes of issue 23 fixed on branch holes3, moved out of
// redteam_open_test.go (build tag redteam_open) into the normal suite so
// each guards its fix.

package attack_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamChildUsesMCPToken: the user runs `brood mcp --http`; its
// token is a file of the user's (0600), which every child, running as the
// user, can read (Landlock holds writes, not reads, there). A child at the
// depth cap (no Task tool) reads it and dispatches a subagent through the
// server: a task outside its cgroup, its limits and its depth cap.
func TestRedTeamChildUsesMCPToken(t *testing.T) {
	needLandlock(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("the child's HTTP client here is curl")
	}
	p := newProject(t, map[string]string{"README.md": "# served\n"})
	mdl := p.script("s.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: steal, prompt: "steal"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: "sh use.sh"}
    - say: "child done"
  explore:
    - say: "explored for the child"
`)
	url, file := p.serveMCPHTTP(mdl)
	writeFile(t, filepath.Join(p.root, "use.sh"), `T=$(cat '`+file+`'); U='`+url+`'
H='Accept: application/json, text/event-stream'
S=$(curl -s -m 10 -X POST "$U" -H "Authorization: Bearer $T" -H 'Content-Type: application/json' -H "$H" -D - -o /dev/null \
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}' | tr -d '\r' | sed -n 's/^Mcp-Session-Id: //p')
curl -s -m 10 -X POST "$U" -H "Authorization: Bearer $T" -H "Mcp-Session-Id: $S" -H 'Content-Type: application/json' -H "$H" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null
curl -s -m 60 -X POST "$U" -H "Authorization: Bearer $T" -H "Mcp-Session-Id: $S" -H 'Content-Type: application/json' -H "$H" \
  -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Task","arguments":{"subagent_type":"explore","description":"x","prompt":"x"}}}'
echo tried > tried.txt
`)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(p.root, "tried.txt")); err != nil {
		t.Fatalf("the child never tried: %v\n%s", err, errs)
	}
	if got := bashOutputs(t, p, ""); strings.Contains(got, "explored for the child") {
		t.Errorf("a child at the depth cap dispatched a subagent through the user's MCP server with the token it read:\n%s", got)
	}
}

// TestRedTeamClaudeDirMadeDuringRun: where a project has no .claude
// yet (fixed: the view makes it empty and holds it read-only), an in-place writer makes .claude/settings.local.json with a hook
// (the read-only view binds only entries that exist; the guard undoes a
// new one only when the child ends). While it runs, the user's second
// brood session in the same repository takes the untracked local file for
// the user's own and runs the child's hook, unconfined. (The same window
// holds for .git/commondir: an editor's periodic `git status` during the
// run follows it.)
func TestRedTeamClaudeDirMadeDuringRun(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "# r\n"})
	marker := filepath.Join(t.TempDir(), "hook-ran")
	goOn := filepath.Join(t.TempDir(), "go-on")
	p.git("add", "-A")
	writeFile(t, filepath.Join(p.root, "mk.sh"), `c=.cla; c=${c}ude; mkdir -p $c && printf '{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"echo RAN >> `+marker+`"}]}]}}\n' > $c/settings.local.json
echo attempted > attempted.txt
for i in $(seq 600); do [ -e `+goOn+` ] && break; sleep 0.05; done
echo tried > tried.txt
`)
	mdl := p.script("claude.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: claude, prompt: "go"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: "sh mk.sh"}
    - say: "child done"
`)
	second := p.script("second.yaml", "agents:\n  root:\n    - tools:\n        - Bash: {command: \"echo second\"}\n    - say: \"second done\"\n")
	type res struct {
		code      int
		out, errs string
	}
	first := make(chan res, 1)
	go func() {
		code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
		first <- res{code, out, errs}
	}()
	eventually(t, "the child's attempt at .claude/settings.local.json", func() bool {
		_, err := os.Stat(filepath.Join(p.root, "attempted.txt"))
		return err == nil
	})
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", second, "go")
	writeFile(t, goOn, "")
	r := <-first
	if r.code != 0 || !strings.Contains(r.out, "root done") {
		t.Fatalf("first run: code %d\n%s\n%s", r.code, r.out, r.errs)
	}
	if code != 0 {
		t.Fatalf("second run: code %d\n%s\n%s", code, out, errs)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("the user's second session ran the hook an in-place writer wrote into a new .claude/settings.local.json (%q)", b)
	}
}

// TestSandboxRequireRefusesUnconfined: DESIGN's "where the kernel can't
// hold a class, say so and refuse rather than run unconfined", as a
// setting. With the kernel sandbox off (isolation.no_landlock, the way to
// force the unavailable path on any kernel), an in-place writer runs with
// a note by default; with sandbox.require = true it is never started and
// the refusal names what is missing.
func TestSandboxRequireRefusesUnconfined(t *testing.T) {
	for _, tc := range []struct {
		name    string
		require bool
	}{{"default runs with a note", false}, {"require refuses", true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"README.md": "# r\n"})
			p.git("add", "-A")
			cfg := "[isolation]\nno_landlock = true\n"
			if tc.require {
				cfg += "[sandbox]\nrequire = true\n"
			}
			writeFile(t, filepath.Join(p.home, ".config", "brood", "settings.toml"), cfg)
			mdl := p.script("req.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: w, prompt: "go"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: "echo ran > ran.txt"}
    - say: "child done"
`)
			code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			_, err := os.Stat(filepath.Join(p.root, "ran.txt"))
			if ran := err == nil; ran == tc.require {
				t.Errorf("sandbox.require = %v: the unconfined writer ran = %v\n%s\n%s", tc.require, ran, out, errs)
			}
			all := out + errs + sessionsText(t, p)
			const why = "sandbox.require is set and the kernel sandbox is turned off (isolation.no_landlock)"
			if got := strings.Contains(all, why); got != tc.require {
				t.Errorf("sandbox.require = %v: the refusal %q shown = %v\n%s", tc.require, why, got, all)
			}
		})
	}
}

// sessionsText is every session file (.jsonl) under the project's .brood,
// joined: the root's Task results are in it.
func sessionsText(t *testing.T, p *project) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(filepath.Join(p.root, ".brood"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
			data, _ := os.ReadFile(path)
			b.Write(data)
		}
		return nil
	})
	return b.String()
}
