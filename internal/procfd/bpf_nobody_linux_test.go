package procfd

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// bpfChildEnv makes the test binary try the BPF counter on its own PID and
// print the results as JSON (run as user nobody by TestBPFUnprivileged).
const bpfChildEnv = "PROCFD_TEST_BPF_AS_CHILD"

type bpfChildResult struct {
	Forced        permResult `json:"forced"`
	Unavailable   bool       `json:"unavailable"`
	Auto          permResult `json:"auto"`
	AutoNoSizes   permResult `json:"auto_no_sizes"`
	LoadErr       bool       `json:"load_err"`
	AutoAfterLoad permResult `json:"auto_after_load"`
	Want          int        `json:"want"`
}

func init() {
	if os.Getenv(bpfChildEnv) == "" {
		return
	}
	pfs, err := NewFS("")
	if err != nil {
		os.Exit(3)
	}
	pid := os.Getpid()
	res := func(n int, m Method, err error) permResult {
		r := permResult{N: n, Method: m, Permission: errors.Is(err, ErrPermission)}
		if err != nil {
			r.Err = err.Error()
		}
		return r
	}
	var out bpfChildResult
	n, m, err := pfs.CountMethod(pid, MethodBPF)
	out.Forced, out.Unavailable = res(n, m, err), errors.Is(err, ErrBPFUnavailable)
	out.Auto = res(pfs.Count(pid))
	noSizes := *pfs
	noSizes.statProbed, noSizes.statSize = true, false
	out.AutoNoSizes = res(noSizes.Count(pid))
	out.LoadErr = errors.Is(noSizes.LoadBPF(), ErrBPFUnavailable)
	out.AutoAfterLoad = res(noSizes.Count(pid))
	out.Want, _, _ = pfs.CountMethod(pid, MethodReaddir)
	json.NewEncoder(os.Stdout).Encode(out)
	os.Exit(0)
}

// TestBPFUnprivileged runs the BPF counter as user nobody: --method bpf
// fails with ErrBPFUnavailable and the fix in the message; auto never
// fails for it, with or without stat sizes.
func TestBPFUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a child as nobody")
	}
	out := runAsNobody(t, bpfChildEnv+"=1")
	var got bpfChildResult
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Logf("as nobody: %+v", got)
	if got.Forced.Err == "" || !got.Unavailable {
		t.Errorf("--method bpf as nobody = %+v, want ErrBPFUnavailable", got.Forced)
	}
	for _, hint := range []string{"root", "CAP_BPF", "CAP_PERFMON", "--method auto"} {
		if !strings.Contains(got.Forced.Err, hint) {
			t.Errorf("error %q lacks %q", got.Forced.Err, hint)
		}
	}
	if got.Auto.Err != "" || got.Auto.N <= 0 {
		t.Errorf("auto as nobody = %+v", got.Auto)
	}
	// Without stat sizes, auto falls back to reading the directory, which
	// then sees its own descriptor as the child's readdir did.
	if r := got.AutoNoSizes; r.Err != "" || r.Method != MethodReaddir || r.N != got.Want {
		t.Errorf("auto without stat sizes as nobody = %+v, want %d readdir", r, got.Want)
	}
	if !got.LoadErr {
		t.Error("LoadBPF as nobody: want ErrBPFUnavailable")
	}
	if r := got.AutoAfterLoad; r.Err != "" || r.Method != MethodReaddir || r.N != got.Want {
		t.Errorf("auto after a failed LoadBPF as nobody = %+v, want %d readdir", r, got.Want)
	}
}
