package dirents

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestSubdirs: the subdirectories and the named entry of any type, never
// a file or a link to a directory; abs itself a link only when followed.
func TestSubdirs(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b/c", ".git", "z"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"f.txt", "b/.git"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512) // small: several getdents batches
	for _, tt := range []struct {
		dir, also string
		want      []Entry
	}{
		{dir, ".git", []Entry{{".git", true}, {"a", true}, {"b", true}, {"z", true}}},
		{dir, "", []Entry{{".git", true}, {"a", true}, {"b", true}, {"z", true}}},
		{filepath.Join(dir, "b"), ".git", []Entry{{".git", false}, {"c", true}}},
		{filepath.Join(dir, "b"), "", []Entry{{"c", true}}},
	} {
		got, err := Subdirs(tt.dir, false, buf, tt.also)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
		if !slices.Equal(got, tt.want) {
			t.Errorf("Subdirs(%s, %q) = %v, want %v", tt.dir, tt.also, got, tt.want)
		}
	}
	if _, err := Subdirs(filepath.Join(dir, "link"), false, buf, ""); !errors.Is(err, syscall.ENOTDIR) && !errors.Is(err, syscall.ELOOP) {
		t.Errorf("a link, not followed: %v, want ENOTDIR or ELOOP", err)
	}
	if _, err := Subdirs(filepath.Join(dir, "link"), true, buf, ""); err != nil {
		t.Errorf("a link, followed: %v", err)
	}
}
