package isolate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/gitx"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/tool"
)

// A child whose Bash runs without a per-command check (a read-only
// child: the kernel keeps every command from writing) could read around
// the user's Read deny rules with cat, head or python. So the paths those
// rules match are hidden from its Landlock domain as the credential
// stores are (sandbox.Policy.Hidden): an anchored literal
// (`secrets/**`, `/.env`, `~/.aws/credentials`) is one path, hidden
// whether it exists or not (one made later is not readable either); a
// pattern that matches at any depth or holds a wildcard (`.env`,
// `**/*.pem`, `config/*.key`) is expanded by a walk of the directory it
// is relative to, at spawn, bounded (maxReadDenyWalk). Where that fails
// (a bare `Read` deny, a walk too large, a rule that would hide the
// child's own tree) the child's Bash is checked per command as the
// root's is (ReadDeny.Held false, said in its result).

// maxReadDenyWalk bounds the entries a spawn lists to expand the Read
// deny patterns: beyond it the child's Bash is checked per command.
const maxReadDenyWalk = 20000

// ReadDeny is what a child's confinement makes of its Read deny rules.
type ReadDeny struct {
	// Paths are the paths hidden from the child's domain (real paths,
	// and the paths as the rules name them where they differ).
	Paths []string
	// Held says the kernel hides every path the rules match: false
	// when the rules could not be expanded (Why says why; Paths is then
	// empty) or a path they match is tracked by git (Paths holds them),
	// and the child's Bash must then be checked per command.
	Held bool
	Why  string
	// Writer marks a writer's: InTree are those of Paths beneath what it
	// writes, which its Landlock rule reads whatever is hidden: its mount
	// namespace covers them (coverDenied) where it has one of its own;
	// Covered says the child found every one covered or absent.
	Writer  bool
	InTree  []string
	Covered bool
}

// notCovered says what a Read deny does not reach, whatever the class.
const notCovered = "files present at spawn; not what git's objects hold (other commits and branches, nested repositories)"

// Note is the line the child's result carries, "" without Read denies.
func (d ReadDeny) Note() string {
	if d.Held && len(d.Paths) == 0 {
		return ""
	}
	if !d.Writer {
		if !d.Held {
			return "Read deny rules not held by the kernel sandbox (" + d.Why + "): Bash is checked per command"
		}
		return fmt.Sprintf("Read deny rules: %d paths hidden by the kernel sandbox (%s)", len(d.Paths), notCovered)
	}
	if len(d.Paths) == 0 {
		return "Read deny rules not held by the kernel sandbox (" + d.Why + "): the writer's Bash is checked per command, and a rule for all of Bash, for an interpreter, or bypassPermissions reads them"
	}
	out := len(d.Paths) - len(d.InTree)
	switch {
	case len(d.InTree) == 0:
		return fmt.Sprintf("Read deny rules: %d paths hidden by the kernel sandbox (%s)", out, notCovered)
	case d.Covered:
		return fmt.Sprintf("Read deny rules: %d paths hidden by the kernel sandbox, %d in its tree covered in its mount namespace (%s)", out, len(d.InTree), notCovered)
	}
	return fmt.Sprintf("Read deny rules: %d paths hidden by the kernel sandbox; %d in its tree NOT held for its commands (no mount view of its own): its Bash is checked per command, and a rule for all of Bash, for an interpreter, or bypassPermissions reads them", out, len(d.InTree))
}

// hasReadDeny is a cheap look at the rules, before any parsing: most
// runs have no Read deny, and their spawn lists nothing.
func hasReadDeny(deny []string) bool {
	for _, r := range deny {
		if name, _, _ := strings.Cut(strings.TrimSpace(r), "("); strings.EqualFold(strings.TrimSpace(name), "read") {
			return true
		}
	}
	return false
}

