package cluster

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/template"
	"time"
)

// Manifests describes the Kubernetes objects of a scale-out run: the coordinator as a Job
// behind a Service, the workers as an Indexed Job spread over nodes, the token as a Secret.
type Manifests struct {
	Name      string   // prefix of every object's name (default "apiperf")
	Namespace string   // default "default"
	Image     string   // the apiperf image (Dockerfile: FROM scratch, /apiperf)
	Workers   int      // worker pods
	Port      int      // the coordinator's join port (default 7070)
	CPU       string   // CPU request and limit of each pod (default "1")
	Memory    string   // memory request and limit of each pod (default "512Mi")
	Token     string   // the shared token put in the Secret
	Args      []string // the coordinator's command after `apiperf`: run|sweep|capacity [flags] URL
	// PlainJoin: workers join over plain TCP. By default the manifests carry a CA made for
	// the run and the coordinator's certificate (the Secret), and workers verify it.
	PlainJoin bool
	// PKI is the join's CA and certificate (NewJoinPKI for the Service's names when nil).
	PKI *JoinPKI
	// ResultsPVC names the PersistentVolumeClaim the coordinator works in (history, run
	// directories, -o files), so the results outlive its pod; "": an emptyDir, gone with it.
	ResultsPVC string
	// ResultsSize, with ResultsPVC, makes the manifests create that claim with this size.
	ResultsSize string
	// FetchTimeout, without ResultsPVC, makes the coordinator serve its finished run
	// directory on its port for up to this long, until `apiperf k8s fetch` takes it
	// (--serve-results); 0: it does not.
	FetchTimeout time.Duration
	// MetricsPort is the port of the coordinator's live /metrics (--listen): in the Service,
	// with the prometheus.io annotations, and open to the cluster in the NetworkPolicy; 0: none.
	MetricsPort int
	// ServiceMonitor adds a Prometheus Operator ServiceMonitor for MetricsPort.
	ServiceMonitor bool
}

// serves says the coordinator serves its results for apiperf k8s fetch.
func (m Manifests) serves() bool { return m.ResultsPVC == "" && m.FetchTimeout > 0 }

// ServiceNames are the DNS names of the coordinator's Service, the ones its certificate carries.
func (m Manifests) ServiceNames() []string {
	m = m.withDefaults()
	svc := m.Name + "-coordinator." + m.Namespace + ".svc"
	return []string{svc, svc + ".cluster.local", m.Name + "-coordinator"}
}

// Where the join's TLS files are mounted in the pods.
const (
	tlsDir  = "/tls"
	tlsCA   = "join-ca.pem"
	tlsCert = "join-cert.pem"
	tlsKey  = "join-key.pem"
)

// Command is the coordinator container's command line: URLs and header values are
// $(APIPERF_ARG_n) references to the Secret (Kubernetes expands them), local files their
// path where the Secret is mounted (see podArgs).
func (m Manifests) Command() []string {
	m = m.withDefaults()
	cmd := []string{"/apiperf", m.Args[0], "--workers", fmt.Sprint(m.Workers), "--join-addr", fmt.Sprintf("0.0.0.0:%d", m.Port)}
	if !m.PlainJoin {
		cmd = append(cmd, "--join-cert", tlsDir+"/"+tlsCert, "--join-key", tlsDir+"/"+tlsKey)
	}
	if m.serves() {
		cmd = append(cmd, "--serve-results", m.FetchTimeout.String())
	}
	if m.ResultsPVC != "" && m.Args[0] == "run" && !hasFlag(m.Args[1:], "--results-dir") {
		// a sweep or capacity search writes its directory under its --dir by itself
		cmd = append(cmd, "--results-dir", resultsDir)
	}
	if m.MetricsPort > 0 {
		cmd = append(cmd, "--listen", fmt.Sprintf("0.0.0.0:%d", m.MetricsPort))
	}
	args, _ := podArgs(m.Args[1:])
	for i, a := range args {
		cmd = append(cmd, a.word(i))
	}
	return cmd
}

// resultsDir is where on the claim a run's directory goes: sweep's and capacity's --dir
// default, relative to the coordinator's working directory (the claim's mount).
const resultsDir = "apiperf-out"

