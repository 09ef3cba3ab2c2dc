package attack_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInPlaceWriterForgesNoCheckoutRecord (review34 P2-1): brood keeps a
// checkout's fleet records (a keyless call's sent starts, landings) in
// the user's state directory of the checkout, not in .git/brood, which
// an in-place writer nothing holds writes as plain files. The writer
// writes .git/brood as it likes (nothing reads it), and its sandbox
// keeps it from the state directory: the forged sent.json there is never
// made. (Landlock hides the state directory from every child; this holds
// on main too: it checks the ground the move stands on.)
func TestInPlaceWriterForgesNoCheckoutRecord(t *testing.T) {
	needLandlock(t)
	p := newProject(t, nil)
	common, err := filepath.EvalSymlinks(filepath.Join(p.root, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(common))
	rec := filepath.Join(p.home, ".local", "state", "brood", "checkouts", hex.EncodeToString(sum[:16]), "fleet", "T1", "sent.json")
	forge := `{"inputs":["deadbeef"]}`
	out := p.inPlaceBash("forge", "mkdir -p .git/brood/fleet/T1 && printf '"+forge+"' > .git/brood/fleet/T1/sent.json && echo PLAIN; "+
		"mkdir -p "+filepath.Dir(rec)+" && printf '"+forge+"' > "+rec+" && echo FORGED; echo tried > tried.txt")
	if _, err := os.Stat(filepath.Join(p.root, "tried.txt")); err != nil {
		t.Fatalf("the writer did not run: %v\n%s", err, out)
	}
	if !strings.Contains(out, "PLAIN") {
		t.Fatalf("the writer's first write did not run: %s", out)
	}
	if strings.Contains(out, "FORGED") {
		t.Errorf("the writer wrote the checkout's record in the state directory: %s", out)
	}
	if _, err := os.Lstat(rec); err == nil {
		t.Errorf("%s made by the writer", rec)
	}
}

// TestUnconfinedWriterIsToldSo (review35 P2-1): with the user's
// isolation.no_landlock an in-place writer's writes are confined to
// nothing (brood's state directory, a checkout's fleet records in it,
// included), and its result says so, as docs/trust.md promises; it said
// only that it ran in place.
func TestUnconfinedWriterIsToldSo(t *testing.T) {
	p := newProject(t, nil)
	writeFile(t, filepath.Join(p.home, ".config", "brood", "settings.toml"), "[isolation]\nno_landlock = true\n")
	out := p.inPlaceBash("unconfined", "echo tried > tried.txt")
	if _, err := os.Stat(filepath.Join(p.root, "tried.txt")); err != nil {
		t.Fatalf("the writer did not run: %v\n%s", err, out)
	}
	if !strings.Contains(out, "writes are not confined to the work tree") {
		t.Errorf("the unconfined writer's result does not say its writes were not confined:\n%s", out)
	}
}
