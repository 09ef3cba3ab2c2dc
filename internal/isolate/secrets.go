package isolate

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/sandbox"
)

// credentialStores are the places, relative to the home directory, where
// the user's tools keep credentials: no child reads them (a hostile
// repository's prompt injection would put them in a transcript, a result
// or, on a fleet worker, the store). A path that does not exist is hidden
// all the same: the directory above it is then on the way to a hidden
// path, and an entry made in such a directory after the child started is
// not readable to it (sandbox.addReadRules).
func credentialStores() []string {
	return []string{
		".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker",
		".config/gcloud", ".config/gh", ".config/hub", ".config/op",
		".config/git/credentials", ".git-credentials", ".netrc", ".pgpass",
		".npmrc", ".pypirc", ".gem/credentials", ".cargo/credentials", ".cargo/credentials.toml",
		".terraform.d/credentials.tfrc.json", ".vault-token", ".password-store",
		".local/share/keyrings", ".claude/.credentials.json", ".codex/auth.json",
		".config/brood",
		// Review C2: logins and tokens of other tools, shell histories
		// (tokens typed inline) and browser profiles (cookies).
		".config/containers/auth.json", ".config/rclone", ".s3cfg", ".boto", ".gitcookies",
		".m2/settings.xml", ".m2/settings-security.xml", ".gradle/gradle.properties",
		".composer/auth.json", ".config/composer/auth.json", ".yarnrc.yml", ".config/configstore",
		".terraformrc", ".databrickscfg", ".oci", ".config/doctl", ".fly", ".wrangler", ".config/.wrangler",
		".pulumi/credentials.json", ".config/sops", ".pki", ".config/hcloud", ".config/Bitwarden CLI",
		".bash_history", ".zsh_history", ".histfile", ".sh_history", ".local/share/fish/fish_history",
		".python_history", ".psql_history", ".mysql_history", ".node_repl_history", ".sqlite_history",
		".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
		".config/Code/User/globalStorage", ".config/Slack",
		// Red team 21 P2-5: more tools' tokens (Hugging Face, GitLab,
		// Gemini, Copilot, cloudflared, nix, Bundler, Kaggle, ...) and
		// the browser and mail profiles snap and flatpak keep.
		".cache/huggingface/token", ".cache/huggingface/stored_tokens", ".huggingface",
		".config/glab-cli", ".gemini", ".config/github-copilot", ".cloudflared",
		".config/nix/nix.conf", ".local/share/nix", ".bundle/config", ".kaggle",
		".config/ngrok", ".config/stripe", ".sentryclirc", ".config/pip/pip.conf", ".pip/pip.conf",
		".nuget/NuGet/NuGet.Config", ".config/NuGet/NuGet.Config", ".config/helm/repositories.yaml",
		".minikube", ".ollama/id_ed25519", ".local/share/atuin", ".claude.json",
		".config/gitlab-cli", ".config/heroku", ".netlify", ".config/netlify", ".vercel",
		".config/vercel", ".config/firebase", ".config/twilio-cli", ".config/linode-cli",
		".config/openai", ".config/anthropic", ".config/Postman", ".config/1Password",
		".config/keybase", ".local/share/keybase", ".electrum", ".bitcoin", ".ethereum",
		".thunderbird", ".mozilla-thunderbird", ".config/evolution", ".local/share/evolution",
		".config/microsoft-edge", ".config/Microsoft", ".config/vivaldi", ".config/opera",
		".config/discord", ".config/Signal", ".config/Element", ".config/teams-for-linux",
		".local/share/TelegramDesktop", ".var/app", "snap/firefox", "snap/chromium",
		"snap/thunderbird", ".config/Cursor/User/globalStorage",
		".local/share/remmina", ".config/remmina", ".config/filezilla", ".wallet",
	}
}

// broodConfigReadable are the entries of ~/.config/brood a child that
// delegates reads (its agents and the user's trust records, to start its
// own children as the root would): every other one (the user's settings,
// of which it reads a copy: WriteChildSettings; the fleet's signing key,
// the MCP server tokens, anything the user keeps there) stays hidden from
// it; a child that does not delegate reads none of them.
func broodConfigReadable() []string { return []string{"agents", "trust.json"} }

// DefaultHidden are the paths no child reads on this machine, by their
// real paths: the credential stores under home (credentialStores), all of
// ~/.config/brood, and the fleet worker's cache (cacheDir: its clones,
// copies and other calls' jobs). A fleet worker's code may call it for the
// list it keeps from its children.
func DefaultHidden(home, cacheDir string) []string {
	var out []string
	if home != "" && filepath.IsAbs(home) {
		dirs := map[string]string{} // realPath of the stores' directories, found once
		for _, rel := range credentialStores() {
			out = append(out, realPathIn(filepath.Join(home, filepath.FromSlash(rel)), dirs))
		}
	}
	if cacheDir != "" && filepath.IsAbs(cacheDir) {
		out = append(out, realPath(filepath.Join(cacheDir, "brood", "fleet")))
	}
	return out
}

// realPathIn is realPath, the directories above p resolved once in dirs:
// p itself is resolved only when it is a link (one lstat), else joined
// to its directory's real path (most stores do not exist, and share
// ~/.config).
func realPathIn(p string, dirs map[string]string) string {
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return realPath(p)
	}
	return filepath.Join(realDirIn(filepath.Dir(p), dirs), filepath.Base(p))
}

// realDirIn is realPath of the directory d, each name on the way looked
// at once for all the stores (one lstat, kept in dirs): a link is
// resolved whole (realPath), anything else, there or not, is joined to
// its parent's real path. realPath alone stat'd every parent again for
// each store (about 550 stats for the list, most of them /, /home and
// the home directory).
func realDirIn(d string, dirs map[string]string) string {
	if r, ok := dirs[d]; ok {
		return r
	}
	r := d
	if parent := filepath.Dir(d); parent != d {
		if fi, err := os.Lstat(d); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			r = realPath(d)
		} else {
			r = filepath.Join(realDirIn(parent, dirs), filepath.Base(d))
		}
	}
	dirs[d] = r
	return r
}

// realPath is p with the links of its longest existing prefix resolved
// (a ~/.config linked into a dotfiles repository is hidden where it
// lives: the sandbox builds no rule on a link); the rest is kept as it is.
func realPath(p string) string {
	dir, rest := p, ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		dir, rest = parent, filepath.Join(filepath.Base(dir), rest)
	}
}

// hideAround is sandbox.HideAround: hidden split around keep.
func hideAround(hidden, keep []string) []string { return sandbox.HideAround(hidden, keep) }

// fleetAlternates are the object directories the git repository holding
// dir (it or one of its parents) borrows from in the fleet worker's cache
// (its objects/info/alternates, as a worker's copy has): its child's git
// reads them, so they are kept readable beneath the hidden cache. Only
// those beneath the cache: an alternates file a repository's earlier
// writer planted must not make a credential store readable.
func fleetAlternates(dir string) []string {
	cache, err := os.UserCacheDir()
	if err != nil || dir == "" {
		return nil
	}
	fleet := realPath(filepath.Join(cache, "brood", "fleet"))
	if !beneath(fleet, dir) {
		return nil
	}
	for d := dir; beneath(fleet, d) && d != fleet; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, ".git", "objects", "info", "alternates"))
		if err != nil || len(data) > 1<<16 {
			continue
		}
		var out []string
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			l := strings.TrimSpace(sc.Text())
			if filepath.IsAbs(l) && beneath(fleet, Resolved(l)) && !slices.Contains(out, l) {
				out = append(out, Resolved(l))
			}
		}
		return out
	}
	return nil
}
