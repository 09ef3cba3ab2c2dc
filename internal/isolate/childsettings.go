package isolate

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/taskdir"
)

// A delegating child starts its own children as the root would, so it
// needs the user's settings; but ~/.config/brood/settings.toml also holds
// what only the root and the fleet use: a worker's remotes with their
// tokens, the Temporal endpoint, the store URL (review C7). The parent
// writes the child a copy without them in its task directory and names it
// in the child's environment (settings.EnvUserSettings); the user's file
// stays hidden with the rest of ~/.config/brood.

// ChildSettingsName is the copy's name in the task directory.
const ChildSettingsName = "user-settings.toml"

// childSettingsDropped are the top-level tables and keys the copy leaves
// out: the fleet's (worker.remotes carries credentials), and anything
// Settings (or the price table) does not know.
func childSettingsDropped() []string { return []string{"worker", "temporal", "store"} }

// WriteChildSettings writes, for a child of env that delegates, the copy
// of the user's settings this process read (its own copy's, for a child
// that delegates; else the home's ~/.config/brood/settings.toml: lookup
// reads the child's environment) into td, and names it in cmd's
// environment. A child that does not delegate gets nothing; nor one
// whose parent read no user settings.
func WriteChildSettings(cmd *exec.Cmd, env *dispatch.Envelope, td *taskdir.Dir) error {
	if len(env.AllowedDestinations) == 0 || env.Depth >= env.MaxDepth {
		return nil
	}
	lookup := os.Getenv
	if cmd.Env != nil {
		lookup = envLookup(cmd.Env)
	}
	src := lookup(settings.EnvUserSettings)
	if src == "" {
		home := lookup("HOME")
		if !filepath.IsAbs(home) {
			return nil
		}
		src = filepath.Join(home, ".config", "brood", "settings.toml")
	}
	data, err := os.ReadFile(src)
	if os.IsNotExist(err) {
		data, err = nil, nil
	} else if err != nil {
		return fmt.Errorf("read %s for the child's copy: %w", src, err)
	}
	body, err := childSettings(data)
	if err != nil {
		return fmt.Errorf("%s: %w (fix the file: brood config check)", src, err)
	}
	dst := td.File(ChildSettingsName)
	if err := os.WriteFile(dst, body, 0o600); err != nil {
		return fmt.Errorf("write the child's settings %s: %w", dst, err)
	}
	cmd.Env = append(cmd.Env, settings.EnvUserSettings+"="+dst)
	return nil
}

// childSettings is data (a settings.toml) with only the tables and keys
// settings.Settings knows, less childSettingsDropped.
func childSettings(data []byte) ([]byte, error) {
	var all map[string]any
	if _, err := toml.Decode(string(data), &all); err != nil {
		return nil, err
	}
	known := map[string]bool{"prices": true} // price.Load's table, beside Settings
	t := reflect.TypeFor[settings.Settings]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
		if name != "" && name != "-" && !slices.Contains(childSettingsDropped(), name) {
			known[name] = true
		}
	}
	kept := map[string]any{}
	for k, v := range all {
		if known[k] {
			kept[k] = v
		}
	}
	var b bytes.Buffer
	b.WriteString("# The user's settings as a delegating child reads them (brood wrote this copy: worker, temporal and store left out).\n")
	if err := toml.NewEncoder(&b).Encode(kept); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
