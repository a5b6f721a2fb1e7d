package server

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// checkTokenFile refuses a connection whose sasl.oauth.token_file lies
// outside the folders the agent was started to read OAuth tokens from
// (Config.TokenFileDirs, the --oauth-token-dir flag). Without that rule an
// API client could make the agent send any one-line file it can read (its
// own secrets key among them) to a broker of the client's choosing as a
// bearer token. Symbolic links are resolved before the check.
func (s *Server) checkTokenFile(c *spec.Connection) error {
	if c.SASL == nil || c.SASL.OAuth == nil || c.SASL.OAuth.TokenFile == "" {
		return nil
	}
	const path = "sasl.oauth.token_file"
	file := c.SASL.OAuth.TokenFile
	refuse := func(format string, args ...any) error {
		return invalid("the connection is not valid", spec.Errors{{Path: path, Detail: fmt.Sprintf(format, args...)}})
	}
	if len(s.tokenFileDirs) == 0 {
		return refuse("this agent reads no OAuth token files: start it with --oauth-token-dir set to the folder that holds %q, "+
			"or use token_endpoint_url, client_id and client_secret", file)
	}
	if !filepath.IsAbs(file) {
		return refuse("%q is not an absolute path; give the file's full path on the agent's machine", file)
	}
	resolved, err := filepath.EvalSymlinks(file)
	if err != nil {
		return refuse("the agent cannot find %q: %v", file, err)
	}
	for _, dir := range s.tokenFileDirs {
		if within(resolved, dir) {
			return nil
		}
	}
	return refuse("%q is not in a folder this agent reads OAuth tokens from (%s); move it there, or add its folder with --oauth-token-dir",
		file, strings.Join(s.tokenFileDirs, ", "))
}

// within reports whether path lies in dir or below it; both are clean
// absolute paths with symbolic links resolved.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// resolveDirs returns dirs as clean absolute paths with symbolic links
// resolved, for [within].
func resolveDirs(dirs []string) ([]string, error) {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("OAuth token folder %q: %w", d, err)
		}
		resolved, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("OAuth token folder %q: %w", d, err)
		}
		out = append(out, resolved)
	}
	return out, nil
}
