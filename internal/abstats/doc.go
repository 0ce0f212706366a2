// Package abstats compares two samples of one metric the way benchstat does:
// the median with its confidence interval per side, a Mann–Whitney U test
// (golang.org/x/perf/benchmath.AssumeNothing) for "did it change", and the
// same cell strings benchstat prints, so our tables and a benchstat run over
// the raw rounds agree number for number.
//
// It also answers the question gates need before any run: can this many
// samples ever show a significant difference at this alpha (CanDetect)?
package abstats
