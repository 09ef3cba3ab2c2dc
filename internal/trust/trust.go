// Package trust keeps the user's answers to "do you trust this project's
// own files?": which project directories' files — keyed to the directory
// and a hash of the files' content, so any change asks again — the user
// allowed to widen what brood does (a permission mode, allow rules, raised
// limits, hooks, MCP servers, an agent's secrets). The records live in the
// user's config directory (~/.config/brood/trust.json), never in the
// project, so a repository cannot trust itself. The gate that decides what
// a project file widens is settings.Resolve's; this package holds the
// store, the Grant a run passes down to its children, and the configuration
// a subagent may not change (config.go).
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"
)

// FileName is the store's name inside the user's brood config directory.
const FileName = "trust.json"

// Record is one trusted project state.
type Record struct {
	// Root is the project's absolute directory.
	Root string `json:"root"`
	// Hash is Hash of the files trusted.
	Hash string `json:"hash"`
	// Files are the project-relative files the hash covers, for a person.
	Files   []string  `json:"files"`
	Granted time.Time `json:"granted"`
	// Sums are the SHA-256 of each file trusted (GrantFiles), so that a
	// listing can name the files that changed since.
	Sums map[string]string `json:"sums,omitempty"`
}

// Store is the trust file of one user. Its methods read the file afresh, so
// a grant by another process is seen at once.
type Store struct {
	Path string
}

// UserStore is the store under home (~/.config/brood/trust.json).
func UserStore(home string) Store {
	return Store{Path: filepath.Join(home, ".config", "brood", FileName)}
}

type fileFormat struct {
	Version  int      `json:"version"`
	Projects []Record `json:"projects"`
}

// List returns every record, sorted by root.
func (s Store) List() ([]Record, error) {
	data, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trust: %w", err)
	}
	var f fileFormat
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %v (fix the file, or delete it to trust nothing)", s.Path, err)
	}
	sort.Slice(f.Projects, func(i, j int) bool { return f.Projects[i].Root < f.Projects[j].Root })
	return f.Projects, nil
}

// Trusted reports whether root is trusted with exactly the files that hash
// to hash. An unreadable store trusts nothing.
func (s Store) Trusted(root, hash string) bool {
	recs, err := s.List()
	if err != nil {
		return false
	}
	return slices.ContainsFunc(recs, func(r Record) bool { return r.Root == root && r.Hash == hash })
}

// Grant trusts root in its current state (hash), replacing any earlier
// record for root.
func (s Store) Grant(root, hash string, files []string, now time.Time) error {
	recs, err := s.List()
	if err != nil {
		return err
	}
	recs = slices.DeleteFunc(recs, func(r Record) bool { return r.Root == root })
	recs = append(recs, Record{Root: root, Hash: hash, Files: files, Granted: now.UTC()})
	return s.write(recs)
}

// GrantFiles trusts root with files as they are (Grant, with each file's
// sum kept for Changed).
func (s Store) GrantFiles(root string, files []File, now time.Time) error {
	recs, err := s.List()
	if err != nil {
		return err
	}
	g := GrantOf(files)
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, f.Rel)
	}
	recs = slices.DeleteFunc(recs, func(r Record) bool { return r.Root == root })
	recs = append(recs, Record{Root: root, Hash: Hash(files), Files: names, Granted: now.UTC(), Sums: g.Files})
	return s.write(recs)
}

