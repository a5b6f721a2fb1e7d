package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
)

// stateCommand runs `tributary-agent state <verb>`; import is the only
// verb: it copies a single agent's state into a cluster's.
func stateCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "import" {
		fmt.Fprintln(stderr, "usage: tributary-agent state import --data-dir DIR --cluster NAME --warehouse URL --secrets-key-file FILE [flags]")
		return errUsage
	}
	fs := flag.NewFlagSet("state import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		o       agentOptions
		fromKey string
	)
	fs.StringVar(&o.dataDir, "data-dir", "", "`folder` of the single agent whose state is copied; required (the agent must be stopped)")
	fs.StringVar(&fromKey, "data-dir-secrets-key-file", "", "`file` of the key that agent encrypted its connections' secrets with "+
		"(default <data-dir>/"+store.DefaultKeyFile+")")
	fs.StringVar(&o.warehouse, "warehouse", "", "the cluster's warehouse, an object store `URL`, as its agents are given it; required")
	fs.StringVar(&o.secretsKeyFile, "secrets-key-file", "", "`file` of the cluster's secrets key, as its agents are given it; required")
	clusterFlags(fs, &o)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: tributary-agent state import --data-dir DIR --cluster NAME --warehouse URL --secrets-key-file FILE [flags]\n\n"+
			"Copies every connection, pipeline, fanout schema and Kafka sink of a stopped single agent into the shared state of a\n"+
			"cluster, with the secrets encrypted again with the cluster's key. Objects the cluster holds already are left alone when\n"+
			"they are the same, and stop the copy when they differ. The tables stay where they are: the cluster's pipelines find\n"+
			"them when their storage_location (or the warehouse) is the same.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if o.dataDir == "" || o.cluster == "" {
		fmt.Fprintln(stderr, "state import needs --data-dir and --cluster")
		fs.Usage()
		return errUsage
	}
	if err := checkClusterFlags(&o, stderr); err != nil {
		return err
	}
	lock, err := lockDataDir(o.dataDir, "tributary-agent state import")
	if err != nil {
		return err
	}
	defer lock.Release()
	var opts []store.Option
	if fromKey != "" {
		opts = append(opts, store.SecretsKeyFile(fromKey))
	}
	from, err := store.Open(o.dataDir, opts...)
	if err != nil {
		return fmt.Errorf("opening the state in %s: %w", o.dataDir, err)
	}
	to, err := openShared(&o)
	if err != nil {
		return err
	}
	defer func() { _ = to.Close() }()
	n, err := from.CopyTo(to)
	if err != nil {
		return fmt.Errorf("copied %d objects, then: %w", n, err)
	}
	fmt.Fprintf(stdout, "copied %d object(s) from %s into cluster %q\n", n, o.dataDir, o.cluster)
	return nil
}
