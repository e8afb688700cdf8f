package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/surfacelog/surface/impl/importer/harness"
)

// importCmd is sessionconvert -from HARNESS IN OUT.
func importCmd(from, to string, args []string, stdout, stderr io.Writer) int {
	if (to != "" && to != "b736") || len(args) != 2 || !harness.Known(from) {
		fmt.Fprintln(stderr, "usage: sessionconvert -from codex|claude-code IN OUT.jsonl")
		return 2
	}
	in, out := args[0], args[1]
	if _, err := os.Lstat(out); err == nil {
		fmt.Fprintf(stderr, "sessionconvert: %s exists; nothing is overwritten\n", out)
		return 2
	}
	raw, err := os.ReadFile(in)
	if err != nil {
		fmt.Fprintf(stderr, "sessionconvert: %s: ERROR %v\n", in, err)
		return 2
	}
	res, err := harness.Read(from, bytes.NewReader(raw))
	if err != nil {
		fmt.Fprintf(stderr, "sessionconvert: %s: ERROR %v\n", in, err)
		return 2
	}
	findings, log, err := res.Findings, res.Log, res.ImportErr
	if err != nil {
		fmt.Fprintf(stderr, "sessionconvert: %s: CANNOT IMPORT %v\n", in, err)
		return 1
	}
	if bad := log.CheckStrict(); bad != nil {
		fmt.Fprintf(stderr, "sessionconvert: %s: INVALID (the imported log breaks a strict rule; nothing was written): %v\n", in, bad)
		return 1
	}
	for _, x := range findings {
		fmt.Fprintf(stderr, "sessionconvert: %s: note: %v\n", in, x)
	}
	for _, x := range log.Notes {
		fmt.Fprintf(stderr, "sessionconvert: %s: note: %s\n", in, x.Detail)
	}
	data, n, err := encodeJSONL(log.Header, log.Events)
	if err != nil {
		fmt.Fprintf(stderr, "sessionconvert: %s: ERROR %v\n", in, err)
		return 2
	}
	if err := writeNew(out, data); err != nil {
		if errors.Is(err, fs.ErrExist) {
			fmt.Fprintf(stderr, "sessionconvert: %s exists; nothing is overwritten\n", out)
		} else {
			fmt.Fprintf(stderr, "sessionconvert: %s: ERROR cannot write it: %v\n", out, bareCause(err))
		}
		return 2
	}
	fmt.Fprintf(stdout, "%s: %d events imported from a %s log\n", out, n, from)
	return 0
}
