package isolate

import (
	"context"
	"path/filepath"
	"testing"
)

// TestUnignoredSecretFilesStayOutOfCopies (redteam19 P3-2): a repository
// whose committed .gitignore un-ignores .env and *.pem (`!.env`) does not
// put the user's untracked secrets files into an isolated child's copy;
// a secrets file git tracks (the repository's own) is copied, and so is
// an ordinary untracked file.
func TestUnignoredSecretFilesStayOutOfCopies(t *testing.T) {
	iso := testIsolator(t)
	for _, m := range modes(t, iso) {
		t.Run(m.name, func(t *testing.T) {
			dir := newRepo(t)
			write(t, filepath.Join(dir, ".gitignore"), "!.env\n!*.pem\nnode_modules/\n.brood/\n")
			write(t, filepath.Join(dir, "certs/repo.key"), "the repository's test key\n")
			git(t, dir, "add", ".gitignore", "certs/repo.key")
			git(t, dir, "commit", "-qm", "un-ignore")
			write(t, filepath.Join(dir, "sub/.env.local"), "nested secret\n")
			write(t, filepath.Join(dir, "server.pem"), "user's key\n")
			ws := prepare(t, iso, dir, "NEG", m.force)
			runIsolated(t, ws, `
test ! -e .env || { echo "sees .env"; exit 3; }
test ! -e sub/.env.local || { echo "sees sub/.env.local"; exit 3; }
test ! -e server.pem || { echo "sees server.pem"; exit 3; }
test -e certs/repo.key || { echo "tracked key missing"; exit 4; }
test -e u.txt || { echo "untracked file missing"; exit 4; }
`)
			if _, err := ws.Finish(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
