package registry

import (
	"embed"
	"errors"
	"fmt"
	"github.com/broodhq/brood/internal/taskdir"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

//go:embed builtin/*.md
var builtinFiles embed.FS

// BuiltinFS returns the definitions compiled into the binary.
func BuiltinFS() fs.FS {
	sub, err := fs.Sub(builtinFiles, "builtin")
	if err != nil {
		return builtinFiles // unreachable: the directory is embedded
	}
	return sub
}

// maxFileSize bounds what is read from one definition file, so a stray huge
// .md file in an agents directory can't exhaust memory.
const maxFileSize = 1 << 20

// Options says where definitions are found. The caller resolves them from
// the environment and settings; the registry never looks at either itself.
type Options struct {
	// ProjectRoot holds .brood/agents and .claude/agents; "" means none
	// (see FindProjectRoot).
	ProjectRoot string
	// Home holds ~/.claude/agents; "" means no user definitions from there.
	Home string
	// ConfigDir is brood's user config directory, holding agents/; "" means
	// Home/.config/brood.
	ConfigDir string
	// Claude turns the .claude/agents directories on. It mirrors the
	// setting agents.claude, whose default is true, so a caller must pass
	// the setting rather than rely on the zero value.
	Claude bool
	// BuiltinFS replaces the embedded built-in definitions (tests).
	BuiltinFS fs.FS
}

// Dir is one directory of definitions at one precedence level.
type Dir struct {
	// Path is the directory, as shown in diagnostics and listings.
	Path string
	// FS reads it; nil means os.DirFS(Path).
	FS     fs.FS
	Source Source
	// Claude marks a .claude directory, which loses a tie with the brood
	// directory of the same level.
	Claude bool
	// Within, when set, is the tree every file read must really be inside
	// (its links resolved): a project's directories are held to the
	// project, as CLAUDE.md and AGENTS.md are, so a repository's link
	// cannot make a file of the user's (~/private.md) its agent's prompt.
	Within string
}

// Dirs lists the directories Load reads, lowest precedence first.
func (o Options) Dirs() []Dir {
	var dirs []Dir
	within := ""
	add := func(p string, src Source, claude bool) {
		if claude && !o.Claude {
			return
		}
		p = filepath.Clean(p)
		for i, d := range dirs {
			if d.Path == p { // the project is the home: read it once, as the project
				dirs = append(dirs[:i], dirs[i+1:]...)
				break
			}
		}
		dirs = append(dirs, Dir{Path: p, Source: src, Claude: claude, Within: within})
	}
	if o.Home != "" || o.ConfigDir != "" {
		cfg := o.ConfigDir
		if cfg == "" {
			cfg = filepath.Join(o.Home, ".config", "brood")
		}
		add(filepath.Join(cfg, "agents"), SourceUser, false)
	}
	if o.Home != "" {
		// HooCode's user directory (~/.hoocode/agents) maps here: read
		// after the config directory, which wins a tie.
		add(filepath.Join(o.Home, taskdir.StateDirName, "agents"), SourceUser, false)
		add(filepath.Join(o.Home, ".claude", "agents"), SourceUser, true)
	}
	if o.ProjectRoot != "" {
		within = o.ProjectRoot
		add(taskdir.Open(o.ProjectRoot).Agents(), SourceProject, false)
		add(filepath.Join(o.ProjectRoot, ".claude", "agents"), SourceProject, true)
	}
	return dirs
}

// Load reads the built-in, user and project definitions and resolves them by
// precedence. The registry is usable even when there are error diagnostics:
// the files at fault are simply left out.
func Load(opts Options) (*Registry, []Diagnostic) {
	return LoadDirs(opts.BuiltinFS, opts.Dirs()...)
}

// LoadDirs is Load with the directories spelled out. Precedence: a project
// definition beats a user one, a user one beats a built-in, except that a
// built-in name can't be taken at all; within one level, the brood directory
// beats the .claude one, and either way a warning names both files.
//
// A nil builtin is the embedded definitions as builtin_gen.go holds them,
// parsed when brood was built: a root's start reads no YAML for them
// (TestBuiltinTable keeps the table what the files say).
func LoadDirs(builtin fs.FS, dirs ...Dir) (*Registry, []Diagnostic) {
	var diags []Diagnostic
	var builtins []*Definition
	if builtin == nil {
		builtins = builtinDefinitions()
	} else {
		var d []Diagnostic
		builtins, d = readDir(Dir{Path: "<built-in>", FS: builtin, Source: SourceBuiltin})
		diags = append(diags, d...)
	}
	resolved := map[string]*Definition{}
	for _, def := range builtins {
		resolved[strings.ToLower(def.Name)] = def
	}
	sorted := append([]Dir(nil), dirs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.Source.rank() != b.Source.rank() {
			return a.Source.rank() < b.Source.rank()
		}
		return !a.Claude && b.Claude
	})
	for lo := 0; lo < len(sorted); {
		hi := lo
		for hi < len(sorted) && sorted[hi].Source == sorted[lo].Source {
			hi++
		}
		level := map[string]*Definition{}
		for _, dir := range sorted[lo:hi] {
			defs, d := readDir(dir)
			diags = append(diags, d...)
			for _, def := range defs {
				key := strings.ToLower(def.Name)
				if b, ok := resolved[key]; ok && b.Source == SourceBuiltin {
					w := warning(def, "%q is a built-in agent and can't be redefined; this definition is ignored (rename it to use it)", b.Name)
					w.Kind = KindShadow
					diags = append(diags, w)
					continue
				}
				if prev, ok := level[key]; ok {
					diags = append(diags, warning(def, "agent %q is also defined in %s, which wins; this definition is ignored", def.Name, prev.Path))
					continue
				}
				level[key] = def
			}
		}
		for key, def := range level {
			if prev, ok := resolved[key]; ok {
				def.Overrides = append([]string{prev.Path}, prev.Overrides...)
			}
			resolved[key] = def
		}
		lo = hi
	}
	return newRegistry(resolved), diags
}

