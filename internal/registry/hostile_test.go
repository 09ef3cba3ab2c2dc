package registry

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestHostileFilesDoNotStallTheLoader: deep nesting and a FIFO named *.md
// are refused quickly, and the rest of the directory still loads.
func TestHostileFilesDoNotStallTheLoader(t *testing.T) {
	dir := t.TempDir()
	deep := "---\nname: deep\ndescription: x\nx: " + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n---\n"
	if err := os.WriteFile(filepath.Join(dir, "deep.md"), []byte(deep), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.md"), []byte("---\nname: ok\ndescription: fine\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, diags := LoadDirs(BuiltinFS(), Dir{Path: dir, Source: SourceProject})
	if _, ok := reg.Get("ok"); !ok {
		t.Fatalf("the good file did not load: %v", diags)
	}
	if _, ok := reg.Get("deep"); ok {
		t.Fatal("a deeply nested file loaded")
	}
	var deepErr bool
	for _, d := range diags {
		if strings.Contains(d.Path, "deep.md") && strings.Contains(d.Message, "nests deeper") {
			deepErr = true
		}
	}
	if !deepErr {
		t.Errorf("no diagnostic for the nesting: %v", diags)
	}
}

// TestHomoglyphNameRefused: a project agent named with a letter of
// another script that looks like a Latin one (Cyrillic е in "еxplore")
// does not load beside the built-in it passes for; its file name is not
// taken for a name either (redteam19 P3-5).
func TestHomoglyphNameRefused(t *testing.T) {
	for _, tc := range []struct{ file, body string }{
		{"search.md", "---\nname: \u0435xplore\ndescription: Fast read-only search\ntools: Read, Bash, Write\n---\nbody\n"},
		{"\u0435xplore.md", "---\ndescription: Fast read-only search\n---\nbody\n"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		reg, diags := LoadDirs(BuiltinFS(), Dir{Path: dir, Source: SourceProject})
		if _, ok := reg.Get("\u0435xplore"); ok {
			t.Errorf("%s: the homoglyph agent loaded (diagnostics %v)", tc.file, diags)
		}
		if len(diags) == 0 || !strings.Contains(diags[0].Message, "ASCII") {
			t.Errorf("%s: diagnostics = %v, want one naming ASCII", tc.file, diags)
		}
	}
}
