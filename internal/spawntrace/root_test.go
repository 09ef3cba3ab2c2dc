package spawntrace

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
)

// TestRootRoundTrip: a root started with its starter's instant marks its
// stages apart from any dispatch's, writes them, and they read back as
// stages that sum to its whole run.
func TestRootRoundTrip(t *testing.T) {
	start := Now()
	ctx := Root(context.Background(), env(map[string]string{RootEnvVar: strconv.FormatInt(start, 10)}))
	dctx := Start(ctx, env(map[string]string{EnvVar: "1"})) // a dispatch below it
	Mark(dctx, "records")
	RootMark(ctx, "settings")
	RootMark(ctx, "assembled")
	dir := t.TempDir()
	if err := WriteRoot(ctx, dir, "s"+RootFileSuffix); err != nil {
		t.Fatal(err)
	}
	rec, err := Read(dir + "/s" + RootFileSuffix)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range rec.Marks {
		names = append(names, m.Stage)
	}
	if want := []string{"main", "settings", "assembled"}; rec.Start != start || !slices.Equal(names, want) {
		t.Fatalf("root record = start %d, marks %q; want start %d, marks %q (a dispatch's mark is not the root's)", rec.Start, names, start, want)
	}
	last := rec.Marks[len(rec.Marks)-1].At
	stages := RootStages(rec, last+10, last+30, last+35)
	var sum int64
	names = nil
	for _, s := range stages {
		sum += s.Dur
		names = append(names, s.Name)
	}
	if want := []string{"main", "settings", "assembled", "first request", "model", "exit"}; !slices.Equal(names, want) || sum != last+35-start {
		t.Fatalf("stages %q summing to %d; want %q summing to %d", names, sum, want, last+35-start)
	}
}

// TestRootOff: without its starter's instant (or with one that is not a
// number) a root traces nothing and writes nothing.
func TestRootOff(t *testing.T) {
	for _, v := range []string{"", "junk", "-5", "0"} {
		ctx := Root(context.Background(), env(map[string]string{RootEnvVar: v}))
		RootMark(ctx, "settings")
		dir := t.TempDir()
		if err := WriteRoot(ctx, dir, "s"+RootFileSuffix); err != nil {
			t.Fatal(err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%s=%q: an untraced root wrote %d files", RootEnvVar, v, len(ents))
		}
	}
}
