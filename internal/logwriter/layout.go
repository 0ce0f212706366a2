package logwriter

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Kubernetes layout names: one pod per stream in one namespace, with one
// container each; the uid and container id are derived from the stream so
// that runs are reproducible.
const (
	k8sNamespace = "otelbench"
	k8sContainer = "app"
)

// streamPath returns the file of stream i under dir, and for the Kubernetes
// layout the /var/log/containers-style symlink that points at it.
func streamPath(dir string, layout Layout, i int) (path, link string) {
	if layout != LayoutKubernetes {
		return filepath.Join(dir, fmt.Sprintf("app-%d.log", i)), ""
	}
	pod := fmt.Sprintf("writer-%d", i)
	uid := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	path = filepath.Join(dir, "pods", fmt.Sprintf("%s_%s_%s", k8sNamespace, pod, uid), k8sContainer, "0.log")
	link = filepath.Join(dir, "containers", fmt.Sprintf("%s_%s_%s-%064x.log", pod, k8sNamespace, k8sContainer, i+1))
	return path, link
}

// create makes the file of a stream (empty, or kept as is when it exists),
// and its symlink.
func create(path, link string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create log dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create log file: %w", err)
	}
	if link == "" {
		return f, nil
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		f.Close()
		return nil, fmt.Errorf("create link dir: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err == nil {
		_ = os.Remove(link)
		err = os.Symlink(abs, link)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("link log file: %w", err)
	}
	return f, nil
}

// shift moves NAME.k to NAME.k+1 for k = keep-1 .. 1 and removes NAME.keep,
// making room for a new NAME.1.
func shift(path string, keep int) error {
	if err := os.Remove(fmt.Sprintf("%s.%d", path, keep)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("rotate: %w", err)
	}
	for k := keep - 1; k >= 1; k-- {
		err := os.Rename(fmt.Sprintf("%s.%d", path, k), fmt.Sprintf("%s.%d", path, k+1))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("rotate: %w", err)
		}
	}
	return nil
}

// rotate rotates the open file f of path and returns the file to write to
// next: a new one (rename) or f itself, emptied (copytruncate).
func rotate(f *os.File, path string, mode RotateMode, keep int, sync bool) (*os.File, error) {
	if sync {
		if err := f.Sync(); err != nil {
			return f, fmt.Errorf("rotate: fsync: %w", err)
		}
	}
	if err := shift(path, keep); err != nil {
		return f, err
	}
	rotated := path + ".1"
	if mode == RotateCopyTruncate {
		if err := copyFile(path, rotated, sync); err != nil {
			return f, err
		}
		if err := f.Truncate(0); err != nil {
			return f, fmt.Errorf("rotate: truncate: %w", err)
		}
		return f, nil
	}
	if err := os.Rename(path, rotated); err != nil {
		return f, fmt.Errorf("rotate: %w", err)
	}
	nf, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return f, fmt.Errorf("rotate: create: %w", err)
	}
	f.Close()
	return nf, nil
}

func copyFile(src, dst string, sync bool) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("rotate: copy: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("rotate: copy: %w", err)
	}
	_, err = io.Copy(out, in)
	if err == nil && sync {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("rotate: copy: %w", err)
	}
	return nil
}
