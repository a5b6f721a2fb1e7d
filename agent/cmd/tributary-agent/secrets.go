package main

import (
	"fmt"
	"log/slog"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/redact"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
)

// secretsKeyFlagUsage documents --secrets-key-file, a flag of serve and dev.
const secretsKeyFlagUsage = "`file` holding the key that encrypts the connections' secrets in the data folder: 32 random bytes " +
	"in base64, e.g. made with `openssl rand -base64 32 > FILE && chmod 600 FILE`; it must not be readable by group or others " +
	"(but a file root owns may let its group read it, as a Kubernetes Secret mounted for a pod with an fsGroup does; the agent " +
	"then logs a warning naming the group, which must have no other member than the agent's user) " +
	"(default <data-dir>/" + store.DefaultKeyFile + ", generated on first start; keep the key apart from the data folder, " +
	"a mounted secret say, so that a copy of the folder does not reveal the secrets)"

// openState makes o.log scrub secrets and opens the agent's state: in
// o.dataDir with the key of --secrets-key-file, or the shared state of its
// cluster. The returned redactor is
// the one o.log scrubs with; the server must get it (server.Config.Redactor)
// to feed it the stored connections' secrets.
func openState(o *agentOptions) (*store.Store, *redact.Redactor, error) {
	secrets := redact.New()
	o.log = slog.New(redact.NewHandler(o.log.Handler(), secrets))
	if o.cluster != "" {
		st, err := openShared(o)
		if err != nil {
			return nil, nil, err
		}
		warnKeyFile(o.log, st)
		return st, secrets, nil
	}
	var opts []store.Option
	if o.secretsKeyFile != "" {
		opts = append(opts, store.SecretsKeyFile(o.secretsKeyFile))
	}
	st, err := store.Open(o.dataDir, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the state in %s: %w", o.dataDir, err)
	}
	if file, generated := st.KeyFile(); generated {
		o.log.Warn("generated the key that encrypts the connections' secrets; the connections cannot be read without it: "+
			"back it up, or pass your own with --secrets-key-file", "file", file)
	}
	warnKeyFile(o.log, st)
	return st, secrets, nil
}

// warnKeyFile logs the store's warning about its secrets key file's
// permissions, if any.
func warnKeyFile(log *slog.Logger, st *store.Store) {
	if note := st.KeyFileNote(); note != "" {
		log.Warn(note)
	}
}