// Changed names the files that differ between the record and files as
// they are now: changed, added or gone, sorted. A record without sums (an
// older grant) names nothing.
func (r Record) Changed(files []File) []string {
	if r.Sums == nil {
		return nil
	}
	var out []string
	now := GrantOf(files).Files
	for rel, s := range now {
		if r.Sums[rel] != s {
			out = append(out, rel)
		}
	}
	for rel := range r.Sums {
		if _, ok := now[rel]; !ok {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return out
}

// Revoke removes root's record; it reports whether there was one.
func (s Store) Revoke(root string) (bool, error) {
	recs, err := s.List()
	if err != nil {
		return false, err
	}
	n := len(recs)
	recs = slices.DeleteFunc(recs, func(r Record) bool { return r.Root == root })
	if len(recs) == n {
		return false, nil
	}
	return true, s.write(recs)
}

func (s Store) write(recs []Record) error {
	sort.Slice(recs, func(i, j int) bool { return recs[i].Root < recs[j].Root })
	data, err := json.MarshalIndent(fileFormat{Version: 1, Projects: recs}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(s.Path), "."+FileName+".tmp*")
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	_, werr := f.Write(append(data, '\n'))
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), s.Path)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("trust: write %s: %w", s.Path, werr)
	}
	return nil
}

// Key is the name a project's grant is kept under: its directory with
// links resolved, so the same tree reached another way is the same project
// and a copy, a clone or a move elsewhere is another one (asked again).
func Key(root string) string {
	if root == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		return r
	}
	return filepath.Clean(root)
}

// File is one project file as the gate read it.
type File struct {
	Rel  string // project-relative, slash-separated
	Data []byte
}

// Hash keys a set of files by name and content: the same files with the
// same bytes hash the same, in any order; any change, addition or removal
// gives another hash.
func Hash(files []File) string {
	sorted := slices.Clone(files)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Rel < sorted[j].Rel })
	h := sha256.New()
	for _, f := range sorted {
		fmt.Fprintf(h, "%s\x00%d\x00", f.Rel, len(f.Data))
		h.Write(f.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Grant is a run's trust decision as it goes down the tree, in each
// child's envelope: the root decides (from the user's grant or a forced
// run), and a child only passes on what it got — it never asks the store,
// the environment or the project itself.
type Grant struct {
	// All trusts every project file (--trust-project, BROOD_TRUST_PROJECT=1).
	All bool `json:"all,omitempty"`
	// Files are the project-relative files trusted, with the SHA-256 of the
	// content trusted: a file changed since is not.
	Files map[string]string `json:"files,omitempty"`
	// Own are the project's local files (.claude/settings.local.json,
	// .brood/settings.local.toml) the root found to be the person's own
	// (brood wrote them, or Claude Code trusts the folder), with the
	// SHA-256 of their content then: a subagent cannot read what vouched
	// for them (the user's state directory), so it takes the root's word,
	// for that content only. Not trust in the project: Trusts and Covers
	// never look here.
	Own map[string]string `json:"own,omitempty"`
}

// OwnsLocal reports whether the root found the local file rel, with this
// content, to be the person's own (Own). A nil grant owns nothing.
func (g *Grant) OwnsLocal(rel string, data []byte) bool {
	if g == nil {
		return false
	}
	want, ok := g.Own[filepath.ToSlash(rel)]
	return ok && want == sum(data)
}

// Sum is the SHA-256 of data, as a grant keeps it.
func Sum(data []byte) string { return sum(data) }

// GrantOf is the grant of files as they are.
func GrantOf(files []File) *Grant {
	g := &Grant{Files: map[string]string{}}
	for _, f := range files {
		g.Files[f.Rel] = sum(f.Data)
	}
	return g
}

// Trusts reports whether path, a file under root, is trusted as it is now.
// A nil grant trusts nothing.
func (g *Grant) Trusts(root, path string) bool {
	if g == nil || root == "" {
		return false
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || !filepath.IsLocal(rel) {
		return false
	}
	if g.All {
		return true
	}
	want, ok := g.Files[filepath.ToSlash(rel)]
	if !ok {
		return false
	}
	data, err := os.ReadFile(path)
	return err == nil && sum(data) == want
}

// Covers reports whether the grant trusts every one of files with the
// content it has (a nil grant trusts none; "all" trusts every one).
func (g *Grant) Covers(files []File) bool {
	if g == nil {
		return false
	}
	if g.All {
		return true
	}
	for _, f := range files {
		if want, ok := g.Files[f.Rel]; !ok || want != sum(f.Data) {
			return false
		}
	}
	return true
}

func sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}
