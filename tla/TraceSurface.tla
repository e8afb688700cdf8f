---------------------------- MODULE TraceSurface ----------------------------
(***************************************************************************)
(* Trace validation, in the manner of etcd-io/raft: the implementation     *)
(* (impl/session with session.WithTrace) writes an NDJSON trace of what it *)
(* did and of its surface after each step; this spec replays the trace    *)
(* through the actions of Surface.tla and checks that every step is one    *)
(* the spec allows and ends in the surface the spec computes. TLC accepts  *)
(* the trace when the whole of it is matched (TraceMatched).               *)
(*                                                                         *)
(* Trace lines:                                                            *)
(*   {"action":"append","t":T,"op":O,"start":S,"end":E,"src":[..],         *)
(*    "call":C,"surface":[..]}      one accepted event                     *)
(*   {"action":"seed","surface":[..]}    the end of a seed                 *)
(*   {"action":"repair","surface":[..]}  the end of a repair               *)
(* Run: java -cp tla2tools.jar tlc2.TLC -config TraceSurface.cfg           *)
(*      TraceSurface.tla   with the environment variable SURFACE_TRACE     *)
(*      naming the trace file.                                             *)
(***************************************************************************)
EXTENDS Surface, Json, IOUtils, TLC

Trace == ndJsonDeserialize(IOEnv.SURFACE_TRACE)

TraceCalls == {Trace[i].call : i \in DOMAIN Trace} \ {0}

VARIABLE l  \* the next trace line to match

TraceVars == <<log, surface, shadowed, crashed, l>>

ToOp(r) == CASE r.op = "append" -> AppendOp
             [] r.op = "replace" -> [kind |-> "replace", start |-> r.start, end |-> r.end]
             [] OTHER -> NoOp

ToEvent(r) == [t |-> r.t, op |-> ToOp(r), src |-> {r.src[i] : i \in DOMAIN r.src}, call |-> r.call]

(* An accepted event: a replace must name nodes of the surface, in order,
   and cover what it shadows (SURF-12 to SURF-14); the surface after it is
   Apply's, and is the one the implementation reported. *)
TraceAppend(r) ==
    LET e == ToEvent(r)
    IN /\ r.action = "append"
       /\ e.op.kind = "replace" =>
            /\ e.op.start \in Range(surface)
            /\ e.op.end \in Range(surface)
            /\ IndexOf(surface, e.op.start) <= IndexOf(surface, e.op.end)
            /\ Range(Shadows(surface, e.op)) \subseteq e.src
       /\ log' = Append(log, e)
       /\ surface' = Apply(surface, e, Len(log))
       /\ shadowed' = IF e.op.kind = "replace" THEN shadowed \cup Range(Shadows(surface, e.op)) ELSE shadowed
       /\ surface' = r.surface
       /\ UNCHANGED crashed

(* The end of a seed: the surface is the fold of the log (SURF-18, SURF-25). *)
TraceSeed(r) == r.action = "seed" /\ surface = Fold(log) /\ r.surface = surface /\ UNCHANGED <<log, surface, shadowed, crashed>>

(* The end of a repair: no turn is left open and nothing is left to close. *)
TraceRepair(r) == r.action = "repair" /\ ~OpenTurn(log) /\ Closers(log, surface) = <<>> /\ r.surface = surface /\ UNCHANGED <<log, surface, shadowed, crashed>>

TraceInit == Init /\ l = 1

TraceNext ==
    /\ l <= Len(Trace)
    /\ LET r == Trace[l] IN TraceAppend(r) \/ TraceSeed(r) \/ TraceRepair(r)
    /\ l' = l + 1

TraceSpec == TraceInit /\ [][TraceNext]_TraceVars

(* Every line was matched: the longest behaviour has one state per line,
   plus the initial state. *)
TraceMatched ==
    LET d == TLCGet("stats").diameter
    IN IF d - 1 = Len(Trace) THEN TRUE
       ELSE Print(<<"trace line not matched", d, Trace[d]>>, FALSE)

(* The surface invariants of Surface.tla hold along the trace too. *)
TraceInvariants == SURF15_NodesDistinctInLog /\ SURF15_NoResurrection /\ SURF25_SurfaceIsFold
=============================================================================
