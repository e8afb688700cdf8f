package conformance

// NoVector lists the rows of spec/DIFFERENCES.md that no vector can show,
// with why: the protocol measures answers, not time, and hands a testee
// JSONL files (store_open), not locks, databases or concurrent writers.
var NoVector = map[string]string{
	"D43": "a conversion, not a reading: the protocol has no conversion step; shown by the tests of impl/convert and cmd/sessionconvert",
	"D46": "a file this library does not write (released SQLite)",
	"D9":  "a cost (O(range) replace), measured by benchmarks",
	"D10": "a cost (the message list), measured by benchmarks",
	"D11": "an extension: both accept the three trigger kinds a vector can send",
	"D14": "a second writer: a store property",
	"D15": "a file layout",
	"D18": "a second Resume of one store",
	"D19": "a SQLite pragma",
	"D25": "the record's string quoting agrees with the seed system's: nothing to fail",
	"D27": "a PostgreSQL store",
	"D34": "the estimator agrees with the seed system's: nothing to fail",
	"D35": "derivation agrees with the seed system's: nothing to fail",
}

// DifferenceCoverage counts, per row of spec/DIFFERENCES.md, the vectors
// that show it.
func DifferenceCoverage(vectors []Vector) map[string]int {
	out := map[string]int{}
	for _, v := range vectors {
		for _, d := range v.Differences {
			out[d]++
		}
	}
	return out
}
