// Command providercheck sends the history of stored sessions through every
// provider adapter and its validator: for each JSONL session file named,
// it loads the log, derives the messages, builds the Anthropic, OpenAI
// Chat, OpenAI Responses and Gemini requests, and prints how many
// messages each has and every rule a request breaks. It exits 1 when a
// request breaks a rule, 2 when a file cannot be loaded.
//
//	go run ./examples/agent -dir /tmp/a && (cd impl/providers && go run ./cmd/providercheck /tmp/a/session.jsonl)
package main

import (
	"fmt"
	"os"

	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/providers/surfaceanthropic"
	"github.com/surfacelog/surface/impl/providers/surfacegemini"
	"github.com/surfacelog/surface/impl/providers/surfaceopenai"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/impl/view"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: providercheck SESSION.jsonl...")
		os.Exit(2)
	}
	status := 0
	for _, path := range os.Args[1:] {
		_, events, _, err := persist.ReadJSONL(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		s, err := session.Seed(events)
		if err != nil {
			fmt.Fprintln(os.Stderr, path+":", err)
			os.Exit(2)
		}
		msgs := s.Messages()
		fmt.Printf("%s: %d events, %d messages\n", path, s.Len(), msgs.Len())
		for _, a := range adapters {
			n, v, err := a.check(msgs)
			if err != nil {
				fmt.Printf("  %-17s cannot map: %v\n", a.name, err)
				status = 1
				continue
			}
			fmt.Printf("  %-17s %3d messages, %d violations\n", a.name, n, len(v))
			for _, x := range v {
				fmt.Printf("    %s\n", x)
				status = 1
			}
		}
	}
	os.Exit(status)
}

var adapters = []struct {
	name  string
	check func(view.Messages) (int, []convo.Violation, error)
}{
	{"anthropic", func(m view.Messages) (int, []convo.Violation, error) {
		p, err := surfaceanthropic.Messages(m)
		return len(p), surfaceanthropic.Validate(p), err
	}},
	{"openai chat", func(m view.Messages) (int, []convo.Violation, error) {
		p, err := surfaceopenai.ChatMessages(m)
		return len(p), surfaceopenai.ValidateChat(p), err
	}},
	{"openai responses", func(m view.Messages) (int, []convo.Violation, error) {
		p, err := surfaceopenai.ResponsesInput(m)
		return len(p), surfaceopenai.ValidateResponses(p), err
	}},
	{"gemini", func(m view.Messages) (int, []convo.Violation, error) {
		p, err := surfacegemini.Contents(m)
		return len(p), surfacegemini.Validate(p), err
	}},
}
