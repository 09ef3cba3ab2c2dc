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
		{dir, ".git", []Entry{{".git", true, false, "", ""}, {"a", true, false, "", ""}, {"b", true, false, "", ""}, {"z", true, false, "", ""}}},
		{dir, "", []Entry{{".git", true, false, "", ""}, {"a", true, false, "", ""}, {"b", true, false, "", ""}, {"z", true, false, "", ""}}},
		{filepath.Join(dir, "b"), ".git", []Entry{{".git", false, false, "", ""}, {"c", true, false, "", ""}}},
		{filepath.Join(dir, "b"), "", []Entry{{"c", true, false, "", ""}}},
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

// TestListLinks: with links, List keeps every symbolic link with its
// target (to a directory, a file, nowhere), beside the subdirectories,
// and no other file; a link is never taken for a directory.
func TestListLinks(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x/", 200) + "end" // past the first readlink buffer
	for name, target := range map[string]string{"todir": "a", "tofile": "f.txt", "nowhere": "/no/such", "long": long} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		links bool
		want  []Entry
	}{
		{true, []Entry{{"a", true, false, "", ""}, {"b", true, false, "", ""}, {"long", false, true, long, ""},
			{"nowhere", false, true, "/no/such", ""}, {"todir", false, true, "a", ""}, {"tofile", false, true, "f.txt", ""}}},
		{false, []Entry{{"a", true, false, "", ""}, {"b", true, false, "", ""}}},
	} {
		got, err := List(dir, false, make([]byte, 512), nil, tt.links)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
		if !slices.Equal(got, tt.want) {
			t.Errorf("List(links=%v) = %v, want %v", tt.links, got, tt.want)
		}
	}
}