// ReadDenied expands env's Read deny rules for its child working in
// its workspace (its copy's directory where it has one), whose own
// paths (task directory, program) are keep: no hidden path may hold
// one of them nor the workspace.
func ReadDenied(env *dispatch.Envelope, keep []string) ReadDeny {
	return readDenied(env, keep, maxReadDenyWalk)
}

// readDenied is ReadDenied with the walk bounded at limit entries.
func readDenied(env *dispatch.Envelope, keep []string, limit int) ReadDeny {
	return expandReads(env, limit).judge(keep)
}

// readExpansion is what env's Read deny rules match in its workspace,
// before the child's own paths are judged against it (judge).
type readExpansion struct {
	rd      ReadDeny // final where Why is set: no expansion
	ws      string
	tracked string // a tracked file a rule matches (trackedDenied)
}

// expandReads expands env's Read deny rules: the walk of the directories
// its patterns are relative to, and the look at git's index.
func expandReads(env *dispatch.Envelope, limit int) readExpansion {
	if !hasReadDeny(env.Permissions.Deny) {
		return readExpansion{rd: ReadDeny{Held: true}}
	}
	perms, err := tool.NewPermissions("", nil, env.Permissions.Deny, nil)
	if err != nil {
		return readExpansion{rd: ReadDeny{Why: "the deny rules do not parse: " + err.Error()}}
	}
	specs, all := perms.ReadDenies()
	if all {
		return readExpansion{rd: ReadDeny{Why: "a deny rule for all of Read"}}
	}
	ws := filepath.Clean(cmp.Or(env.IsolationDir, env.Workspace))
	if !filepath.IsAbs(ws) {
		return readExpansion{rd: ReadDeny{Why: "no absolute workspace to match the rules against"}}
	}
	home, _ := os.UserHomeDir()
	w := denyWalk{denies: perms.DeniesRead, ws: ws, limit: limit, left: limit, seen: map[string]bool{}}
	if env.ProjectRoot != "" {
		w.skip = Resolved(dispatch.Root(env.ProjectRoot))
	}
	var roots []string
	for _, spec := range specs {
		p, literal, ok := denyBase(spec, ws, home)
		if !ok {
			continue // a home-relative rule without a home matches nothing
		}
		if literal {
			w.add(p)
		} else {
			roots = append(roots, p)
		}
	}
	for _, r := range roots {
		if err := w.walk(r, Resolved(r)); err != nil {
			return readExpansion{rd: ReadDeny{Why: err.Error()}}
		}
	}
	return readExpansion{rd: ReadDeny{Paths: w.paths, Held: true}, ws: ws, tracked: trackedDenied(perms, ws)}
}

// judge is what becomes of the expansion for a child whose own paths
// are keep: no hidden path may hold one of them nor the workspace.
func (e readExpansion) judge(keep []string) ReadDeny {
	if e.rd.Why != "" || e.ws == "" {
		return e.rd
	}
	for _, p := range e.rd.Paths {
		for _, k := range append([]string{e.ws, Resolved(e.ws)}, keep...) {
			if k != "" && within(filepath.Clean(p), filepath.Clean(k)) {
				return ReadDeny{Why: fmt.Sprintf("%s would hide %s, which the child needs", p, k)}
			}
		}
	}
	if e.tracked != "" {
		// (The paths are hidden all the same: cat is then refused by
		// the kernel, git show by the rule check.)
		return ReadDeny{Paths: slices.Clone(e.rd.Paths), Why: e.tracked + " is tracked by git: its content is in the repository's objects too (git show), which no rule can hide"}
	}
	return ReadDeny{Paths: slices.Clone(e.rd.Paths), Held: true}
}

