package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
)

const stateUsage = `usage: tributary-agent state <verb> [flags]

verbs:
  import    copy a single agent's state into a cluster's
  backup    write a copy of a single agent's desired state to a file
  restore   write a backup into a data folder
`

// stateCommand runs `tributary-agent state <verb>`.
func stateCommand(args []string, stdout, stderr io.Writer) error {
	verb := ""
	if len(args) > 0 {
		verb = args[0]
	}
	switch verb {
	case "import":
		return stateImport(args[1:], stdout, stderr)
	case "backup":
		return stateBackup(args[1:], stdout, stderr)
	case "restore":
		return stateRestore(args[1:], stdout, stderr)
	}
	fmt.Fprint(stderr, stateUsage)
	return errUsage
}

// stateFlags returns the flag set of a state verb, name ("state import"),
// whose help prints usage and the flags.
func stateFlags(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseStateFlags parses args into fs, a state verb's flags, and refuses
// a command line that leaves one of the required flags empty.
func parseStateFlags(fs *flag.FlagSet, args []string, required ...string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var missing []string
	for _, name := range required {
		if fs.Lookup(name).Value.String() == "" {
			missing = append(missing, "--"+name)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(fs.Output(), "%s needs %s\n", fs.Name(), strings.Join(missing, " and "))
		fs.Usage()
		return errUsage
	}
	return nil
}

// stateImport runs `tributary-agent state import`: it copies a single
// agent's state into a cluster's.
func stateImport(args []string, stdout, stderr io.Writer) error {
	fs := stateFlags("state import", "usage: tributary-agent state import --data-dir DIR --cluster NAME --warehouse URL --secrets-key-file FILE [flags]\n\n"+
		"Copies every connection, pipeline, fanout schema and Kafka sink of a stopped single agent into the shared state of a\n"+
		"cluster, with the secrets encrypted again with the cluster's key. Objects the cluster holds already are left alone when\n"+
		"they are the same, and stop the copy when they differ. The tables stay where they are: the cluster's pipelines find\n"+
		"them when their storage_location (or the warehouse) is the same.", stderr)
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
	if err := parseStateFlags(fs, args, "data-dir", "cluster"); err != nil {
		return err
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

// What a backup covers, for both verbs' help.
const backupCovers = "A backup holds the data folder's format and every connection, pipeline, fanout schema and Kafka sink, as the\n" +
	"folder stores them: the connections' secrets stay encrypted, and the secrets key is left out unless\n" +
	"--include-secrets-key is given (a backup with its key reveals every secret to whoever reads it; keep the key\n" +
	"apart, as the data folder does with --secrets-key-file). It does not hold the tables: each table keeps its rows\n" +
	"and its position in every topic in its own Delta log, in the warehouse, and an agent restored from a backup\n" +
	"resumes each table from there, exactly once, whenever the backup was taken. The agent must be stopped: the\n" +
	"command takes the data folder's lock, as serve does."

// stateBackup runs `tributary-agent state backup`: it writes the desired
// state of a stopped single agent to a file.
func stateBackup(args []string, stdout, stderr io.Writer) error {
	fs := stateFlags("state backup", "usage: tributary-agent state backup --data-dir DIR --out FILE [--include-secrets-key [--secrets-key-file FILE]]\n\n"+
		backupCovers, stderr)
	var (
		dataDir, out, keyFile string
		withKey               bool
	)
	fs.StringVar(&dataDir, "data-dir", "", "`folder` of the agent whose state is copied; required (the agent must be stopped)")
	fs.StringVar(&out, "out", "", "`file` to write the backup to, mode 0600, replaced if it exists; required")
	fs.BoolVar(&withKey, "include-secrets-key", false, "put the key that encrypts the connections' secrets in the backup too")
	fs.StringVar(&keyFile, "secrets-key-file", "", "`file` of that key, as the agent is given it (default <data-dir>/"+store.DefaultKeyFile+
		"); read with --include-secrets-key, and to encrypt the secrets an agent older than the key stored in plain text "+
		"(the default file is generated then if it does not exist, as the agent's next start would)")
	if err := parseStateFlags(fs, args, "data-dir", "out"); err != nil {
		return err
	}
	if _, err := os.Stat(dataDir); err != nil {
		return fmt.Errorf("data folder: %w", err)
	}
	lock, err := lockDataDir(dataDir, "tributary-agent state backup")
	if err != nil {
		return err
	}
	defer lock.Release()
	var res store.BackupResult
	err = store.WriteFileAtomic(out, func(w io.Writer) error {
		var err error
		res, err = store.Backup(dataDir, w, store.BackupOptions{KeyFile: keyFile, IncludeKey: withKey})
		return err
	})
	if err != nil {
		return fmt.Errorf("backing up %s: %w", dataDir, err)
	}
	fmt.Fprintf(stdout, "backed up %d object(s) of %s to %s\n", res.Objects, dataDir, out)
	if res.Objects == 0 {
		fmt.Fprintf(stderr, "warning: %s holds no object, so the backup is empty; if it is the data folder of an agent of a cluster "+
			"(--cluster), the cluster's desired state lives on the object store, under the warehouse: keep it with the "+
			"bucket's versioning instead\n", dataDir)
	}
	if res.Sealed > 0 {
		fmt.Fprintf(stdout, "%d connection(s) stored secrets in plain text; the backup holds them encrypted with the key in %s\n",
			res.Sealed, res.KeyFile)
	}
	if res.KeyGenerated {
		fmt.Fprintf(stdout, "generated that key, as the agent's next start would have: keep a copy of it, a restore needs it; "+
			"if the agent is given another key (--secrets-key-file), back up again with that --secrets-key-file\n")
	}
	if !withKey {
		fmt.Fprintln(stdout, "the secrets key is not in the backup: keep a copy of it apart, a restore needs it to read the connections")
	}
	return nil
}

// stateRestore runs `tributary-agent state restore`: it writes a backup
// into the data folder of a stopped agent.
func stateRestore(args []string, stdout, stderr io.Writer) error {
	fs := stateFlags("state restore", "usage: tributary-agent state restore --data-dir DIR --in FILE [--force] [--secrets-key-file FILE]\n\n"+
		"Writes a backup into a data folder, refusing one that holds state already unless --force is given, a backup\n"+
		"of a newer format than this agent reads, and, when the secrets key is at hand, a backup whose connections that\n"+
		"key does not decrypt: all checked before anything is written. Then it opens the state as serve would. A restore\n"+
		"cut short leaves a marker that serve refuses: run restore again with --force. "+backupCovers, stderr)
	var (
		dataDir, in, keyFile string
		force                bool
	)
	fs.StringVar(&dataDir, "data-dir", "", "`folder` to restore into, created if needed; required (no agent may run on it)")
	fs.StringVar(&in, "in", "", "`file` of the backup, as state backup wrote it; required")
	fs.BoolVar(&force, "force", false, "restore into a folder that holds state already, replacing it: its objects the backup lacks are removed, "+
		"and its secrets key is replaced by the backup's, if the backup holds one")
	fs.StringVar(&keyFile, "secrets-key-file", "", "`file` of the key the agent will be given, to check that the backup's "+
		"connections open with it before anything is written (default: the backup's key, if it holds one, else <data-dir>/"+
		store.DefaultKeyFile+", if it exists)")
	if err := parseStateFlags(fs, args, "data-dir", "in"); err != nil {
		return err
	}
	lock, err := lockDataDir(dataDir, "tributary-agent state restore")
	if err != nil {
		return err
	}
	defer lock.Release()
	backup, err := os.Open(in)
	if err != nil {
		return fmt.Errorf("opening the backup: %w", err)
	}
	defer func() { _ = backup.Close() }()
	res, err := store.Restore(dataDir, backup, store.RestoreOptions{Force: force, KeyFile: keyFile})
	if err != nil {
		return fmt.Errorf("restoring %s into %s: %w", in, dataDir, err)
	}
	fmt.Fprintf(stdout, "restored %d object(s) of format %d from %s into %s\n", res.Objects, res.Format, in, dataDir)
	if res.KeyFile != "" {
		fmt.Fprintf(stdout, "wrote the backup's secrets key to %s\n", res.KeyFile)
	}
	if !res.Checked {
		fmt.Fprintf(stdout, "no secrets key to check the connections with: put the key the agent used at %s, "+
			"or give serve --secrets-key-file\n", filepath.Join(dataDir, store.DefaultKeyFile))
		return nil
	}
	var opts []store.Option
	if keyFile != "" {
		opts = append(opts, store.SecretsKeyFile(keyFile))
	}
	if _, err := store.Open(dataDir, opts...); err != nil {
		return fmt.Errorf("restored %s into %s, but the state does not open: %w", in, dataDir, err)
	}
	return nil
}
