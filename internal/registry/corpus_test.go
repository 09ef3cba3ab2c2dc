package registry

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// corpusDir finds the shared corpus of published agent files relative to
// this source file, so the test works from any working directory.
func corpusDir(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("can't locate the test source file")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "corpus", "claude-agents")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("corpus of published agent files not found at %s (it lives next to the repository, not in it): %v", dir, err)
	}
	return dir
}

// TestCorpusLoads reads every published agent file: all must load, with
// warnings allowed and no errors.
func TestCorpusLoads(t *testing.T) {
	dir := corpusDir(t)
	var files int
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || filepath.Ext(p) != ".md" {
			return err
		}
		files++
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		def, diags := Parse(p, data, SourceProject)
		for _, d := range diags {
			if d.Severity == SeverityError {
				t.Errorf("%s", d)
			}
		}
		if def == nil {
			t.Errorf("%s: did not load", p)
			return nil
		}
		if def.Name == "" || def.Description == "" || def.Prompt == "" {
			t.Errorf("%s: loaded without name, description or prompt: %+v", p, def)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 200 {
		t.Fatalf("read %d corpus files, want the whole corpus (>= 200)", files)
	}

	// Through the directory loader too: recursion, precedence and the
	// roster must cope with the whole set.
	reg, diags := LoadDirs(BuiltinFS(), Dir{Path: dir, Source: SourceProject})
	if HasErrors(diags) {
		for _, d := range diags {
			t.Log(d)
		}
		t.Fatal("loading the corpus as a directory gave errors")
	}
	if n := len(reg.All()); n < 100 {
		t.Errorf("registry holds %d agents, want the corpus's distinct names", n)
	}
	if reg.Roster() == "" {
		t.Error("empty roster")
	}
}
