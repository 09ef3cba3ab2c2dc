package tui

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/broodhq/brood/internal/dispatch"
)

// The prompts a person sent, per project, for ↑/↓: kept in the user's state
// directory ($XDG_STATE_HOME/brood/history, or ~/.local/state/brood/history),
// never in the project, one file per project directory.

// historyMax is how many prompts a project's history keeps.
const historyMax = 500

// history is one project's prompts, oldest first, and where ↑/↓ are in it.
type history struct {
	path    string // "" when there is no state directory: kept for the session only
	root    string
	prompts []string
	pos     int                 // len(prompts) when not browsing
	draft   string              // what was typed before ↑
	redact  func(string) string // a prompt as it is kept (nil: as sent)
}

type historyFile struct {
	Project string   `json:"project"`
	Prompts []string `json:"prompts"`
}

// historyPath is the file of the project at root.
func historyPath(getenv func(string) string, root string) string {
	dir := getenv("XDG_STATE_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, "brood", "history", hex.EncodeToString(sum[:8])+".json")
}

// loadHistory reads the project's history; a file that cannot be read is
// said once and then written afresh.
func loadHistory(path, root string) (history, error) {
	h := history{path: path, root: root}
	if path == "" {
		return h, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return h, nil
		}
		return h, fmt.Errorf("history %s: %v (↑ starts empty)", path, err)
	}
	var f historyFile
	if err := json.Unmarshal(data, &f); err != nil {
		return h, fmt.Errorf("history %s: %v (↑ starts empty; the file is written afresh)", path, err)
	}
	if f.Project == root {
		h.prompts = f.Prompts
	}
	h.pos = len(h.prompts)
	return h, nil
}

// add records a prompt sent (not twice in a row) and saves the file
// (tmp+rename).
func (h *history) add(prompt string) error {
	h.pos, h.draft = len(h.prompts), ""
	if h.redact != nil {
		prompt = h.redact(prompt) // the file is no place for a secret pasted into a prompt
	}
	if prompt == "" || (len(h.prompts) > 0 && h.prompts[len(h.prompts)-1] == prompt) {
		return nil
	}
	h.prompts = append(h.prompts, prompt)
	if len(h.prompts) > historyMax {
		h.prompts = slices.Clone(h.prompts[len(h.prompts)-historyMax:])
	}
	h.pos = len(h.prompts)
	if h.path == "" {
		return nil
	}
	data, err := json.Marshal(historyFile{Project: h.root, Prompts: h.prompts})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return fmt.Errorf("history: %v", err)
	}
	if err := dispatch.WriteFileAtomic(h.path, data); err != nil {
		return fmt.Errorf("history: %v", err)
	}
	return nil
}

// older is the prompt before the one shown (↑); ok is false at the oldest.
func (h *history) older(current string) (string, bool) {
	if h.pos == 0 {
		return "", false
	}
	if h.pos == len(h.prompts) {
		h.draft = current
	}
	h.pos--
	return h.prompts[h.pos], true
}

// newer is the prompt after the one shown (↓), and at the end what was
// being typed; ok is false when not browsing.
func (h *history) newer() (string, bool) {
	if h.pos >= len(h.prompts) {
		return "", false
	}
	h.pos++
	if h.pos == len(h.prompts) {
		return h.draft, true
	}
	return h.prompts[h.pos], true
}
