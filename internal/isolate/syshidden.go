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
		// Debian's daily backups of the password files.
		"/var/backups/shadow.bak", "/var/backups/gshadow.bak",
		// VPN, Wi-Fi and dial-up secrets.
		"/etc/NetworkManager/system-connections", "/etc/wireguard",
		"/etc/ipsec.secrets", "/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets",
		// Services' own administrators' passwords and cluster tokens.
		"/etc/mysql/debian.cnf", "/etc/rancher/k3s/k3s.yaml",
		"/var/lib/rancher/k3s/server/token",
	}
}

// systemHidden are those of systemCredentialStores that exist, and any
// other private host key in /etc/ssh (ssh_host_*_key) or secrets file in
// /etc/ppp (*-secrets). One missing is left out: its directory then needs
// no rules around it (/var/lib is big); one made after a dispatcher first
// built its rules (PolicyBase.Hidden, once) is readable to its children.
func systemHidden() []string {
	var out []string
	for _, p := range systemCredentialStores() {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	keys, _ := filepath.Glob("/etc/ssh/ssh_host_*_key")
	ppp, _ := filepath.Glob("/etc/ppp/*-secrets")
	return appendNew(appendNew(out, keys...), ppp...)
}
