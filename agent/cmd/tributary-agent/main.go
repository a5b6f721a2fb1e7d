// Command tributary-agent ingests Kafka topics into Delta-compatible Parquet
// tables, driven over its HTTP API by the Terraform provider.
//
//	tributary-agent serve --data-dir DIR [--listen 127.0.0.1:8470] [--warehouse DIR-or-URL] [--warehouse-allow URL ...] [--token-file F] [--memory-limit 512MiB]
//	                      [--tls-cert F --tls-key F [--tls-client-ca F]] [--max-connections 64] [--warehouse-mode 0640]
//	tributary-agent serve ... --cluster NAME [--agent-name NAME] --warehouse URL --secrets-key-file F
//	tributary-agent state import --data-dir DIR --cluster NAME --warehouse URL --secrets-key-file F
//	tributary-agent state backup --data-dir DIR --out FILE [--include-secrets-key]
//	tributary-agent state restore --data-dir DIR --in FILE [--force]
//	tributary-agent dev   [--listen 127.0.0.1:8470] [--data-dir DIR] [--kafka-port 19192]
//	tributary-agent version
//
// serve runs the agent, alone or as one of a cluster. state import moves a
// single agent's state into a cluster's; state backup and restore copy a
// single agent's desired state to a file and back. dev runs the agent next to an
// in-process Kafka broker with a sample producer, for demos and trying the
// provider out. SIGHUP makes serve read its token file and TLS files again;
// it also reads the token file and the key pair again when they change.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
)

// version is the agent's release, set at build time with
// -ldflags "-X main.version=v1.2.3".
var version = "dev"

const usage = `usage: tributary-agent <command> [flags]

commands:
  serve     run the agent (see tributary-agent serve -h)
  dev       run the agent with an in-process Kafka broker and a sample producer
  state     state import: copy a single agent's state into a cluster's;
            state backup, state restore: copy a single agent's state to a file and back
  version   print the version
`

// errUsage marks a command-line mistake: the message was printed with the
// usage, and the exit code is 2.
var errUsage = errors.New("usage")

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command in args and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serveCommand(args[1:], stdout, stderr)
	case "dev":
		err = devCommand(args[1:], stdout, stderr)
	case "state":
		err = stateCommand(args[1:], stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, versionString())
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "tributary-agent: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	default:
		fmt.Fprintf(stderr, "tributary-agent: %v\n", err)
		return 1
	}
}

// versionString returns the version, the Go version and the commit the
// binary was built from, when known.
func versionString() string {
	s := "tributary-agent " + version + " (" + runtime.Version()
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, kv := range info.Settings {
			if kv.Key == "vcs.revision" && len(kv.Value) >= 12 {
				s += ", commit " + kv.Value[:12]
			}
		}
	}
	return s + ")"
}

// parseFlags parses args into fs, turning a mistake into errUsage (the flag
// package already printed it) and refusing positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	return nil
}
