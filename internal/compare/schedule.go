package compare

// Step is one run of one side in the schedule.
type Step struct {
	// Side is 0 for base, 1 for head.
	Side int
	// Round counts measured rounds from 0; warmup rounds count from 0 too.
	Round  int
	Warmup bool
}

// schedule returns the order of runs: warmup rounds, then measured rounds,
// each round one run per side, in ABBA order across the whole sequence
// (AB BA AB BA ...), so that a linear drift of the machine (thermal,
// page cache, a neighbour's build) hits both sides equally within every
// pair of rounds.
func schedule(warmup, rounds int) []Step {
	steps := make([]Step, 0, 2*(warmup+rounds))
	for i := 0; i < warmup+rounds; i++ {
		first := i % 2 // 0: A then B; 1: B then A
		w := i < warmup
		r := i
		if !w {
			r = i - warmup
		}
		steps = append(steps, Step{Side: first, Round: r, Warmup: w}, Step{Side: 1 - first, Round: r, Warmup: w})
	}
	return steps
}
