package syscalltab

import "testing"

func TestKnownNumbers(t *testing.T) {
	tests := []struct {
		arch, name string
		nr         int
	}{
		{"amd64", "newfstatat", 262},
		{"arm64", "newfstatat", 79},
		{"amd64", "fstat", 5},
		{"arm64", "fstat", 80},
		{"amd64", "read", 0},
		{"arm64", "read", 63},
		{"amd64", "getpid", 39},
		{"arm64", "getpid", 172},
		{"amd64", "inotify_add_watch", 254},
		{"arm64", "openat", 56},
		{"arm64", "renameat", 38},
		{"arm64", "clone3", 435},
	}
	for _, tt := range tests {
		t.Run(tt.arch+"/"+tt.name, func(t *testing.T) {
			tab, ok := ForArch(tt.arch)
			if !ok {
				t.Fatalf("no table for %s", tt.arch)
			}
			if got := tab.Name(tt.nr); got != tt.name {
				t.Errorf("Name(%d) = %q, want %q", tt.nr, got, tt.name)
			}
			if got, ok := tab.Number(tt.name); !ok || got != tt.nr {
				t.Errorf("Number(%q) = %d, %v, want %d", tt.name, got, ok, tt.nr)
			}
		})
	}
}

func TestArm64HasNoLegacyCalls(t *testing.T) {
	tab, _ := ForArch("arm64")
	for _, name := range []string{"open", "stat", "fork", "select"} {
		if nr, ok := tab.Number(name); ok {
			t.Errorf("arm64 has legacy %s = %d, want none", name, nr)
		}
	}
}

func TestUnknown(t *testing.T) {
	tab, _ := ForArch("amd64")
	if got, want := tab.Name(100000), "syscall_100000"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, ok := ForArch("mips"); ok {
		t.Error("ForArch(mips) ok, want false")
	}
}
