package trust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// ClaudeJSONFile is Claude Code's user file under the home directory. It
// holds the user's MCP servers (mcpServers), which brood starts as the
// user's own, and per project the keys that let tools and servers run
// there; Claude Code also rewrites the rest of it all the time (counters,
// tips, caches). So a subagent's change to it is judged and undone key by
// key (ClaudeJSONState), not as a whole file.
const ClaudeJSONFile = ".claude.json"

// claudeProjectKeys are the keys of a projects entry that allow something:
// Claude Code's local MCP servers, allowed tools, the .mcp.json servers it
// enables and the project trust dialog.
var claudeProjectKeys = []string{"mcpServers", "allowedTools", "enabledMcpjsonServers", "disabledMcpjsonServers", "enableAllProjectMcpServers", "hasTrustDialogAccepted"}

// ClaudeJSONState is the configuring part of ~/.claude.json at one moment:
// the top-level mcpServers and each project's claudeProjectKeys.
type ClaudeJSONState struct {
	path   string
	exists bool
	raw    []byte
	perm   fs.FileMode
	keys   map[string]json.RawMessage // guarded key → its value (compact)
}

// SnapshotClaudeJSON reads ~/.claude.json under home. A file that does not
// exist is a state too (one a child may not create servers in).
func SnapshotClaudeJSON(home string) (*ClaudeJSONState, error) {
	c := &ClaudeJSONState{path: filepath.Join(home, ClaudeJSONFile), perm: 0o600}
	data, exists, err := readBounded(c.path)
	if err != nil {
		return nil, fmt.Errorf("config snapshot: %w", err)
	}
	c.exists, c.raw = exists, data
	if info, err := os.Stat(c.path); err == nil {
		c.perm = info.Mode().Perm()
	}
	c.keys, _ = claudeKeys(data)
	return c, nil
}

// readBounded reads path (a user's link to their dotfiles is followed:
// it is read, and only ever replaced by a rename, never written through).
func readBounded(path string) ([]byte, bool, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	case !info.Mode().IsRegular():
		return nil, true, fmt.Errorf("%s is not a regular file", path)
	case info.Size() > maxConfigTotal:
		return nil, true, fmt.Errorf("%s is larger than %d bytes", path, maxConfigTotal)
	}
	data, err := os.ReadFile(path)
	return data, true, err
}

// claudeKeys picks the guarded keys out of the file's content; ok is false
// when it is no JSON object (nor empty).
func claudeKeys(data []byte) (map[string]json.RawMessage, bool) {
	out := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(data)) == 0 {
		return out, true
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil || top == nil {
		return out, false
	}
	if v, ok := top["mcpServers"]; ok {
		out["mcpServers"] = compact(v)
	}
	var projects map[string]map[string]json.RawMessage
	if v, ok := top["projects"]; ok && json.Unmarshal(v, &projects) != nil {
		out["projects"] = compact(v) // not the shape Claude Code writes: kept whole
		return out, true
	}
	for dir, p := range projects {
		for _, k := range claudeProjectKeys {
			if v, ok := p[k]; ok {
				out[projectKey(dir, k)] = compact(v)
			}
		}
	}
	return out, true
}

func projectKey(dir, key string) string { return "projects[" + strconv.Quote(dir) + "]." + key }

func compact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// Changes lists the guarded keys that differ now, as
// ".claude.json mcpServers"; ".claude.json" alone when the file is no
// longer a JSON object (or no longer readable).
func (c *ClaudeJSONState) Changes() ([]string, error) {
	data, _, err := readBounded(c.path)
	if err != nil {
		return []string{ClaudeJSONFile}, nil
	}
	now, ok := claudeKeys(data)
	if !ok {
		return []string{ClaudeJSONFile}, nil
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(joinKeys(c.keys, now))) {
		a, inA := c.keys[k]
		b, inB := now[k]
		if inA != inB || !bytes.Equal(a, b) {
			out = append(out, ClaudeJSONFile+" "+k)
		}
	}
	return out, nil
}

func joinKeys(a, b map[string]json.RawMessage) map[string]json.RawMessage {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

// Restore puts the guarded keys back as they were in the snapshot and
// leaves the rest of the file as it is now (Claude Code's own writes). A
// file that is no longer a JSON object is put back whole. It returns the
// names it could not restore.
func (c *ClaudeJSONState) Restore(names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	data, _, err := readBounded(c.path)
	var top map[string]json.RawMessage
	if err != nil || (len(bytes.TrimSpace(data)) > 0 && (json.Unmarshal(data, &top) != nil || top == nil)) {
		return c.putWhole(names)
	}
	if top == nil {
		top = map[string]json.RawMessage{}
	}
	setKey(top, "mcpServers", c.keys)
	if whole, ok := c.keys["projects"]; ok {
		top["projects"] = whole
	} else if err := c.restoreProjects(top); err != nil {
		return c.putWhole(names)
	}
	out, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return names, err
	}
	if err := c.write(append(out, '\n')); err != nil {
		return names, err
	}
	return nil, nil
}

// restoreProjects puts each project's guarded keys back into top.
func (c *ClaudeJSONState) restoreProjects(top map[string]json.RawMessage) error {
	projects := map[string]map[string]json.RawMessage{}
	if v, ok := top["projects"]; ok {
		if err := json.Unmarshal(v, &projects); err != nil {
			return err
		}
	}
	dirs := map[string]bool{}
	for dir := range projects {
		dirs[dir] = true
	}
	for k := range c.keys {
		var dir string
		if n, _ := fmt.Sscanf(k, "projects[%q]", &dir); n == 1 {
			dirs[dir] = true
		}
	}
	for dir := range dirs {
		p := projects[dir]
		if p == nil {
			p = map[string]json.RawMessage{}
		}
		was := map[string]json.RawMessage{}
		for _, k := range claudeProjectKeys {
			if v, ok := c.keys[projectKey(dir, k)]; ok {
				was[k] = v
			}
			setKey(p, k, was)
		}
		if len(p) > 0 {
			projects[dir] = p
		} else {
			delete(projects, dir)
		}
	}
	if len(projects) == 0 {
		delete(top, "projects")
		return nil
	}
	b, err := json.Marshal(projects)
	top["projects"] = b
	return err
}

// setKey sets m[k] to was[k], or deletes it when was has none.
func setKey(m map[string]json.RawMessage, k string, was map[string]json.RawMessage) {
	if v, ok := was[k]; ok {
		m[k] = v
	} else {
		delete(m, k)
	}
}

// putWhole writes the snapshot's file back (or removes a file that was not
// there); a link a child put in its place is replaced, never followed.
func (c *ClaudeJSONState) putWhole(names []string) ([]string, error) {
	if !c.exists {
		if err := os.Remove(c.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return names, err
		}
		return nil, nil
	}
	if err := c.write(c.raw); err != nil {
		return names, err
	}
	return nil, nil
}

// write replaces the file, tmp+rename.
func (c *ClaudeJSONState) write(data []byte) error {
	tmp := c.path + ".brood-restore"
	if err := os.WriteFile(tmp, data, c.perm); err != nil {
		return err
	}
	if err := os.Chmod(tmp, c.perm); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, c.path)
}