// trackedDenied is the first file of the git index of the repository
// holding ws (beneath ws) that a Read deny matches, "" when none is or
// there is no repository: a tracked file's content is in git's objects,
// which the child reads to run git at all. (One committed and deleted
// since stays in the history: docs/trust.md.)
func trackedDenied(perms *tool.Permissions, ws string) string {
	if _, _, _, err := gitx.Dirs(ws); err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), trackedTimeout)
	defer cancel()
	out, err := gitx.Run(ctx, ws, "ls-files", "-z", "--cached")
	if err != nil {
		// (Not known: fail closed.)
		return "what the index holds (git ls-files: " + strings.TrimSpace(cmp.Or(stderrLine(err), err.Error())) + ")"
	}
	for rel := range strings.SplitSeq(out, "\x00") {
		if rel == "" {
			continue
		}
		if p := filepath.Join(ws, filepath.FromSlash(rel)); perms.DeniesRead(p, ws) {
			return p
		}
	}
	return ""
}

// stderrLine is the first line git printed for err, if any.
func stderrLine(err error) string {
	var ge *gitx.Error
	if errors.As(err, &ge) {
		l, _, _ := strings.Cut(strings.TrimSpace(ge.Stderr), "\n")
		return l
	}
	return ""
}

// trackedTimeout bounds trackedDenied's git ls-files.
const trackedTimeout = 10 * time.Second

