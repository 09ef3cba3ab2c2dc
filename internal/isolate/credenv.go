package isolate

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
)

// Credentials the user's environment points at, and the homes the
// default locations are under (review C2): a tool reads its credentials
// where its variable says, and ssh reads the passwd entry's home whatever
// $HOME is. Each is hidden as a default location is (DefaultHidden).

// credentialVars are the variables that name a credential file or
// directory, each hidden where it points (a list variable, KUBECONFIG,
// every entry), with sub naming the files inside a directory it names
// when only those are secret (CARGO_HOME: its registry cache is not).
func credentialVars() []struct {
	name string
	sub  []string
} {
	type v = struct {
		name string
		sub  []string
	}
	return []v{
		{"AWS_SHARED_CREDENTIALS_FILE", nil}, {"AWS_CONFIG_FILE", nil}, {"AWS_WEB_IDENTITY_TOKEN_FILE", nil},
		{"GOOGLE_APPLICATION_CREDENTIALS", nil}, {"CLOUDSDK_CONFIG", nil}, {"AZURE_CONFIG_DIR", nil},
		{"KUBECONFIG", nil}, {"DOCKER_CONFIG", nil}, {"REGISTRY_AUTH_FILE", nil},
		{"GNUPGHOME", nil}, {"PASSWORD_STORE_DIR", nil}, {"GH_CONFIG_DIR", nil},
		{"NPM_CONFIG_USERCONFIG", nil}, {"npm_config_userconfig", nil}, {"PGPASSFILE", nil}, {"NETRC", nil},
		{"BOTO_CONFIG", nil}, {"S3CMD_CONFIG", nil}, {"RCLONE_CONFIG", nil}, {"TF_CLI_CONFIG_FILE", nil},
		{"DATABRICKS_CONFIG_FILE", nil}, {"OCI_CLI_CONFIG_FILE", nil}, {"VAULT_CONFIG_PATH", nil},
		{"SOPS_AGE_KEY_FILE", nil}, {"HISTFILE", nil}, {"KRB5CCNAME", nil},
		{"CARGO_HOME", []string{"credentials", "credentials.toml"}},
		{"GRADLE_USER_HOME", []string{"gradle.properties"}},
		{"COMPOSER_HOME", []string{"auth.json"}},
	}
}

// envCredentialPaths are the paths credentialVars name in getenv's
// environment, plus the XDG_CONFIG_HOME, XDG_DATA_HOME and
// XDG_RUNTIME_DIR places of the default stores (gh, git, podman and
// rclone follow them). Only absolute paths; never "/" nor a directory
// that holds one of hs (a variable set to the home would hide it all).
func envCredentialPaths(getenv func(string) string, hs []string) []string {
	var out []string
	add := func(p string) {
		if rest, ok := strings.CutPrefix(p, "FILE:"); ok { // KRB5CCNAME
			p = rest
		}
		if !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		for _, h := range hs {
			if beneath(p, h) {
				return
			}
		}
		if p != "/" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, v := range credentialVars() {
		for _, p := range filepath.SplitList(getenv(v.name)) {
			if len(v.sub) == 0 {
				add(p)
			}
			for _, s := range v.sub {
				if filepath.IsAbs(p) {
					add(filepath.Join(p, s))
				}
			}
		}
	}
	for _, x := range []struct{ name, under string }{{"XDG_CONFIG_HOME", ".config/"}, {"XDG_DATA_HOME", ".local/share/"}} {
		base := getenv(x.name)
		if !filepath.IsAbs(base) {
			continue
		}
		for _, rel := range credentialStores() {
			if rest, ok := strings.CutPrefix(rel, x.under); ok {
				add(filepath.Join(base, filepath.FromSlash(rest)))
			}
		}
	}
	if run := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(run) {
		add(filepath.Join(run, "containers")) // podman's auth.json
	}
	return out
}

// homes are the directories the default stores are looked for under:
// $HOME in each environment and the passwd entry's home (ssh's, whatever
// $HOME says; the only one when $HOME is unset).
func homes(getenvs ...func(string) string) []string {
	var out []string
	for _, getenv := range getenvs {
		if h := getenv("HOME"); filepath.IsAbs(h) {
			out = appendNew(out, filepath.Clean(h))
		}
	}
	if u, err := user.Current(); err == nil && filepath.IsAbs(u.HomeDir) {
		if h := filepath.Clean(u.HomeDir); h != "/" {
			out = appendNew(out, h)
		}
	}
	return out
}

// defaultHidden is DefaultHidden for this process and the environment its
// children get (getenv: a dispatcher's Config.Env, else this process's):
// the stores under each home, where either environment points, and the
// fleet cache (the user cache directory's, or, when there is none, the
// one the worker then uses: codesnap.DefaultCacheDir's fallback; review
// C9).
func defaultHidden(getenv func(string) string) []string {
	envs := []func(string) string{os.Getenv}
	if getenv != nil {
		envs = append(envs, getenv)
	}
	hs := homes(envs...)
	var out []string
	for _, h := range hs {
		out = appendNew(out, DefaultHidden(h, "")...)
	}
	for _, env := range envs {
		for _, p := range envCredentialPaths(env, hs) {
			out = appendNew(out, realPath(p))
		}
	}
	if cache, err := os.UserCacheDir(); err == nil && filepath.IsAbs(cache) {
		out = appendNew(out, DefaultHidden("", cache)...)
	} else {
		out = appendNew(out, realPath(filepath.Join(os.TempDir(), "brood-fleet")))
	}
	return appendNew(out, systemHidden()...)
}

// envLookup is a getenv over env (KEY=VALUE entries; the last wins).
func envLookup(env []string) func(string) string {
	return func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
}

// appendNew appends each of ps not in out yet.
func appendNew(out []string, ps ...string) []string {
	for _, p := range ps {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
