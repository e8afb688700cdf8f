package session_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// TestReadersNeverWaitForTheStore: while a store write is in flight (a
// write-ahead that blocks until the test lets it go), every reader
// returns, and sees the log without the event being written. Nothing
// here depends on timing: a reader that waited for the writer would
// never return before the write is released.
func TestReadersNeverWaitForTheStore(t *testing.T) {
	inWrite := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	blocking := false
	s := session.New(session.WithWriteAhead(func(_ context.Context, _ []event.Event) error {
		if blocking {
			once.Do(func() { close(inWrite) })
			<-release
		}
		return nil
	}))
	user := json.RawMessage(`{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`)
	first, err := s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: user}, event.Intent{Op: event.Append()})
	if err != nil {
		t.Fatal(err)
	}
	blocking = true
	done := make(chan error, 1)
	go func() {
		_, err := s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: user}, event.Intent{Op: event.Append()})
		done <- err
	}()
	<-inWrite
	read := make(chan string, 1)
	go func() {
		switch {
		case s.Len() != 1:
			read <- "Len"
		case len(s.Events()) != 1:
			read <- "Events"
		case s.Messages().Len() != 1 || s.Surface().Len() != 1:
			read <- "Messages/Surface"
		default:
			if _, ok := s.Position(first.Seq); !ok {
				read <- "Position"
				return
			}
			if _, err := s.Provenance(first.Seq); err != nil {
				read <- "Provenance"
				return
			}
			read <- ""
		}
	}()
	select {
	case bad := <-read:
		if bad != "" {
			t.Fatalf("%s saw the event being written", bad)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a reader waited for the store's write")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s.Messages().Len() != 2 {
		t.Fatalf("after the write: %d messages", s.Messages().Len())
	}
}
