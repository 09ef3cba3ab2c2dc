package isolate

import (
	"os"
	"path/filepath"
)

// systemCredentialStores are the system's own credential stores, hidden
// from every child's reads beside the user's (defaultHidden): as root a
// child keeps the capabilities that read root's files (its uid 0 is
// mapped), so without this it reads /etc/shadow (redteam21 P2-6). As
// another user they are unreadable already; hiding them costs a rule per
// entry of /etc, paid once per dispatcher in its shared layer.
func systemCredentialStores() []string {
	return []string{
		"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
		"/etc/sudoers", "/etc/sudoers.d", "/etc/security/opasswd",
		"/etc/ssl/private", "/etc/letsencrypt", "/etc/pki/tls/private",
		"/etc/krb5.keytab", "/etc/kubernetes", "/var/lib/kubelet/pki",
		"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key",
		"/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_dsa_key",
	}
}

// systemHidden are those of systemCredentialStores that exist, and any
// other private host key in /etc/ssh (ssh_host_*_key). One missing is
// left out: its directory then needs no rules around it (/var/lib is
// big), and one made later in /etc is unreadable all the same (the
// rules allow only the entries there when they were built).
func systemHidden() []string {
	var out []string
	for _, p := range systemCredentialStores() {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	keys, _ := filepath.Glob("/etc/ssh/ssh_host_*_key")
	return appendNew(out, keys...)
}
