package tool

import (
	"context"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/trust"
)

// TestSuggestNarrowestPrefix: the rule a refusal suggests is the command
// prefix Claude Code would propose, not the bare program (Bash(python3:*)
// would allow any Python program).
func TestSuggestNarrowestPrefix(t *testing.T) {
	p, err := NewPermissions("default", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cmd, want string }{
		{"python3 -m pytest -q", "Bash(python3 -m pytest:*)"},
		{"python3.12 -m pip install -e .", "Bash(python3.12 -m pip:*)"},
		{"python3 manage.py migrate", "Bash(python3 manage.py:*)"},
		{"node scripts/build.js --prod", "Bash(node scripts/build.js:*)"},
		{"npm run test -- --watch=false", "Bash(npm run test:*)"},
		{"uv run pytest -x", "Bash(uv run pytest:*)"},
		{"npm install", "Bash(npm install:*)"},
		{"git commit -m wip", "Bash(git commit:*)"},
		{"rm -rf build", "Bash(rm:*)"},
		{"python3 -c 'print(1)'", "Bash(python3:*)"},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			d := p.Check("Bash", bashIn(tc.cmd), t.TempDir())
			if d.Verdict != Ask || len(d.Suggest) != 1 || d.Suggest[0] != tc.want {
				t.Errorf("%s: %v suggests %q, want [%q]", tc.cmd, d.Verdict, d.Suggest, tc.want)
			}
		})
	}
}

// TestHeldRuleAdvice: a call that an untrusted project's held-back allow
// rule would allow is still refused, and the refusal names the rule, its
// file and `brood trust` (adding it to the project's file cannot help); a
// call no held rule covers points at the user's settings file and --allow.
// Both keep one line.
func TestHeldRuleAdvice(t *testing.T) {
	base, err := NewPermissions("default", []string{"Bash(ls:*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	perms := base.WithHeld([]trust.HeldRule{
		{Rule: "Bash(python3 -m pytest:*)", File: ".claude/settings.json"},
		{Rule: "Edit(src/**)", File: ".brood/settings.toml"},
	})
	set := NewSet(Builtins()...)
	for _, tc := range []struct {
		name, cmd string
		want      []string
		not       []string
	}{
		{"held rule allows it", "python3 -m pytest -q",
			[]string{`the project's allow rule "Bash(python3 -m pytest:*)" in .claude/settings.json would allow it but is held back until you trust the project: run brood trust`},
			[]string{"to allow it add", "settings.toml"}},
		{"held rule covers a part only", "python3 -m pytest -q && curl example.com",
			[]string{`to allow it add "Bash(python3 -m pytest:*)" and "Bash(curl:*)" to [permissions] allow in ~/.config/brood/settings.toml, or pass --allow 'Bash(python3 -m pytest:*)' --allow 'Bash(curl:*)'`},
			[]string{"held back"}},
		{"no held rule", "make build",
			[]string{`to allow it add "Bash(make build:*)" to [permissions] allow in ~/.config/brood/settings.toml, or pass --allow 'Bash(make build:*)'`},
			[]string{"held back", ".brood/settings.toml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := set.Run(context.Background(), &Env{Dir: t.TempDir(), Perms: perms}, "Bash", bashIn(tc.cmd))
			if !res.IsError || strings.Contains(res.Content, "\n") {
				t.Fatalf("not a one-line refusal: %q", res.Content)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("refusal %q lacks %q", res.Content, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(res.Content, w) {
					t.Errorf("refusal %q says %q", res.Content, w)
				}
			}
		})
	}
	if d := base.Check("Bash", bashIn("python3 -m pytest"), t.TempDir()); len(d.Held) != 0 {
		t.Errorf("held rules without WithHeld: %v", d.Held)
	}
	if d := perms.Check("Bash", bashIn("python3 -m pytest"), t.TempDir()); d.Verdict != Ask {
		t.Errorf("a held-back rule allowed the call: %v", d.Verdict)
	}
}
