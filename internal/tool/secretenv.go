package tool

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/trust"
)

// providerKeys are the credentials brood itself uses to reach models: a
// child brood process keeps them (it calls its model itself); no Bash
// command ever sees them.
var providerKeys = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "OPENROUTER_API_KEY",
	"OLLAMA_API_KEY", "VLLM_API_KEY", "LLAMACPP_API_KEY", "LMSTUDIO_API_KEY"}

// secretWords are name segments that say a variable holds a credential
// (GH_PAT, MY_DB_PASSWD_X, SSH_AUTH_SOCK); secretSuffixes catch them run
// together with another word (GITHUBTOKEN, dbPassword, apiKey).
var (
	secretWords = []string{"TOKEN", "SECRET", "SECRETS", "PASSWORD", "PASSWORDS", "PASSWD", "PASS", "PWD", "KEY", "KEYS",
		"APIKEY", "PAT", "CREDENTIAL", "CREDENTIALS", "CRED", "CREDS", "AUTH", "PRIVATE", "DSN", "COOKIE", "SIGNING",
		"PW", "PASSPHRASE"}
	secretSuffixes = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "APIKEY", "ACCESSKEY", "SECRETKEY", "PRIVATEKEY", "CREDENTIALS"}
	// notSecret are well-known variables whose names match but whose
	// values are not credentials.
	notSecret = []string{"PWD", "OLDPWD"}
)

// IsSecretName reports whether an environment variable's name says it holds
// a credential: a segment (between _ - .) such as TOKEN, SECRET, PASSWORD,
// PASSWD, PASS, KEY, PAT, CREDENTIAL or AUTH, or a segment ending in one of
// the longer words. PATH, KEYBOARD and TOKENS_USED are not secret names.
func IsSecretName(name string) bool {
	n := strings.ToUpper(name)
	if slices.Contains(notSecret, n) {
		return false
	}
	for _, seg := range strings.FieldsFunc(n, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if slices.Contains(secretWords, seg) {
			return true
		}
		for _, suf := range secretSuffixes {
			if strings.HasSuffix(seg, suf) {
				return true
			}
		}
	}
	return false
}

