package profile

import (
	"fmt"
	"time"

	"github.com/google/pprof/profile"
)

// SyscallFramePrefix starts the name of the pseudo-frame each syscall
// profile sample has as its leaf, so that `go tool pprof -top` lists the
// syscalls themselves (flat) above the code paths that make them (cum).
const SyscallFramePrefix = "syscall:"

// Profile returns the stacks of a trace made with Stacks as a pprof profile
// with sample types syscalls/count and syscall_time/nanoseconds and a
// "syscall" label on every sample.
func (r *SyscallReport) Profile() (*profile.Profile, error) {
	b := newProfileBuilder(
		[]*profile.ValueType{{Type: "syscalls", Unit: "count"}, {Type: "syscall_time", Unit: "nanoseconds"}},
		&profile.ValueType{Type: "syscalls", Unit: "count"}, 1)
	b.p.TimeNanos = r.Started.UnixNano()
	b.p.DurationNanos = r.Elapsed.Nanoseconds()
	b.p.Comments = []string{fmt.Sprintf("otelbench profile: syscalls of pid %d", r.PID)}
	for _, s := range r.Stacks {
		locs := append([]*profile.Location{b.pseudo(SyscallFramePrefix + s.Syscall)}, b.locations(s.Frames)...)
		b.p.Sample = append(b.p.Sample, &profile.Sample{
			Location: locs,
			Value:    []int64{int64(s.Count), int64(s.TotalNs)},
			Label:    map[string][]string{"syscall": {s.Syscall}},
			NumLabel: map[string][]int64{"pid": {int64(s.PID)}},
		})
	}
	return b.finish(r.Exe)
}

// CPUSample is how often one (thread, kernel stack, user stack) was seen on
// CPU.
type CPUSample struct {
	PID, TID int
	Count    uint64
	// Frames, leaf first: kernel frames, then user frames.
	Frames []Frame
}

// CPUReport is the result of ProfileCPU.
type CPUReport struct {
	PID      int
	Exe      string
	Command  []string
	Children []int
	Freq     int
	Started  time.Time
	Elapsed  time.Duration
	ExitCode int
	Samples  []CPUSample
	Lost     map[string]uint64
}

// Total returns the number of samples taken.
func (r *CPUReport) Total() uint64 {
	var n uint64
	for _, s := range r.Samples {
		n += s.Count
	}
	return n
}

// Profile returns the samples as a pprof profile with sample types
// samples/count and cpu/nanoseconds (count times the sampling period).
func (r *CPUReport) Profile() (*profile.Profile, error) {
	period := int64(time.Second) / int64(max(r.Freq, 1))
	b := newProfileBuilder(
		[]*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		&profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, period)
	b.p.TimeNanos = r.Started.UnixNano()
	b.p.DurationNanos = r.Elapsed.Nanoseconds()
	b.p.Comments = []string{fmt.Sprintf("otelbench profile --cpu: pid %d at %d Hz", r.PID, r.Freq)}
	for _, s := range r.Samples {
		b.p.Sample = append(b.p.Sample, &profile.Sample{
			Location: b.locations(s.Frames),
			Value:    []int64{int64(s.Count), int64(s.Count) * period},
			NumLabel: map[string][]int64{"pid": {int64(s.PID)}, "tid": {int64(s.TID)}},
		})
	}
	return b.finish(r.Exe)
}

type profileBuilder struct {
	p     *profile.Profile
	locs  map[locKey]*profile.Location
	funcs map[funcKey]*profile.Function
	maps  map[MappingInfo]*profile.Mapping
}

type locKey struct {
	m    MappingInfo
	addr uint64
	name string // pseudo-frames only
}

type funcKey struct{ name, file string }

func newProfileBuilder(types []*profile.ValueType, period *profile.ValueType, n int64) *profileBuilder {
	return &profileBuilder{
		p:     &profile.Profile{SampleType: types, PeriodType: period, Period: n},
		locs:  map[locKey]*profile.Location{},
		funcs: map[funcKey]*profile.Function{},
		maps:  map[MappingInfo]*profile.Mapping{},
	}
}

func (b *profileBuilder) function(name, file string) *profile.Function {
	k := funcKey{name, file}
	if f, ok := b.funcs[k]; ok {
		return f
	}
	f := &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: name, Filename: file}
	b.p.Function = append(b.p.Function, f)
	b.funcs[k] = f
	return f
}

func (b *profileBuilder) mapping(mi *MappingInfo) *profile.Mapping {
	if mi == nil {
		return nil
	}
	if m, ok := b.maps[*mi]; ok {
		return m
	}
	m := &profile.Mapping{ID: uint64(len(b.p.Mapping) + 1), Start: mi.Start, Limit: mi.End, Offset: mi.Offset,
		File: mi.Path, HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	if mi.Path == "[kernel.kallsyms]" {
		m.Limit = ^uint64(0)
		m.Start = 0
	}
	b.p.Mapping = append(b.p.Mapping, m)
	b.maps[*mi] = m
	return m
}

// pseudo returns a location without address standing for name.
func (b *profileBuilder) pseudo(name string) *profile.Location {
	k := locKey{name: name}
	if l, ok := b.locs[k]; ok {
		return l
	}
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Line: []profile.Line{{Function: b.function(name, "")}}}
	b.p.Location = append(b.p.Location, l)
	b.locs[k] = l
	return l
}

func (b *profileBuilder) locations(frames []Frame) []*profile.Location {
	out := make([]*profile.Location, 0, len(frames))
	for _, f := range frames {
		var mk MappingInfo
		if f.Mapping != nil {
			mk = *f.Mapping
		}
		k := locKey{m: mk, addr: f.Addr}
		l, ok := b.locs[k]
		if !ok {
			l = &profile.Location{ID: uint64(len(b.p.Location) + 1), Address: f.Addr, Mapping: b.mapping(f.Mapping)}
			if f.Function != "" {
				l.Line = []profile.Line{{Function: b.function(f.Function, f.File), Line: int64(f.Line)}}
			}
			b.p.Location = append(b.p.Location, l)
			b.locs[k] = l
		}
		out = append(out, l)
	}
	return out
}

// finish validates the profile, after moving the first mapping of exe to
// the front: pprof names a profile after its first mapping.
func (b *profileBuilder) finish(exe string) (*profile.Profile, error) {
	ms := b.p.Mapping
	for i, m := range ms {
		if exe != "" && m.File == exe {
			copy(ms[1:i+1], ms[:i])
			ms[0] = m
			break
		}
	}
	for i, m := range ms {
		m.ID = uint64(i + 1)
	}
	if err := b.p.CheckValid(); err != nil {
		return nil, fmt.Errorf("build pprof profile: %w", err)
	}
	return b.p, nil
}
