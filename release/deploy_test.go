package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"gopkg.in/yaml.v3"
)

// The parts of deploy/k8s the tests read.
type k8sObject struct {
	Kind     string
	Metadata struct{ Name string }
	Data     map[string]string
	Spec     struct {
		Ports []struct {
			Name       string
			Port       int
			TargetPort string `yaml:"targetPort"`
		}
		Template struct {
			Metadata struct{ Annotations map[string]string }
			Spec     podSpec
		}
	}
}

type podSpec struct {
	SecurityContext struct {
		RunAsNonRoot bool                  `yaml:"runAsNonRoot"`
		RunAsUser    int                   `yaml:"runAsUser"`
		RunAsGroup   int                   `yaml:"runAsGroup"`
		FSGroup      int                   `yaml:"fsGroup"`
		Seccomp      struct{ Type string } `yaml:"seccompProfile"`
	} `yaml:"securityContext"`
	Containers []struct {
		Name  string
		Image string
		Args  []string
		Ports []struct {
			Name          string
			ContainerPort int `yaml:"containerPort"`
		}
		ReadinessProbe  probe `yaml:"readinessProbe"`
		LivenessProbe   probe `yaml:"livenessProbe"`
		SecurityContext struct {
			AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
			ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
			Capabilities             struct{ Drop []string }
		} `yaml:"securityContext"`
		VolumeMounts []struct {
			Name      string
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	Volumes []struct {
		Name      string
		ConfigMap *struct{ Name string } `yaml:"configMap"`
		EmptyDir  *struct {
			SizeLimit string `yaml:"sizeLimit"`
		} `yaml:"emptyDir"`
		Secret *struct {
			SecretName string `yaml:"secretName"`
			Items      []struct{ Key, Path string }
		}
	}
}

// feedbackToken is the token file the ConfigMap's configuration names
// (feedback_token_file), and the Secret volume item that provides it.
func feedbackToken(t *testing.T, m map[string]k8sObject) (path, secret, key string) {
	t.Helper()
	var cfg struct {
		FeedbackTokenFile string `yaml:"feedback_token_file"`
	}
	if err := yaml.Unmarshal([]byte(m["ConfigMap"].Data["ctxgate.yaml"]), &cfg); err != nil {
		t.Fatal(err)
	}
	pod := m["Deployment"].Spec.Template.Spec
	for _, vm := range pod.Containers[0].VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name != vm.Name || v.Secret == nil {
				continue
			}
			for _, it := range v.Secret.Items {
				if filepath.Join(vm.MountPath, it.Path) == cfg.FeedbackTokenFile {
					return cfg.FeedbackTokenFile, v.Secret.SecretName, it.Key
				}
			}
		}
	}
	t.Fatalf("feedback_token_file %q is not a file of a Secret volume the container mounts", cfg.FeedbackTokenFile)
	return "", "", ""
}

type probe struct {
	HTTPGet struct {
		Path string
		Port string
	} `yaml:"httpGet"`
}

// manifests reads every object in deploy/k8s/*.yaml by kind.
func manifests(t *testing.T) map[string]k8sObject {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "deploy", "k8s", "*.yaml"))
	out := map[string]k8sObject{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var o k8sObject
			if err := dec.Decode(&o); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out[o.Kind] = o
		}
	}
	for _, k := range []string{"Deployment", "Service", "ConfigMap", "Kustomization"} {
		if _, ok := out[k]; !ok {
			t.Fatalf("deploy/k8s has no %s", k)
		}
	}
	return out
}

