package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// k8sObjects are the objects `apiperf k8s` prints, decoded with the official API types.
type k8sObjects struct {
	secret      *corev1.Secret
	service     *corev1.Service
	coordinator *batchv1.Job
	workers     *batchv1.Job
	policy      *networkingv1.NetworkPolicy
	claim       *corev1.PersistentVolumeClaim // with --results-size only
}

// strictDecoder decodes core/v1 and batch/v1 objects from YAML the way the API server does
// with fieldValidation=Strict: an unknown or duplicated field is an error.
func strictDecoder() runtime.Decoder {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := batchv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := networkingv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
}

// decodeK8s splits a multi-document YAML stream and decodes every document strictly.
func decodeK8s(manifests []byte) ([]runtime.Object, error) {
	dec := strictDecoder()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifests)))
	var objs []runtime.Object
	for i := 1; ; i++ {
		doc, err := r.Read()
		if err == io.EOF {
			return objs, nil
		} else if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		objs = append(objs, obj)
	}
}

// k8sManifests runs `apiperf k8s args...` and decodes what it prints strictly.
func k8sManifests(t *testing.T, args ...string) ([]byte, k8sObjects) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), append([]string{"k8s"}, args...), &stdout, &stderr); code != 0 {
		t.Fatalf("apiperf k8s %q exited %d: %s", args, code, stderr.String())
	}
	objs, err := decodeK8s(stdout.Bytes())
	if err != nil {
		t.Fatalf("strict decoding of `apiperf k8s` output: %v\n%s", err, stdout.String())
	}
	var o k8sObjects
	for _, obj := range objs {
		switch v := obj.(type) {
		case *corev1.Secret:
			o.secret = v
		case *corev1.Service:
			o.service = v
		case *batchv1.Job:
			if strings.HasSuffix(v.Name, "-workers") {
				o.workers = v
			} else {
				o.coordinator = v
			}
		case *networkingv1.NetworkPolicy:
			o.policy = v
		case *corev1.PersistentVolumeClaim:
			o.claim = v
		default:
			t.Fatalf("unexpected object %T", obj)
		}
	}
	want := 5
	if o.claim != nil {
		want++
	}
	if len(objs) != want || o.secret == nil || o.service == nil || o.coordinator == nil || o.workers == nil || o.policy == nil {
		t.Fatalf("apiperf k8s printed %d objects %+v, want a Secret, a Service, two Jobs and a NetworkPolicy", len(objs), o)
	}
	return stdout.Bytes(), o
}

// podCommand is the command of a Job's only container.
func podCommand(t *testing.T, j *batchv1.Job) []string {
	t.Helper()
	cs := j.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("Job %s has %d containers, want 1", j.Name, len(cs))
	}
	return cs[0].Command
}

// localCommands turns the manifests' container commands into the argv the process tests
// run: the image's /apiperf becomes exe and the two join addresses become addr (loopback);
// $(VAR) references are expanded from the container's environment and the Secret, as the
// kubelet does, and the files the Secret mounts are written under a temporary directory
// standing in for the mount; every other argument is the manifests' own.
func localCommands(t *testing.T, o k8sObjects, exe, addr string) (coord, worker []string) {
	t.Helper()
	swap := func(j *batchv1.Job, flag string) []string {
		cmd := podCommand(t, j)
		out := expandK8s(t, j, o.secret)
		if len(out) == 0 || out[0] != "/apiperf" {
			t.Fatalf("container command %q does not start with /apiperf", cmd)
		}
		out[0] = exe
		n := 0
		for i := 1; i+1 < len(out); i++ {
			if out[i] == flag {
				out[i+1] = addr
				n++
			}
		}
		if n != 1 {
			t.Fatalf("container command %q has %s %d times, want once", cmd, flag, n)
		}
		return out
	}
	return swap(o.coordinator, "--join-addr"), swap(o.workers, "--join")
}

