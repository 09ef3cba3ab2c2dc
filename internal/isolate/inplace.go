package isolate

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// modeInPlace asks an in-place writer to hold the work tree's configuration
// read-only in its own mount namespace before it runs anything.
const modeInPlace Mode = "inplace"

// View is what an in-place writer (a child that writes the user's own work
// tree) sees of it: the tree at its own path, writable where its Landlock
// policy lets it write, except ReadOnly, bound read-only over themselves in
// the child's own mount namespace, and Writable, bound back over themselves
// read-write beneath a read-only one (its own task directory) or only to
// make them mount points (the git directory, so it cannot be renamed away
// and replaced by one with a config of the child's).
type View struct {
	ReadOnly []string `json:"ro,omitempty"`
	Writable []string `json:"rw,omitempty"`
	// Tasks is the dispatch directory covered but for Own, the child's
	// own task directory (CoveringOtherTasks).
	Tasks string `json:"tasks,omitempty"`
	Own   string `json:"own,omitempty"`
	// Covered are directories covered whole, empty and read-only: the
	// root's records (CoveringRootRecords).
	Covered []string `json:"covered,omitempty"`
	// Denied are the paths the child's Read deny rules match, covered
	// (coverDenied): its tree's rule would let it read them.
	Denied []string `json:"denied,omitempty"`
	// Within are trees, besides Writable, whose directories above a held
	// or covered path are pinned (pinAncestors): a worktree copy's top.
	Within []string `json:"within,omitempty"`
	// Writes are the directories the writer's Landlock rules let it
	// write (WriterWritable): every other mount of its namespace is
	// read-only (writeOnly), so it changes no file's mode, owner, times
	// or extended attributes outside them. None: mounts as they are.
	Writes []string `json:"writes,omitempty"`
}

// gitConfigEntries are the entries of a git directory that are
// configuration: what git reads to decide which programs to run (config,
// hooks, info/attributes, a commondir that points elsewhere), and other
// repositories' and work trees' git directories. A commit needs none of
// them (objects, refs, logs, index and HEAD stay writable). (Not
// .git/brood: brood keeps no record under the git dir, where a writer
// nothing holds writes plain files; its records of a checkout are in the
// user's state directory, taskdir.CheckoutState, and a .git/brood an
// older brood left is read by nothing.)
func gitConfigEntries() []string {
	return []string{"config", "config.worktree", "commondir", "hooks", "info", "modules", "worktrees", "brood-worktrees", "refs/replace", "shallow", "objects/info"}
}

// gitPinned are the entries of a git directory an in-place writer's view
// binds over themselves, writable, only to make them mount points (a
// rename fails EBUSY): what git reads refs and objects from.
func gitPinned() []string { return []string{"refs", "objects"} }

// projectConfigEntries are brood's and Claude Code's configuration in a
// project: settings, agents, hook markers, verdicts, other tasks' records.
func projectConfigEntries() []string { return []string{".brood", ".claude", ".mcp.json"} }

// madeToHold are project configuration directories InPlaceView makes,
// empty, where they do not exist, so the view can hold them: a mount needs
// a path to cover, and a .claude/settings.local.json an in-place writer
// made would otherwise be, until its parent's guard undoes it, a file of
// the user's own (untracked) to the user's other sessions. (.brood always
// exists by then: the task directories are in it. .mcp.json, absent,
// needs none: a new one goes through the trust gate.) The directory is
// left in place after the run: empty, git shows nothing of it, and
// removing it while another in-place writer holds it would unmount that
// writer's hold.
func madeToHold() []string { return []string{".claude"} }

// gitMadeToHold are the entries of a work tree's .git directory that
// MakeToHold makes, empty, where they do not exist, for the same reason:
// a writer's .git/modules/<name> (a git directory with hooks and a config
// of its own) would be what the user's next `git submodule update --init`
// takes up and runs; .git/refs/replace/<object> would show the user's
// `git diff` another object than the one it names. Empty, git reads them
// as absent. (Not .git/worktrees: an in-place writer that delegates makes
// its isolated children's worktrees there. Not .git/brood: nothing brood
// trusts is kept there, gitConfigEntries.)
func gitMadeToHold() []string {
	return []string{"modules", filepath.Join("refs", "replace")}
}

// MakeToHold makes, empty, the madeToHold directories missing in root and
// project, before InPlaceView (unless the user allows subagents to change
// configuration: agents.allow_config_changes). A failure leaves the entry
// unheld, as before, for the parent's configuration guard.
func MakeToHold(root, project string) {
	for _, dir := range []string{root, project} {
		for _, e := range madeToHold() {
			if _, err := os.Lstat(filepath.Join(dir, e)); errors.Is(err, fs.ErrNotExist) {
				_ = os.Mkdir(filepath.Join(dir, e), 0o755)
			}
		}
	}
	git := filepath.Join(root, ".git")
	if fi, err := os.Lstat(git); err != nil || !fi.IsDir() {
		return
	}
	for _, e := range gitMadeToHold() {
		if _, err := os.Lstat(filepath.Join(git, e)); errors.Is(err, fs.ErrNotExist) {
			_ = os.Mkdir(filepath.Join(git, e), 0o755)
		}
	}
}