// hasFlag says whether args, a command's flags before any --, give flag.
func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// WorkerCommand is a worker container's command line.
func (m Manifests) WorkerCommand() []string {
	m = m.withDefaults()
	cmd := []string{"/apiperf", "worker", "--join", fmt.Sprintf("%s:%d", m.ServiceNames()[0], m.Port)}
	if !m.PlainJoin {
		cmd = append(cmd, "--join-ca", tlsDir+"/"+tlsCA, "--join-server-name", m.ServiceNames()[0])
	}
	return cmd
}

func (m Manifests) withDefaults() Manifests {
	if m.Name == "" {
		m.Name = "apiperf"
	}
	if m.Namespace == "" {
		m.Namespace = "default"
	}
	if m.Port == 0 {
		m.Port = 7070
	}
	if m.CPU == "" {
		m.CPU = "1"
	}
	if m.Memory == "" {
		m.Memory = "512Mi"
	}
	if m.Image == "" {
		m.Image = "apiperf:latest"
	}
	return m
}

// Validate reports every problem at once.
func (m Manifests) Validate() error {
	var errs []error
	if m.Workers < 1 {
		errs = append(errs, fmt.Errorf("workers must be at least 1, got %d", m.Workers))
	}
	if len(m.Args) < 2 || (m.Args[0] != "run" && m.Args[0] != "sweep" && m.Args[0] != "capacity") {
		errs = append(errs, errors.New("give the coordinator's command after --: run|sweep|capacity [flags] URL"))
	}
	for _, a := range m.Args {
		if a == "--workers" || strings.HasPrefix(a, "--workers=") || a == "--join-addr" || strings.HasPrefix(a, "--join-addr=") ||
			a == "--serve-results" || strings.HasPrefix(a, "--serve-results=") || (m.MetricsPort > 0 && (a == "--listen" || strings.HasPrefix(a, "--listen="))) {
			errs = append(errs, fmt.Errorf("%s is set by apiperf k8s", strings.SplitN(a, "=", 2)[0]))
		}
	}
	if err := CheckToken(m.Token); err != nil {
		errs = append(errs, err)
	}
	if m.MetricsPort < 0 || m.MetricsPort > 65535 || (m.MetricsPort > 0 && m.MetricsPort == m.withDefaults().Port) {
		errs = append(errs, fmt.Errorf("--metrics-port %d: want 1-65535 (0: none), not the join port", m.MetricsPort))
	}
	if m.ServiceMonitor && m.MetricsPort == 0 {
		errs = append(errs, errors.New("a ServiceMonitor needs the metrics port (--metrics-port)"))
	}
	if m.FetchTimeout < 0 {
		errs = append(errs, fmt.Errorf("fetch timeout %v is negative", m.FetchTimeout))
	}
	if m.ResultsSize != "" && m.ResultsPVC == "" {
		errs = append(errs, errors.New("a results size needs the claim's name (--results-pvc)"))
	}
	if m.ResultsPVC != "" && (!dns1123Label().MatchString(m.ResultsPVC) || len(m.ResultsPVC) > 63) {
		errs = append(errs, fmt.Errorf("results claim %q is not a DNS label (lower case letters, digits and -, at most 63)", m.ResultsPVC))
	}
	if m.ResultsSize != "" && !quantity().MatchString(m.ResultsSize) {
		errs = append(errs, fmt.Errorf("results size %q is not a quantity like 1Gi or 500Mi", m.ResultsSize))
	}
	errs = append(errs, m.withDefaults().checkNames()...)
	if len(m.Args) > 1 {
		if _, err := podArgs(m.Args[1:]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// YAML renders the manifests, one document per object, ready for kubectl apply -f -.
func (m Manifests) YAML() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	m = m.withDefaults()
	args, _ := podArgs(m.Args[1:])
	entries, err := secrets(args)
	if err != nil {
		return nil, err
	}
	if !m.PlainJoin {
		if m.PKI == nil {
			if m.PKI, err = NewJoinPKI(m.ServiceNames(), 30*24*time.Hour); err != nil {
				return nil, err
			}
		}
		for _, f := range []struct {
			key  string
			data []byte
		}{{tlsCA, m.PKI.CA}, {tlsCert, m.PKI.Cert}, {tlsKey, m.PKI.Key}} {
			entries = append(entries, secretEntry{Key: f.key, TLS: true, Data: base64.StdEncoding.EncodeToString(f.data)})
		}
	}
	var b bytes.Buffer
	err = k8sTemplate().Execute(&b, struct {
		Manifests
		Cmd, WorkerCmd string
		TokenData      string
		Secrets        []secretEntry
		Files, Serves  bool
	}{m, quoteList(m.Command()), quoteList(m.WorkerCommand()), base64.StdEncoding.EncodeToString([]byte(m.Token)), entries,
		slices.ContainsFunc(entries, func(e secretEntry) bool { return e.Path != "" && !e.TLS }), m.serves()})
	return b.Bytes(), err
}

// quoteList renders strings as a YAML flow sequence (JSON strings are YAML scalars).
func quoteList(xs []string) string {
	b, _ := json.Marshal(xs)
	return string(b)
}

// k8sTemplate is parsed on first use, not in every apiperf process at start. The
// container's token and resources blocks are defined once for the coordinator and the
// workers.
var k8sTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("k8s").Funcs(template.FuncMap{"q": func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}}).Parse(`{{define "token"}}        env:
        - name: APIPERF_TOKEN
          valueFrom:
            secretKeyRef:
              name: {{q (print .Name "-token")}}
              key: token
{{end}}{{define "resources"}}        resources:
          requests:
            cpu: {{q .CPU}}
            memory: {{q .Memory}}
          limits:
            cpu: {{q .CPU}}
            memory: {{q .Memory}}
        # Pod Security "restricted": no root, no privilege escalation, no capabilities
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities:
            drop: ["ALL"]
{{end}}{{define "pod"}}      restartPolicy: Never
      securityContext:
        runAsNonRoot: true
        runAsUser: 65534
        runAsGroup: 65534
        # the volumes are the group's, so that nobody can write a results claim whose root is
        # root's (a new disk's is); its files are regrouped only when the root is not yet
        fsGroup: 65534
        fsGroupChangePolicy: OnRootMismatch
        seccompProfile:
          type: RuntimeDefault
{{end}}# apiperf scale-out: kubectl apply -f this; results: kubectl logs -n {{.Namespace}} job/{{.Name}}-coordinator
{{- if .ResultsPVC}}, and the coordinator's directory on the claim {{.ResultsPVC}}{{end}}
{{- if .Serves}}
# The coordinator serves its finished results for {{.FetchTimeout}}: apiperf k8s fetch --name {{.Name}} --namespace {{.Namespace}}
{{- end}}
{{- if not .PlainJoin}}
# Workers join over TLS: the Secret holds a CA made for this run and the coordinator's certificate.
{{- end}}
# The token, the URL, the header values and the files the command names are in the Secret.
apiVersion: v1
kind: Secret
metadata:
  name: {{q (print .Name "-token")}}
  namespace: {{q .Namespace}}
type: Opaque
data:
  token: {{q .TokenData}}
{{- range .Secrets}}
  {{.Key}}: {{q .Data}}
{{- end}}
{{- if .ResultsSize}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: {{q .ResultsPVC}}
  namespace: {{q .Namespace}}
spec:
  accessModes: ["ReadWriteOnce"]
  resources:
    requests:
      storage: {{q .ResultsSize}}
{{- end}}
---
apiVersion: v1
kind: Service
metadata:
  name: {{q (print .Name "-coordinator")}}
  namespace: {{q .Namespace}}
  labels:
    app.kubernetes.io/name: {{q .Name}}
    app.kubernetes.io/component: coordinator
{{- if .MetricsPort}}
  # the coordinator's live /metrics, for a cluster's Prometheus
  annotations:
    prometheus.io/scrape: "true"
    prometheus.io/port: "{{.MetricsPort}}"
    prometheus.io/path: /metrics
{{- end}}
spec:
  selector:
    app.kubernetes.io/name: {{q .Name}}
    app.kubernetes.io/component: coordinator
  ports:
  - name: join
    port: {{.Port}}
    targetPort: {{.Port}}
    protocol: TCP
{{- if .MetricsPort}}
  - name: metrics
    port: {{.MetricsPort}}
    targetPort: {{.MetricsPort}}
    protocol: TCP
{{- end}}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {{q (print .Name "-coordinator")}}
  namespace: {{q .Namespace}}
spec:
  backoffLimit: 0
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {{q .Name}}
        app.kubernetes.io/component: coordinator
    spec:
{{template "pod" .}}      volumes:
      - name: work
{{- if .ResultsPVC}}
        persistentVolumeClaim:
          claimName: {{q .ResultsPVC}}
{{- else}}
        emptyDir: {}
{{- end}}
{{- if not .PlainJoin}}
      - name: tls
        secret:
          secretName: {{q (print .Name "-token")}}
          items:
          - key: join-cert.pem
            path: join-cert.pem
          - key: join-key.pem
            path: join-key.pem
{{- end}}
{{- if .Files}}
      - name: files
        secret:
          secretName: {{q (print .Name "-token")}}
          items:
{{- range .Secrets}}{{if .Path}}
          - key: {{.Key}}
            path: {{q .Path}}
{{- end}}{{end}}
{{- end}}
      containers:
      - name: coordinator
        image: {{q .Image}}
        command: {{.Cmd}}
        # the image is FROM scratch and runs as nobody: the history database (.apiperf) and
        # run directories go to a writable emptyDir
        workingDir: /work
        volumeMounts:
        - name: work
          mountPath: /work
{{- if not .PlainJoin}}
        - name: tls
          mountPath: /tls
          readOnly: true
{{- end}}
{{- if .Files}}
        - name: files
          mountPath: /files
          readOnly: true
{{- end}}
{{template "token" .}}
{{- if .Serves}}        # --serve-results: a run's results directory is made under TMPDIR (the root filesystem is read-only)
        - name: TMPDIR
          value: /work
{{end}}
{{- range .Secrets}}{{if .Env}}        - name: {{.Env}}
          valueFrom:
            secretKeyRef:
              name: {{q (print $.Name "-token")}}
              key: {{.Key}}
{{end}}{{end}}        ports:
        - containerPort: {{.Port}}
          name: join
{{- if .MetricsPort}}
        - containerPort: {{.MetricsPort}}
          name: metrics
{{- end}}
{{template "resources" .}}---
apiVersion: batch/v1
kind: Job
metadata:
  name: {{q (print .Name "-workers")}}
  namespace: {{q .Namespace}}
spec:
  completionMode: Indexed
  completions: {{.Workers}}
  parallelism: {{.Workers}}
  backoffLimit: 0
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {{q .Name}}
        app.kubernetes.io/component: worker
    spec:
{{template "pod" .}}      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              topologyKey: kubernetes.io/hostname
              labelSelector:
                matchLabels:
                  app.kubernetes.io/name: {{q .Name}}
{{- if not .PlainJoin}}
      volumes:
      - name: tls
        secret:
          secretName: {{q (print .Name "-token")}}
          items:
          - key: join-ca.pem
            path: join-ca.pem
{{- end}}
      containers:
      - name: worker
        image: {{q .Image}}
        command: {{.WorkerCmd}}
{{- if not .PlainJoin}}
        volumeMounts:
        - name: tls
          mountPath: /tls
          readOnly: true
{{- end}}
{{template "token" .}}{{template "resources" .}}---
# Only the workers reach the coordinator's join port{{if .MetricsPort}}; its metrics port is open to the cluster{{end}}.
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{q (print .Name "-join")}}
  namespace: {{q .Namespace}}
spec:
  podSelector:
    matchLabels:
      app.kubernetes.io/name: {{q .Name}}
      app.kubernetes.io/component: coordinator
  policyTypes: ["Ingress"]
  ingress:
  - from:
    - podSelector:
        matchLabels:
          app.kubernetes.io/name: {{q .Name}}
          app.kubernetes.io/component: worker
    ports:
    - protocol: TCP
      port: {{.Port}}
{{- if .MetricsPort}}
  # the live /metrics: from anywhere in the cluster (Prometheus)
  - ports:
    - protocol: TCP
      port: {{.MetricsPort}}
{{- end}}
{{- if .ServiceMonitor}}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{q (print .Name "-coordinator")}}
  namespace: {{q .Namespace}}
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: {{q .Name}}
      app.kubernetes.io/component: coordinator
  endpoints:
  - port: metrics
    path: /metrics
    interval: 5s
{{- end}}
`))
})
