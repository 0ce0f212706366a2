// Package report reads, merges and renders saved `otelbench load` reports.
//
// Merging is exact: counts add up and the HDR latency histograms that every
// report carries are merged bucket by bucket, so the merged percentiles are
// those of one histogram fed every request of every machine. Averaging
// per-machine percentiles, as some tools do, is not a percentile of anything.
// Reports merge only when they describe one load: the same histogram geometry
// and the same load settings, apart from what sharding splits (rate,
// concurrency, request budget, seed). docs/distributed-load.md.
package report
