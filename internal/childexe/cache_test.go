package childexe

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDigestVerdictRemembered: the digest check of an unversioned build
// runs once per pair of files, not once per process; any change to either
// file (a rebuild, a reinstall, a touch) makes the next process check
// again, and a file that changed during the check is never vouched for.
func TestDigestVerdictRemembered(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	self, cand := filepath.Join(dir, "brood"), filepath.Join(dir, Name)
	for _, p := range []string{self, cand} {
		if err := os.WriteFile(p, []byte("binary "+p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	later := time.Now().Add(time.Hour)
	steps := []struct {
		name      string
		change    func() error // before the call
		during    func() error // inside the check
		why       string       // what the check says
		wantCheck bool
	}{
		{name: "first process checks", why: "", wantCheck: true},
		{name: "second process remembers", why: "never asked", wantCheck: false},
		{name: "lean binary touched", change: func() error { return os.Chtimes(cand, later, later) }, why: "other source", wantCheck: true},
		{name: "a negative verdict is remembered too", why: "never asked", wantCheck: false},
		{name: "brood replaced", change: func() error {
			if err := os.WriteFile(self+".new", []byte("another build"), 0o755); err != nil {
				return err
			}
			return os.Rename(self+".new", self)
		}, why: "", wantCheck: true},
		{name: "remembered after the replacement", why: "never asked", wantCheck: false},
		{name: "replaced during the check", change: func() error { return os.Chtimes(cand, later.Add(time.Hour), later.Add(time.Hour)) },
			during: func() error { return os.WriteFile(cand, []byte("swapped while checked"), 0o755) }, why: "", wantCheck: true},
		{name: "not remembered: checks again", why: "", wantCheck: true},
	}
	prev := ""
	for _, s := range steps {
		if s.change != nil {
			if err := s.change(); err != nil {
				t.Fatal(s.name, err)
			}
		}
		checked := false
		got := sameSourceCached(self, cand, func() string {
			checked = true
			if s.during != nil {
				if err := s.during(); err != nil {
					t.Fatal(s.name, err)
				}
			}
			return s.why
		})
		if checked != s.wantCheck {
			t.Fatalf("%s: checked = %v, want %v", s.name, checked, s.wantCheck)
		}
		want := s.why
		if !s.wantCheck {
			want = prev
		}
		if got != want {
			t.Fatalf("%s: verdict %q, want %q", s.name, got, want)
		}
		prev = got
	}
}

// TestFindNamedRemembersTheCheck runs the real check through FindNamed: a
// lean candidate that is this very test binary (so its build info matches
// and, unversioned and unstamped, its bytes decide) is taken and checked
// once; the second lookup reads the remembered verdict.
func TestFindNamedRemembersTheCheck(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	self, cand := filepath.Join(dir, "brood"), filepath.Join(dir, Name)
	for _, p := range []string{self, cand} {
		if err := os.Link(exe, p); err != nil {
			b, rerr := os.ReadFile(exe)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if err := os.WriteFile(p, b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	first := FindNamed(self, Name)
	if !first.Lean || first.Path != cand {
		t.Fatalf("the same bytes were refused: %+v", first)
	}
	ents, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "brood", "lean", "*.json"))
	if len(ents) != 1 {
		t.Fatalf("after the first lookup (%+v): %d remembered verdicts, want 1", first, len(ents))
	}
	second := FindNamed(self, Name)
	if first != second {
		t.Fatalf("remembered choice %+v differs from the checked one %+v", second, first)
	}
}