// expandK8s is job's container command as the kubelet runs it: $(VAR) replaced by the
// variable's value (here: from the Secret), $$ by $; paths under the Secret's mount point
// become the same files written under a temporary directory.
func expandK8s(t *testing.T, j *batchv1.Job, secret *corev1.Secret) []string {
	t.Helper()
	pod := j.Spec.Template.Spec
	c := pod.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom == nil { // a plain value (TMPDIR)
			env[e.Name] = e.Value
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		if ref == nil || ref.Name != secret.Name {
			t.Fatalf("env %s of %s is not from the Secret %s", e.Name, j.Name, secret.Name)
		}
		v, ok := secret.Data[ref.Key]
		if !ok {
			t.Fatalf("env %s reads key %s, not in the Secret", e.Name, ref.Key)
		}
		env[e.Name] = string(v)
	}
	mounts := map[string]string{} // mount path -> local directory
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			dir := t.TempDir()
			for _, it := range v.Secret.Items {
				if err := os.WriteFile(dir+"/"+it.Path, secret.Data[it.Key], 0o600); err != nil {
					t.Fatal(err)
				}
			}
			mounts[m.MountPath] = dir
		}
	}
	var out []string
	for _, a := range c.Command {
		var b strings.Builder
		for i := 0; i < len(a); i++ {
			switch {
			case strings.HasPrefix(a[i:], "$$"):
				b.WriteByte('$')
				i++
			case strings.HasPrefix(a[i:], "$("):
				end := strings.IndexByte(a[i:], ')')
				if v, ok := env[a[i+2:i+end]]; end > 0 && ok {
					b.WriteString(v)
					i += end
				} else {
					b.WriteByte('$')
				}
			default:
				b.WriteByte(a[i])
			}
		}
		w := b.String()
		for mp, dir := range mounts {
			if strings.HasPrefix(w, mp+"/") {
				w = dir + w[len(mp):]
			} else if k := strings.Index(w, "="+mp+"/"); k >= 0 {
				w = w[:k+1] + dir + w[k+1+len(mp):]
			}
		}
		out = append(out, w)
	}
	return out
}

// TestK8sManifestsStrict decodes `apiperf k8s` output with the Kubernetes API types, unknown
// fields rejected, and checks that the objects fit together: the workers join the Service,
// the Service selects the coordinator's pod on the port it listens on, both read the Secret.
func TestK8sManifestsStrict(t *testing.T) {
	t.Setenv(tokenEnv, "k8s-test-token-0123456789")
	for sub, load := range map[string][]string{"run": {"-c", "30"}, "sweep": {"--levels", "30,60"}, "capacity": {"-c", "30"}} {
		t.Run(sub, func(t *testing.T) {
			args := append([]string{"--workers", "3", "--namespace", "perf", "--port", "7171", "--", sub}, load...)
			_, o := k8sManifests(t, append(args, "-H", `X-Note: "quoted": yes`, "http://api.perf.svc:8080/")...)
			w := o.workers.Spec
			if w.CompletionMode == nil || *w.CompletionMode != batchv1.IndexedCompletion ||
				w.Parallelism == nil || *w.Parallelism != 3 || w.Completions == nil || *w.Completions != 3 {
				t.Errorf("workers Job spec %+v, want Indexed with 3 completions and parallelism 3", w)
			}
			if a := w.Template.Spec.Affinity; a == nil || a.PodAntiAffinity == nil ||
				len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
				t.Error("the workers have no pod anti-affinity")
			}
			coordPod := o.coordinator.Spec.Template
			for k, v := range o.service.Spec.Selector {
				if coordPod.Labels[k] != v {
					t.Errorf("Service selector %v does not select the coordinator pod (labels %v)", o.service.Spec.Selector, coordPod.Labels)
				}
			}
			if p := o.service.Spec.Ports; len(p) != 2 || p[0].Name != "join" || p[0].Port != 7171 || coordPod.Spec.Containers[0].Ports[0].ContainerPort != 7171 {
				t.Errorf("Service ports %+v, coordinator container ports %+v, want join 7171 (and metrics, TestK8sMetrics)", p, coordPod.Spec.Containers[0].Ports)
			}
			// The image is FROM scratch and runs as nobody: the coordinator writes its history
			// and run directories in a writable volume (found on a real cluster: "--db: cannot
			// write .apiperf: permission denied" in /).
			c0 := coordPod.Spec.Containers[0]
			if len(c0.VolumeMounts) != 2 || c0.WorkingDir != c0.VolumeMounts[0].MountPath ||
				len(coordPod.Spec.Volumes) != 2 || coordPod.Spec.Volumes[0].EmptyDir == nil || coordPod.Spec.Volumes[0].Name != c0.VolumeMounts[0].Name {
				t.Errorf("coordinator works in %q with mounts %+v and volumes %+v, want its working directory on an emptyDir and the TLS files", c0.WorkingDir, c0.VolumeMounts, coordPod.Spec.Volumes)
			}
			coord := podCommand(t, o.coordinator)
			if want := []string{"/apiperf", sub, "--workers", "3", "--join-addr", "0.0.0.0:7171", "--join-cert", "/tls/join-cert.pem", "--join-key", "/tls/join-key.pem"}; !reflect.DeepEqual(coord[:len(want)], want) {
				t.Errorf("coordinator command %q, want it to start %q", coord, want)
			}
			svc := o.service.Name + "." + o.service.Namespace + ".svc"
			if got, want := podCommand(t, o.workers), []string{"/apiperf", "worker", "--join", svc + ":7171", "--join-ca", "/tls/join-ca.pem", "--join-server-name", svc}; !reflect.DeepEqual(got, want) {
				t.Errorf("worker command %q, want %q (the Service, over TLS)", got, want)
			}
			checkJoinPKI(t, o.secret, svc)
			if p := o.policy.Spec; p.PodSelector.MatchLabels["app.kubernetes.io/component"] != "coordinator" || len(p.Ingress) != 2 ||
				p.Ingress[0].From[0].PodSelector.MatchLabels["app.kubernetes.io/component"] != "worker" || p.Ingress[0].Ports[0].Port.IntValue() != 7171 {
				t.Errorf("NetworkPolicy %+v, want only the workers let in to the coordinator's port 7171 (the metrics port: TestK8sMetrics)", p)
			}
			for _, j := range []*batchv1.Job{o.coordinator, o.workers} {
				ref := j.Spec.Template.Spec.Containers[0].Env[0].ValueFrom.SecretKeyRef
				if ref == nil || ref.Name != o.secret.Name || string(o.secret.Data[ref.Key]) != "k8s-test-token-0123456789" {
					t.Errorf("Job %s reads the token from %+v, want the Secret %s holding it", j.Name, ref, o.secret.Name)
				}
			}
		})
	}
}

