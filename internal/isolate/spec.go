package isolate

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"

	"github.com/broodhq/brood/internal/sandbox"
)

// envVar carries a mountSpec from parent to child (mountSpec.pass: in a
// sealed memory file where it is long). The child removes it from its
// environment before running anything, so tools never see it.
const envVar = "BROOD_ISOLATE"

// MountEntry reports whether kv (NAME=value) is one of the entries that
// pass a mount to a child: a parent's own, inherited from whoever
// started it, must not reach its children (spawn's childEnv drops them).
func MountEntry(kv string) bool {
	return strings.HasPrefix(kv, envVar+"=") || strings.HasPrefix(kv, enteredVar+"=") || strings.HasPrefix(kv, goLayersVar+"=") || strings.HasPrefix(kv, goMountedVar+"=")
}

// enteredVar lets the same process, re-executed by sandbox.Restrict after
// it mounted its overlay, learn what it entered. It holds the pid, which
// execve keeps, so a descendant that inherits the variable ignores it.
const enteredVar = "BROOD_ISOLATE_ENTERED"

// modeProbe asks the child only to try an overlay mount and report.
const modeProbe Mode = "probe"

// mountSpec is what the child needs to build its view of the tree.
type mountSpec struct {
	Mode      Mode     `json:"mode"`
	Root      string   `json:"root"`
	Upper     string   `json:"upper,omitempty"`
	Work      string   `json:"work,omitempty"`
	Cwd       string   `json:"cwd,omitempty"`
	Keep      []string `json:"keep,omitempty"`
	UserXattr bool     `json:"userxattr,omitempty"`
	// RO and RW are an in-place writer's View.
	RO []string `json:"ro,omitempty"`
	RW []string `json:"rw,omitempty"`
	// Tasks is the dispatch directory covered in the child's mount
	// namespace but for Own, its own task directory (coverTasks).
	Tasks string `json:"tasks,omitempty"`
	Own   string `json:"own,omitempty"`
	// Covered are directories covered whole in the child's mount
	// namespace, empty and read-only (coverEmpty).
	Covered []string `json:"covered,omitempty"`
	// Denied are the paths a writer's Read deny rules match, covered in
	// its mount namespace (coverDenied).
	Denied []string `json:"denied,omitempty"`
	// Within are an in-place view's trees, whose directories above a
	// held or covered path are pinned (pinAncestors).
	Within []string `json:"within,omitempty"`
	// Writes are the directories a writer may write (View.Writes):
	// every other mount of its namespace is made read-only (writeOnly).
	Writes []string `json:"writes,omitempty"`
	// Private are directories of the parent's in the child's own task
	// directory that an overlay child must not reach, covered once its
	// task directory is bound into the copy: its upper and work
	// directories (Workspace.state), whose whiteouts hide the tree's
	// ignored files.
	Private []string `json:"private,omitempty"`
}

// mountsOverlay reports whether env (a child's command's) asks the child
// to mount an overlay (Mount.Configure, Workspace.Configure).
func mountsOverlay(cmd *exec.Cmd) bool {
	v, ok, err := sandbox.PassedEnv(cmd, envVar)
	var s mountSpec
	return ok && err == nil && json.Unmarshal([]byte(v), &s) == nil && s.Mode == ModeOverlay
}

func (s mountSpec) encode() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// pass gives the spec to cmd's child (EnterFromEnv takes it), whatever
// its size: an in-place view's lists (every path an Edit deny matches,
// read-only) or a writer's covered paths (every file a Read deny matches)
// can be longer than one environment string may be, and then go in a
// sealed memory file (sandbox.PassEnv).
func (s mountSpec) pass(cmd *exec.Cmd) error {
	b, _ := json.Marshal(s)
	return sandbox.PassEnv(cmd, envVar, b)
}

// Entered tells the child what EnterFromEnv set up.
type Entered struct {
	// Mode is overlay or worktree for an isolated child, none otherwise.
	Mode Mode `json:"mode"`
	// Root is the top of the child's copy: pass it in
	// sandbox.Policy.Writable so a confined writer can write its copy.
	Root string `json:"root"`
	// PID is the process that entered (see enteredVar).
	PID int `json:"pid"`
}

// reentered returns what this very process entered before it re-executed
// itself, and clears the record so children start clean.
func reentered() (Entered, bool) {
	v, ok := os.LookupEnv(enteredVar)
	if !ok {
		return Entered{}, false
	}
	os.Unsetenv(enteredVar)
	var e Entered
	if json.Unmarshal([]byte(v), &e) != nil || e.PID != os.Getpid() {
		return Entered{}, false
	}
	return e, true
}

// remember records e for a re-executed image of this process.
func remember(e Entered) Entered {
	e.PID = os.Getpid()
	b, _ := json.Marshal(e)
	os.Setenv(enteredVar, string(b))
	return e
}

// goLayersVar carries a writer's Go cache layers (goLayer) to its child,
// which mounts them in its own mount namespace (mountGoLayers) and takes
// the variable from its environment whether it mounts or not.
const goLayersVar = "BROOD_GO_LAYERS"

// goLayer is one of a writer's Go caches (Var: GOCACHE or GOMODCACHE): an
// overlay mounted over Lower, the user's own cache, at Lower's own path
// (go's compile action IDs hash a package's directory: a module cache at
// another path would match none of the user's compiled dependencies),
// whose upper layer is in its TMPDIR beside At (At.u, with its work
// directory At.w), so that no child writes the user's cache. At is where
// the writer's cache is where no overlay mounts: empty, its own.
type goLayer struct {
	Var   string `json:"var"`
	At    string `json:"at"`
	Lower string `json:"lower"`
}

// goMountedVar is set by the child itself (mountGoLayers) to the caches
// it mounted over the user's own (goMounted): its Landlock domain gets a
// write rule for each (RestrictChild), which it holds only because the
// overlay is there. It holds the pid, like enteredVar, so that an entry
// inherited from another process grants nothing.
const goMountedVar = "BROOD_GO_MOUNTED"

// goMounted is goMountedVar's value.
type goMounted struct {
	PID   int      `json:"pid"`
	Paths []string `json:"paths"`
}

// goUserVar tells a writer's child the user's Go caches (goUser), beneath
// its own: a writer that starts its own writers gives them the user's
// downloads as their first module proxy, not its own module cache, which
// is in its TMPDIR, no other child's to read.
const goUserVar = "BROOD_GO_USER"

// goUser are the user's build and module caches ("" where none).
type goUser struct {
	Build string `json:"build,omitempty"`
	Mod   string `json:"mod,omitempty"`
}
