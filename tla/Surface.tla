------------------------------- MODULE Surface -------------------------------
(***************************************************************************)
(* The session log and its surface, as a state machine.                    *)
(*                                                                         *)
(* A session is an append-only log of events. Some events are surface      *)
(* nodes: they become the messages sent to a model. Each enters the        *)
(* surface by a marker: "append" puts it at the tail; a replace of the     *)
(* inclusive range [start, end] of surface nodes puts it in their place,   *)
(* and its sources must cover every node it shadows (spec/README.md,       *)
(* SURF-6 to SURF-15). A candidate that breaks a rule is rejected and      *)
(* changes nothing (SURF-17). Shadowed events stay in the log. The surface *)
(* is a function of the log: folding the log from the start gives the same *)
(* surface as maintaining it step by step (SURF-25).                       *)
(*                                                                         *)
(* A compaction (COMP-1 to COMP-4) takes a lock recorded in the log (a     *)
(* start event), folds a range whose edges no unanswered tool call crosses *)
(* into one summary node, and releases the lock (an end event); or it is   *)
(* aborted (an end event alone). A provider's compaction (PROV-3) is a    *)
(* node that replaces the whole surface before it; a library compaction    *)
(* folds only nodes after the last one still on the surface (PROV-4).     *)
(*                                                                         *)
(* A crash loses the in-memory surface but no acknowledged event. Recovery *)
(* folds the log again and repairs it: the end of an open compaction, a    *)
(* tool result for every call still pending whose assistant message is    *)
(* still on the surface, a step end for an open step, and an interrupted   *)
(* turn end (REP-1 to REP-6). A crash may also come in the middle of       *)
(* writing the closers; recovering again appends exactly the rest.         *)
(*                                                                         *)
(* The events are abstracted to what the surface, repair and compaction    *)
(* look at:                                                                *)
(*   "user"    a message node (user/message, context/message, ...)         *)
(*   "summary" the node a compaction writes (a user/message)               *)
(*   "asst"    an assistant/message node; call # 0 when it calls a tool    *)
(*   "result"  a tool/result node for call                                 *)
(*   "call"    a tool/call (not a node)                                    *)
(*   "tstart", "tend", "sstart", "send"  turn and step boundaries          *)
(*   "cstart", "cend"  a compaction's start and end events                 *)
(*   "pcomp"   an assistant/message holding a provider's compaction item   *)
(* Seqs are 0-based, as in the implementation: the event at seq s is       *)
(* log[s + 1].                                                             *)
(*                                                                         *)
(* Bug plants one deliberately wrong edit ("none" in the real configs):    *)
(* the invariants must catch each (MCBug*.cfg, tla/explore). Ten of them   *)
(* break an operator an action and its operational check share; only the  *)
(* declarative restatements (the *Decl invariants) catch those. Some sit   *)
(* at the edge of an invariant (a second compaction end, an end one event *)
(* late, one open call): an invariant weakened at that edge misses them    *)
(* (tla/explore: TestTLCNoticesWeakenedInvariants).                        *)
(*                                                                         *)
(* The Go bounded explorer (tla/explore) implements these same actions,    *)
(* checks the same invariants against model/, and must find exactly the    *)
(* states TLC finds (their number and a digest of the set, counts.json).   *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    MaxEvents,  \* ordinary actions stop at this log length (repair may go past it)
    Calls,      \* the tool-call ids, a set of positive naturals
    Bug         \* "none", or one planted wrong edit (see below)

VARIABLES
    log,        \* the event log, a sequence of Event
    surface,    \* the surface, a sequence of seqs
    shadowed,   \* history: every seq that a replace has shadowed
    crashed     \* TRUE from a crash until recovery

vars == <<log, surface, shadowed, crashed>>

Types == {"user", "summary", "asst", "result", "call", "tstart", "tend", "sstart", "send", "cstart", "cend", "pcomp"}
NodeTypes == {"user", "summary", "asst", "result", "pcomp"}
Ops == [kind: {"none", "append"}, start: {0}, end: {0}]
         \cup [kind: {"replace"}, start: Nat, end: Nat]
Event == [t: Types, op: Ops, src: SUBSET Nat, call: Calls \cup {0}]

NoOp == [kind |-> "none", start |-> 0, end |-> 0]
AppendOp == [kind |-> "append", start |-> 0, end |-> 0]
ReplaceOp(a, b) == [kind |-> "replace", start |-> a, end |-> b]
Ev(t, op, src, c) == [t |-> t, op |-> op, src |-> src, call |-> c]

Range(s) == {s[i] : i \in DOMAIN s}
IndexOf(s, x) == CHOOSE i \in DOMAIN s : s[i] = x
Max(S) == CHOOSE x \in S : \A y \in S : x >= y
Min(S) == CHOOSE x \in S : \A y \in S : x =< y

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
(* Acceptance (SURF-6 to SURF-8, SURF-12 to SURF-14). A node carries a     *)
(* marker and a non-node none (nor sources); a replace names two surface   *)
(* nodes, start not after end, and its sources cover the range.            *)
(***************************************************************************)
MarkerOK(e) ==
    \/ IF e.t \in NodeTypes THEN e.op.kind # "none" ELSE e.op.kind = "none" /\ e.src = {}
    \/ Bug = "append_without_marker" /\ e.t \in NodeTypes /\ e.op.kind = "none"

RangeOK(s, e) ==
    e.op.kind = "replace" =>
        /\ e.op.start \in Range(s)
        /\ e.op.end \in Range(s)
        /\ IndexOf(s, e.op.start) <= IndexOf(s, e.op.end) \/ Bug = "reversed_range"
        /\ Range(Shadows(s, e.op)) \subseteq e.src

Valid(s, e) == MarkerOK(e) /\ RangeOK(s, e)

(***************************************************************************)
(* Turns, steps, calls (REP-1, REP-2) and the compaction lock (COMP-2).    *)
(***************************************************************************)
OpenTurn(l) == \E i \in 1..Len(l) : l[i].t = "tstart" /\ \A k \in i + 1..Len(l) : l[k].t # "tend"
TurnStartAt(l) == Max({0} \cup {i \in 1..Len(l) : l[i].t = "tstart"})
StepOpen(l) ==
    IF Bug = "step_crosses_turns"
    THEN OpenTurn(l) /\ \E i \in 1..Len(l) : l[i].t = "sstart" /\ \A k \in i + 1..Len(l) : l[k].t # "send"
    ELSE OpenTurn(l) /\ \E i \in TurnStartAt(l) + 1..Len(l) : l[i].t = "sstart" /\ \A k \in i + 1..Len(l) : l[k].t # "send"
(* Calls count from the open turn's start or its last step end. *)
CallsFrom(l) ==
    IF Bug = "step_end_keeps_calls" THEN TurnStartAt(l)
    ELSE Max({TurnStartAt(l)} \cup {i \in TurnStartAt(l) + 1..Len(l) : l[i].t = "send"})
Regs(l, c) == {k \in CallsFrom(l) + 1..Len(l) : l[k].t = "asst" /\ l[k].call = c}
(* A call is pending when no result for it follows its last registration. *)
LastReg(l, c) == IF Bug = "result_clears_first_registration" THEN Min(Regs(l, c)) ELSE Max(Regs(l, c))
Pending(l) == IF ~OpenTurn(l) THEN {} ELSE
              {c \in Calls : Regs(l, c) # {} /\
                 \A k \in LastReg(l, c) + 1..Len(l) : ~(l[k].t = "result" /\ l[k].call = c)}
CallPositions(l, c) == {k \in Max(Regs(l, c)) + 1..Len(l) : l[k].t = "call" /\ l[k].call = c}
CallSources(l, c) == IF CallPositions(l, c) = {} THEN {} ELSE {Max(CallPositions(l, c)) - 1}
Host(l, c) == Max(Regs(l, c)) - 1
FirstReg(l, c) == Min(Regs(l, c))

Locked(l) == \E i \in 1..Len(l) : l[i].t = "cstart" /\ \A k \in i + 1..Len(l) : l[k].t # "cend"

(* Tool pairing over the surface (COMP-4): the unanswered calls of c after
   the first k nodes; a result answers one open call, or none. *)
NodeAt(l, s, p) == l[s[p] + 1]
RECURSIVE OpenCalls(_, _, _, _)
OpenCalls(l, s, c, k) ==
    IF k = 0 THEN 0
    ELSE LET n == OpenCalls(l, s, c, k - 1)
             e == NodeAt(l, s, k)
         IN IF e.t = "asst" /\ e.call = c THEN n + 1
            ELSE IF e.t = "result" /\ e.call = c /\ n > 0 THEN n - 1 ELSE n
BalancedCut(l, s, k) == \A c \in Calls : OpenCalls(l, s, c, k) = 0 \/ (Bug = "balanced_with_one_open" /\ OpenCalls(l, s, c, k) = 1)

(***************************************************************************)
(* Repair (REP-1 to REP-6).                                                *)
(***************************************************************************)
(* The pending calls in the order of their first registration. *)
RECURSIVE Ordered(_, _)
Ordered(l, S) == IF S = {} THEN <<>>
                 ELSE LET c == CHOOSE x \in S : \A y \in S : FirstReg(l, x) =< FirstReg(l, y)
                      IN <<c>> \o Ordered(l, S \ {c})

RECURSIVE Reverse(_)
Reverse(q) == IF q = <<>> THEN <<>> ELSE Reverse(Tail(q)) \o <<Head(q)>>

RECURSIVE ResultsFor(_, _, _)
ResultsFor(l, s, cs) ==
    IF cs = <<>> THEN <<>>
    ELSE LET c == Head(cs)
             rest == ResultsFor(l, s, Tail(cs))
         IN IF Host(l, c) \in Range(s) \/ Bug = "close_shadowed_call"
            THEN <<Ev("result", AppendOp, CallSources(l, c), c)>> \o rest
            ELSE rest   \* REP-4: its assistant message was shadowed

Closers(l, s) ==
    LET order == IF Bug = "closers_reversed" THEN Reverse(Ordered(l, Pending(l))) ELSE Ordered(l, Pending(l))
        cend == IF Locked(l) THEN <<Ev("cend", NoOp, {}, 0)>> ELSE <<>>
        turn == IF ~OpenTurn(l) THEN <<>>
                ELSE ResultsFor(l, s, order)
                     \o (IF StepOpen(l) THEN <<Ev("send", NoOp, {}, 0)>> ELSE <<>>)
                     \o <<Ev("tend", NoOp, {}, 0)>>
    IN IF Bug = "repair_closes_nothing" THEN <<>> ELSE cend \o turn

(***************************************************************************)
(* The actions.                                                            *)
(***************************************************************************)
Init == log = <<>> /\ surface = <<>> /\ shadowed = {} /\ crashed = FALSE

(* A candidate event: appended (acknowledged and durable) when it passes
   every rule, else rejected with nothing changed (SURF-17). *)
Offer(e) ==
    /\ ~crashed
    /\ Len(log) < MaxEvents
    /\ IF Valid(surface, e)
       THEN /\ log' = Append(log, e)
            /\ surface' = Apply(surface, e, Len(log))
            /\ shadowed' = IF e.op.kind = "replace" THEN shadowed \cup Range(Shadows(surface, e.op)) ELSE shadowed
            /\ UNCHANGED crashed
       ELSE UNCHANGED vars

AppendUser == Offer(Ev("user", AppendOp, {}, 0))
NoMarker == Offer(Ev("user", NoOp, {}, 0))          \* rejected: SURF-7
MarkerOnCall == Offer(Ev("call", AppendOp, {}, 0))  \* rejected: SURF-6
AppendAssistant(c) == OpenTurn(log) /\ Offer(Ev("asst", AppendOp, {}, c))
AppendCall(c) == c \in Pending(log) /\ Offer(Ev("call", NoOp, {}, c))
AppendResult(c) == c \in Pending(log) /\ Offer(Ev("result", AppendOp, {}, c))
TurnStart == ~OpenTurn(log) /\ Offer(Ev("tstart", NoOp, {}, 0))
TurnEnd == OpenTurn(log) /\ Offer(Ev("tend", NoOp, {}, 0))
StepStart ==
    /\ \/ OpenTurn(log)
       \/ /\ Bug = "step_in_ended_turn" /\ Len(log) > 0 /\ log[Len(log)].t = "tend"
          /\ ~\E i \in TurnStartAt(log) + 1..Len(log) : log[i].t = "sstart" /\ \A k \in i + 1..Len(log) : log[k].t # "send"
    /\ ~StepOpen(log)
    /\ Offer(Ev("sstart", NoOp, {}, 0))
StepEnd == StepOpen(log) /\ Offer(Ev("send", NoOp, {}, 0))

(* A replace naming surface positions i and j, in either order, whose
   sources are the nodes between them, or (short) all but the last. *)
Replace(i, j, short) ==
    LET lo == Min({i, j})
        hi == Max({i, j})
        src == Range(SubSeq(surface, lo, hi)) \ (IF short THEN {surface[hi]} ELSE {})
    IN Offer(Ev("user", ReplaceOp(surface[i], surface[j]), src, 0))

(* A provider's compaction (PROV-3): a reply holding one replaces the whole
   surface before it, or is appended to an empty surface. *)
ProviderCompact ==
    /\ OpenTurn(log)
    /\ IF surface = <<>>
       THEN Offer(Ev("pcomp", AppendOp, {}, 0))
       ELSE Offer(Ev("pcomp", ReplaceOp(surface[1], surface[Len(surface)]), Range(surface), 0))

(* PROV-4: the position of the last provider compaction on the surface, 0
   when there is none; a library compaction folds only what comes after. *)
LastProviderCompaction(l, s) == Max({0} \cup {p \in DOMAIN s : l[s[p] + 1].t = "pcomp"})

(* Compaction: begin takes the lock (COMP-2, COMP-3); commit folds a range
   with balanced edges, after the last provider compaction, into a summary
   node and ends it (COMP-4, COMP-5, PROV-4); abort ends it (COMP-6). *)
CompactBegin == ~Locked(log) /\ OpenTurn(log) /\ Offer(Ev("cstart", NoOp, {}, 0))
CompactCommit(i, j) ==
    /\ ~crashed
    /\ Locked(log) \/ Bug = "commit_without_lock"
    /\ Len(log) + 2 <= MaxEvents
    /\ BalancedCut(log, surface, i - 1) /\ BalancedCut(log, surface, j)
    /\ i > LastProviderCompaction(log, surface) \/ Bug = "summary_over_provider_compaction"
    /\ LET e == Ev("summary", ReplaceOp(surface[i], surface[j]), Range(SubSeq(surface, i, j)), 0)
       IN /\ log' = log \o (CASE Bug = "commit_keeps_lock" -> <<e>>
                               [] Bug = "commit_ends_twice" -> <<e, Ev("cend", NoOp, {}, 0), Ev("cend", NoOp, {}, 0)>>
                               [] Bug = "commit_end_late" -> <<e, Ev("user", AppendOp, {}, 0), Ev("cend", NoOp, {}, 0)>>
                               [] OTHER -> <<e, Ev("cend", NoOp, {}, 0)>>)
          /\ surface' = IF Bug = "commit_end_late"
                        THEN Append(Apply(surface, e, Len(log)), Len(log) + 1)
                        ELSE Apply(surface, e, Len(log))
          /\ shadowed' = shadowed \cup Range(SubSeq(surface, i, j))
          /\ UNCHANGED crashed
CompactAbort ==
    IF Bug = "abort_leaves_summary"
    THEN \* the planted bug: the abort writes a summary (appended) before its end
         /\ Locked(log) /\ ~crashed /\ Len(log) + 2 <= MaxEvents
         /\ log' = log \o <<Ev("summary", AppendOp, {}, 0), Ev("cend", NoOp, {}, 0)>>
         /\ surface' = Append(surface, Len(log))
         /\ UNCHANGED <<shadowed, crashed>>
    ELSE Locked(log) /\ Offer(Ev("cend", NoOp, {}, 0))

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

(* A crash while the closers are written: the first k of them are in the
   log, and the process is down again (REP-5). *)
CrashMidRepair(k) ==
    /\ crashed
    /\ LET cl == Closers(log, Fold(log))
       IN /\ k < Len(cl)
          /\ log' = log \o SubSeq(cl, 1, k)
    /\ UNCHANGED <<surface, shadowed, crashed>>

Next ==
    \/ AppendUser \/ NoMarker \/ MarkerOnCall
    \/ \E c \in Calls \cup {0} : AppendAssistant(c)
    \/ \E c \in Calls : AppendCall(c) \/ AppendResult(c)
    \/ TurnStart \/ TurnEnd \/ StepStart \/ StepEnd
    \/ \E i, j \in 1..Len(surface), short \in BOOLEAN : Replace(i, j, short)
    \/ CompactBegin \/ CompactAbort \/ ProviderCompact
    \/ \E i, j \in 1..Len(surface) : i <= j /\ CompactCommit(i, j)
    \/ Seed \/ Crash \/ Recover
    \/ \E k \in 1..Cardinality(Calls) + 3 : CrashMidRepair(k)

Spec == Init /\ [][Next]_vars

(***************************************************************************)
(* Invariants, named after the rules they check.                           *)
(***************************************************************************)
TypeOK ==
    /\ log \in Seq(Event)
    /\ surface \in Seq(Nat)
    /\ shadowed \subseteq Nat
    /\ crashed \in BOOLEAN

(* SURF-6, SURF-7: every node carries a marker, and nothing else does. *)
SURF6_7_Markers ==
    \A k \in 1..Len(log) : (log[k].t \in NodeTypes) = (log[k].op.kind # "none")

(* SURF-15: surface nodes are distinct, are events of the log, and are of
   a node type. *)
SURF15_NodesDistinctInLog ==
    /\ \A i, j \in DOMAIN surface : i # j => surface[i] # surface[j]
    /\ \A i \in DOMAIN surface : surface[i] < Len(log) /\ log[surface[i] + 1].t \in NodeTypes

(* SURF-15: a shadowed node never returns. *)
SURF15_NoResurrection == shadowed \cap Range(surface) = {}

(* SURF-12, SURF-13: every replace named two nodes on the surface before
   it, start not after end. *)
SURF12_13_RangeOnSurface ==
    \A k \in 1..Len(log) : log[k].op.kind = "replace" =>
        LET s == FoldN(log, k - 1)
        IN /\ log[k].op.start \in Range(s)
           /\ log[k].op.end \in Range(s)
           /\ IndexOf(s, log[k].op.start) <= IndexOf(s, log[k].op.end)

(* SURF-14: every replace's sources cover the nodes it shadowed. *)
SURF14_Coverage ==
    \A k \in 1..Len(log) : log[k].op.kind = "replace" =>
        Range(Shadows(FoldN(log, k - 1), log[k].op)) \subseteq log[k].src

(* SURF-14, SURF-23: lineage. Every shadowed node is reachable through
   sources from a node on the surface: nothing folded is lost. *)
RECURSIVE Reach(_, _)
Reach(l, S) == LET more == S \cup UNION {l[x + 1].src : x \in S}
               IN IF more = S THEN S ELSE Reach(l, more)
SURF14_23_Lineage ==
    \A n \in shadowed : \E m \in Range(Fold(log)) : n \in Reach(log, {m}) \ {m}

(* SURF-25: the surface kept step by step is the fold of the log. *)
SURF25_SurfaceIsFold == ~crashed => surface = Fold(log)

(* REP-3: no call gets two results after one registration in one turn. *)
REP3_ClosedOnce ==
    \A k1, k2 \in 1..Len(log) :
        (k1 < k2 /\ log[k1].t = "result" /\ log[k2].t = "result" /\ log[k1].call = log[k2].call)
            => \E m \in k1 + 1..k2 - 1 : log[m].t = "tstart" \/ (log[m].t = "asst" /\ log[m].call = log[k1].call)

(* COMP-2: a compaction never starts while another is open. *)
COMP2_OneOpenCompaction ==
    \A k1, k2 \in 1..Len(log) :
        (k1 < k2 /\ log[k1].t = "cstart" /\ log[k2].t = "cstart") => \E m \in k1 + 1..k2 - 1 : log[m].t = "cend"

(* COMP-4: a compaction's range never splits a tool call from its result. *)
COMP4_Balanced ==
    \A k \in 1..Len(log) : log[k].t = "summary" /\ log[k].op.kind = "replace" =>
        LET s == FoldN(log, k - 1)
        IN BalancedCut(log, s, IndexOf(s, log[k].op.start) - 1) /\ BalancedCut(log, s, IndexOf(s, log[k].op.end))

(***************************************************************************)
(* The rules said a second time, declaratively over the log, without the   *)
(* operators the actions use (OpenTurn, TurnStartAt, StepOpen, CallsFrom,  *)
(* Regs, Pending, Locked, OpenCalls, BalancedCut, Closers): a wrong shared *)
(* definition would otherwise fool an action and its check alike. Each is *)
(* stated over positions of the log: "nothing of the types T strictly      *)
(* between positions i and k".                                             *)
(***************************************************************************)
NoneBetween(l, i, k, T) == \A m \in i + 1..k - 1 : l[m].t \notin T

(* REP-1: turns do not nest, and an end closes an open turn.               *)
REP1_TurnsDecl ==
    \A k \in 1..Len(log) :
        /\ log[k].t = "tstart" => \A i \in 1..k - 1 : log[i].t = "tstart" => ~NoneBetween(log, i, k, {"tend"})
        /\ log[k].t = "tend" => \E i \in 1..k - 1 : log[i].t = "tstart" /\ NoneBetween(log, i, k, {"tstart", "tend"})

(* REP-2: a step starts inside an open turn with no step open in it, and a *)
(* step end closes a step of the same turn. (The implementation accepts a  *)
(* step end with no step open, which clears the calls like any step end:   *)
(* Surface.tla does not write one, and trace validation does not check     *)
(* this invariant.)                                                        *)
REP2_StepsDecl ==
    \A k \in 1..Len(log) :
        /\ log[k].t = "sstart" =>
             \E i \in 1..k - 1 :
                /\ log[i].t = "tstart" /\ NoneBetween(log, i, k, {"tstart", "tend"})
                /\ \A j \in i + 1..k - 1 : log[j].t = "sstart" => ~NoneBetween(log, j, k, {"send"})
        /\ log[k].t = "send" => \E i \in 1..k - 1 : log[i].t = "sstart" /\ NoneBetween(log, i, k, {"tstart", "tend", "send"})

(* REP-3: an appended result answers a call that an assistant message      *)
(* registered in the same turn and step, and that no result has answered   *)
(* since: no call is answered twice, none from an ended step. (A result    *)
(* that replaces, a prune's, is a replace like any other.)                 *)
REP3_ResultsAnswerDecl ==
    \A k \in 1..Len(log) : log[k].t = "result" /\ log[k].op.kind # "replace" =>
        \E i \in 1..k - 1 :
            /\ log[i].t = "asst" /\ log[i].call = log[k].call
            /\ NoneBetween(log, i, k, {"tstart", "tend", "send"})
            /\ \A m \in i + 1..k - 1 : ~(log[m].t = "result" /\ log[m].call = log[k].call)

(* COMP-2, COMP-5, COMP-6: a compaction's end closes an open bracket, and  *)
(* no bracket is closed twice.                                             *)
COMP2_BracketsDecl ==
    \A k \in 1..Len(log) : log[k].t = "cend" =>
        \E i \in 1..k - 1 : log[i].t = "cstart" /\ NoneBetween(log, i, k, {"cstart", "cend"})

(* COMP-5: a summary is written inside an open bracket, the only summary   *)
(* of it; it replaces a range, and its sources cover that range (they may  *)
(* name more events).                                                      *)
COMP5_SummaryInBracketDecl ==
    \A k \in 1..Len(log) : log[k].t = "summary" =>
        /\ \E i \in 1..k - 1 : log[i].t = "cstart" /\ NoneBetween(log, i, k, {"cstart", "cend", "summary"})
        /\ log[k].op.kind = "replace"
        /\ log[k].op.start \in Range(FoldN(log, k - 1)) /\ log[k].op.end \in Range(FoldN(log, k - 1))
        /\ Range(Shadows(FoldN(log, k - 1), log[k].op)) \subseteq log[k].src

(* COMP-5: a commit releases the lock: its end follows the summary at once *)
(* (in one write, so no state lies between them).                          *)
COMP5_CommitEndsDecl ==
    \A k \in 1..Len(log) : log[k].t = "summary" => k < Len(log) /\ log[k + 1].t = "cend"

(* COMP-4 recomputed from the calls and results on the surface: a cut after *)
(* the first k nodes is balanced when each call made before it can be      *)
(* matched to a later result for it before the cut, that is (Hall), when   *)
(* every tail of the first k nodes holds, for each id, at least as many    *)
(* results as assistant messages calling it.                               *)
CountIn(l, s, lo, hi, t, c) == Cardinality({p \in lo..hi : l[s[p] + 1].t = t /\ l[s[p] + 1].call = c})
BalancedDecl(l, s, k) == \A c \in Calls, j \in 1..k : CountIn(l, s, j, k, "asst", c) =< CountIn(l, s, j, k, "result", c)
COMP4_BalancedDecl ==
    \A k \in 1..Len(log) : log[k].t = "summary" /\ log[k].op.kind = "replace" =>
        LET s == FoldN(log, k - 1)
        IN /\ log[k].op.start \in Range(s) /\ log[k].op.end \in Range(s)
           /\ BalancedDecl(log, s, IndexOf(s, log[k].op.start) - 1)
           /\ BalancedDecl(log, s, IndexOf(s, log[k].op.end))

(* PROV-4, restated over the log: no summary has a provider compaction
   among the nodes it folded. *)
PROV4_SummaryAfterProviderDecl ==
    \A k \in 1..Len(log) : log[k].t = "summary" => \A x \in log[k].src : log[x + 1].t # "pcomp"

(* The calls a recovery must answer (REP-3, REP-4), found over the log: an *)
(* assistant message's call with no turn end, turn start or step end after *)
(* it, registered by no later message and answered by no result, whose     *)
(* message is still on the surface s.                                      *)
UnansweredDecl(l, s) ==
    {l[i].call : i \in {i \in 1..Len(l) :
        /\ l[i].t = "asst" /\ l[i].call # 0 /\ (i - 1) \in Range(s)
        /\ NoneBetween(l, i, Len(l) + 1, {"tstart", "tend", "send"})
        /\ \A m \in i + 1..Len(l) : ~(l[m].t \in {"asst", "result"} /\ l[m].call = l[i].call)}}

(* Nothing is open in l: every turn, step and bracket start has its end.   *)
AllClosedDecl(l) ==
    \A i \in 1..Len(l) :
        /\ l[i].t = "tstart" => ~NoneBetween(l, i, Len(l) + 1, {"tend"})
        /\ l[i].t = "sstart" => ~NoneBetween(l, i, Len(l) + 1, {"send", "tend"})
        /\ l[i].t = "cstart" => ~NoneBetween(l, i, Len(l) + 1, {"cend"})

(***************************************************************************)
(* Properties of steps.                                                    *)
(***************************************************************************)
(* The log is append-only. *)
AppendOnly == [][Len(log') >= Len(log) /\ SubSeq(log', 1, Len(log)) = log]_vars

(* REP-3, REP-4, REP-6, said declaratively rather than by construction:
   what a recovery appends (cl) is the end of an open compaction first;
   one result per pending call whose assistant message is on the surface,
   each once, in the order of first registration, with the tool/call as
   source; a step end when a step is open; and the turn end last. *)
ClosersExact(l, s, cl) ==
    LET results == {i \in DOMAIN cl : cl[i].t = "result"}
        expected == {c \in Pending(l) : Host(l, c) \in Range(s)}
        n == IF Locked(l) THEN 1 ELSE 0
    IN /\ Len(cl) = n + Cardinality(expected)
                      + (IF StepOpen(l) THEN 1 ELSE 0) + (IF OpenTurn(l) THEN 1 ELSE 0)
       /\ Locked(l) => cl[1] = Ev("cend", NoOp, {}, 0)
       /\ results = n + 1..n + Cardinality(expected)
       /\ {cl[i].call : i \in results} = expected
       /\ \A i, j \in results : i < j => FirstReg(l, cl[i].call) < FirstReg(l, cl[j].call)
       /\ \A i \in results : cl[i] = Ev("result", AppendOp, CallSources(l, cl[i].call), cl[i].call)
       /\ StepOpen(l) => cl[Len(cl) - 1] = Ev("send", NoOp, {}, 0)
       /\ OpenTurn(l) => cl[Len(cl)] = Ev("tend", NoOp, {}, 0)
REP3_ClosersExact == [][Recover => ClosersExact(log, Fold(log), SubSeq(log', Len(log) + 1, Len(log')))]_vars

(* REP-1, REP-5, REP-6: after recovery no turn and no compaction is open,
   and repairing again would append nothing. *)
REP5_RecoveryCloses == [][Recover => (~OpenTurn(log') /\ ~Locked(log') /\ Closers(log', Fold(log')) = <<>>)]_vars

(* REP-5: a crash while the closers are written loses nothing and repeats
   nothing: the closers of the longer log are the rest. *)
REP5_Reentrant ==
    [][(crashed /\ crashed' /\ log' # log) =>
        Closers(log', Fold(log')) = SubSeq(Closers(log, Fold(log)), Len(log') - Len(log) + 1, Len(Closers(log, Fold(log))))]_vars
(* REP-1, REP-3, REP-4, REP-6 over the log: a recovery answers each call   *)
(* UnansweredDecl finds with exactly one result, and nothing else, and     *)
(* leaves nothing open.                                                    *)
REP_RecoveryDecl ==
    [][Recover =>
        LET cl == SubSeq(log', Len(log) + 1, Len(log'))
            results == {i \in DOMAIN cl : cl[i].t = "result"}
            want == UnansweredDecl(log, Fold(log))
        IN /\ {cl[i].call : i \in results} = want
           /\ Cardinality(results) = Cardinality(want)
           /\ AllClosedDecl(log')]_vars

(***************************************************************************)
(* Witnesses: each is violated when the bounds reach a state that matters  *)
(* (the MCReach_*.cfg configs expect TLC and the Go explorer to report it, *)
(* with every invariant above holding on the way).                         *)
(***************************************************************************)
Summaries == {k \in 1..Len(log) : log[k].t = "summary"}
NotReached_MultiNodeCommit == \A k \in Summaries : Cardinality(log[k].src) < 2
NotReached_CommitOverReplacement == \A k \in Summaries : \A x \in log[k].src : log[x + 1].op.kind # "replace"
NotReached_CommitFoldsCallAndResult ==
    \A k \in Summaries : ~\E a, r \in log[k].src :
        log[a + 1].t = "asst" /\ log[a + 1].call # 0 /\ log[r + 1].t = "result" /\ log[r + 1].call = log[a + 1].call
=============================================================================
