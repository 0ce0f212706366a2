package profile

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

func TestSyscallStacksGoChild(t *testing.T) {
	requireBPF(t)
	bin := buildGo(t, "fstats", fstatProgram)
	const n = 5000
	rep := traceSyscalls(t, SyscallConfig{Target: Target{Command: []string{bin, strconv.Itoa(n)}}, Stacks: true})
	if fromFn := callsThrough(rep, "fstat", "main.doFstats"); fromFn != n {
		t.Errorf("fstat calls with main.doFstats on the stack = %d, want %d", fromFn, n)
	}

	p, err := rep.Profile()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	parsed, err := profile.Parse(&buf)
	if err != nil {
		t.Fatalf("parse written profile: %v", err)
	}
	if err := parsed.CheckValid(); err != nil {
		t.Fatal(err)
	}
	if got := parsed.SampleType[1].Type + "/" + parsed.SampleType[1].Unit; got != "syscall_time/nanoseconds" {
		t.Errorf("sample type 1 = %s, want syscall_time/nanoseconds", got)
	}
	var labelled int64
	for _, s := range parsed.Sample {
		if s.Label["syscall"][0] != "fstat" {
			continue
		}
		for _, l := range s.Location {
			for _, ln := range l.Line {
				if ln.Function.Name == "main.doFstats" {
					labelled += s.Value[0]
					if ln.Line == 0 || ln.Function.Filename == "" {
						t.Errorf("main.doFstats frame without file:line: %+v", ln)
					}
				}
			}
		}
	}
	if labelled != n {
		t.Errorf("pprof fstat samples through main.doFstats = %d, want %d", labelled, n)
	}
}

func TestProfileCPUFindsBusyFunction(t *testing.T) {
	requireBPF(t)
	bin := buildGo(t, "spin", spinProgram)
	defer checkFreed(t, bpfFDs(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := ProfileCPU(ctx, CPUConfig{Target: Target{Command: []string{bin, "1500"}}, Freq: 499})
	if err != nil {
		t.Fatal(err)
	}
	var hot uint64
	for _, s := range rep.Samples {
		if hasFunction(s.Frames, "main.spinHot") {
			hot += s.Count
		}
	}
	// The child spins for the whole run, so most samples are in spinHot;
	// asking for a fifth keeps the test robust on a loaded machine.
	if total := rep.Total(); total == 0 || hot*5 < total {
		t.Errorf("samples in main.spinHot = %d of %d, want most", hot, total)
	}
	p, err := rep.Profile()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
}
