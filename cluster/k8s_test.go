package cluster

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestManifests decodes every document the k8s command prints (yaml.v3) and checks the
// objects a scale-out needs. The strict decode with the Kubernetes API types, and the
// process tests running these very commands, are in internal/cli/k8s_test.go.
func TestManifests(t *testing.T) {
	m := Manifests{Workers: 3, Image: "registry.local/apiperf:v1", Token: testToken,
		Args: []string{"run", "-n", "30000", "-c", "30", "-H", `X-Note: "quoted": yes`, "http://api.default.svc:8080/"}}
	out, err := m.YAML()
	if err != nil {
		t.Fatalf("YAML: %v", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	var kinds []string
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding the manifests: %v\n%s", err, out)
		}
		kind := doc["kind"].(string)
		kinds = append(kinds, kind)
		if kind != "Job" {
			continue
		}
		spec := doc["spec"].(map[string]any)
		pod := spec["template"].(map[string]any)["spec"].(map[string]any)
		c := pod["containers"].([]any)[0].(map[string]any)
		var cmd []string
		for _, a := range c["command"].([]any) {
			cmd = append(cmd, a.(string))
		}
		switch c["name"] {
		case "coordinator":
			if !reflect.DeepEqual(cmd, m.Command()) {
				t.Errorf("coordinator command %q, want %q", cmd, m.Command())
			}
		case "worker":
			if !reflect.DeepEqual(cmd, m.WorkerCommand()) {
				t.Errorf("worker command %q, want %q", cmd, m.WorkerCommand())
			}
			if spec["completionMode"] != "Indexed" || spec["parallelism"] != 3 || spec["completions"] != 3 {
				t.Errorf("workers Job spec %v, want Indexed with 3 completions and parallelism 3", spec)
			}
			if pod["affinity"].(map[string]any)["podAntiAffinity"] == nil {
				t.Error("workers have no pod anti-affinity")
			}
		}
	}
	if want := []string{"Secret", "Service", "Job", "Job", "NetworkPolicy"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	want := []string{"/apiperf", "run", "--workers", "3", "--join-addr", "0.0.0.0:7070", "--join-cert", "/tls/join-cert.pem", "--join-key", "/tls/join-key.pem", "-n", "30000"}
	if got := m.Command(); !reflect.DeepEqual(got[:len(want)], want) {
		t.Errorf("Command() = %q, want it to start %q", got, want)
	}
}

func TestManifestsValidate(t *testing.T) {
	bad := Manifests{Workers: 0, Token: "short", Args: []string{"run", "--workers", "2", "http://x/"}}
	err := bad.Validate()
	for _, want := range []string{"workers must be", "--workers is set", "token"} {
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("Validate() = %v, want it to say %q", err, want)
		}
	}
}
