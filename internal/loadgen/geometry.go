package loadgen

// HistogramGeometry returns the unit, encoding, range and precision of the
// latency histograms this build writes, with no values: reports whose
// histograms differ from it cannot be merged exactly.
func HistogramGeometry() Histogram {
	return Histogram{
		Unit: HistogramUnit, Encoding: HistogramEncoding,
		Lowest: histLowest, Highest: histHighest, SignificantDigits: histSigFigs,
	}
}
