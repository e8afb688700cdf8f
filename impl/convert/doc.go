// Package convert converts session logs between the b736889ac7 vocabulary
// that this library speaks (spec/events.json) and the vocabulary of the
// released seed system (identified messages, compaction/* records; see
// impl/released and spec/README.md §13, REL-6).
//
// Both directions keep every event's seq, so sourceEventSeqs and surface
// markers carry over as they are, and the converted log derives the same
// messages as the original: the same roles and content blocks, byte for
// byte (context and steering framing is written into the content of the
// released user/message that replaces them, since the released derive adds
// no tags). What has no place on the other side is refused with
// convert.not_convertible naming the event, never dropped, except the
// log-only members the released loader itself drops (a turn/start's
// trigger, a turn/end error's step), which DIFFERENCES.md lists. Types one
// side does not know are carried over marked "ignorable": true, so the
// other side keeps and skips them.
//
// ToReleased checks what it writes with released.Check, and FromReleased
// with this library's seed rules, so a converted log always loads.
package convert
