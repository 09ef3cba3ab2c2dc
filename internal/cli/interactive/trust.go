package interactive

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/termsafe"
	"github.com/broodhq/brood/internal/trust"
)

// On a terminal, the first interactive run in a project whose own files
// allow more than the defaults, and that the user has not trusted, asks
// once, as Claude Code asks "Do you trust the files in this folder?": yes
// records the grant `brood trust` records (and this session applies the
// files), no goes on with the defaults and is remembered, so the same
// files do not ask again (the one-line notice says how to trust them
// later). Headless runs never ask: they print the notice.

// declinedFile keeps the project states the user declined, in the user's
// state directory (never in the project).
type declinedFile struct {
	// Declined maps a project's directory to the hash of its files when
	// the user said no.
	Declined map[string]string `json:"declined"`
}

func declinedPath(getenv func(string) string) string {
	dir := getenv("XDG_STATE_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "brood", "trust-declined.json")
}

func readDeclined(path string) declinedFile {
	var d declinedFile
	if data, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(data, &d) // unreadable: nothing declined, it asks again
	}
	if d.Declined == nil {
		d.Declined = map[string]string{}
	}
	return d
}

// trustAsk is what asking needs: the terminal, and the clock.
type trustAsk struct {
	in  io.Reader
	out io.Writer
	now time.Time
}

// askTrust puts the question when it is due, and on yes grants trust and
// reads the settings again, so this session applies the project's files.
func askTrust(f *cmdutil.Factory, a trustAsk) error {
	pt := f.Settings.Trust
	if !pt.Gated() || f.Inherited || f.TrustProject || f.Home == "" {
		return nil
	}
	key := trust.Key(pt.Root)
	path := declinedPath(f.Getenv)
	if path != "" && readDeclined(path).Declined[key] == pt.Hash {
		return nil // asked once already: the notice said how to trust it
	}
	out := termsafe.NewWriter(a.out) // the widening names what the project's files say
	fmt.Fprintf(out, "\nbrood: this folder's own files allow more than brood's defaults:\n")
	for _, w := range pt.Widening {
		fmt.Fprintf(out, "  - %s\n", w)
	}
	fmt.Fprintf(out, "Files: %s\n", strings.Join(pt.FileNames(), ", "))
	fmt.Fprintf(out, "A repository you cloned can say anything here; trust it only if you trust its authors.\n")
	fmt.Fprintf(out, "Trust this folder (%s)? It is recorded as `brood trust` does; any change to these files asks again. [y/N] ", pt.Root)
	answer, err := readLine(a.in)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if yes := strings.ToLower(strings.TrimSpace(answer)); yes != "y" && yes != "yes" {
		fmt.Fprintf(out, "not trusted: this session uses the defaults for those files (`brood trust` trusts them later)\n")
		return recordDeclined(path, key, pt.Hash)
	}
	if err := trust.UserStore(f.Home).GrantFiles(pt.Root, pt.Files, a.now); err != nil {
		return err
	}
	// Read the settings again, now trusted; their warnings were said once.
	errOut := f.Err
	f.Err = io.Discard
	err = f.Load()
	f.Err = errOut
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "trusted %s; undo with: brood trust --revoke\n", pt.Root)
	return nil
}

// readLine reads one line a byte at a time, so nothing typed after it is
// taken from the terminal the interactive mode reads next.
func readLine(in io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for b.Len() < 256 {
		n, err := in.Read(buf)
		if n == 1 {
			if buf[0] == '\n' || buf[0] == '\r' {
				return b.String(), nil
			}
			b.WriteByte(buf[0])
		}
		if err != nil {
			return b.String(), err
		}
	}
	return b.String(), nil
}

// recordDeclined remembers a "no" (tmp+rename).
func recordDeclined(path, root, hash string) error {
	if path == "" {
		return nil
	}
	d := readDeclined(path)
	d.Declined[root] = hash
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("trust: %v", err)
	}
	return dispatch.WriteFileAtomic(path, data)
}