// checkJoinPKI checks the Secret's join CA, certificate and key: the certificate is signed by
// the CA, names the Service's DNS name, and goes with the key.
func checkJoinPKI(t *testing.T, secret *corev1.Secret, name string) {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(secret.Data["join-ca.pem"]) {
		t.Fatalf("no CA certificate in the Secret's join-ca.pem")
	}
	pair, err := tls.X509KeyPair(secret.Data["join-cert.pem"], secret.Data["join-key.pem"])
	if err != nil {
		t.Fatalf("the Secret's join certificate and key: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name}); err != nil {
		t.Errorf("the coordinator's certificate does not verify for %s against the Secret's CA: %v", name, err)
	}
}

// TestK8sResultsPVC: --results-pvc puts the coordinator's working directory on the claim,
// --results-size creates it, a run's directory goes on it; --plain-join leaves out the TLS files.
func TestK8sResultsPVC(t *testing.T) {
	t.Setenv(tokenEnv, "k8s-test-token-0123456789")
	_, o := k8sManifests(t, "--workers", "2", "--results-pvc", "perf-results", "--results-size", "2Gi", "--plain-join", "--", "sweep", "--levels", "10,20", "http://api.perf.svc:8080/")
	if o.claim == nil || o.claim.Name != "perf-results" || o.claim.Spec.Resources.Requests.Storage().String() != "2Gi" {
		t.Fatalf("claim %+v, want perf-results of 2Gi", o.claim)
	}
	pod := o.coordinator.Spec.Template.Spec
	c0 := pod.Containers[0]
	if len(pod.Volumes) != 1 || pod.Volumes[0].PersistentVolumeClaim == nil || pod.Volumes[0].PersistentVolumeClaim.ClaimName != "perf-results" ||
		c0.WorkingDir != c0.VolumeMounts[0].MountPath {
		t.Errorf("coordinator volumes %+v, working directory %q: want it working on the claim", pod.Volumes, c0.WorkingDir)
	}
	// A claim's root is root's 0755 on a new disk (k8s-e2e's local volume: "--db: cannot write
	// .apiperf: permission denied"): the pod's group owns its volumes, so nobody can write.
	if sc := pod.SecurityContext; sc == nil || sc.FSGroup == nil || sc.RunAsUser == nil || *sc.FSGroup != *sc.RunAsUser ||
		sc.FSGroupChangePolicy == nil || *sc.FSGroupChangePolicy != corev1.FSGroupChangeOnRootMismatch {
		t.Errorf("coordinator pod securityContext %+v: want fsGroup the user's (65534), changed on root mismatch only", sc)
	}
	if cmd := strings.Join(podCommand(t, o.workers), " "); strings.Contains(cmd, "--join-ca") || o.secret.Data["join-key.pem"] != nil {
		t.Errorf("--plain-join: worker command %q, Secret keys %v; want no TLS", cmd, slices.Collect(maps.Keys(o.secret.Data)))
	}
	if cmd := podCommand(t, o.coordinator); slices.Contains(cmd, "--results-dir") {
		t.Errorf("sweep on a claim: coordinator command %q has --results-dir; want its own --dir only", cmd)
	}
	// a run has no directory of its own: on a claim it writes one under apiperf-out (the
	// claim's), unless it names its own
	for _, tc := range []struct {
		run  []string
		want []string
	}{
		{[]string{"-n", "100"}, []string{"--results-dir", "apiperf-out"}},
		{[]string{"-n", "100", "--results-dir", "mine"}, []string{"--results-dir", "mine"}},
		{[]string{"-n", "100", "--results-dir=mine"}, []string{"--results-dir=mine"}},
	} {
		args := append(append([]string{"--workers", "2", "--results-pvc", "perf-results", "--", "run"}, tc.run...), "http://api.perf.svc:8080/")
		_, o := k8sManifests(t, args...)
		cmd := podCommand(t, o.coordinator)
		var got []string
		for i, a := range cmd {
			if a == "--results-dir" && i+1 < len(cmd) {
				got = append(got, a, cmd[i+1])
			} else if strings.HasPrefix(a, "--results-dir=") {
				got = append(got, a)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("apiperf k8s %q: coordinator command %q has %q; want %q", args, cmd, got, tc.want)
		}
	}
	for _, bad := range [][]string{{"--results-size", "2Gi"}, {"--results-pvc", "Bad_Name"}, {"--results-pvc", "r", "--results-size", "lots"}} {
		args := append(append([]string{"k8s", "--workers", "2"}, bad...), "--", "sweep", "--levels", "10", "http://api.perf.svc:8080/")
		if code, _, stderr := runCLI(t, args...); code != ExitUsage {
			t.Errorf("apiperf %q = exit %d (%s); want 2", args, code, stderr)
		}
	}
}

// TestK8sDecodeIsStrict proves the decoder used above rejects what the API server would:
// an unknown field and a misspelt one in a Job.
func TestK8sDecodeIsStrict(t *testing.T) {
	t.Setenv(tokenEnv, "k8s-test-token-0123456789")
	out, _ := k8sManifests(t, "--workers", "2", "--", "run", "-n", "100", "http://127.0.0.1:9/")
	for _, tc := range []struct{ from, to, want string }{
		{"  completionMode: Indexed\n", "  completionMode: Indexed\n  parallelismm: 2\n", `unknown field "spec.parallelismm"`},
		{"      restartPolicy: Never\n", "      restartPolicy: Never\n      hostNetwerk: true\n", `unknown field "spec.template.spec.hostNetwerk"`},
	} {
		bad := bytes.Replace(out, []byte(tc.from), []byte(tc.to), 1)
		if bytes.Equal(bad, out) {
			t.Fatalf("the manifests have no %q to alter", tc.from)
		}
		if _, err := decodeK8s(bad); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("decoding manifests with %q: error %v, want %s", strings.TrimSpace(tc.to), err, tc.want)
		}
	}
}

// TestClusterProcsRunManifestCommands: the process tests run exactly the manifests' container
// commands, only the binary's path and the join address made local.
func TestClusterProcsRunManifestCommands(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", "7070")
	coord, worker := clusterCommands(t, exe, addr, "run", "http://127.0.0.1:9/", "-n", "30000", "-c", "30")
	// The TLS files are the Secret's, written where the test stands in for the mount.
	local := func(argv []string, i int, flag, file string) {
		t.Helper()
		if len(argv) <= i+1 || argv[i] != flag || filepath.Base(argv[i+1]) != file {
			t.Fatalf("argv %q has no %s .../%s at %d", argv, flag, file, i)
		}
		if _, err := os.Stat(argv[i+1]); err != nil {
			t.Errorf("%s: %v", flag, err)
		}
		argv[i+1] = file
	}
	local(coord, 6, "--join-cert", "join-cert.pem")
	local(coord, 8, "--join-key", "join-key.pem")
	local(worker, 4, "--join-ca", "join-ca.pem")
	want := []string{exe, "run", "--workers", "3", "--join-addr", addr, "--join-cert", "join-cert.pem", "--join-key", "join-key.pem",
		"--join-timeout", "30s", "-n", "30000", "-c", "30", "http://127.0.0.1:9/"}
	if !reflect.DeepEqual(coord, want) {
		t.Errorf("coordinator argv %q, want %q", coord, want)
	}
	if want := []string{exe, "worker", "--join", addr, "--join-ca", "join-ca.pem", "--join-server-name", "apiperf-coordinator.default.svc"}; !reflect.DeepEqual(worker, want) {
		t.Errorf("worker argv %q, want %q", worker, want)
	}
}

// TestK8sServesResults: without --results-pvc the coordinator serves its finished results
// for --fetch-timeout (default 10m) and makes its temporary directory on its writable
// volume; with a claim, or --fetch-timeout 0, it does not; the run's own --serve-results is
// the manifests' to set.
func TestK8sServesResults(t *testing.T) {
	t.Setenv(tokenEnv, "k8s-test-token-0123456789")
	serving := func(o k8sObjects) (string, bool) {
		cmd := podCommand(t, o.coordinator)
		i := slices.Index(cmd, "--serve-results")
		tmp := slices.ContainsFunc(o.coordinator.Spec.Template.Spec.Containers[0].Env, func(v corev1.EnvVar) bool { return v.Name == "TMPDIR" && v.Value == "/work" })
		if i < 0 || i+1 >= len(cmd) {
			return "", tmp
		}
		return cmd[i+1], tmp
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{nil, "10m0s"},
		{[]string{"--fetch-timeout", "90s"}, "1m30s"},
		{[]string{"--fetch-timeout", "0"}, ""},
		{[]string{"--results-pvc", "perf-results"}, ""},
	} {
		args := append(append([]string{"--workers", "2"}, tc.flags...), "--", "run", "-n", "100", "http://api.perf.svc:8080/")
		_, o := k8sManifests(t, args...)
		if got, tmp := serving(o); got != tc.want || tmp != (tc.want != "") {
			t.Errorf("apiperf k8s %q: --serve-results %q, TMPDIR=/work %v; want %q and %v", args, got, tmp, tc.want, tc.want != "")
		}
	}
	args := []string{"k8s", "--workers", "2", "--", "run", "--serve-results", "1m", "-n", "100", "http://api.perf.svc:8080/"}
	if code, _, stderr := runCLI(t, args...); code != ExitUsage || !strings.Contains(stderr, "--serve-results is set by apiperf k8s") {
		t.Errorf("apiperf %q = exit %d (%s); want 2 naming --serve-results", args, code, stderr)
	}
}

// serviceMonitor is the part of a Prometheus Operator ServiceMonitor (monitoring.coreos.com/v1)
// the manifests use; decoding into it with unknown fields refused checks our field names.
type serviceMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port     string `json:"port"`
			Path     string `json:"path"`
			Interval string `json:"interval"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// TestK8sMetrics: the coordinator's live /metrics (--listen) is a port of its container and
// its Service, with the prometheus.io annotations, open to the cluster in the NetworkPolicy;
// --service-monitor adds a ServiceMonitor selecting the Service's metrics port; --metrics-port
// 0 leaves it all out; a --listen of the run's own is refused.
func TestK8sMetrics(t *testing.T) {
	t.Setenv(tokenEnv, "k8s-test-token-0123456789")
	_, o := k8sManifests(t, "--workers", "2", "--", "sweep", "--levels", "10", "http://api.perf.svc:8080/")
	svc, pod := o.service, o.coordinator.Spec.Template.Spec
	if a := svc.Annotations; a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != "9464" || a["prometheus.io/path"] != "/metrics" {
		t.Errorf("Service annotations %v; want prometheus.io scrape, port 9464, path /metrics", a)
	}
	i := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == "metrics" })
	if i < 0 || svc.Spec.Ports[i].Port != 9464 || svc.Spec.Ports[i].TargetPort.IntValue() != 9464 {
		t.Fatalf("Service ports %+v; want metrics 9464", svc.Spec.Ports)
	}
	if !slices.ContainsFunc(pod.Containers[0].Ports, func(p corev1.ContainerPort) bool { return p.Name == "metrics" && p.ContainerPort == 9464 }) {
		t.Errorf("coordinator container ports %+v; want metrics 9464", pod.Containers[0].Ports)
	}
	if cmd := podCommand(t, o.coordinator); !slices.Contains(cmd, "--listen") || cmd[slices.Index(cmd, "--listen")+1] != "0.0.0.0:9464" {
		t.Errorf("coordinator command %q; want --listen 0.0.0.0:9464", cmd)
	}
	rules := o.policy.Spec.Ingress
	if len(rules) != 2 || len(rules[1].From) != 0 || len(rules[1].Ports) != 1 || rules[1].Ports[0].Port.IntValue() != 9464 || len(rules[0].From) == 0 {
		t.Errorf("NetworkPolicy ingress %+v; want the join port from the workers and 9464 from anywhere", rules)
	}
	for k, v := range svc.Labels {
		if o.coordinator.Spec.Template.Labels[k] != v {
			t.Errorf("Service label %s=%s is not the coordinator pod's", k, v)
		}
	}

	_, o = k8sManifests(t, "--workers", "2", "--metrics-port", "0", "--", "sweep", "--levels", "10", "http://api.perf.svc:8080/")
	if len(o.service.Annotations) != 0 || len(o.service.Spec.Ports) != 1 || len(o.policy.Spec.Ingress) != 1 || slices.Contains(podCommand(t, o.coordinator), "--listen") {
		t.Errorf("--metrics-port 0: annotations %v, ports %+v, ingress %d rules; want none of the metrics", o.service.Annotations, o.service.Spec.Ports, len(o.policy.Spec.Ingress))
	}

	code, out, stderr := runCLI(t, "k8s", "--workers", "2", "--service-monitor", "--", "run", "-n", "100", "http://api.perf.svc:8080/")
	if code != ExitOK {
		t.Fatalf("apiperf k8s --service-monitor = %d: %s", code, stderr)
	}
	docs := strings.Split(out, "\n---\n")
	last := docs[len(docs)-1]
	if _, err := decodeK8s([]byte(strings.Join(docs[:len(docs)-1], "\n---\n"))); err != nil || !strings.Contains(last, "kind: ServiceMonitor") {
		t.Fatalf("--service-monitor: the other objects decode with %v; last document:\n%s", err, last)
	}
	j, err := utilyaml.ToJSON([]byte(last))
	if err != nil {
		t.Fatal(err)
	}
	var sm serviceMonitor
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sm); err != nil {
		t.Fatalf("ServiceMonitor: %v\n%s", err, last)
	}
	if sm.APIVersion != "monitoring.coreos.com/v1" || sm.Metadata.Namespace != "default" || len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" ||
		!maps.Equal(sm.Spec.Selector.MatchLabels, o.service.Labels) {
		t.Errorf("ServiceMonitor %+v; want monitoring.coreos.com/v1 selecting the Service's labels %v on its metrics port", sm, o.service.Labels)
	}
	for _, bad := range [][]string{{"--service-monitor", "--metrics-port", "0"}, {"--metrics-port", "7070"}, {"--", "run", "--listen", "127.0.0.1:1"}} {
		args := append([]string{"k8s", "--workers", "2"}, bad...)
		if !slices.Contains(bad, "--") {
			args = append(args, "--", "run")
		}
		args = append(args, "-n", "100", "http://api.perf.svc:8080/")
		if code, _, stderr := runCLI(t, args...); code != ExitUsage {
			t.Errorf("apiperf %q = exit %d (%s); want 2", args, code, stderr)
		}
	}
}
