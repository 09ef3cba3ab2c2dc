package registry

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

func agentFile(name, desc string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: " + desc + "\n---\nPrompt of " + desc + ".\n")}
}

func TestBuiltins(t *testing.T) {
	reg, diags := Load(Options{})
	if len(diags) != 0 {
		t.Fatalf("built-ins gave diagnostics: %v", diags)
	}
	var names []string
	for _, d := range reg.All() {
		names = append(names, d.Name)
		if d.Source != SourceBuiltin || d.Prompt == "" || !strings.HasPrefix(d.Path, "<built-in>/") {
			t.Errorf("%s: %+v", d.Name, d)
		}
	}
	if want := []string{"explore", "general-purpose", "plan"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("built-ins = %v, want %v", names, want)
	}
	for _, n := range []string{"explore", "plan"} {
		d, _ := reg.Get(n)
		// Read-only by sandbox: the read-only tools plus Bash, which the
		// kernel holds read-only (or the dispatcher withdraws).
		if !d.ReadOnly || !d.SandboxReadOnly || !reflect.DeepEqual(d.Tools, append(ReadOnlyTools(), "Bash")) || d.Delegate {
			t.Errorf("%s must be strictly read-only: %+v", n, d)
		}
	}
	gp, _ := reg.Get("General-Purpose")
	if gp == nil || !gp.Delegate || gp.DelegateAllow != nil || !gp.AllTools {
		t.Errorf("general-purpose: %+v", gp)
	}
}

func TestPrecedence(t *testing.T) {
	builtin := fstest.MapFS{"explore.md": agentFile("explore", "builtin explore")}
	userBrood := fstest.MapFS{
		"a.md":          agentFile("alpha", "user brood alpha"),
		"b.md":          agentFile("beta", "user brood beta"),
		"nested/ex.md":  agentFile("Explore", "user explore"),
		"README.md":     &fstest.MapFile{Data: []byte("# Agents\n")},
		"notes.txt":     &fstest.MapFile{Data: []byte("---\nname: txt\n---\n")},
		"sub/dup.md":    agentFile("gamma", "user brood gamma 1"),
		"sub/dup2.md":   agentFile("GAMMA", "user brood gamma 2"),
		"broken/bad.md": &fstest.MapFile{Data: []byte("---\nname: bad\ndescription: d\nhooks:\n  x: [\n---\n")},
	}
	userClaude := fstest.MapFS{
		"alpha.md": agentFile("alpha", "user claude alpha"),
		"delta.md": agentFile("delta", "user claude delta"),
	}
	projBrood := fstest.MapFS{"b.md": agentFile("beta", "project brood beta")}
	projClaude := fstest.MapFS{
		"d.md": agentFile("delta", "project claude delta"),
		"p.md": agentFile("plan", "project plan"),
	}
	// Deliberately out of order: LoadDirs sorts by precedence itself.
	reg, diags := LoadDirs(builtin,
		Dir{Path: "/p/.claude/agents", FS: projClaude, Source: SourceProject, Claude: true},
		Dir{Path: "/h/.claude/agents", FS: userClaude, Source: SourceUser, Claude: true},
		Dir{Path: "/p/.brood/agents", FS: projBrood, Source: SourceProject},
		Dir{Path: "/h/.config/brood/agents", FS: userBrood, Source: SourceUser},
	)
	desc := map[string]string{}
	for _, d := range reg.All() {
		desc[d.Name] = d.Description
	}
	want := map[string]string{
		"explore": "builtin explore",      // a built-in can't be shadowed
		"alpha":   "user brood alpha",     // brood dir beats .claude at one level
		"beta":    "project brood beta",   // project beats user
		"delta":   "project claude delta", // project .claude beats user .claude
		"gamma":   "user brood gamma 1",   // same dir: first path wins
		"plan":    "project plan",         // not a built-in in this test, so a project one is fine
	}
	if !reflect.DeepEqual(desc, want) {
		t.Errorf("resolved = %v\nwant %v", desc, want)
	}
	beta, _ := reg.Get("BETA")
	if beta.Source != SourceProject || !reflect.DeepEqual(beta.Overrides, []string{"/h/.config/brood/agents/b.md"}) {
		t.Errorf("beta: source %s overrides %v", beta.Source, beta.Overrides)
	}

	wantDiags := []string{
		"/h/.config/brood/agents/README.md:1: warning: no frontmatter at the start of the file",
		"/h/.config/brood/agents/broken/bad.md:5: error:",
		`/h/.config/brood/agents/nested/ex.md:2: warning: "explore" is a built-in agent`,
		`/h/.config/brood/agents/sub/dup2.md:2: warning: agent "GAMMA" is also defined in /h/.config/brood/agents/sub/dup.md`,
		`/h/.claude/agents/alpha.md:2: warning: agent "alpha" is also defined in /h/.config/brood/agents/a.md`,
	}
	var got []string
	for _, d := range diags {
		got = append(got, d.String())
	}
	if len(got) != len(wantDiags) {
		t.Fatalf("diagnostics:\n%s", strings.Join(got, "\n"))
	}
	for i, w := range wantDiags {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("diagnostic %d = %q, want prefix %q", i, got[i], w)
		}
	}
}

