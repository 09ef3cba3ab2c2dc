package settings

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/broodhq/brood/internal/trust"
)

// heldAllow are the rules of full that the gate left out of kept, each
// with the project file that has it (the first of files, in precedence
// order, whose allow list names it).
func heldAllow(files []trust.File, full, kept []string) []trust.HeldRule {
	var out []trust.HeldRule
	lists := make([][]string, len(files))
	for i, f := range files {
		lists[i] = fileAllow(f)
	}
	for _, r := range full {
		if slices.Contains(kept, r) || slices.ContainsFunc(out, func(h trust.HeldRule) bool { return h.Rule == r }) {
			continue
		}
		h := trust.HeldRule{Rule: r}
		for i, l := range lists {
			if slices.Contains(l, r) {
				h.File = files[i].Rel
				break
			}
		}
		out = append(out, h)
	}
	return out
}

// fileAllow is the permissions.allow list of a project settings file (a
// Claude Code settings.json or a brood settings.toml); nil when it has
// none or cannot be read as one.
func fileAllow(f trust.File) []string {
	var doc struct {
		Permissions struct {
			Allow []string `json:"allow" toml:"allow"`
		} `json:"permissions" toml:"permissions"`
	}
	if strings.HasSuffix(f.Rel, ".json") {
		if json.Unmarshal(f.Data, &doc) != nil {
			return nil
		}
	} else if _, err := toml.Decode(string(f.Data), &doc); err != nil {
		return nil
	}
	return doc.Permissions.Allow
}