func warning(def *Definition, format string, args ...any) Diagnostic {
	return Diagnostic{Path: def.Path, Line: def.nameLine, Severity: SeverityWarning, Message: fmt.Sprintf(format, args...)}
}

// readDir parses every .md file under a directory, recursively, in path
// order so that results and warnings are deterministic. A missing directory
// is not a problem: most users have none of them.
func readDir(dir Dir) ([]*Definition, []Diagnostic) {
	fsys := dir.FS
	if fsys == nil {
		fsys = os.DirFS(dir.Path)
	}
	var defs []*Definition
	var diags []Diagnostic
	problem := func(p string, sev string, format string, args ...any) {
		diags = append(diags, Diagnostic{Path: p, Severity: sev, Message: fmt.Sprintf(format, args...)})
	}
	err := fs.WalkDir(fsys, ".", func(rel string, e fs.DirEntry, err error) error {
		full := displayPath(dir.Path, rel)
		if err != nil {
			if rel == "." && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			if rel == "." && errors.Is(err, syscall.ENOTDIR) {
				problem(full, SeverityWarning, "not a directory; no agents read from it")
				return fs.SkipAll
			}
			problem(full, SeverityError, "can't read: %v", err)
			return nil
		}
		if e.Type()&fs.ModeSymlink != 0 && !strings.EqualFold(path.Ext(rel), ".md") {
			// WalkDir does not follow a link to a directory: say so,
			// rather than lose the agents in it silently.
			if info, err := fs.Stat(fsys, rel); err == nil && info.IsDir() {
				problem(full, SeverityWarning, "a symbolic link to a directory is not followed, so no agent in it is loaded; copy the directory here, or link each .md file instead")
			}
			return nil
		}
		if e.IsDir() || !strings.EqualFold(path.Ext(rel), ".md") {
			return nil
		}
		// Only regular files (a symlink is judged by its target): a FIFO or
		// a device named *.md would block the loader forever.
		if info, err := fs.Stat(fsys, rel); err != nil || !info.Mode().IsRegular() {
			if err == nil {
				problem(full, SeverityWarning, "not a regular file; skipped")
			}
			return nil
		}
		if outside := outsideTree(dir, rel); outside != "" {
			problem(full, SeverityWarning, "%s; not loaded: a project agent must really be inside the project (links resolved), copy the file here instead", outside)
			return nil
		}
		data, err := readFile(fsys, rel)
		if err != nil {
			problem(full, SeverityError, "%v", err)
			return nil
		}
		def, d := Parse(full, data, dir.Source)
		diags = append(diags, d...)
		if def != nil {
			defs = append(defs, def)
		} else if len(d) == 0 {
			diags = append(diags, noFrontmatter(full))
		}
		return nil
	})
	if err != nil {
		problem(dir.Path, SeverityError, "can't read: %v", err)
	}
	return defs, diags
}