// TestDeployManifests checks that deploy/k8s and the Dockerfile describe the
// image release/ builds: the port, the user, the entrypoint, and probes and
// scrape annotations on paths the server serves.
func TestDeployManifests(t *testing.T) {
	m := manifests(t)
	dep := m["Deployment"].Spec.Template
	pod := dep.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	port, _, _ := strings.Cut(servePort, "/")
	user, group, _ := strings.Cut(serveUser, ":")
	if len(c.Ports) != 1 || strconv.Itoa(c.Ports[0].ContainerPort) != port {
		t.Errorf("container ports %+v, want %s (the image's)", c.Ports, port)
	}
	sc := pod.SecurityContext
	if !sc.RunAsNonRoot || strconv.Itoa(sc.RunAsUser) != user || strconv.Itoa(sc.RunAsGroup) != group || sc.Seccomp.Type != "RuntimeDefault" {
		t.Errorf("pod securityContext %+v, want non-root %s, RuntimeDefault seccomp", sc, serveUser)
	}
	csc := c.SecurityContext
	if csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation || !csc.ReadOnlyRootFilesystem || !slices.Equal(csc.Capabilities.Drop, []string{"ALL"}) {
		t.Errorf("container securityContext %+v", csc)
	}
	for name, p := range map[string]probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port != c.Ports[0].Name {
			t.Errorf("%s probe %+v, want /healthz on port %q", name, p.HTTPGet, c.Ports[0].Name)
		}
	}
	ann := dep.Metadata.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != port || ann["prometheus.io/path"] != "/metrics" {
		t.Errorf("scrape annotations %v", ann)
	}
	svc := m["Service"].Spec.Ports
	if len(svc) != 1 || svc[0].TargetPort != c.Ports[0].Name {
		t.Errorf("service ports %+v, want target port %q", svc, c.Ports[0].Name)
	}
	if c.Args[0] != "serve" {
		t.Errorf("container args %q do not run serve (they replace the image's command)", c.Args)
	}
	// Feedback and /gaps are authenticated: the token comes from a Secret.
	if _, secret, key := feedbackToken(t, m); secret == "" || key == "" {
		t.Errorf("the feedback token's Secret %q, key %q", secret, key)
	}

	// The Dockerfile's final stage runs the same entrypoint, command, user and port.
	df, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	quote := func(s []string) string { return `["` + strings.Join(s, `", "`) + `"]` }
	for _, want := range []string{"USER " + serveUser, "EXPOSE " + port, "ENTRYPOINT " + quote(serveEntrypoint), "CMD " + quote(serveCmd)} {
		if !bytes.Contains(df, []byte("\n"+want+"\n")) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
}

