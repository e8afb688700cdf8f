------------------------------- MODULE Surface -------------------------------
(***************************************************************************)
(* The session log and its surface, as a state machine.                    *)
(*                                                                         *)
(* A session is an append-only log of events. Some events are surface      *)
(* nodes: they become the messages sent to a model. Each enters the        *)
(* surface by a marker: "append" puts it at the tail; a replace of the     *)
(* inclusive range [start, end] of surface nodes puts it in their place,   *)
(* and its sources must cover every node it shadows (spec/README.md,       *)
(* SURF-10 to SURF-15). Shadowed events stay in the log. The surface is    *)
(* a function of the log: folding the log from the start gives the same    *)
(* surface as maintaining it step by step (SURF-25), which is what makes   *)
(* seed, resume and replay deterministic.                                  *)
(*                                                                         *)
(* A crash loses the in-memory surface but no acknowledged event. Recovery *)
(* folds the log again (a seed) and repairs it: if the last turn is open,  *)
(* it appends a tool result for every call still pending whose assistant   *)
(* message is still on the surface, and an interrupted turn end            *)
(* (REP-1 to REP-5).                                                       *)
(*                                                                         *)
(* The events are abstracted to what the surface and repair look at:       *)
(*   "user"   a message node (user/message, context/message, ...)          *)
(*   "asst"   an assistant/message node; call # 0 when it asks for a tool  *)
(*   "result" a tool/result node for call                                  *)
(*   "call"   a tool/call (not a node)                                     *)
(*   "tstart", "tend"  turn boundaries (not nodes)                         *)
(* Seqs are 0-based, as in the implementation: the event at seq s is       *)
(* log[s + 1].                                                             *)
(*                                                                         *)
(* The Go bounded explorer (tla/explore) implements these same actions,    *)
(* checks the same invariants against model/, and must find exactly the    *)
(* number of distinct states TLC finds (tla/counts.json).                  *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    MaxEvents,  \* ordinary actions stop at this log length (repair may go past it)
    Calls       \* the tool-call ids, a set of positive naturals

VARIABLES
    log,        \* the event log, a sequence of Event
    surface,    \* the surface, a sequence of seqs
    shadowed,   \* history: every seq that a replace has shadowed
    crashed     \* TRUE from a crash until recovery

vars == <<log, surface, shadowed, crashed>>

Types == {"user", "asst", "result", "call", "tstart", "tend"}
NodeTypes == {"user", "asst", "result"}
Ops == [kind: {"none", "append"}, start: {0}, end: {0}]
         \cup [kind: {"replace"}, start: Nat, end: Nat]
Event == [t: Types, op: Ops, src: SUBSET Nat, call: Calls \cup {0}]

NoOp == [kind |-> "none", start |-> 0, end |-> 0]
AppendOp == [kind |-> "append", start |-> 0, end |-> 0]

Range(s) == {s[i] : i \in DOMAIN s}
IndexOf(s, x) == CHOOSE i \in DOMAIN s : s[i] = x

(***************************************************************************)
(* The surface after one event at seq (SURF-10, SURF-11).                  *)
(***************************************************************************)
Apply(s, e, seq) ==
    CASE e.op.kind = "append" -> Append(s, seq)
      [] e.op.kind = "replace" ->
            LET i == IndexOf(s, e.op.start)
                j == IndexOf(s, e.op.end)
            IN SubSeq(s, 1, i - 1) \o <<seq>> \o SubSeq(s, j + 1, Len(s))
      [] OTHER -> s

(* The nodes a replace shadows: the inclusive range, in surface order. *)
Shadows(s, op) == SubSeq(s, IndexOf(s, op.start), IndexOf(s, op.end))

(* The surface of a log, folded from the start: what a seed computes. *)
RECURSIVE FoldN(_, _)
FoldN(l, n) == IF n = 0 THEN <<>> ELSE Apply(FoldN(l, n - 1), l[n], n - 1)
Fold(l) == FoldN(l, Len(l))

(***************************************************************************)
(* Repair (REP-1 to REP-4).                                                *)
(***************************************************************************)
Max(S) == CHOOSE x \in S : \A y \in S : x >= y
Min(S) == CHOOSE x \in S : \A y \in S : x =< y

OpenTurn(l) == \E i \in 1..Len(l) : l[i].t = "tstart" /\ \A k \in i + 1..Len(l) : l[k].t # "tend"
TurnStartAt(l) == Max({i \in 1..Len(l) : l[i].t = "tstart"})

(* Positions, within the open turn, of the messages registering call c. *)
Regs(l, c) == {k \in TurnStartAt(l) + 1..Len(l) : l[k].t = "asst" /\ l[k].call = c}
Registered(l) == {c \in Calls : Regs(l, c) # {}}
(* A call is pending when no result for it follows its last registration. *)
Pending(l) == {c \in Registered(l) :
                 \A k \in Max(Regs(l, c)) + 1..Len(l) : ~(l[k].t = "result" /\ l[k].call = c)}
CallPositions(l, c) == {k \in Max(Regs(l, c)) + 1..Len(l) : l[k].t = "call" /\ l[k].call = c}
CallSources(l, c) == IF CallPositions(l, c) = {} THEN {} ELSE {Max(CallPositions(l, c)) - 1}
Host(l, c) == Max(Regs(l, c)) - 1

(* The pending calls in the order of their first registration. *)
RECURSIVE Ordered(_, _)
Ordered(l, S) == IF S = {} THEN <<>>
                 ELSE LET c == CHOOSE x \in S : \A y \in S : Min(Regs(l, x)) =< Min(Regs(l, y))
                      IN <<c>> \o Ordered(l, S \ {c})

RECURSIVE ResultsFor(_, _, _)
ResultsFor(l, s, cs) ==
    IF cs = <<>> THEN <<>>
    ELSE LET c == Head(cs)
             rest == ResultsFor(l, s, Tail(cs))
         IN IF Host(l, c) \in Range(s)
            THEN <<[t |-> "result", op |-> AppendOp, src |-> CallSources(l, c), call |-> c]>> \o rest
            ELSE rest   \* REP-4: its assistant message was shadowed

Closers(l, s) ==
    IF ~OpenTurn(l) THEN <<>>
    ELSE ResultsFor(l, s, Ordered(l, Pending(l))) \o <<[t |-> "tend", op |-> NoOp, src |-> {}, call |-> 0]>>

(***************************************************************************)
(* The actions.                                                            *)
(***************************************************************************)
Init == log = <<>> /\ surface = <<>> /\ shadowed = {} /\ crashed = FALSE

(* Append one event (an acknowledged, durable append). *)
EmitEvent(e) ==
    /\ ~crashed
    /\ Len(log) < MaxEvents
    /\ log' = Append(log, e)
    /\ surface' = Apply(surface, e, Len(log))
    /\ UNCHANGED crashed

Emit(e) == EmitEvent(e) /\ UNCHANGED shadowed

AppendUser == Emit([t |-> "user", op |-> AppendOp, src |-> {}, call |-> 0])
AppendAssistant(c) == OpenTurn(log) /\ Emit([t |-> "asst", op |-> AppendOp, src |-> {}, call |-> c])
AppendCall(c) == OpenTurn(log) /\ c \in Pending(log) /\ Emit([t |-> "call", op |-> NoOp, src |-> {}, call |-> c])
AppendResult(c) == OpenTurn(log) /\ c \in Pending(log) /\ Emit([t |-> "result", op |-> AppendOp, src |-> {}, call |-> c])
TurnStart == ~OpenTurn(log) /\ Emit([t |-> "tstart", op |-> NoOp, src |-> {}, call |-> 0])
TurnEnd == OpenTurn(log) /\ Emit([t |-> "tend", op |-> NoOp, src |-> {}, call |-> 0])

(* Replace surface positions i..j by a summary whose sources are exactly
   the shadowed nodes (SURF-11 to SURF-14). *)
Replace(i, j) ==
    /\ 1 <= i /\ i <= j /\ j <= Len(surface)
    /\ LET op == [kind |-> "replace", start |-> surface[i], end |-> surface[j]]
       IN /\ EmitEvent([t |-> "user", op |-> op, src |-> Range(SubSeq(surface, i, j)), call |-> 0])
          /\ shadowed' = shadowed \cup Range(SubSeq(surface, i, j))

(* A seed rebuilds the surface from the whole log (SURF-18). *)
Seed == ~crashed /\ surface' = Fold(log) /\ UNCHANGED <<log, shadowed, crashed>>

(* A crash loses the memory, not the log. *)
Crash == ~crashed /\ crashed' = TRUE /\ surface' = <<>> /\ UNCHANGED <<log, shadowed>>

(* Recovery: seed from the stored log, then append the closers (STORE-7). *)
Recover ==
    /\ crashed
    /\ LET cl == Closers(log, Fold(log))
       IN /\ log' = log \o cl
          /\ surface' = Fold(log \o cl)
    /\ crashed' = FALSE
    /\ UNCHANGED shadowed

Next ==
    \/ AppendUser
    \/ \E c \in Calls \cup {0} : AppendAssistant(c)
    \/ \E c \in Calls : AppendCall(c) \/ AppendResult(c)
    \/ TurnStart \/ TurnEnd
    \/ \E i, j \in 1..MaxEvents : Replace(i, j)
    \/ Seed \/ Crash \/ Recover

Spec == Init /\ [][Next]_vars

(***************************************************************************)
(* Invariants, named after the rules they check.                           *)
(***************************************************************************)
TypeOK ==
    /\ log \in Seq(Event)
    /\ surface \in Seq(Nat)
    /\ shadowed \subseteq Nat
    /\ crashed \in BOOLEAN

(* SURF-15: surface nodes are distinct, are events of the log, and are of
   a node type. *)
SURF15_NodesDistinctInLog ==
    /\ \A i, j \in DOMAIN surface : i # j => surface[i] # surface[j]
    /\ \A i \in DOMAIN surface : surface[i] < Len(log) /\ log[surface[i] + 1].t \in NodeTypes

(* SURF-15: a shadowed node never returns. *)
SURF15_NoResurrection == shadowed \cap Range(surface) = {}

(* SURF-14: every replace's sources cover the nodes it shadowed. *)
SURF14_Coverage ==
    \A k \in 1..Len(log) : log[k].op.kind = "replace" =>
        Range(Shadows(FoldN(log, k - 1), log[k].op)) \subseteq log[k].src

(* SURF-25: the surface kept step by step is the fold of the log. *)
SURF25_SurfaceIsFold == ~crashed => surface = Fold(log)

(* REP-3: no call gets two results after one registration in one turn. *)
REP3_ClosedOnce ==
    \A k1, k2 \in 1..Len(log) :
        (k1 < k2 /\ log[k1].t = "result" /\ log[k2].t = "result" /\ log[k1].call = log[k2].call)
            => \E m \in k1 + 1..k2 - 1 : log[m].t = "tstart" \/ (log[m].t = "asst" /\ log[m].call = log[k1].call)

(***************************************************************************)
(* Properties of steps.                                                    *)
(***************************************************************************)
(* The log is append-only. *)
AppendOnly == [][Len(log') >= Len(log) /\ SubSeq(log', 1, Len(log)) = log]_vars

(* REP-1, REP-5: after recovery no turn is open, and repairing again would
   append nothing. *)
REP5_RecoveryCloses == [][Recover => (~OpenTurn(log') /\ Closers(log', surface') = <<>>)]_vars
=============================================================================
