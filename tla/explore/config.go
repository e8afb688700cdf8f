package explore

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// ReadConfig reads an MC*.cfg file: its constants (MaxEvents, Calls, Bug)
// and the names under INVARIANTS and PROPERTIES.
func ReadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	text := string(b)
	c := Config{Bug: "none"}
	m := regexp.MustCompile(`MaxEvents\s*=\s*(\d+)`).FindStringSubmatch(text)
	if m == nil {
		return c, fmt.Errorf("%s: no MaxEvents", path)
	}
	c.MaxEvents, _ = strconv.Atoi(m[1])
	m = regexp.MustCompile(`Calls\s*=\s*\{([^}]*)\}`).FindStringSubmatch(text)
	if m == nil {
		return c, fmt.Errorf("%s: no Calls", path)
	}
	for _, f := range strings.Split(m[1], ",") {
		if f = strings.TrimSpace(f); f != "" {
			n, err := strconv.Atoi(f)
			if err != nil || n <= 0 {
				return c, fmt.Errorf("%s: bad call id %q", path, f)
			}
			c.Calls = append(c.Calls, n)
		}
	}
	if m = regexp.MustCompile(`Bug\s*=\s*"([a-z_]+)"`).FindStringSubmatch(text); m == nil {
		return c, fmt.Errorf("%s: no Bug", path)
	}
	c.Bug = m[1]
	var list *[]string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "INVARIANTS":
			list = &c.Invariants
		case line == "PROPERTIES":
			list = &c.Properties
		case line == "" || strings.HasPrefix(line, `\*`):
		case strings.ToUpper(line) == line && !strings.Contains(line, "_"):
			list = nil // another section
		case list != nil && !strings.ContainsAny(line, " ="):
			*list = append(*list, line)
		default:
			list = nil
		}
	}
	if len(c.Invariants) == 0 {
		return c, fmt.Errorf("%s: no INVARIANTS", path)
	}
	return c, nil
}
