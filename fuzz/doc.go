// Package fuzz holds the native Go fuzz targets of the project: random
// programs run differentially against the model, the JSON scanner against
// encoding/json, the seed constructor, the JSONL and SQLite loaders on
// arbitrary bytes, and the testee protocol. Seed corpora are under
// testdata/fuzz. Run one for an hour:
//
//	go test ./fuzz -run '^$' -fuzz '^FuzzDifferential$' -fuzztime 1h
//
// or all of them in turn with scripts/fuzz.sh DURATION.
package fuzz
