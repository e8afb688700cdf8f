// Package jsonscan holds the one primitive that the walkers over stored
// JSON text share (impl/event's member lookup, impl/message's token
// meter): where a string literal ends. It is internal: callers pass text
// they already know to be JSON, or handle a literal left open.
package jsonscan
