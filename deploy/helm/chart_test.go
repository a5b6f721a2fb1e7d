// Package helm tests the Helm chart in tributary-agent/: what `helm
// template` renders with each value file of the chart's ci/ folder decodes
// strictly into the Kubernetes API types (an unknown or misplaced field
// fails), and the agent accepts the command line, environment and files the
// chart gives its container.
package helm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	"github.com/tributary-io/terraform-provider-tributary/deploy/internal/deploytest"
)

const (
	chartDir  = "tributary-agent"
	release   = "tributary"
	namespace = "ingest"
	// entrypoint is the image's: the container gives only args.
	entrypoint = "/tributary-agent"
	// nonroot is the image's user and group, and the pod's fsGroup.
	nonroot = 65532
)

// manifests are the documents helm template rendered for one value file.
type manifests struct {
	statefulSet     *appsv1.StatefulSet
	services        map[string]*corev1.Service
	secrets         map[string]*corev1.Secret
	serviceAccounts map[string]*corev1.ServiceAccount
	pdb             *policyv1.PodDisruptionBudget
	networkPolicy   *networkingv1.NetworkPolicy
	// serviceMonitor is the Prometheus Operator's, which has no Go types
	// here.
	serviceMonitor map[string]any
}

// valueFiles returns the chart's ci/ value files.
func valueFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no value files in %s/ci: %v", chartDir, err)
	}
	return files
}

// helmBinary returns the helm of tools/tools.sh, skipping the test without
// it.
func helmBinary(t *testing.T) string {
	t.Helper()
	helm, err := filepath.Abs(filepath.Join("..", "..", ".tools", "bin", "helm"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(helm); err != nil {
		t.Skipf("helm is not installed at %s: run tools/tools.sh helm (make test does)", helm)
	}
	return helm
}

// render runs helm template with the value file and decodes every document.
func render(t *testing.T, helm, values string) manifests {
	t.Helper()
	cmd := exec.Command(helm, "template", release, chartDir, "--namespace", namespace, "-f", values)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template -f %s: %v\n%s", values, err, stderr.Bytes())
	}
	return decode(t, out)
}

var documentSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// decode decodes each document of out into its API type, strictly: a field
// the type does not have, a duplicate key or a wrong type fails the test.
func decode(t *testing.T, out []byte) manifests {
	t.Helper()
	m := manifests{services: map[string]*corev1.Service{}, secrets: map[string]*corev1.Secret{},
		serviceAccounts: map[string]*corev1.ServiceAccount{}}
	for _, doc := range documentSeparator.Split(string(out), -1) {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("a rendered document is not YAML: %v\n%s", err, doc)
		}
		if head.Kind == "" {
			continue // comments only
		}
		strict := func(into any) {
			if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
				t.Fatalf("%s %s does not decode strictly: %v\n%s", head.APIVersion, head.Kind, err, doc)
			}
		}
		switch head.APIVersion + " " + head.Kind {
		case "apps/v1 StatefulSet":
			if m.statefulSet != nil {
				t.Fatal("two StatefulSets rendered")
			}
			m.statefulSet = &appsv1.StatefulSet{}
			strict(m.statefulSet)
		case "v1 Service":
			s := &corev1.Service{}
			strict(s)
			m.services[s.Name] = s
		case "v1 Secret":
			s := &corev1.Secret{}
			strict(s)
			m.secrets[s.Name] = s
		case "v1 ServiceAccount":
			s := &corev1.ServiceAccount{}
			strict(s)
			m.serviceAccounts[s.Name] = s
		case "policy/v1 PodDisruptionBudget":
			m.pdb = &policyv1.PodDisruptionBudget{}
			strict(m.pdb)
		case "networking.k8s.io/v1 NetworkPolicy":
			m.networkPolicy = &networkingv1.NetworkPolicy{}
			strict(m.networkPolicy)
		case "monitoring.coreos.com/v1 ServiceMonitor":
			strict(&m.serviceMonitor)
		default:
			t.Fatalf("unexpected document %s %s", head.APIVersion, head.Kind)
		}
	}
	if m.statefulSet == nil {
		t.Fatal("no StatefulSet rendered")
	}
	return m
}

// container returns the agent's container.
func (m manifests) container(t *testing.T) corev1.Container {
	t.Helper()
	if n := len(m.statefulSet.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("the pod has %d containers, want the agent's alone", n)
	}
	return m.statefulSet.Spec.Template.Spec.Containers[0]
}