// TestOptionsDirs: the user directories are ~/.config/brood/agents, then
// ~/.brood/agents (HooCode's ~/.hoocode/agents maps there; the config
// directory wins a tie), then ~/.claude/agents; a project at home reads
// its .brood/agents once, as the project's.
func TestOptionsDirs(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want []Dir
	}{
		{"nothing", Options{}, nil},
		{"all", Options{ProjectRoot: "/p", Home: "/h", Claude: true}, []Dir{
			{Path: "/h/.config/brood/agents", Source: SourceUser},
			{Path: "/h/.brood/agents", Source: SourceUser},
			{Path: "/h/.claude/agents", Source: SourceUser, Claude: true},
			{Path: "/p/.brood/agents", Source: SourceProject, Within: "/p"},
			{Path: "/p/.claude/agents", Source: SourceProject, Claude: true, Within: "/p"},
		}},
		{"claude off, config dir", Options{ProjectRoot: "/p", Home: "/h", ConfigDir: "/xdg/brood"}, []Dir{
			{Path: "/xdg/brood/agents", Source: SourceUser},
			{Path: "/h/.brood/agents", Source: SourceUser},
			{Path: "/p/.brood/agents", Source: SourceProject, Within: "/p"},
		}},
		{"project is home", Options{ProjectRoot: "/h", Home: "/h", Claude: true}, []Dir{
			{Path: "/h/.config/brood/agents", Source: SourceUser},
			{Path: "/h/.brood/agents", Source: SourceProject, Within: "/h"},
			{Path: "/h/.claude/agents", Source: SourceProject, Claude: true, Within: "/h"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.opts.Dirs(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Dirs() = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadFromDisk(t *testing.T) {
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	write(t, filepath.Join(home, ".claude/agents/rev.md"), "---\nname: rev\ndescription: user claude\n---\n")
	write(t, filepath.Join(proj, ".git/HEAD"), "ref: x\n")
	write(t, filepath.Join(proj, ".claude/agents/web.md"), "---\nname: web\ndescription: project claude\n---\n")
	write(t, filepath.Join(proj, ".brood/agents/deep/x/rev.md"), "---\nname: rev\ndescription: project brood\n---\n")
	write(t, filepath.Join(proj, "src/pkg/file.go"), "package pkg\n")

	got := FindProjectRoot(filepath.Join(proj, "src/pkg"))
	if got != proj {
		t.Fatalf("FindProjectRoot = %q, want %q", got, proj)
	}
	for _, claude := range []bool{true, false} {
		reg, diags := Load(Options{ProjectRoot: got, Home: home, Claude: claude})
		if len(diags) != 0 {
			t.Fatalf("claude=%v: %v", claude, diags)
		}
		rev, _ := reg.Get("rev")
		if rev.Description != "project brood" {
			t.Errorf("claude=%v: rev = %+v", claude, rev)
		}
		_, hasWeb := reg.Get("web")
		if hasWeb != claude {
			t.Errorf("claude=%v: web loaded = %v", claude, hasWeb)
		}
		if claude && !reflect.DeepEqual(rev.Overrides, []string{filepath.Join(home, ".claude/agents/rev.md")}) {
			t.Errorf("overrides = %v", rev.Overrides)
		}
	}
}

func TestFindProjectRoot(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a/.brood/settings.toml"), "")
	write(t, filepath.Join(root, "a/b/.git"), "gitdir: elsewhere\n") // a worktree's .git file
	if err := os.MkdirAll(filepath.Join(root, "a/b/c"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := map[string]string{
		"a/b/c": filepath.Join(root, "a/b"),
		"a/b":   filepath.Join(root, "a/b"),
		"a":     filepath.Join(root, "a"),
	}
	for dir, want := range tests {
		if got := FindProjectRoot(filepath.Join(root, dir)); got != want {
			t.Errorf("FindProjectRoot(%s) = %q, want %q", dir, got, want)
		}
	}
}

func TestCheckPath(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "ok.md"), "---\nname: ok\ndescription: fine\neffort: extreme\n---\n")
	write(t, filepath.Join(dir, "sub/dup.md"), "---\nname: ok\ndescription: again\n---\n")
	write(t, filepath.Join(dir, "bad.md"), "---\nname: bad\n---\n")
	write(t, filepath.Join(dir, "README.md"), "# docs\n")

	defs, diags := CheckPath(dir)
	if len(defs) != 2 {
		t.Errorf("defs = %d, want 2", len(defs))
	}
	var got []string
	for _, d := range diags {
		got = append(got, strings.TrimPrefix(d.String(), dir+"/"))
	}
	want := []string{
		"README.md:1: warning: " + noFrontmatter("").Message,
		"bad.md:2: error: description is required",
		`ok.md:4: warning: effort: "extreme" is not one of low, medium, high, xhigh, max; ignored`,
		`sub/dup.md:2: warning: agent "ok" is also defined in ` + filepath.Join(dir, "ok.md"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A file named explicitly is reported even without frontmatter.
	_, diags = CheckPath(filepath.Join(dir, "README.md"))
	if len(diags) != 1 || !strings.Contains(diags[0].Message, "no frontmatter") {
		t.Errorf("README: %v", diags)
	}
	_, diags = CheckPath(filepath.Join(dir, "missing.md"))
	if !HasErrors(diags) {
		t.Errorf("missing file: %v", diags)
	}
}

func TestLoadDirIsAFile(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".brood/agents"), "oops")
	_, diags := Load(Options{ProjectRoot: dir})
	if len(diags) != 1 || diags[0].Severity != SeverityWarning || !strings.Contains(diags[0].Message, "not a directory") {
		t.Errorf("diags = %v", diags)
	}
}

// TestModelLine: a definition knows the line of its model: key, in both
// project directories, so that a model held back until the project is
// trusted is named where it is written; inherit is no model, and a file
// without the key has no line.
func TestModelLine(t *testing.T) {
	proj := t.TempDir()
	write(t, filepath.Join(proj, ".git/HEAD"), "ref: x\n")
	write(t, filepath.Join(proj, ".claude/agents/a.md"), "---\nname: a\ndescription: d\nmodel: opus\n---\n")
	write(t, filepath.Join(proj, ".brood/agents/b.md"), "---\nname: b\ndescription: d\ntools: Read\n# why\nmodel: openai/gpt-5\n---\n")
	write(t, filepath.Join(proj, ".brood/agents/c.md"), "---\nname: c\nmodel: inherit\ndescription: d\n---\n")
	write(t, filepath.Join(proj, ".brood/agents/d.md"), "---\nname: d\ndescription: d\n---\n")
	reg, diags := Load(Options{ProjectRoot: proj, Home: t.TempDir(), Claude: true})
	if len(diags) != 0 {
		t.Fatal(diags)
	}
	for _, c := range []struct {
		name, model string
		line        int
	}{
		{"a", "opus", 4},
		{"b", "openai/gpt-5", 6},
		{"c", "", 3},
		{"d", "", 0},
	} {
		def, ok := reg.Get(c.name)
		if !ok || def.Source != SourceProject || def.Model != c.model || def.ModelLine() != c.line {
			t.Errorf("%s: model %q at line %d, want %q at %d (%+v)", c.name, def.Model, def.ModelLine(), c.model, c.line, def)
		}
	}
}
