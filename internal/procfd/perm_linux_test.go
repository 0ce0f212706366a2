package procfd

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// permChildEnv makes the test binary count the given PIDs and print the
// results as JSON (run as an unprivileged user by TestUnprivileged).
const permChildEnv = "PROCFD_TEST_COUNT_AS_CHILD"

type permResult struct {
	N          int    `json:"n"`
	Method     Method `json:"method"`
	Err        string `json:"err"`
	Permission bool   `json:"permission"`
}

func init() {
	v := os.Getenv(permChildEnv)
	if v == "" {
		return
	}
	out := map[string]permResult{}
	pfs, err := NewFS("")
	if err != nil {
		os.Exit(3)
	}
	for _, s := range strings.Split(v, ",") {
		pid, _ := strconv.Atoi(s)
		for _, m := range []Method{MethodAuto, MethodStat, MethodReaddir} {
			n, used, err := pfs.CountMethod(pid, m)
			r := permResult{N: n, Method: used, Permission: errors.Is(err, ErrPermission)}
			if err != nil {
				r.Err = err.Error()
			}
			out[s+"/"+string(m)] = r
		}
	}
	json.NewEncoder(os.Stdout).Encode(out)
	os.Exit(0)
}

// TestUnprivileged counts root's processes as user nobody: reading their fd
// directories is refused, but the stat size still counts them, so auto
// succeeds where readdir fails with ErrPermission.
func TestUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a child as nobody")
	}
	pfs := newProcFS(t)
	requireStatSize(t, pfs)
	holder := startHolder(t, 50)
	want, _, err := pfs.CountMethod(holder, MethodStat)
	if err != nil {
		t.Fatal(err)
	}
	zombie := exec.Command("/bin/sh", "-c", "exit 0")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	defer zombie.Wait()
	waitState(t, zombie.Process.Pid, 'Z')

	hs, zs := strconv.Itoa(holder), strconv.Itoa(zombie.Process.Pid)
	out := runAsNobody(t, permChildEnv+"="+hs+","+zs)
	var got map[string]permResult
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	tests := []struct {
		key        string
		n          int
		method     Method
		permission bool
	}{
		{hs + "/auto", want, MethodStat, false},
		{hs + "/stat", want, MethodStat, false},
		{hs + "/readdir", 0, MethodReaddir, true},
		// A zombie's size is 0; auto falls back, is refused, and since the
		// kernel reports sizes, 0 is the answer.
		{zs + "/auto", 0, MethodStat, false},
		{zs + "/stat", 0, MethodStat, false},
	}
	t.Logf("as nobody: %+v", got)
	for _, tt := range tests {
		r := got[tt.key]
		if r.N != tt.n || r.Method != tt.method || r.Permission != tt.permission || (r.Err != "") != tt.permission {
			t.Errorf("%s as nobody = %+v, want n=%d method=%s permission error %v", tt.key, r, tt.n, tt.method, tt.permission)
		}
	}
	if r := got[hs+"/readdir"]; !strings.Contains(r.Err, "ptrace") {
		t.Errorf("readdir error %q lacks the hint", r.Err)
	}
}

// runAsNobody runs the test binary as user nobody with env as its only environment, and returns
// what it printed. The binary sits in a 0700 build directory: nobody runs a copy.
func runAsNobody(t *testing.T, env string) []byte {
	t.Helper()
	// Not t.TempDir: its parent is 0700 too.
	dir, err := os.MkdirTemp("", "procfd-nobody")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "procfd.test")
	copyFile(t, os.Args[0], bin)
	cmd := exec.Command(bin)
	cmd.Env = []string{env}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child as nobody: %v", err)
	}
	return out
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
