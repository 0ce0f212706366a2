// Package kubernetes_test checks the manifests in this directory: they
// decode strictly into the Kubernetes API types, and the command they give
// the pods runs as a shard, with the environment the Job controller adds,
// against a real otelbench serve. scripts/load-shards.sh, the local
// equivalent of the Job, is tested end to end beside them.
package kubernetes_test
