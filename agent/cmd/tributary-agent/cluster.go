package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/membership"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/pipeline"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// defaultFollowEvery is how often an agent of a cluster reads the changes
// the others made to the shared state, and applies them.
const defaultFollowEvery = 2 * time.Second

// clusterFlags registers the flags that make serve one agent of a cluster.
func clusterFlags(fs *flag.FlagSet, o *agentOptions) {
	fs.StringVar(&o.cluster, "cluster", "", "`name` of the cluster this agent is one of: the agents started with the same name, "+
		"--warehouse (an object store URL), --secrets-key-file and tokens share their state under <warehouse>/_tributary/<name>/ "+
		"and the partitions of every pipeline (default none: a single agent, its state in --data-dir)")
	fs.StringVar(&o.agentName, "agent-name", "", "`name` of this agent in its cluster, unique among them: written in the changes it makes "+
		"and sent to Kafka as the client.id of its group members (default the host name)")
	fs.DurationVar(&o.followEvery, "cluster-sync-interval", defaultFollowEvery, "how often an agent of a cluster reads the changes "+
		"the other agents made to the shared state and applies them (a request through any agent reads them first anyway)")
}

// checkClusterFlags refuses a cluster that cannot work, naming the flag:
// one without a name for the agent, a key or an object store.
func checkClusterFlags(o *agentOptions, stderr io.Writer) error {
	if o.cluster == "" {
		return nil
	}
	if !spec.ValidName(o.cluster) {
		fmt.Fprintf(stderr, "--cluster %q is not a valid name: use letters, digits, '_' and '-'\n", o.cluster)
		return errUsage
	}
	if o.agentName == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			fmt.Fprintln(stderr, "--cluster needs --agent-name: the host name is unknown")
			return errUsage
		}
		o.agentName = host
	}
	if strings.ContainsFunc(o.agentName, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '/' || r == '\\' }) ||
		len(o.agentName) > 255 || o.agentName == "." || o.agentName == ".." {
		fmt.Fprintf(stderr, "--agent-name %q must be at most 255 characters without spaces, slashes or control characters "+
			"(a host name is fine)\n", o.agentName)
		return errUsage
	}
	if o.warehouse == "" || storage.IsLocal(o.warehouse) {
		fmt.Fprintf(stderr, "--cluster %s needs --warehouse on an object store (s3://, gs://, azblob:// or abfss://), not a local folder: "+
			"the agents of a cluster run on several machines and share their tables and state there; "+
			"run a single agent without --cluster to keep tables on local disk\n", o.cluster)
		return errUsage
	}
	if o.secretsKeyFile == "" {
		fmt.Fprintf(stderr, "--cluster %s needs --secrets-key-file: every agent of a cluster must encrypt the connections' secrets "+
			"with the same key\n", o.cluster)
		return errUsage
	}
	if o.followEvery <= 0 {
		fmt.Fprintf(stderr, "--cluster-sync-interval %v must be positive\n", o.followEvery)
		return errUsage
	}
	return nil
}

// members returns how the agent shares the partitions of its pipelines
// with the other agents of its cluster: nil for a single agent, which
// reads them all. An agent whose memory budget stays full takes no new
// partitions (see [memory.Budget.Pressed]).
func members(o *agentOptions, budget *memory.Budget) pipeline.Members {
	if o.cluster == "" {
		return nil
	}
	return &membership.Joiner{Cluster: o.cluster, Agent: o.agentName, Log: o.log, Pressed: budget.Pressed}
}

// openShared opens the shared state of o's cluster.
func openShared(o *agentOptions) (*store.Store, error) {
	location := store.StateLocation(o.warehouse, o.cluster)
	root, err := storage.Open(location, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the shared state of cluster %q: %w", o.cluster, err)
	}
	st, err := store.OpenShared(root, o.cluster, o.agentName, o.secretsKeyFile)
	if err != nil {
		_ = root.Close()
		return nil, fmt.Errorf("joining cluster %q: %w", o.cluster, err)
	}
	return st, nil
}