// flag returns the value of --name=value in args, and whether it is there.
func flag(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// Every value file renders manifests that decode strictly and hang
// together: the StatefulSet's Services, Secrets, volumes and probes, its
// security contexts as the image needs them, a grace period longer than
// --shutdown-timeout, --memory-limit equal to the memory limit as
// Kubernetes reads the quantity, and a ServiceMonitor with a token.
func TestChartRenders(t *testing.T) {
	helm := helmBinary(t)
	for _, values := range valueFiles(t) {
		t.Run(filepath.Base(values), func(t *testing.T) {
			m := render(t, helm, values)
			sts := m.statefulSet
			pod := sts.Spec.Template.Spec
			c := m.container(t)
			if sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
				t.Errorf("podManagementPolicy %q, want Parallel", sts.Spec.PodManagementPolicy)
			}
			if hl := m.services[sts.Spec.ServiceName]; hl == nil || hl.Spec.ClusterIP != corev1.ClusterIPNone {
				t.Errorf("serviceName %q names no headless Service", sts.Spec.ServiceName)
			}
			if api := m.services[sts.Name]; api == nil || len(api.Spec.Ports) != 1 || api.Spec.Ports[0].TargetPort.String() != "api" {
				t.Errorf("no Service %s for the API port", sts.Name)
			}
			if len(c.Command) != 0 || len(c.Args) == 0 || c.Args[0] != "serve" {
				t.Errorf("command %q args %q: want the image's entrypoint with serve", c.Command, c.Args)
			}

			psc, sc := pod.SecurityContext, c.SecurityContext
			if psc == nil || sc == nil || psc.RunAsUser == nil || *psc.RunAsUser != nonroot || psc.FSGroup == nil || *psc.FSGroup != nonroot ||
				sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				t.Errorf("security contexts %+v %+v: want user and fsGroup %d, a read-only root, no privilege escalation", psc, sc, nonroot)
			}
			timeout, _ := flag(c.Args, "shutdown-timeout")
			d, err := time.ParseDuration(timeout)
			if err != nil || pod.TerminationGracePeriodSeconds == nil || time.Duration(*pod.TerminationGracePeriodSeconds)*time.Second <= d {
				t.Errorf("terminationGracePeriodSeconds %v is not longer than --shutdown-timeout %q", pod.TerminationGracePeriodSeconds, timeout)
			}
			limit, hasLimit := c.Resources.Limits[corev1.ResourceMemory]
			memory, hasFlag := flag(c.Args, "memory-limit")
			if hasLimit != hasFlag || hasLimit && memory != strconv.FormatInt(limit.Value(), 10) {
				t.Errorf("--memory-limit %q for a memory limit of %v (%d bytes)", memory, limit.String(), limit.Value())
			}

			checkVolumes(t, m, pod, c)
			checkProbes(t, c)
			if sm := m.serviceMonitor; sm != nil {
				checkServiceMonitor(t, m, sm)
			}
		})
	}
}

// checkVolumes checks that every mount has its volume: the data volume (a
// claim template or an emptyDir), /tmp, and the Secrets, mounted read-only
// with mode 0400 and, for the chart's own Secret, holding both keys.
func checkVolumes(t *testing.T, m manifests, pod corev1.PodSpec, c corev1.Container) {
	t.Helper()
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	for _, claim := range m.statefulSet.Spec.VolumeClaimTemplates {
		volumes[claim.Name] = corev1.Volume{Name: claim.Name}
	}
	mounts := map[string]bool{}
	for _, vm := range c.VolumeMounts {
		mounts[vm.MountPath] = true
		v, ok := volumes[vm.Name]
		if !ok {
			t.Errorf("mount %s names no volume %q", vm.MountPath, vm.Name)
			continue
		}
		if v.Secret == nil {
			continue
		}
		if !vm.ReadOnly || v.Secret.DefaultMode == nil || *v.Secret.DefaultMode != 0o400 {
			t.Errorf("Secret %s mounted at %s: want read-only, mode 0400", v.Secret.SecretName, vm.MountPath)
		}
		if s, ours := m.secrets[v.Secret.SecretName]; ours {
			for _, item := range v.Secret.Items {
				if _, ok := s.Data[item.Key]; !ok {
					t.Errorf("Secret %s has no key %q", s.Name, item.Key)
				}
			}
		}
	}
	for _, want := range []string{"/data", "/tmp", "/etc/tributary/auth"} {
		if !mounts[want] {
			t.Errorf("nothing mounted at %s", want)
		}
	}
}

