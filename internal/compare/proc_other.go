//go:build !linux

package compare

type procSampler struct{}

func newProcSampler(string) (*procSampler, error) { return nil, ErrNotSupported }

func (*procSampler) cpuSeconds(int) (float64, error) { return 0, ErrNotSupported }

func (*procSampler) sample(int) (procSample, error) { return procSample{}, ErrNotSupported }
