package compare

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/otelbench/otelbench/internal/compare/shellwords"
)

// SideInfo describes one side of the comparison in the report.
type SideInfo struct {
	Name string `json:"name"` // "base" or "head"
	// Spec is what the user gave: a git ref or a directory.
	Spec string `json:"spec"`
	// Commit is the resolved commit ("" when Spec is a directory outside git).
	Commit string `json:"commit,omitempty"`
	// Dirty is set for a directory side with uncommitted changes.
	Dirty bool `json:"dirty,omitempty"`
	// Worktree is set when compare checked Spec out in a temporary worktree.
	Worktree bool   `json:"worktree,omitempty"`
	Dir      string `json:"dir"`
	Binary   string `json:"-"`
	SHA256   string `json:"binary_sha256,omitempty"`
}

// Short returns a label like "HEAD~1 (1a2b3c4d)".
func (s SideInfo) Short() string {
	c := s.Commit
	if len(c) > 8 {
		c = c[:8]
	}
	switch {
	case c == "":
		return s.Spec
	case s.Dirty:
		return fmt.Sprintf("%s (%s, dirty)", s.Spec, c)
	case strings.HasPrefix(s.Commit, s.Spec):
		return c
	}
	return fmt.Sprintf("%s (%s)", s.Spec, c)
}

// git runs git in dir and returns its trimmed stdout.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, msg)
	}
	return strings.TrimSpace(string(out)), nil
}

// resolveSide turns spec into a source directory: an existing directory is
// used as it is (dirty trees allowed); anything else must name a commit in
// repo and is checked out as a detached worktree under tmp. The returned
// cleanup removes that worktree; it runs even when ctx is already done.
func resolveSide(ctx context.Context, repo, spec, name, tmp string) (SideInfo, func(), error) {
	info := SideInfo{Name: name, Spec: spec}
	nop := func() {}
	if st, err := os.Stat(spec); err == nil && st.IsDir() {
		dir, err := filepath.Abs(spec)
		if err != nil {
			return info, nop, fmt.Errorf("%s: %w", name, err)
		}
		info.Dir = dir
		if c, err := git(ctx, dir, "rev-parse", "--verify", "HEAD"); err == nil {
			info.Commit = c
			st, _ := git(ctx, dir, "status", "--porcelain", "--untracked-files=no")
			info.Dirty = st != ""
		}
		return info, nop, nil
	}
	commit, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", "--end-of-options", spec+"^{commit}")
	if err != nil {
		return info, nop, &SpecError{Side: name, Spec: spec}
	}
	info.Commit, info.Worktree = commit, true
	info.Dir = filepath.Join(tmp, "src-"+name)
	if _, err := git(ctx, repo, "worktree", "add", "--detach", info.Dir, commit); err != nil {
		return info, nop, fmt.Errorf("%s: check out %s: %w", name, spec, err)
	}
	cleanup := func() {
		// The caller's context may be cancelled (Ctrl-C); cleanup must run anyway.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, err := git(cctx, repo, "worktree", "remove", "--force", info.Dir); err != nil {
			_ = os.RemoveAll(info.Dir)
			_, _ = git(cctx, repo, "worktree", "prune")
		}
	}
	return info, cleanup, nil
}

// SpecError reports a side that is neither a directory nor a git commit.
type SpecError struct{ Side, Spec string }

func (e *SpecError) Error() string {
	return fmt.Sprintf("%s: %q is neither a directory nor a git commit", e.Side, e.Spec)
}

// BuildError reports a failed build with the tail of its output.
type BuildError struct {
	Side   string
	Err    error
	Output string
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("build %s: %v\n%s", e.Side, e.Err, e.Output)
}

func (e *BuildError) Unwrap() error { return e.Err }

// expand replaces the {name} placeholders in s.
func expand(s string, vars map[string]string) string {
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

// build runs the build command template with sh -c in the side's source
// directory, placeholders {out} and {src} replaced by shell-quoted paths,
// and returns the binary's SHA-256. A build runs in a shell so a template
// can chain steps (make && cp ...); the server, by contrast, is exec'd
// directly (see startServer) so the PID we sample is the server's.
func build(ctx context.Context, tmpl string, side *SideInfo, out string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	script := expand(tmpl, map[string]string{"out": shellwords.Quote(out), "src": shellwords.Quote(side.Dir)})
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Dir = side.Dir
	tail := &tailBuffer{max: 8 << 10}
	cmd.Stdout, cmd.Stderr = tail, tail
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			err = fmt.Errorf("%w (timed out after %v)", err, timeout)
		}
		return &BuildError{Side: side.Name, Err: err, Output: tail.String()}
	}
	sum, err := fileSHA256(out)
	if err != nil {
		return &BuildError{Side: side.Name, Err: fmt.Errorf("build left no binary at {out}: %w", err), Output: tail.String()}
	}
	side.Binary, side.SHA256 = out, sum
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
	cut bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	if t.cut {
		return "...\n" + string(t.buf)
	}
	return string(t.buf)
}

// fileTail returns up to max bytes from the end of the file at path.
func fileTail(path string, max int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := st.Size() - max
	prefix := "...\n"
	if off <= 0 {
		off, prefix = 0, ""
	}
	b := make([]byte, st.Size()-off)
	n, _ := f.ReadAt(b, off)
	return prefix + string(b[:n])
}