// checkProbes checks the probes: GET /healthz, over HTTPS with --tls-cert;
// a TCP connection when client certificates are required, which the
// kubelet does not present.
func checkProbes(t *testing.T, c corev1.Container) {
	t.Helper()
	_, https := flag(c.Args, "tls-cert")
	_, mtls := flag(c.Args, "tls-client-ca")
	for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		switch {
		case p == nil:
			t.Errorf("no %s probe", name)
		case mtls:
			if p.TCPSocket == nil {
				t.Errorf("%s probe %+v: want a TCP check, the API requiring client certificates", name, p.ProbeHandler)
			}
		case p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || (p.HTTPGet.Scheme == corev1.URISchemeHTTPS) != https:
			t.Errorf("%s probe %+v: want GET /healthz, HTTPS when the API is", name, p.ProbeHandler)
		}
	}
}

// checkServiceMonitor checks that the ServiceMonitor scrapes /metrics of
// the API Service's port with a bearer token from a Secret.
func checkServiceMonitor(t *testing.T, m manifests, sm map[string]any) {
	t.Helper()
	spec, _ := sm["spec"].(map[string]any)
	endpoints, _ := spec["endpoints"].([]any)
	if len(endpoints) != 1 {
		t.Fatalf("ServiceMonitor endpoints %v, want one", spec["endpoints"])
	}
	ep, _ := endpoints[0].(map[string]any)
	auth, _ := ep["authorization"].(map[string]any)
	creds, _ := auth["credentials"].(map[string]any)
	if ep["port"] != "api" || ep["path"] != "/metrics" || auth["type"] != "Bearer" || creds["name"] == "" || creds["key"] == "" {
		t.Errorf("ServiceMonitor endpoint %v: want /metrics on port api with a bearer token from a Secret", ep)
	}
	selector, _ := spec["selector"].(map[string]any)
	labels, _ := selector["matchLabels"].(map[string]any)
	api := m.services[m.statefulSet.Name]
	for k, v := range labels {
		if api == nil || api.Labels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%v, which the API Service lacks", k, v)
		}
	}
}

// The agent accepts what the chart gives its container. For each value
// file the agent runs with the container's args after the image's
// entrypoint, its environment ($(POD_NAME) expanded as the kubelet does, the
// pod named <statefulset>-0), and the mounted files written where the
// mounts would be (the paths in the args rewritten to those folders, the
// listen address to a free loopback port). As root, the test gives the files
// and folders the kubelet's owners and modes (Secrets' files root's, group
// 65532, mode 0440; the data folder 65532's) and runs the agent as user
// 65532 in group 65532, as the pod does.
//
// A single agent must start, answer GET /healthz, answer GET /metrics with
// the token the ServiceMonitor sends (when the chart made the Secret), not
// warn about the token file's mode, and stop cleanly on SIGTERM. An agent of
// a cluster needs its object store: its S3 client is pointed at a closed
// loopback port (AWS_ENDPOINT_URL, so that nothing leaves the machine), and
// the agent must exit 1 failing to read the cluster's shared state, which it
// opens after parsing and checking every flag, loading the TLS key pair and
// client CAs and reading the secrets key file; exit code 2 would be a
// refused command line.
func TestChartAgentRuns(t *testing.T) {
	helm := helmBinary(t)
	agent := agentBinary(t)
	certs := deploytest.NewCerts(t)
	for _, values := range valueFiles(t) {
		t.Run(filepath.Base(values), func(t *testing.T) {
			m := render(t, helm, values)
			run := newPod(t, m, certs)
			if _, cluster := flag(run.cmd.Args, "cluster"); cluster {
				run.expectClusterStop(t, agent)
				return
			}
			run.expectServing(t, agent)
		})
	}
}