// TestServePod runs the serve image as Kubernetes would run deploy/k8s:
// the image's layer unpacked as the root filesystem, the ConfigMap and the
// emptyDirs mounted where the Deployment mounts them, the container's args
// (plus a free loopback port), user 65532 and no capabilities, chrooted so
// that the binary sees nothing but the image. It then probes what the
// kubelet and Prometheus would, decides a request, and stops on SIGTERM.
// Needs root (chroot) on linux/amd64; skips otherwise.
func TestServePod(t *testing.T) {
	rootfs, cfg := serveRootfs(t)
	m := manifests(t)
	pod := m["Deployment"].Spec.Template.Spec
	c := pod.Containers[0]
	for _, vm := range c.VolumeMounts {
		p := filepath.Join(rootfs, vm.MountPath)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, v := range pod.Volumes {
			switch {
			case v.Name != vm.Name:
			case v.ConfigMap != nil:
				for k, val := range m["ConfigMap"].Data {
					if err := os.WriteFile(filepath.Join(p, k), []byte(val), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			case v.EmptyDir != nil:
				// What the kubelet makes of an emptyDir with fsGroup.
				if err := os.Chown(p, 0, pod.SecurityContext.FSGroup); err != nil {
					t.Fatal(err)
				}
				os.Chmod(p, 0o775|os.ModeSetgid)
			case v.Secret != nil:
				// The operator's Secret (docs/deploy.md), as the kubelet
				// mounts it: defaultMode 0440, group fsGroup.
				for _, it := range v.Secret.Items {
					f := filepath.Join(p, it.Path)
					if err := os.WriteFile(f, []byte(podToken), 0o440); err != nil {
						t.Fatal(err)
					}
					if err := os.Chown(f, 0, pod.SecurityContext.FSGroup); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}

	args := append(slices.Clone(c.Args), "--listen=127.0.0.1:0")
	sc := pod.SecurityContext
	cred := &syscall.Credential{Uid: uint32(sc.RunAsUser), Gid: uint32(sc.RunAsGroup), Groups: []uint32{uint32(sc.FSGroup)}}
	srv := runImage(t, rootfs, cfg, args, cred)

	if code, body := srv.get(c.ReadinessProbe.HTTPGet.Path); code != 200 || !strings.Contains(body, `"status":"ok"`) {
		t.Errorf("readiness probe %s: %d %s", c.ReadinessProbe.HTTPGet.Path, code, body)
	}
	if code, body := srv.get(m["Deployment"].Spec.Template.Metadata.Annotations["prometheus.io/path"]); code != 200 || !strings.Contains(body, "ctxgate_policy_info") {
		t.Errorf("metrics: %d, ctxgate_policy_info missing", code)
	}
	srv.decides("inject.json", "inject")
	srv.decides("refuse_off_topic.json", "refuse")
	// Feedback and the gap report take the Secret's token, and only it.
	for _, c := range []struct {
		method, path, body, token string
		status                    int
	}{
		{"POST", "/v1/feedback", `{"decision_id":"x","rating":"up"}`, "", 401},
		{"GET", "/gaps", "", "", 401},
		{"GET", "/gaps", "", "not-the-token-0123456789", 401},
		{"GET", "/gaps", "", podToken, 200},
	} {
		req, _ := http.NewRequest(c.method, srv.base+c.path, strings.NewReader(c.body))
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		if r.StatusCode != c.status {
			t.Errorf("%s %s with token %q: %d, want %d", c.method, c.path, c.token, r.StatusCode, c.status)
		}
	}
	// The refusal's gap event went to the gaps volume (the ConfigMap's gap_log).
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(rootfs, "var", "lib", "ctxgate", "gaps.jsonl"))
		if len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("no gap event in the gaps volume; stderr:\n%s", srv.stderr.String())
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	srv.stop()
}

// TestServeReadOnlyImage runs the serve image as `docker run --read-only`
// does: the image's own command, its user, HOME from its /etc/passwd, and
// nothing writable, /tmp included (no volume, no tmpfs). The compilation
// cache cannot be made, so serve compiles in memory, says so in one line,
// and decides. Needs root (chroot) on linux/amd64; skips otherwise.
func TestServeReadOnlyImage(t *testing.T) {
	rootfs, cfg := serveRootfs(t)
	if err := os.Chmod(filepath.Join(rootfs, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	uid, gid, _ := strings.Cut(cfg.Config.User, ":")
	u, _ := strconv.Atoi(uid)
	g, _ := strconv.Atoi(gid)
	args := append(slices.Clone(cfg.Config.Cmd), "--listen=127.0.0.1:0")
	srv := runImage(t, rootfs, cfg, args, &syscall.Credential{Uid: uint32(u), Gid: uint32(g)})
	srv.decides("inject.json", "inject")
	srv.stop()
	var warnings []string
	for _, l := range strings.Split(srv.stderr.String(), "\n") {
		if strings.Contains(l, "compilation cache") {
			warnings = append(warnings, l)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "level=WARN") || !strings.Contains(warnings[0], "dir=/tmp/.cache/ctxgate/wazero") {
		t.Errorf("want one warning about the cache in /tmp/.cache, got:\n%s", srv.stderr.String())
	}
	filepath.Walk(rootfs, func(p string, fi os.FileInfo, err error) error {
		if st, ok := fi.Sys().(*syscall.Stat_t); err == nil && ok && st.Uid == uint32(u) {
			t.Errorf("serve wrote %s in the read-only image", p)
		}
		return nil
	})
}

// serveRootfs builds the serve image from this tree, writes it as an OCI
// layout and reads it back, and unpacks its layer into a directory. The
// files are root's, so user 65532 can write only where a test lets it (the
// image's /tmp, volumes), as with readOnlyRootFilesystem.
func serveRootfs(t *testing.T) (string, *v1.ConfigFile) {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" || os.Geteuid() != 0 {
		t.Skip("runs the image's linux/amd64 binary under chroot: needs root on linux/amd64")
	}
	bin := linuxBinary(t)
	ca, _ := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	img, err := serveImage(platformBinary{platform: v1.Platform{OS: "linux", Architecture: "amd64"}, binary: bin}, ca, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := writeLayout(filepath.Join(dir, "layout"), testMeta.version, img); err != nil {
		t.Fatal(err)
	}
	idx, d, err := readLayout(filepath.Join(dir, "layout"), testMeta.version)
	if err != nil {
		t.Fatal(err)
	}
	if img, err = idx.Image(d.Digest); err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	files, err := layerFiles(mustLayer(t, img))
	if err != nil {
		t.Fatal(err)
	}
	rootfs := filepath.Join(dir, "rootfs")
	os.Mkdir(rootfs, 0o755)
	for name, f := range files {
		p := filepath.Join(rootfs, name)
		if strings.HasSuffix(name, "/") {
			os.MkdirAll(p, 0o755)
			if err := os.Chmod(p, os.FileMode(f.mode&0o777)|modeBits(f.mode)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, f.data, os.FileMode(f.mode&0o777)); err != nil {
			t.Fatal(err)
		}
	}
	return rootfs, cfg
}

// imageServer is the image's serve, running.
type imageServer struct {
	t      *testing.T
	base   string
	stderr fileText
	cmd    *exec.Cmd
	exited chan error
}

// runImage starts the image's entrypoint with args, chrooted into rootfs
// as cred, with the image's environment and HOME from its /etc/passwd (as
// runtimes set it), and waits until it listens. It is killed when the test
// ends if stop was not called.
func runImage(t *testing.T, rootfs string, cfg *v1.ConfigFile, args []string, cred *syscall.Credential) *imageServer {
	t.Helper()
	cmd := exec.Command(cfg.Config.Entrypoint[0], append(cfg.Config.Entrypoint[1:], args...)...)
	cmd.Dir = cfg.Config.WorkingDir
	cmd.Env = append(cfg.Config.Env, "HOME=/tmp")
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs, Credential: cred}
	// A file, not a buffer: the process writes while the test reads.
	stderrFile, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stderrFile.Close() })
	cmd.Stderr = stderrFile
	s := &imageServer{t: t, stderr: fileText(stderrFile.Name()), cmd: cmd, exited: make(chan error, 1)}
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text(): // the first is "listening on"
			default: // access log lines nobody reads
			}
		}
		s.exited <- cmd.Wait()
	}()
	select {
	case l := <-lines:
		_, s.base, _ = strings.Cut(l, "listening on ")
	case <-time.After(60 * time.Second):
	}
	if s.base == "" {
		t.Fatalf("the image's ctxgate serve did not start; stderr:\n%s", s.stderr.String())
	}
	return s
}

func (s *imageServer) get(path string) (int, string) {
	r, err := http.Get(s.base + path)
	if err != nil {
		s.t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(b)
}

// decides posts testdata/requests/default/file and wants action.
func (s *imageServer) decides(file, action string) {
	s.t.Helper()
	req, err := os.ReadFile(filepath.Join("..", "testdata", "requests", "default", file))
	if err != nil {
		s.t.Fatal(err)
	}
	r, err := http.Post(s.base+"/v1/gate", "application/json", bytes.NewReader(req))
	if err != nil {
		s.t.Fatal(err)
	}
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || r.Header.Get("X-Ctxgate-Action") != action {
		s.t.Errorf("%s: %d, action %q, want %s; stderr:\n%s", file, r.StatusCode, r.Header.Get("X-Ctxgate-Action"), action, s.stderr.String())
	}
}

// stop sends SIGTERM and wants a clean exit.
func (s *imageServer) stop() {
	s.t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		if err != nil {
			s.t.Errorf("serve after SIGTERM: %v; stderr:\n%s", err, s.stderr.String())
		}
	case <-time.After(30 * time.Second):
		s.t.Errorf("serve did not stop on SIGTERM")
	}
}

// podToken is the feedback token TestServePod's Secret holds.
const podToken = "pod-feedback-token-0123456789abcdef"

// modeBits turns a tar mode's sticky bit into Go's.
func modeBits(mode int64) os.FileMode {
	if mode&0o1000 != 0 {
		return os.ModeSticky
	}
	return 0
}

// fileText reads a file on demand, for failure messages.
type fileText string

func (f fileText) String() string {
	b, _ := os.ReadFile(string(f))
	return string(b)
}

// TestConfigMapPolicyIsDefault keeps deploy/k8s's policy.json the
// shipped default: a copy that drifts would run an older gate in the pods.
func TestConfigMapPolicyIsDefault(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "policies", "default.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := manifests(t)["ConfigMap"].Data["policy.json"]
	if strings.TrimSpace(got) != strings.TrimSpace(string(want)) {
		t.Errorf("deploy/k8s/configmap.yaml's policy.json is not policies/default.json: copy it (indented four spaces)")
	}
}

// TestDeployLogsBounded: in deploy/k8s the gap log rotates, and its kept
// files (keep+1 of gap_log_max_bytes, plus one line, a MiB at most) fit the
// emptyDir's sizeLimit, so a flood of refusals cannot get the pod evicted.
func TestDeployLogsBounded(t *testing.T) {
	m := manifests(t)
	var cfg struct {
		GapLog         string `yaml:"gap_log"`
		GapLogMaxBytes int64  `yaml:"gap_log_max_bytes"`
		GapLogKeep     int    `yaml:"gap_log_keep"`
	}
	if err := yaml.Unmarshal([]byte(m["ConfigMap"].Data["ctxgate.yaml"]), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.GapLogMaxBytes <= 0 || cfg.GapLogKeep <= 0 || !strings.HasPrefix(cfg.GapLog, "/var/lib/ctxgate/") {
		t.Fatalf("gap log %q rotates at %d keeping %d", cfg.GapLog, cfg.GapLogMaxBytes, cfg.GapLogKeep)
	}
	for _, v := range m["Deployment"].Spec.Template.Spec.Volumes {
		if v.Name != "gaps" {
			continue
		}
		limit, ok := strings.CutSuffix(v.EmptyDir.SizeLimit, "Mi")
		mib, err := strconv.ParseInt(limit, 10, 64)
		if !ok || err != nil {
			t.Fatalf("gaps volume sizeLimit %q, want NMi", v.EmptyDir.SizeLimit)
		}
		if need := int64(cfg.GapLogKeep+1)*cfg.GapLogMaxBytes + 1<<20; need > mib<<20 {
			t.Errorf("the gap log may hold %d bytes; the volume's sizeLimit is %d", need, mib<<20)
		}
		return
	}
	t.Fatal("no gaps volume")
}
