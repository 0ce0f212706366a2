package symbolize

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const sampleMaps = `55d0c1a00000-55d0c1a02000 r--p 00000000 fd:01 1234 /usr/bin/tailer
55d0c1a02000-55d0c1a10000 r-xp 00002000 fd:01 1234 /usr/bin/tailer
7f00aa000000-7f00aa028000 r--p 00000000 fd:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6
7f00aa028000-7f00aa1bd000 r-xp 00028000 fd:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6
7f00ab000000-7f00ab001000 r-xp 00000000 00:00 0 
7ffd1e3f0000-7ffd1e3f2000 r-xp 00000000 00:00 0                          [vdso]
7f00ac000000-7f00ac001000 r-xp 00000000 fd:01 77 /tmp/my lib (deleted)
`

func TestParseMaps(t *testing.T) {
	got, err := parseMaps(strings.NewReader(sampleMaps))
	if err != nil {
		t.Fatal(err)
	}
	want := []Mapping{
		{Start: 0x55d0c1a02000, End: 0x55d0c1a10000, Offset: 0x2000, Path: "/usr/bin/tailer", Inode: 1234},
		{Start: 0x7f00aa028000, End: 0x7f00aa1bd000, Offset: 0x28000, Path: "/usr/lib/x86_64-linux-gnu/libc.so.6", Inode: 99},
		{Start: 0x7f00ab000000, End: 0x7f00ab001000},
		{Start: 0x7ffd1e3f0000, End: 0x7ffd1e3f2000, Path: "[vdso]"},
		{Start: 0x7f00ac000000, End: 0x7f00ac001000, Path: "/tmp/my lib", Inode: 77},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestParseMapsErrors(t *testing.T) {
	for _, in := range []string{
		"zz-10 r-xp 0 0:0 0 /x\n",
		"10 r-xp 0 0:0 0 /x\n",
		"10-20 r-xp\n",
		"10-20 r-xp q 0:0 0 /x\n",
	} {
		if _, err := parseMaps(strings.NewReader(in)); err == nil {
			t.Errorf("parseMaps(%q): no error", in)
		}
	}
}

func FuzzParseMapsLine(f *testing.F) {
	for _, l := range strings.Split(sampleMaps, "\n") {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, ok, err := parseMapsLine(line)
		if err == nil && ok && m.End <= m.Start {
			t.Errorf("accepted empty range %+v", m)
		}
	})
}

func TestKallsyms(t *testing.T) {
	in := `ffffffff81000000 T _stext
ffffffff81000100 t helper
ffffffff81000200 D some_data
ffffffff81000300 W weak_fn
0000000000000000 T hidden
ffffffffc0000000 t mod_fn	[mymod]
`
	k, err := parseKallsyms(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr uint64
		want string
		ok   bool
	}{
		{0xffffffff81000000, "_stext", true},
		{0xffffffff810000ff, "_stext", true},
		{0xffffffff81000150, "helper", true},
		{0xffffffff81000250, "helper", true}, // data is skipped
		{0xffffffff81000301, "weak_fn", true},
		{0xffffffffc0000010, "mod_fn", true},
		{0x1000, "", false},
	}
	for _, tt := range tests {
		got, ok := k.Lookup(tt.addr)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Lookup(%#x) = %q, %v, want %q, %v", tt.addr, got, ok, tt.want, tt.ok)
		}
	}
	if k.Len() != 4 {
		t.Errorf("Len = %d, want 4 (text symbols with addresses)", k.Len())
	}
}

func FuzzParseKallsyms(f *testing.F) {
	f.Add("ffffffff81000000 T _stext\n")
	f.Add("x y\n")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := parseKallsyms(strings.NewReader(s))
		if err != nil {
			return
		}
		for i := 1; i < len(k.syms); i++ {
			if k.syms[i-1].addr > k.syms[i].addr {
				t.Fatal("symbols not sorted")
			}
		}
	})
}
