package compare

import (
	"strings"
	"testing"
)

func TestSchedule(t *testing.T) {
	tests := []struct {
		warmup, rounds int
		want           string
	}{
		{0, 1, "AB"},
		{0, 2, "ABBA"},
		{0, 4, "ABBAABBA"},
		{1, 2, "ab" + "BAAB"},
		{2, 3, "abba" + "ABBAAB"},
	}
	for _, tt := range tests {
		steps := schedule(tt.warmup, tt.rounds)
		var b strings.Builder
		perSide := [2]int{}
		for _, s := range steps {
			c := "AB"[s.Side]
			if s.Warmup {
				c += 'a' - 'A'
			} else {
				if s.Round != perSide[s.Side] {
					t.Errorf("warmup=%d rounds=%d: side %d got round %d, want %d", tt.warmup, tt.rounds, s.Side, s.Round, perSide[s.Side])
				}
				perSide[s.Side]++
			}
			b.WriteByte(c)
		}
		if got := b.String(); got != tt.want {
			t.Errorf("schedule(%d, %d) = %s, want %s", tt.warmup, tt.rounds, got, tt.want)
		}
		if perSide[0] != tt.rounds || perSide[1] != tt.rounds {
			t.Errorf("schedule(%d, %d): %v measured runs per side, want %d", tt.warmup, tt.rounds, perSide, tt.rounds)
		}
	}
}
