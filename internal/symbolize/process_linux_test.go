package symbolize

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/otelbench/otelbench/internal/childtest"
)

const goMarker = `package main

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
)

//go:noinline
func marker() int { return 42 }

func main() {
	fmt.Printf("%d\n", reflect.ValueOf(marker).Pointer())
	bufio.NewReader(os.Stdin).ReadString('\n')
}
`

const cMarker = `#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) int marker(void) { return 42; }

int main(void) {
	printf("%lu %lu\n", (unsigned long)marker, (unsigned long)getpid);
	fflush(stdout);
	char buf[8];
	read(0, buf, sizeof buf);
	return marker() == 42 ? 0 : 1;
}
`

// runMarker starts bin, reads the addresses it prints and returns them with
// the pid; the process exits when the test ends.
func runMarker(t *testing.T, bin string) (int, []uint64) {
	t.Helper()
	cmd := exec.Command(bin)
	_, out := childtest.Start(t, cmd)
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var addrs []uint64
	for _, f := range strings.Fields(line) {
		a, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, a)
	}
	return cmd.Process.Pid, addrs
}

func TestLookupGoBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	for _, mode := range []string{"exe", "pie"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "main.go"), []byte(goMarker), 0o644)
			os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module marker\n\ngo 1.22\n"), 0o644)
			bin := filepath.Join(dir, "marker")
			cmd := exec.Command("go", "build", "-buildmode="+mode, "-o", bin, ".")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Skipf("go build -buildmode=%s: %v\n%s", mode, err, out)
			}
			pid, addrs := runMarker(t, bin)
			p := NewProcess("", pid)
			if err := p.Snapshot(); err != nil {
				t.Fatal(err)
			}
			for _, pc := range []uint64{addrs[0], addrs[0] + 1} {
				f, ok := p.Lookup(pc)
				if !ok || f.Function != "main.marker" || !strings.HasSuffix(f.File, "main.go") || f.Line != 11 {
					t.Errorf("Lookup(%#x) = %+v, %v, want main.marker at main.go:11", pc, f, ok)
				}
			}
			if _, ok := p.Lookup(8); ok {
				t.Error("Lookup(8) resolved, want unmapped")
			}
		})
	}
}

func TestLookupCBinary(t *testing.T) {
	cc, err := exec.LookPath("clang")
	if err != nil {
		if cc, err = exec.LookPath("cc"); err != nil {
			t.Skip("no C compiler")
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "marker.c")
	os.WriteFile(src, []byte(cMarker), 0o644)
	bin := filepath.Join(dir, "cmarker")
	if out, err := exec.Command(cc, "-O1", "-fPIE", "-pie", "-o", bin, src).CombinedOutput(); err != nil {
		t.Skipf("%s: %v\n%s", cc, err, out)
	}
	pid, addrs := runMarker(t, bin)
	p := NewProcess("", pid)
	if err := p.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if f, ok := p.Lookup(addrs[0] + 2); !ok || f.Function != "marker" {
		t.Errorf("Lookup(marker) = %+v, %v, want marker (from .symtab)", f, ok)
	}
	// getpid lives in libc: found through the shared library's mapping and
	// its dynamic symbols.
	if f, ok := p.Lookup(addrs[1]); !ok || !strings.Contains(f.Function, "getpid") {
		t.Errorf("Lookup(getpid) = %+v, %v, want a getpid symbol of libc", f, ok)
	}
	m, ok := p.Mapping(addrs[1])
	if !ok || !bytes.Contains([]byte(m.Path), []byte("libc")) {
		t.Errorf("mapping of getpid = %+v, want libc", m)
	}
}

func TestLoadKernel(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("kallsyms addresses are hidden from non-root")
	}
	k, err := LoadKernel("")
	if err != nil {
		t.Fatal(err)
	}
	if k.Len() < 1000 {
		t.Fatalf("only %d kernel symbols", k.Len())
	}
	f, err := os.Open(DefaultKallsyms)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 3 && (fs[1] == "T" || fs[1] == "t") && fs[2] == "vfs_read" {
			a, _ := strconv.ParseUint(fs[0], 16, 64)
			if got, ok := k.Lookup(a + 4); !ok || got != "vfs_read" {
				t.Errorf("Lookup(vfs_read+4) = %q, want vfs_read", got)
			}
			return
		}
	}
	t.Skip("vfs_read not in kallsyms")
}
