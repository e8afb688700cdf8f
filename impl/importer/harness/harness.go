// Package harness reads the session log of another agent harness named by
// the user (a command's --from): it parses the file once, checks it by the
// harness's own rules and imports it, with the importer of that harness
// (importer/codex, importer/claudecode).
package harness

import (
	"io"
	"slices"

	"github.com/surfacelog/surface/impl/importer"
	"github.com/surfacelog/surface/impl/importer/claudecode"
	"github.com/surfacelog/surface/impl/importer/codex"
)

// Names are the harnesses Read knows.
var Names = []string{"codex", "claude-code"}

// Known says whether Read knows the harness name.
func Known(name string) bool { return slices.Contains(Names, name) }

// Result is what Read found in one file.
type Result struct {
	// Findings are the harness's rules the file breaks (Check).
	Findings []importer.Finding
	// Torn is the length of a torn last line, 0 when none.
	Torn int
	// Log is the import, nil when ImportErr says why there is none.
	Log       *importer.Log
	ImportErr error
}

// Read parses the log of harness name from r once, checks it and imports
// it. Its error is an unknown name or a read error; what the file breaks
// is in the Result.
func Read(name string, r io.Reader) (*Result, error) {
	switch name {
	case "codex":
		f, err := codex.Parse(r)
		if err != nil {
			return nil, err
		}
		log, ierr := codex.Import(f)
		return &Result{Findings: codex.Check(f), Torn: f.Torn, Log: log, ImportErr: ierr}, nil
	case "claude-code":
		f, err := claudecode.Parse(r)
		if err != nil {
			return nil, err
		}
		log, ierr := claudecode.Import(f)
		return &Result{Findings: claudecode.Check(f), Torn: f.Torn, Log: log, ImportErr: ierr}, nil
	}
	return nil, &unknownError{name}
}

type unknownError struct{ name string }

func (e *unknownError) Error() string {
	return "unknown harness " + e.name + ": want codex or claude-code"
}
