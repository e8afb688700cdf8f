package main

import (
	"fmt"
	"os"
	"slices"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/importer"
	"github.com/surfacelog/surface/impl/importer/harness"
)

// validateHarness checks one log of another harness: its own rules
// (every finding, each with its line), then its import, then the strict
// rules of this library on the imported log (the first rule broken, at
// its line). The file is only read.
func (v *validator) validateHarness(path, name string) int {
	stdout, prog := v.out, v.prog
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stdout, "%s: ERROR %v\n", path, err)
		return validInput
	}
	size := int64(-1)
	if fi, err := f.Stat(); err == nil {
		if fi.IsDir() {
			f.Close()
			fmt.Fprintf(stdout, "%s: ERROR a directory, not a session file\n", path)
			return validInput
		}
		size = fi.Size()
	}
	prog.phase("reading "+path, size)
	res, err := harness.Read(name, prog.reader(f))
	f.Close()
	prog.finish()
	if err != nil {
		fmt.Fprintf(stdout, "%s: ERROR %v\n", path, err)
		return validInput
	}
	findings, torn, log := res.Findings, res.Torn, res.Log
	for _, x := range findings {
		fmt.Fprintf(stdout, "%s:%d: %s %s\n", path, x.Line, x.Code, x.Detail)
	}
	if err := res.ImportErr; err != nil {
		n := len(findings)
		if x, ok := err.(importer.Finding); ok {
			if !slices.ContainsFunc(findings, func(y importer.Finding) bool { return y.Line == x.Line && y.Code == x.Code }) {
				fmt.Fprintf(stdout, "%s:%d: %s %s\n", path, x.Line, x.Code, x.Detail)
				n++
			}
		} else {
			fmt.Fprintf(stdout, "%s: %s %v\n", path, event.CodeOf(err), err)
			n++
		}
		fmt.Fprintf(stdout, "%s: INVALID %d findings; the import fails\n", path, n)
		return validInvalid
	}
	bad := log.CheckStrict()
	if bad != nil {
		fmt.Fprintf(stdout, "%s:%d: %s %s (the imported log, in strict mode)\n", path, bad.Line, bad.Code, bad.Detail)
		findings = append(findings, *bad)
	}
	note := ""
	if torn > 0 {
		note = fmt.Sprintf(" (a torn last line of %d bytes, from a crash while the harness wrote it, is not imported)", torn)
	}
	if len(findings) > 0 {
		fmt.Fprintf(stdout, "%s: INVALID %d findings%s\n", path, len(findings), note)
		return validInvalid
	}
	msgs := 0
	for _, n := range log.Mapped {
		msgs += n
	}
	kept := 0
	for _, n := range log.Kept {
		kept += n
	}
	fmt.Fprintf(stdout, "%s: OK imports as %d events: %d lines became messages, %d were kept as ignorable records%s\n", path, len(log.Events), msgs, kept, note)
	return validOK
}
