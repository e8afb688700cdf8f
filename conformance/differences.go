package conformance

// NoVector lists the rows of spec/DIFFERENCES.md that no vector can show,
// with why: the protocol compares codes and values (not texts, code names
// or number formatting) and measures answers, not time; it hands a testee
// files (store_open), not locks or concurrent writers; and where both seed
// systems agree with this spec there is nothing to fail. Every other row
// explains at least one recorded failure of a seed system
// (conformance/seed/*.json), which tags its vectors.
var NoVector = map[string]string{
	"D1":  "message text: the protocol compares codes, never prose, and the seed testee maps the seed system's texts to codes",
	"D5":  "a message text: the seed system's special message for request/header-delta maps to the same code",
	"D6":  "number formatting: the protocol compares results by value, where 1.0 and 1 are equal",
	"D8":  "code names: the seed testee maps the seed system's fork codes to the spec's",
	"D23": "the compaction/* vocabulary's turn: null, which b736889ac7 cannot write (D21) and the released testee has no compaction step to show",
	"D37": "the released files are read the same by both: nothing to fail (shown by the released.open vectors passing against npm-rc8)",
	"D41": "the released tool/result rule: the released system and REL-4 agree (released.open.tool_result_rewrite passes against npm-rc8); b736889ac7 has no such rule and neither has this library's vocabulary",
	"D44": "the released time: the released system and this library both read a negative time in a released file",
	"D61": "a library default (COMP-10): the protocol's compact_select is the node-level selection both share (COMP-8)",
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
