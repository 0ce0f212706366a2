package compare

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestProgress(t *testing.T) {
	tests := []struct {
		name string
		runs int
		done int
		want string
	}{
		{"complete", 4, 4, "4/4 runs"},
		{"aborted", 4, 1, ""}, // close must not hang on an unfinished bar
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			p := newProgress(context.Background(), &b, tt.runs)
			for i := 0; i < tt.done; i++ {
				p.describe("round 1 base")
				p.increment()
			}
			p.close() // waits for the renderer: b is ours again
			if !strings.Contains(b.String(), tt.want) {
				t.Errorf("progress output %q lacks %q", b.String(), tt.want)
			}
		})
	}
	// A nil writer is a silent no-op.
	p := newProgress(context.Background(), nil, 2)
	p.describe("x")
	p.increment()
	p.close()
}
