package isolate

// The parts of every child's policy one dispatcher shares (PolicyBase),
// and the MCP token files every child is kept from.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// PolicyBase is what the policies of every child of one dispatcher share,
// found once (each stats and resolves links): the paths no child reads and
// the build caches a writer may write.
type PolicyBase struct {
	// extra are more paths no child reads (delegate's Config.Hidden: the token file
	// of `brood mcp --http --token-file`).
	extra []string
	// getenv reads the environment the children get (nil: this
	// process's): their homes, PATH and the credentials it points at.
	getenv   func(string) string
	hideOnce sync.Once
	hidden   []string
	// keep: envKeep.
	keepOnce sync.Once
	keep     []string
	// known: the layer hiding other projects' records (KnownLayer).
	known knownLayers
	// shared: sharedCands.
	sharedOnce sync.Once
	shared     map[string]bool
}

// NewPolicyBase is the shared parts of one dispatcher's children's
// policies; extra are more paths none of them may read.
func NewPolicyBase(extra []string) *PolicyBase { return &PolicyBase{extra: extra} }

// NewPolicyBaseEnv is NewPolicyBase for children started with env (a
// dispatcher's Config.Env: a home, PATH or credential variable there
// that this process's environment lacks counts too); nil is this
// process's.
func NewPolicyBaseEnv(extra, env []string) *PolicyBase {
	b := &PolicyBase{extra: extra}
	if env != nil {
		b.getenv = envLookup(env)
	}
	return b
}

// Hidden are DefaultHidden (credential stores, ~/.config/brood, the
// fleet worker's cache), ~/.config/brood/mcp, the extra paths and the token files
// `brood mcp --http --token-file` registered there (TokenFiles: read at
// each child's start, so a server started after this dispatcher is
// hidden too), by their real paths.
func (b *PolicyBase) Hidden() []string {
	b.hideOnce.Do(func() {
		b.hidden = defaultHidden(b.getenv)
		if d := mcpTokenDir(); d != "" && !slices.Contains(b.hidden, d) {
			b.hidden = append(b.hidden, d)
		}
		home, _ := os.UserHomeDir()
		for _, p := range b.extra {
			if rest, ok := strings.CutPrefix(p, "~/"); ok && filepath.IsAbs(home) {
				p = filepath.Join(home, rest)
			}
			if p, err := filepath.Abs(p); err == nil {
				b.hidden = append(b.hidden, Resolved(p))
			}
		}
	})
	out := slices.Clone(b.hidden)
	for _, p := range TokenFiles(mcpTokenDir()) {
		if p = Resolved(p); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// sharedCands are the paths sharedHidden may put in the layer every
// child of b stacks, found once per base: Hidden's paths but the token
// files (a server's, started or ended since, is in each child's own
// rules: Hidden reads them at every start) and brood's state directory.
func (b *PolicyBase) sharedCands() map[string]bool {
	b.sharedOnce.Do(func() {
		b.Hidden() // b.hidden
		b.shared = map[string]bool{}
		for _, h := range append(slices.Clone(b.hidden), stateBaseHidden()...) {
			b.shared[h] = true
		}
	})
	return b.shared
}

// mcpTokenDir is where `brood mcp --http` keeps the token of each start
// (~/.config/brood/mcp): no child reads it, or a child could dispatch
// through the user's server outside its cgroup, limits and depth cap.
// Hidden whether it exists or not (made later, it stays out of reach),
// by its real path (a ~/.config/brood linked into a dotfiles repository
// is hidden where it lives: the sandbox builds no rule on a link).
func mcpTokenDir() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || !filepath.IsAbs(home) {
		return ""
	}
	dir, rest := filepath.Join(home, ".config", "brood", "mcp"), ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Join(home, ".config", "brood", "mcp")
		}
		dir, rest = parent, filepath.Join(filepath.Base(dir), rest)
	}
}

// tokenFilesName is the list, in ~/.config/brood/mcp, of the token files
// `brood mcp --http --token-file` put elsewhere: every dispatcher of the
// user's hides them from its children as it hides the directory.
const tokenFilesName = "token-files"

// TokenFiles are the token files registered in dir (RegisterTokenFile),
// absolute paths; none when the list is missing or unreadable.
func TokenFiles(dir string) []string {
	if dir == "" {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, tokenFilesName))
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); filepath.IsAbs(l) {
			out = append(out, l)
		}
	}
	return out
}

// RegisterTokenFile adds path (made absolute) to the token files every
// child is kept from reading, unless it is in ~/.config/brood/mcp already
// (hidden as the directory is). The list is written 0600, tmp+rename, in
// the directory made 0700.
func RegisterTokenFile(path string) error {
	dir := mcpTokenDir()
	if dir == "" {
		return errors.New("no home directory to keep the list of token files in")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if under := Resolved(abs); strings.HasPrefix(under, dir+string(filepath.Separator)) {
		return nil
	}
	have := TokenFiles(dir)
	if slices.Contains(have, abs) {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	body := strings.Join(append(have, abs), "\n") + "\n"
	f, err := os.CreateTemp(dir, "."+tokenFilesName+".tmp*")
	if err != nil {
		return err
	}
	_, werr := f.WriteString(body)
	if werr == nil {
		werr = f.Chmod(0o600)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), filepath.Join(dir, tokenFilesName))
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("register the token file %s in %s: %w", abs, dir, werr)
	}
	return nil
}