// outsideTree says where file rel of dir really is when that is not
// inside dir.Within (its links, and the tree's, resolved), "" when it is
// inside or dir is held to no tree.
func outsideTree(dir Dir, rel string) string {
	if dir.Within == "" || dir.FS != nil {
		return ""
	}
	root, err := filepath.EvalSymlinks(dir.Within)
	if err != nil {
		return fmt.Sprintf("the project %s cannot be resolved (%v)", dir.Within, err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(dir.Path, filepath.FromSlash(rel)))
	if err != nil {
		return fmt.Sprintf("its links cannot be resolved (%v)", err)
	}
	if r, err := filepath.Rel(root, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "it is outside the project (a link to " + real + ")"
	}
	return ""
}

// noFrontmatter reports a .md file in an agents directory that is no
// definition: it is not loaded, and says so rather than vanish.
func noFrontmatter(p string) Diagnostic {
	return Diagnostic{Path: p, Line: 1, Severity: SeverityWarning, Kind: KindNoFrontmatter,
		Message: "no frontmatter at the start of the file (--- then name: and description:, then ---): not an agent definition, not loaded; add the frontmatter, or move the file out of the agents directory"}
}

// readFile reads at most maxFileSize bytes and refuses anything larger.
func readFile(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("can't read: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("can't read: %w", err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("larger than %d bytes; not an agent definition", maxFileSize)
	}
	return data, nil
}

func displayPath(dir, rel string) string {
	if rel == "." {
		return dir
	}
	if strings.HasPrefix(dir, "<") {
		return dir + "/" + rel
	}
	return filepath.Join(dir, filepath.FromSlash(rel))
}

// FindProjectRoot returns the nearest ancestor of dir (dir included) that
// holds .git or .brood, or "" when there is none; agents are never read from
// a directory that merely happens to be above the work.
func FindProjectRoot(dir string) string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		for _, marker := range []string{".git", taskdir.StateDirName} {
			if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// CheckPath parses the definition files at path (a file or a directory,
// searched recursively) without any precedence, for `brood agents check`.
// Unlike a directory scan, a file named explicitly that has no frontmatter
// is reported, since the user asked about it.
func CheckPath(p string) ([]*Definition, []Diagnostic) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, []Diagnostic{{Path: p, Severity: SeverityError, Message: fmt.Sprintf("can't read: %v", err)}}
	}
	if info.IsDir() {
		defs, diags := readDir(Dir{Path: p, Source: SourceProject})
		seen := map[string]*Definition{}
		for _, d := range defs {
			if prev, ok := seen[strings.ToLower(d.Name)]; ok {
				diags = append(diags, warning(d, "agent %q is also defined in %s", d.Name, prev.Path))
				continue
			}
			seen[strings.ToLower(d.Name)] = d
		}
		return defs, diags
	}
	data, err := readFile(os.DirFS(filepath.Dir(p)), filepath.Base(p))
	if err != nil {
		return nil, []Diagnostic{{Path: p, Severity: SeverityError, Message: err.Error()}}
	}
	def, diags := Parse(p, data, SourceProject)
	if def == nil && len(diags) == 0 {
		diags = append(diags, noFrontmatter(p))
	}
	if def == nil {
		return nil, diags
	}
	return []*Definition{def}, diags
}