// agentBinary returns $TRIBUTARY_TEST_AGENT, or builds the agent into a
// folder every user may read (the test runs it as user 65532 when root).
func agentBinary(t *testing.T) string {
	t.Helper()
	bin, err := deploytest.Agent(worldDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// worldDir returns a new folder every user may enter, removed at the end.
func worldDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tributary-chart-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pod is the agent's process as the chart's pod would run it.
type pod struct {
	cmd *exec.Cmd
	// token is the one in the mounted tokens file; metricsToken the one
	// the ServiceMonitor sends, "" without one the test can read.
	token, metricsToken string
	// ca trusts the agent's certificate when it serves HTTPS.
	ca *x509.CertPool
}

// newPod lays out the container's mounts as files, the TLS Secret made
// outside the chart holding certs, and returns the agent's command (its path
// is set by the expect methods).
func newPod(t *testing.T, m manifests, certs deploytest.Certs) *pod {
	t.Helper()
	c := m.container(t)
	root := worldDir(t)
	asRoot := os.Geteuid() == 0
	if !asRoot {
		t.Log("not root: the Secrets' files are the test's user's, with the volume's mode, and the agent runs as that user")
	}
	p := &pod{token: randomHex(t, 32), ca: certs.Pool}

	// The Secrets made outside the chart hold what the test makes.
	outside := map[string]map[string][]byte{
		"tls": {"tls.crt": certs.CertPEM, "tls.key": certs.KeyPEM, "ca.crt": certs.CAPEM},
		"auth": {"tokens": []byte("# made by the test\n" + p.token + "\n"),
			"secrets.key": []byte("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n")},
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range m.statefulSet.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v
	}
	paths := map[string]string{} // mount path → folder standing in for it
	for _, vm := range c.VolumeMounts {
		dir := filepath.Join(root, vm.Name)
		paths[vm.MountPath] = dir
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		v := volumes[vm.Name]
		if v.Secret == nil { // the data volume or an emptyDir: the agent's
			if asRoot {
				chown(t, dir, nonroot, nonroot)
			}
			continue
		}
		data := outside[vm.Name]
		if s, ours := m.secrets[v.Secret.SecretName]; ours {
			data = s.Data
			p.token = string(s.Data["tokens"])
		}
		writeSecret(t, dir, v.Secret, data, asRoot)
	}
	p.metricsToken = serviceMonitorToken(m)

	env := map[string]string{}
	var envList []string
	podName := m.statefulSet.Name + "-0"
	for _, e := range c.Env {
		value := e.Value
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			value = podName
		case e.ValueFrom != nil:
			t.Fatalf("env %s: the test knows no value for %+v", e.Name, e.ValueFrom)
		}
		value = expand(value, env)
		env[e.Name] = value
		envList = append(envList, e.Name+"="+value)
	}
	// The object store's keys (objectStore.existingSecret, IRSA) stand in
	// for the real ones, and its endpoint is a closed loopback port.
	envList = append(envList, "AWS_ACCESS_KEY_ID=chart-test", "AWS_SECRET_ACCESS_KEY=chart-test", "AWS_REGION=eu-west-1",
		"AWS_EC2_METADATA_DISABLED=true", "AWS_ENDPOINT_URL=http://"+closedPort(t), "HOME="+root, "PATH="+os.Getenv("PATH"))

	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		a = expand(a, env)
		if name, value, ok := strings.Cut(a, "="); ok && strings.HasPrefix(name, "--") {
			if name == "--listen" {
				value = "127.0.0.1:0"
			}
			a = name + "=" + underMount(value, paths)
		}
		args[i] = a
	}
	if strings.Contains(strings.Join(args, " "), "$(") {
		t.Fatalf("args %q hold a reference the kubelet would not expand", args)
	}
	p.cmd = exec.Command(entrypoint, args...)
	p.cmd.Env = envList
	if asRoot {
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nonroot, Gid: nonroot, Groups: []uint32{nonroot}}}
	}
	return p
}

// underMount returns path with the longest mount path it lies under
// replaced by the folder standing in for it.
func underMount(path string, mounts map[string]string) string {
	best := ""
	for mount := range mounts {
		if rest, ok := strings.CutPrefix(path, mount); ok && (rest == "" || rest[0] == '/') && len(mount) > len(best) {
			best = mount
		}
	}
	if best == "" {
		return path
	}
	return mounts[best] + strings.TrimPrefix(path, best)
}

