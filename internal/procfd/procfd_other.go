//go:build !linux

package procfd

func newFS(string, Options) (*FS, error) { return nil, ErrNotSupported }

func (fs *FS) count(int, int, Method) (int, Method, error) { return 0, "", ErrNotSupported }

// PIDs returns ErrNotSupported: /proc/PID/fd is Linux-only.
func (fs *FS) PIDs() ([]int, error) { return nil, ErrNotSupported }

// TIDs returns ErrNotSupported: /proc/PID/task is Linux-only.
func (fs *FS) TIDs(int) ([]int, error) { return nil, ErrNotSupported }

// Comm returns ErrNotSupported.
func (fs *FS) Comm(int, int) (string, error) { return "", ErrNotSupported }

// Tables returns ErrNotSupported.
func (fs *FS) Tables(int, Method) ([]Table, Grouping, error) { return nil, "", ErrNotSupported }

// bpfState is empty: MethodBPF is Linux-only.
type bpfState struct{}

func (*bpfState) close() error { return nil }

func (fs *FS) loadBPF() error { return ErrNotSupported }
