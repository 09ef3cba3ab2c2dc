package spawntrace

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestOffCostsNothing(t *testing.T) {
	ctx := Start(context.Background(), env(nil))
	if On(ctx) {
		t.Fatal("traced without " + EnvVar)
	}
	Mark(ctx, "records")
	in := []string{"A=1"}
	if got := Env(ctx, in); !slices.Equal(got, in) {
		t.Fatalf("Env changed an untraced command's environment: %q", got)
	}
	dir := t.TempDir()
	if err := Write(ctx, dir, ParentFile); err != nil {
		t.Fatal(err)
	}
	if err := WriteWith(ctx, ParentFile, func(string, []byte, bool) error { return os.ErrInvalid }); err != nil {
		t.Fatal("an untraced dispatch called the writer:", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("an untraced dispatch wrote %d files", len(ents))
	}
	if On(Child(context.Background(), env(map[string]string{EnvVar: "junk"}))) {
		t.Fatal("a child traced with a start that is not a number")
	}
}

func TestParentToChildRoundTrip(t *testing.T) {
	ctx := Start(context.Background(), env(map[string]string{EnvVar: "1"}))
	Mark(ctx, "records")
	Mark(ctx, "exec")
	cmdEnv := Env(ctx, []string{"PATH=/bin", EnvVar + "=planted"})
	var passed string
	for _, e := range cmdEnv {
		if v, ok := cutPrefix(e, EnvVar+"="); ok {
			if passed != "" {
				t.Fatalf("two %s in the child's environment: %q", EnvVar, cmdEnv)
			}
			passed = v
		}
	}
	cctx := Child(context.Background(), env(map[string]string{EnvVar: passed}))
	Mark(cctx, "ready")
	dir := t.TempDir()
	// The parent writes through its task directory's writer, the child
	// into its own directory.
	write := func(name string, data []byte, sync bool) error {
		return os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	if err := WriteWith(ctx, ParentFile, write); err != nil {
		t.Fatal(err)
	}
	if err := Write(cctx, dir, ChildFile); err != nil {
		t.Fatal(err)
	}
	p, err := Read(filepath.Join(dir, ParentFile))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Read(filepath.Join(dir, ChildFile))
	if err != nil {
		t.Fatal(err)
	}
	if strconv.FormatInt(p.Start, 10) != passed || c.Start != p.Start {
		t.Fatalf("start: parent %d, passed %q, child %d", p.Start, passed, c.Start)
	}
	sent, first := p.Start-1000, Now()+1000
	st := Stages(p, c, sent, first)
	var names []string
	var sum int64
	for _, s := range st {
		names = append(names, s.Name)
		if s.Dur < 0 {
			t.Errorf("stage %s: negative %d", s.Name, s.Dur)
		}
		sum += s.Dur
	}
	want := []string{"dispatch", "records", "exec", "init", "ready", "first request"}
	if !slices.Equal(names, want) {
		t.Fatalf("stages %q, want %q", names, want)
	}
	if sum != first-sent {
		t.Fatalf("stages sum to %d, want %d: a gap has no owner", sum, first-sent)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("%d files in the task directory, want the 2 records (no temporary left)", len(ents))
	}
}

func TestStagesOrderByTime(t *testing.T) {
	p := Record{Start: 100, Marks: []Point{{"records", 110}, {"exec", 140}}}
	c := Record{Start: 100, Marks: []Point{{"init", 130}, {"ready", 150}}}
	got := Stages(p, c, 90, 170)
	want := []Stage{{"dispatch", 10}, {"records", 10}, {"init", 20}, {"exec", 10}, {"ready", 10}, {"first request", 20}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// A warm child started before the tool_use: its init is not the spawn's.
	warm := Record{Start: 100, Marks: []Point{{"init", 50}, {"ready", 150}}}
	got = Stages(p, warm, 90, 170)
	want = []Stage{{"dispatch", 10}, {"records", 10}, {"exec", 30}, {"ready", 10}, {"first request", 20}}
	if !slices.Equal(got, want) {
		t.Fatalf("warm: got %v, want %v", got, want)
	}
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return "", false
}