// writeSecret writes the items of a Secret volume (every key without
// items) into dir, as the kubelet does with fsGroup: owned by root, group
// the fsGroup, the volume's mode plus group read. Not as root: owned by the
// test's user with the volume's mode.
func writeSecret(t *testing.T, dir string, v *corev1.SecretVolumeSource, data map[string][]byte, asRoot bool) {
	t.Helper()
	items := v.Items
	if len(items) == 0 {
		for k := range data {
			items = append(items, corev1.KeyToPath{Key: k, Path: k})
		}
	}
	mode := os.FileMode(*v.DefaultMode)
	if asRoot {
		mode |= 0o440
	}
	for _, item := range items {
		value, ok := data[item.Key]
		if !ok {
			t.Fatalf("Secret %s has no key %q", v.SecretName, item.Key)
		}
		file := filepath.Join(dir, item.Path)
		if err := os.WriteFile(file, value, 0o600); err != nil {
			t.Fatal(err)
		}
		if asRoot {
			chown(t, file, 0, nonroot)
		}
		if err := os.Chmod(file, mode); err != nil {
			t.Fatal(err)
		}
	}
	if asRoot {
		chown(t, dir, 0, nonroot)
		if err := os.Chmod(dir, 0o750); err != nil {
			t.Fatal(err)
		}
	}
}

// serviceMonitorToken returns the token the ServiceMonitor sends, when its
// Secret is one the chart made.
func serviceMonitorToken(m manifests) string {
	spec, _ := m.serviceMonitor["spec"].(map[string]any)
	endpoints, _ := spec["endpoints"].([]any)
	if len(endpoints) == 0 {
		return ""
	}
	ep, _ := endpoints[0].(map[string]any)
	auth, _ := ep["authorization"].(map[string]any)
	creds, _ := auth["credentials"].(map[string]any)
	name, _ := creds["name"].(string)
	key, _ := creds["key"].(string)
	if s, ok := m.secrets[name]; ok {
		return string(s.Data[key])
	}
	return ""
}

// kubeletRef is a $(VAR) reference, or the $$ escape.
var kubeletRef = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expand replaces $(VAR) with the value of an earlier variable of the
// container, as the kubelet does: an unknown one stays as written, and $$
// is a $.
func expand(s string, env map[string]string) string {
	return kubeletRef.ReplaceAllStringFunc(s, func(ref string) string {
		if ref == "$$" {
			return "$"
		}
		if v, ok := env[ref[2:len(ref)-1]]; ok {
			return v
		}
		return ref
	})
}

// expectServing runs the agent and checks that it serves /healthz and,
// with the ServiceMonitor's token, /metrics, then stops cleanly.
func (p *pod) expectServing(t *testing.T, agent string) {
	t.Helper()
	p.cmd.Path = agent
	var stderr bytes.Buffer
	p.cmd.Stderr = &stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "tributary-agent listening on "); ok {
				urls <- u
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		exited <- p.cmd.Wait()
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-exited:
		t.Fatalf("the agent exited before listening (%v): %s\nargs %q", err, stderr.String(), p.cmd.Args)
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		t.Fatalf("the agent did not listen within a minute: %s", stderr.String())
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.ca, ServerName: "localhost"}}}
	get := func(path, token string) int {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("GET %s: %v", path, err)
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/healthz", ""); code != http.StatusOK {
		t.Errorf("GET /healthz: %d", code)
	}
	if code := get("/metrics", strings.TrimSpace(p.token)); code != http.StatusOK {
		t.Errorf("GET /metrics with the mounted token: %d", code)
	}
	if p.metricsToken != "" {
		if code := get("/metrics", p.metricsToken); code != http.StatusOK {
			t.Errorf("GET /metrics with the ServiceMonitor's token as it is in its Secret: %d", code)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the agent's exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		t.Fatalf("the agent did not stop within a minute of SIGTERM: %s", stderr.String())
	}
	if log := stderr.String(); strings.Contains(log, "readable by other users") {
		t.Errorf("the agent warned about the mounted token file's mode:\n%s", log)
	}
}

// expectClusterStop runs an agent of a cluster, whose object store does not
// answer, and checks that it failed joining the cluster, past its flags.
func (p *pod) expectClusterStop(t *testing.T, agent string) {
	t.Helper()
	p.cmd.Path = agent
	var stderr bytes.Buffer
	p.cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = p.cmd.Process.Kill()
		t.Fatalf("the agent of a cluster without its object store still runs after 2 minutes: %s", stderr.String())
	}
	var exit *exec.ExitError
	log := stderr.String()
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(log, "shared state") {
		t.Fatalf("exit %v; want exit code 1 failing to read the cluster's shared state, past the flags:\n%s\nargs %q", err, log, p.cmd.Args)
	}
	t.Logf("as expected without an object store: %s", strings.TrimSpace(log))
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", b)
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func chown(t *testing.T, path string, uid, gid int) {
	t.Helper()
	if err := os.Chown(path, uid, gid); err != nil {
		t.Fatal(err)
	}
}
