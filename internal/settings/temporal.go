package settings

// Temporal configures the fleet engine (brood worker, --engine temporal).
type Temporal struct {
	// Address is the Temporal frontend, HOST:PORT (e.g. 127.0.0.1:7233).
	Address string `toml:"address"`
	// Namespace (default "default").
	Namespace string `toml:"namespace"`
	// TaskQueue is the queue workers poll and runs are sent to (default
	// "brood").
	TaskQueue string `toml:"task_queue"`
	// TLS turns TLS on; TLSCA trusts a private CA; TLSCert and TLSKey are
	// a client certificate (mTLS); TLSServerName overrides the name
	// checked.
	TLS           bool   `toml:"tls"`
	TLSCA         string `toml:"tls_ca"`
	TLSCert       string `toml:"tls_cert"`
	TLSKey        string `toml:"tls_key"`
	TLSServerName string `toml:"tls_server_name"`
	// APIKeyEnv names the environment variable holding the API key of a
	// hosted Temporal (default TEMPORAL_API_KEY): the key itself is never
	// written in a settings file.
	APIKeyEnv string `toml:"api_key_env"`
	// Attempts bounds the attempts of one agent call on the fleet
	// (default 3): a retry follows a worker that died or a child the
	// lifeguard killed, and continues its transcript.
	Attempts int `toml:"attempts"`
}