// ChildEnviron is the environment a subagent starts with: base without
// secret-looking variables (IsSecretName) nor those whose value holds a
// URL with a password (DATABASE_URL=postgres://app:pw@db/x) but a proxy's
// (HTTPS_PROXY, GOPROXY: the network the child's tools must go through,
// redacted all the same), except brood's own provider keys
// (the child calls its model itself; its Bash never sees them) and the
// variables its definition asks for by name (frontmatter `env: [GH_TOKEN]`).
// A child cannot leak what it never had.
func ChildEnviron(base, allow []string) []string {
	out := make([]string, 0, len(base))
	for _, kv := range base {
		name, value, _ := strings.Cut(kv, "=")
		withheld := IsSecretName(name) || (holdsURLPassword(value) && !strings.HasSuffix(strings.ToUpper(name), "PROXY"))
		if withheld && !slices.Contains(providerKeys, name) && !slices.Contains(allow, name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// projectEnvSecrets reads the values of the .env files at the top of root
// and one directory below (.env, .env.local, .env.production, ...; never
// .env.example, .env.sample or .env.template, which hold placeholders).
// Values of 8 characters or more are secrets, except, under a name that
// does not look secret, plain words, numbers and URLs without a password
// (NODE_ENV=development, PORT=8080, API_URL=https://example.com).
func projectEnvSecrets(root string) []secretVar {
	if root == "" {
		return nil
	}
	var out []secretVar
	for _, f := range dotenvFiles(root) {
		base := filepath.Base(f)
		if strings.HasSuffix(base, ".example") || strings.HasSuffix(base, ".sample") || strings.HasSuffix(base, ".template") {
			continue
		}
		for _, v := range readDotenv(f) {
			out = append(out, dotenvSecrets(v)...)
		}
	}
	return out
}

// dotenvFiles are the paths the globs .env, .env.*, */.env and */.env.*
// under root match, in that order, each glob's matches sorted: root's
// directory read once (the globs read it three times), and root taken as
// a path, not a pattern.
func dotenvFiles(root string) []string {
	var top, below, belowDot []string
	// By name first: a root that can be entered but not listed still has
	// its .env read by an agent that names it.
	if _, err := os.Lstat(filepath.Join(root, ".env")); err == nil {
		top = append(top, filepath.Join(root, ".env"))
	}
	// A listing that fails part way keeps the entries it read.
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".env.") {
			top = append(top, filepath.Join(root, e.Name()))
		}
		if !e.IsDir() && e.Type()&os.ModeSymlink == 0 {
			continue // no file below it
		}
		dir := filepath.Join(root, e.Name())
		if _, err := os.Lstat(filepath.Join(dir, ".env")); err == nil {
			below = append(below, filepath.Join(dir, ".env"))
		}
		names, _ := readDirNames(dir)
		for _, n := range names {
			if strings.HasPrefix(n, ".env.") {
				belowDot = append(belowDot, filepath.Join(dir, n))
			}
		}
	}
	return slices.Concat(top, below, belowDot)
}

// readDirNames are the sorted names in dir (a symlink to one followed;
// anything else, a FIFO included, is opened without blocking and refused).
func readDirNames(dir string) ([]string, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	slices.Sort(names)
	return names, err
}

// plainValue is a value that, under an ordinary name, is configuration
// rather than a credential.
var plainValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:[a-z]+|[0-9.:]+|https?://[^@\s]+)$`) })

// readDotenv returns the NAME=value pairs of a dotenv file, in its order
// (parseDotenv: quoted values that span lines included). A link is followed (`.env -> secrets/prod.env`
// holds the same secrets as the file, and a child reading `.env` reads
// them); what it opens must be a regular file of at most 1 MiB (opened
// without blocking, so a FIFO cannot hold the parent), else nothing.
func readDotenv(path string) []dotenvVar {
	// O_PATH first: what the link names is looked at, not opened (a
	// device's open runs its driver), and only a regular file is then
	// opened, through that descriptor, so it cannot be swapped between.
	pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > 1<<20 {
		unix.Close(pfd)
		return nil
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", pfd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	unix.Close(pfd)
	if err != nil {
		// No /proc here: by its path, and only if it is still the file
		// looked at.
		var again unix.Stat_t
		if fd, err = unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0); err != nil {
			return nil
		}
		if unix.Fstat(fd, &again) != nil || again.Dev != st.Dev || again.Ino != st.Ino {
			unix.Close(fd)
			return nil
		}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil
	}
	return parseDotenv(string(src))
}

// refuseConfig stops a writing call to a configuration path beneath
// env.ConfigRoot (links resolved on both sides).
func refuseConfig(env *Env, t Tool, input json.RawMessage) (Result, bool) {
	if (env.ConfigRoot == "" && len(env.ConfigDirs) == 0) || t.ReadOnly() {
		return Result{}, false
	}
	p := filePathOf(input, env.Dir)
	if p == "" {
		return Result{}, false
	}
	refused := slices.ContainsFunc(env.ConfigDirs, func(d string) bool { _, in := beneath(ResolveLinks(d), p); return in })
	if rel, in := beneath(ResolveLinks(env.ConfigRoot), p); env.ConfigRoot != "" && in && trust.IsConfigPath(rel) {
		refused = true
	}
	if !refused {
		return Result{}, false
	}
	return Errorf("%s is brood's or Claude Code's configuration (.brood/, .claude/, .mcp.json, ~/.config/brood, ~/.claude): a subagent may not change it. Say in your report what should change and why; the user decides", p), true
}

// beneath returns p relative to dir when p is dir or inside it.
func beneath(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// IsSecretFile reports whether a file's name says it holds the user's
// secrets: .env and .env.* (but the .example, .sample and .template
// placeholders projectEnvSecrets skips too), *.pem, *.key and ssh keys
// (id_rsa, id_dsa, id_ecdsa, id_ed25519, with their -sk and .pub
// spellings), and the credential files .git-credentials, .netrc, .npmrc
// and .pypirc; in any case. A CLAUDE.md import never reads one, and an isolated
// writer's copy carries one only where git tracks it.
func IsSecretFile(name string) bool {
	// Any case: on a case-insensitive file system (macOS) .ENV is .env
	// (review envleak P2-2).
	name = strings.ToLower(name)
	switch {
	case name == ".git-credentials", name == ".netrc", name == ".npmrc", name == ".pypirc":
		return true
	case name == ".env":
		return true
	case strings.HasPrefix(name, ".env."):
		return !strings.HasSuffix(name, ".example") && !strings.HasSuffix(name, ".sample") && !strings.HasSuffix(name, ".template")
	case strings.HasSuffix(name, ".pem"), strings.HasSuffix(name, ".key"):
		return true
	}
	for _, k := range []string{"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"} {
		if strings.HasPrefix(name, k) {
			return true
		}
	}
	return false
}
