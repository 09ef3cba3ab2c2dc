package trust

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// What a ConfigState keeps of the paths under its tops (StateRecord.Keep).
const (
	keepConfig = "config" // IsConfigPath (SnapshotConfig)
	keepAll    = "all"    // everything (SnapshotPaths, SnapshotGit)
	keepNested = "nested" // IsConfigPath in any case (SnapshotNestedConfig)
)

func keepsAll(string) bool { return true }

func isNestedConfig(rel string) bool { return IsConfigPath(strings.ToLower(rel)) }

// StateRecord is a ConfigState as written to disk before an in-place
// writer starts, so that what the guard must put back survives its
// parent's death (a kill -9, a crash): the next brood in the project reads
// it (FromRecord) and puts back what changed since. Only brood writes it,
// in its own records, out of every child's reach.
type StateRecord struct {
	Root    string                 `json:"root"`
	Tops    []string               `json:"tops"`
	Keep    string                 `json:"keep"`
	Common  string                 `json:"common,omitempty"`
	Entries map[string]EntryRecord `json:"entries"`
}

// EntryRecord is one path of a StateRecord: its type and permission bits,
// a regular file's content (when kept: Kept), a link's target.
type EntryRecord struct {
	Mode fs.FileMode `json:"mode"`
	Data []byte      `json:"data,omitempty"`
	Link string      `json:"link,omitempty"`
	Kept bool        `json:"kept,omitempty"`
}

// Record is the state as a StateRecord; ok is false for a state that is
// not recorded (the user's own configuration, nil).
func (c *ConfigState) Record() (StateRecord, bool) {
	if c == nil || c.kind == "" {
		return StateRecord{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r := StateRecord{Root: c.root, Tops: slices.Clone(c.tops), Keep: c.kind, Common: c.common, Entries: make(map[string]EntryRecord, len(c.entries))}
	for rel, e := range c.entries {
		r.Entries[rel] = EntryRecord{Mode: e.mode, Data: e.data, Link: e.link, Kept: e.kept}
	}
	return r, true
}

// FromRecord is the ConfigState a StateRecord holds, for Changes and
// Restore. Every path in it must be local to its root (a ".." top, the
// common git dir of a linked work tree, is one of the tops only), and its
// root absolute.
func FromRecord(r StateRecord) (*ConfigState, error) {
	c := &ConfigState{root: r.Root, tops: r.Tops, common: r.Common, kind: r.Keep, entries: map[string]configEntry{}}
	switch r.Keep {
	case keepConfig:
		c.keep = IsConfigPath
	case keepAll:
		c.keep = keepsAll
	case keepNested:
		c.keep = isNestedConfig
	default:
		return nil, fmt.Errorf("guard record: unknown keep %q", r.Keep)
	}
	if !filepath.IsAbs(r.Root) {
		return nil, fmt.Errorf("guard record: root %q is not absolute", r.Root)
	}
	for rel, e := range r.Entries {
		if !c.covers(rel) || path.Clean(rel) != rel {
			return nil, fmt.Errorf("guard record: %q is not under its tops", rel)
		}
		c.entries[rel] = configEntry{mode: e.Mode, data: e.Data, link: e.Link, kept: e.Kept}
	}
	return c, nil
}
