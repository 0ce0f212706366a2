package kubernetes_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/otelbench/otelbench/internal/buildtest"
	"github.com/otelbench/otelbench/internal/loadgen"
	"github.com/otelbench/otelbench/internal/report"
)

// decodeStrict decodes one manifest into obj, refusing unknown fields.
func decodeStrict(t *testing.T, path string, obj any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, obj); err != nil {
		t.Fatalf("%s does not decode strictly into %T: %v", path, obj, err)
	}
}

// sharedVolume decodes the shared-volume variant and checks that its parts
// agree: one claim, one shard count, the files the merge waits for and reads
// being those the shards write.
func sharedVolume(t *testing.T) (load, merge *batchv1.Job) {
	t.Helper()
	var pvc corev1.PersistentVolumeClaim
	load, merge = &batchv1.Job{}, &batchv1.Job{}
	decodeStrict(t, "shared-volume/reports-pvc.yaml", &pvc)
	decodeStrict(t, "shared-volume/load-job.yaml", load)
	decodeStrict(t, "shared-volume/merge-job.yaml", merge)
	if pvc.Kind != "PersistentVolumeClaim" || load.Kind != "Job" || merge.Kind != "Job" {
		t.Fatalf("got kinds %s, %s, %s", pvc.Kind, load.Kind, merge.Kind)
	}
	for _, j := range []*batchv1.Job{load, merge} {
		for _, v := range j.Spec.Template.Spec.Volumes {
			if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != pvc.Name {
				t.Errorf("%s mounts %+v, want the claim %s", j.Name, v, pvc.Name)
			}
		}
	}
	n := int(*load.Spec.Completions)
	if *load.Spec.CompletionMode != batchv1.IndexedCompletion || int(*load.Spec.Parallelism) != n {
		t.Errorf("load: want an Indexed Job with parallelism = completions")
	}
	c := load.Spec.Template.Spec.Containers[0]
	if e := env(c, loadgen.EnvShards); e == nil || e.Value != strconv.Itoa(n) {
		t.Errorf("load: %s %+v, want %d", loadgen.EnvShards, e, n)
	}
	if e := env(c, "SHARD_INDEX"); e == nil || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil ||
		e.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("load: SHARD_INDEX %+v, want the completion index annotation", e)
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("/reports/shard-%d.json", i))
	}
	args := merge.Spec.Template.Spec.Containers[0].Args
	if !slices.Equal(args[len(args)-n:], want) {
		t.Errorf("merge reads %q, want the %d shards' files %q", args, n, want)
	}
	wait := strings.Join(merge.Spec.Template.Spec.InitContainers[0].Command, " ")
	if !strings.Contains(wait, "for i in "+indexes(n)+";") {
		t.Errorf("merge waits with %q, want it to wait for shards %s", wait, indexes(n))
	}
	return load, merge
}

func indexes(n int) string {
	var s []string
	for i := range n {
		s = append(s, strconv.Itoa(i))
	}
	return strings.Join(s, " ")
}

// TestSharedVolumeRuns runs the variant as the cluster would, with a
// directory for the volume: every shard's args (the index expanded as the
// kubelet expands $(SHARD_INDEX)) against a real serve, the init
// container's wait script under sh, then the merge's args.
func TestSharedVolumeRuns(t *testing.T) {
	load, merge := sharedVolume(t)
	bin := buildtest.Go(t, "../../cmd/otelbench")
	endpoint := startServe(t, bin)
	vol := t.TempDir()
	onVolume := func(s string) string { return strings.ReplaceAll(s, "/reports", vol) }
	c := load.Spec.Template.Spec.Containers[0]
	n := int(*load.Spec.Completions)

	// The wait must not pass before the shards have reported.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	script := onVolume(merge.Spec.Template.Spec.InitContainers[0].Command[2])
	if err := exec.CommandContext(ctx, "sh", "-c", script).Run(); err == nil {
		t.Fatal("the wait for shards ended with no shard reported")
	}

	for i := range n {
		var args []string
		for _, a := range c.Args {
			args = append(args, onVolume(strings.ReplaceAll(a, "$(SHARD_INDEX)", strconv.Itoa(i))))
		}
		args = append(args, "--endpoint="+endpoint, "--duration=300ms", "--rate=400")
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), loadgen.EnvShardIndex+"="+strconv.Itoa(i), loadgen.EnvShards+"="+env(c, loadgen.EnvShards).Value)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, out)
		}
	}
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("wait for shards: %v\n%s", err, out)
	}
	var margs []string
	for _, a := range merge.Spec.Template.Spec.Containers[0].Args {
		margs = append(margs, onVolume(a))
	}
	if out, err := exec.Command(bin, margs...).CombinedOutput(); err != nil {
		t.Fatalf("merge: %v\n%s", err, out)
	}
	merged, err := report.ReadFile(filepath.Join(vol, "merged.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Shards) != n || merged.Totals.Status.S2xx == 0 {
		t.Errorf("merged %d shards with %d 2xx, want %d shards and some 2xx", len(merged.Shards), merged.Totals.Status.S2xx, n)
	}
}