// denyBase is where a Read deny specifier points (tool.matchPath's
// reading of it): for an anchored literal the path itself (literal
// true); else the directory to walk, the specifier's fixed part.
func denyBase(spec, ws, home string) (string, bool, bool) {
	base, anchored := ws, true
	switch {
	case strings.HasPrefix(spec, "~/"):
		if home == "" || !filepath.IsAbs(home) {
			return "", false, false
		}
		base, spec = home, spec[2:]
	case strings.HasPrefix(spec, "/"):
		base, spec = "/", strings.TrimLeft(spec, "/")
	case strings.HasPrefix(spec, "./"):
		spec = spec[2:]
	default:
		anchored = strings.Contains(strings.TrimSuffix(spec, "/"), "/")
	}
	spec = strings.TrimSuffix(spec, "/")
	if spec == "" || spec == "**" {
		return base, true, true
	}
	if !anchored {
		return base, false, true
	}
	parts := strings.Split(spec, "/")
	fixed := 0
	for fixed < len(parts) && !strings.ContainsAny(parts[fixed], `*?[]{}\`) {
		fixed++
	}
	// "secrets/**" hides secrets whole, as a rule matching a directory
	// covers what it holds.
	if fixed == len(parts) || fixed == len(parts)-1 && parts[fixed] == "**" {
		return filepath.Join(base, filepath.Join(parts[:fixed]...)), true, true
	}
	return filepath.Join(base, filepath.Join(parts[:fixed]...)), false, true
}

// denyWalk lists the directories the patterns are relative to, once
// each, and keeps the entries a Read of which the rules refuse.
type denyWalk struct {
	denies func(path, workspace string) bool
	ws     string
	skip   string // the dispatch directory: hidden whole already
	limit  int    // entries it may list (maxReadDenyWalk)
	left   int
	seen   map[string]bool // real directories listed
	paths  []string
	real   string // ws with its links resolved (realWS)
}

// realWS is the workspace's real path, resolved once.
func (w *denyWalk) realWS() string {
	if w.real == "" {
		w.real = Resolved(w.ws)
	}
	return w.real
}

// add hides p, by its path and, where links lead elsewhere, its real
// one (the kernel judges the real path).
func (w *denyWalk) add(p string) {
	p = filepath.Clean(p)
	for _, q := range []string{p, tool.ResolveLinks(p)} {
		if !slices.Contains(w.paths, q) {
			w.paths = append(w.paths, q)
		}
	}
}

// walk lists dir (as the rules see it; real is where it is) and what it
// holds, hiding each entry the rules refuse to Read (not descending into
// it), following a link to a directory inside the workspace once per
// real directory.
func (w *denyWalk) walk(dir, real string) error {
	if w.seen[real] || real == w.skip {
		return nil
	}
	w.seen[real] = true
	ents, err := os.ReadDir(real)
	if err != nil {
		return nil // not there, or not listable: nothing to read in it
	}
	if w.left -= len(ents); w.left < 0 {
		return fmt.Errorf("more than %d entries to look through under %s for the patterns", w.limit, w.ws)
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if w.denies(p, w.ws) {
			w.add(p)
			continue
		}
		if e.Name() == "objects" && filepath.Base(dir) == ".git" {
			continue // names are hashes; what they hold is history (docs/trust.md)
		}
		r := filepath.Join(real, e.Name())
		switch {
		case e.IsDir():
		case e.Type()&os.ModeSymlink != 0:
			fi, err := os.Stat(r)
			if err != nil || !fi.IsDir() {
				continue
			}
			// A link leading out of the workspace is not followed: a
			// pattern of the project's cannot mean what lies elsewhere,
			// and one link (a -> /usr) would push the walk past its
			// bound and switch the kernel's hiding off for every child
			// (review40 P1-C). What it leads to is judged by its real
			// path, as the kernel judges it.
			if r = Resolved(r); !within(w.realWS(), r) {
				continue
			}
		default:
			continue
		}
		if err := w.walk(p, r); err != nil {
			return err
		}
	}
	return nil
}

// WriteDeniedFunc is the judge a writer's landing asks (Workspace.WriteDenied)
// whether env's Edit or Write deny rules forbid a path of the real tree;
// nil when env has none.
func WriteDeniedFunc(env *dispatch.Envelope) func(string) bool {
	has := false
	for _, r := range env.Permissions.Deny {
		name, _, _ := strings.Cut(strings.TrimSpace(r), "(")
		switch tool.CanonicalName(strings.TrimSpace(name)) {
		case "Edit", "Write", "MultiEdit", "NotebookEdit":
			has = true
		}
	}
	if !has || env.ReadOnly {
		return nil
	}
	perms, err := tool.NewPermissions("", nil, env.Permissions.Deny, nil)
	if err != nil {
		return func(string) bool { return true } // (unreadable rules: land nothing)
	}
	ws := filepath.Clean(env.Workspace)
	return func(p string) bool { return perms.DeniesWrite(p, ws) }
}

// ChildPolicyReads is ChildPolicy with what became of the child's Read
// deny rules (ReadDenied): for a shape that must tell two children apart
// by it (a warm child's).
func ChildPolicyReads(env *dispatch.Envelope, dir string, base *PolicyBase) (sandbox.Policy, bool, ReadDeny) {
	return childPolicy(env, dir, base, nil)
}

// ChildPolicyReads is ChildPolicyReads with the spawn's expansion.
func (x *Expansion) ChildPolicyReads(env *dispatch.Envelope, dir string, base *PolicyBase) (sandbox.Policy, bool, ReadDeny) {
	return childPolicy(env, dir, base, x)
}

// outside are those of paths beneath none of dirs.
func outside(paths, dirs []string) []string {
	var out []string
	for _, p := range paths {
		if !slices.ContainsFunc(dirs, func(d string) bool { return within(filepath.Clean(d), filepath.Clean(p)) }) {
			out = append(out, p)
		}
	}
	return out
}

// WriterDenied are the paths a writer's Read deny rules match
// (ReadDenied), for its mount namespace to cover (coverDenied): its
// tree's Landlock rule lets it read whatever is beneath. None when the
// rules cannot be expanded. A writer's Bash is checked per command
// whatever becomes of them, as the root's is: it runs unchecked only by
// the user's own grant of all of Bash or bypassPermissions.
func WriterDenied(env *dispatch.Envelope, taskDir string) []string {
	return (*Expansion)(nil).WriterDenied(env, taskDir)
}

// WriterDenied is WriterDenied with the spawn's expansion.
func (x *Expansion) WriterDenied(env *dispatch.Envelope, taskDir string) []string {
	if env.ReadOnly {
		return nil
	}
	return x.ReadDenied(env, []string{taskDir}).Paths
}
