package kubernetes_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/otelbench/otelbench/internal/buildtest"
	"github.com/otelbench/otelbench/internal/loadgen"
	"github.com/otelbench/otelbench/internal/report"
)

// loadJob decodes load-job.yaml strictly: an unknown or misspelt field, or
// a value of the wrong type, fails the test as it would fail kubectl apply.
func loadJob(t *testing.T) *batchv1.Job {
	t.Helper()
	b, err := os.ReadFile("load-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(b, &job); err != nil {
		t.Fatalf("load-job.yaml does not decode strictly into batch/v1 Job: %v", err)
	}
	return &job
}

func env(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

func TestLoadJobManifest(t *testing.T) {
	job := loadJob(t)
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		t.Fatalf("got %s %s, want batch/v1 Job", job.APIVersion, job.Kind)
	}
	s := job.Spec
	switch {
	case s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion:
		t.Errorf("got completionMode %v, want Indexed (the shard index comes from it)", s.CompletionMode)
	case s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism:
		t.Errorf("got completions %v parallelism %v, want them equal: every shard runs at once", s.Completions, s.Parallelism)
	case s.BackoffLimit == nil || *s.BackoffLimit != 0:
		t.Errorf("got backoffLimit %v, want 0: a retried shard would send its part twice", s.BackoffLimit)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("got restartPolicy %q, want Never", pod.RestartPolicy)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("got %d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	shards := env(c, loadgen.EnvShards)
	if shards == nil || shards.Value != strconv.Itoa(int(*s.Completions)) {
		t.Errorf("got %s=%v, want %d (= completions)", loadgen.EnvShards, shards, *s.Completions)
	}
	start := env(c, loadgen.EnvStartAt)
	if start == nil || start.ValueFrom == nil || start.ValueFrom.ConfigMapKeyRef == nil ||
		start.ValueFrom.ConfigMapKeyRef.Optional == nil || !*start.ValueFrom.ConfigMapKeyRef.Optional {
		t.Errorf("got %s %+v, want it from an optional ConfigMap key", loadgen.EnvStartAt, start)
	}
	if len(c.Args) == 0 || c.Args[0] != "load" || !slices.Contains(c.Args, "--json=-") {
		t.Errorf("got args %q, want load ... --json=- (reports to the pod's log)", c.Args)
	}
	for _, tc := range pod.TopologySpreadConstraints {
		for k, v := range tc.LabelSelector.MatchLabels {
			if s.Template.Labels[k] != v {
				t.Errorf("topology spread selects %s=%s, which the pods do not carry", k, v)
			}
		}
	}
	if !strings.Contains(readFile(t, "load-job.yaml"), "report merge -") {
		t.Error("load-job.yaml does not say how to merge the reports")
	}
}

// TestLoadJobArgsRun runs the manifest's own args, with the environment the
// Job controller gives each pod, as every shard of the Job against a real
// serve (its endpoint and duration overridden to reach it quickly), and
// merges their logs as the manifest says: the pods' command works as written.
func TestLoadJobArgsRun(t *testing.T) {
	job := loadJob(t)
	c := job.Spec.Template.Spec.Containers[0]
	n := int(*job.Spec.Completions)
	bin := buildtest.Go(t, "../../cmd/otelbench")
	endpoint := startServe(t, bin)
	var logs bytes.Buffer
	for i := range n {
		args := append(append([]string{}, c.Args...), "--endpoint="+endpoint, "--duration=500ms", "--rate=400")
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), loadgen.EnvShardIndex+"="+strconv.Itoa(i), loadgen.EnvShards+"="+env(c, loadgen.EnvShards).Value)
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Run(); err != nil {
			t.Fatalf("shard %d: %v:\n%s", i, err, logs.String())
		}
	}
	in, _, err := report.ReadStream(&logs, "logs")
	if err != nil {
		t.Fatal(err)
	}
	merged, err := report.Merge(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Shards) != n || merged.Config.Rate != 400 || merged.Totals.Status.S2xx == 0 {
		t.Errorf("got %d shards, total rate %v, %d 2xx; want %d shards, 400 req/s, some 2xx",
			len(merged.Shards), merged.Config.Rate, merged.Totals.Status.S2xx, n)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