// InPlaceView is the view of an in-place writer working in the tree at
// root (the git work tree, or the project), whose project is project and
// whose own task directory (or, for a child that delegates, every task
// directory: its children's records go there) is own. Only entries that
// exist as themselves (no symbolic link) are named: a mount point must
// exist, and an entry made later is the parent's configuration guard's to
// put back (MakeToHold first makes a missing .claude, so it can be held).
func InPlaceView(root, project string, own ...string) View {
	v := View{Within: []string{root}}
	holdTop(&v, root)
	for _, dir := range []string{root, project} {
		for _, e := range projectConfigEntries() {
			if p := filepath.Join(dir, e); !slices.Contains(v.ReadOnly, p) {
				v.ReadOnly = appendExisting(v.ReadOnly, p)
			}
		}
	}
	for _, o := range own {
		v.Writable = appendExisting(v.Writable, o)
	}
	return v
}

// holdTop holds the git configuration of a work tree whose top is top:
// a .git directory is pinned as a mount point (it cannot be renamed away
// and replaced by one with a config of the writer's) and its
// configuration entries are held read-only; a .git file (a linked work
// tree's pointer to its git directory) is held itself.
func holdTop(v *View, top string) {
	git := filepath.Join(top, ".git")
	fi, err := os.Lstat(git)
	switch {
	case err != nil || slices.Contains(v.Writable, git) || slices.Contains(v.ReadOnly, git):
	case fi.IsDir():
		v.Writable = append(v.Writable, git)
		// refs and objects are mount points too, whatever is held
		// beneath them: moved aside, a fresh refs/ would hold a
		// refs/replace of the writer's (review40 P3-2).
		for _, e := range gitPinned() {
			v.Writable = appendExisting(v.Writable, filepath.Join(git, e))
		}
		for _, e := range gitConfigEntries() {
			v.ReadOnly = appendExisting(v.ReadOnly, filepath.Join(git, e))
		}
	case fi.Mode().IsRegular():
		v.ReadOnly = append(v.ReadOnly, git)
	}
}

// AllowingConfig is v less the .claude and .mcp.json of root and project:
// the view of a writer whose user lets subagents change brood's and
// Claude Code's configuration (agents.allow_config_changes). .brood (other
// tasks' records, hook markers) and git's configuration stay held.
func (v View) AllowingConfig(root, project string) View {
	var drop []string
	for _, dir := range []string{root, project} {
		drop = append(drop, filepath.Join(dir, ".claude"), filepath.Join(dir, ".mcp.json"))
	}
	v.ReadOnly = slices.DeleteFunc(slices.Clone(v.ReadOnly), func(p string) bool { return slices.Contains(drop, p) })
	return v
}

// appendExisting appends p if it exists and is no symbolic link.
// HoldingFiles is v with each of files (absolute) that is a regular file
// reached through no symbolic link also bound read-only over itself: the
// programs trusted hooks and MCP servers run (trust.Grant.Held), which an
// in-place writer may then not rewrite in place, nor rename or remove (a
// mount point is busy). Others are left to the parent's guard.
func (v View) HoldingFiles(files []string) View {
	v.ReadOnly = slices.Clone(v.ReadOnly)
	for _, f := range files {
		fi, err := os.Lstat(f)
		if err != nil || !fi.Mode().IsRegular() || slices.Contains(v.ReadOnly, f) {
			continue
		}
		if real, err := filepath.EvalSymlinks(f); err != nil || real != f {
			continue
		}
		v.ReadOnly = append(v.ReadOnly, f)
	}
	return v
}

func appendExisting(list []string, p string) []string {
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeSymlink != 0 {
		return list
	}
	return append(list, p)
}

// ConfigureInPlace asks for the child's user and mount namespaces and
// passes the view in its environment; the child's EnterFromEnv binds it
// before anything else runs. Call it after anything that replaces cmd.Env
// or cmd.SysProcAttr wholesale.
func ConfigureInPlace(cmd *exec.Cmd, v View) error {
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	if err := addMountNamespace(cmd); err != nil {
		return err
	}
	spec := mountSpec{Mode: modeInPlace, RO: v.ReadOnly, RW: v.Writable, Tasks: v.Tasks, Own: v.Own, Covered: v.Covered, Denied: v.Denied, Within: v.Within, Writes: v.Writes}
	return spec.pass(cmd)
}

// unheldGitEntries are entries of a git directory that are configuration
// but that no kernel rule can hold for an in-place writer when they do not
// exist yet: they sit beside the index.lock a commit makes, and a mount
// needs a file to cover. git reads commondir as a pointer to another git
// directory (with its own config) and config.worktree as more config.
func unheldGitEntries() []string { return []string{"commondir", "config.worktree"} }

// AbsentGitConfig lists the git configuration entries of the work tree at
// root that do not exist now, for RemoveMade after an in-place writer ran.
func AbsentGitConfig(root string) []string {
	var out []string
	for _, e := range unheldGitEntries() {
		p := filepath.Join(root, ".git", e)
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			out = append(out, p)
		}
	}
	return out
}

// RemoveMade removes those of paths that exist now (a child made them) and
// returns them.
func RemoveMade(paths []string) []string {
	var made []string
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			if os.RemoveAll(p) == nil {
				made = append(made, p)
			}
		}
	}
	return made
}
