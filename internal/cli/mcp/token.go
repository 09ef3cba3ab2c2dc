package mcp

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/broodhq/brood/internal/dispatch"
)

// EnvToken gives `brood mcp --http` its token (instead of one generated or
// read from --token-file).
const EnvToken = "BROOD_MCP_TOKEN"

// minToken is the shortest token brood accepts from a person.
const minToken = 16

// token is the bearer token of one `brood mcp --http` start and where it
// is kept.
type token struct {
	value string
	file  string // "" when given in the environment
	temp  bool   // generated for this start at the default place: removed at exit
}

// httpToken decides the token: BROOD_MCP_TOKEN when set; the content of
// --token-file when that file exists (it must be private to its owner);
// otherwise a new random one, written 0600 to --token-file, or to
// ~/.config/brood/mcp/http-PORT.token for this start only.
func httpToken(getenv func(string) string, tokenFile, home string, addr net.Addr) (token, error) {
	if v := strings.TrimSpace(getenv(EnvToken)); v != "" {
		if len(v) < minToken {
			return token{}, fmt.Errorf("%s: the token is %d characters; use at least %d (e.g. openssl rand -hex 32)", EnvToken, len(v), minToken)
		}
		return token{value: v}, nil
	}
	if tokenFile != "" {
		v, err := readToken(tokenFile)
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return token{value: v, file: tokenFile}, err
		}
		t := token{value: newToken(), file: tokenFile}
		return t, writeToken(tokenFile, t.value)
	}
	if home == "" {
		return token{}, errors.New("brood mcp --http: HOME is not set, so there is nowhere private to write the token: give --token-file FILE or " + EnvToken)
	}
	port := "0"
	if tcp, ok := addr.(*net.TCPAddr); ok {
		port = fmt.Sprint(tcp.Port)
	}
	t := token{value: newToken(), file: filepath.Join(home, ".config", "brood", "mcp", "http-"+port+".token"), temp: true}
	return t, writeToken(t.file, t.value)
}

// readToken reads a token file, which must be a regular file of this
// user's that no one else may read or write. It is opened once, not
// followed if it is a link, and checked on the open file (no window
// between the check and the read).
func readToken(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return "", fmt.Errorf("--token-file %s: a symbolic link; give the path of the file itself", path)
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("--token-file %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("--token-file %s: not a regular file; give the path of a file holding the token", path)
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return "", fmt.Errorf("--token-file %s: owned by uid %d, not by you (uid %d); use a file of your own, mode 600", path, st.Uid, os.Getuid())
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("--token-file %s: others may read or write it (mode %04o); run chmod 600 %s", path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("--token-file %s: %w", path, err)
	}
	v := strings.TrimSpace(string(data))
	if len(v) < minToken {
		return "", fmt.Errorf("--token-file %s: the token is %d characters; use at least %d, or delete the file and brood writes a new one", path, len(v), minToken)
	}
	return v, nil
}

// newToken is 32 random bytes in hex.
func newToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// writeToken writes the token mode 0600, tmp+rename, in a directory made
// 0700 when brood creates it.
func writeToken(path, value string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("brood mcp: token: %w", err)
	}
	// 0600 (os.CreateTemp's mode), synced, tmp+rename.
	if err := dispatch.WriteFileAtomic(path, []byte(value+"\n")); err != nil {
		return fmt.Errorf("brood mcp: write the token to %s: %w", path, err)
	}
	return nil
}
