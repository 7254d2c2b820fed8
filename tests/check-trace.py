#!/usr/bin/env python3
"""Structural checks of what the logging and timing plugins write.

    check-trace.py [--trace] TRACE.json   a Chrome Trace Event file (timing's trace=)
    check-trace.py --jsonl FILE      JSON Lines (logging's format=json)
    check-trace.py --json FILE       one JSON document (timing's format=json)
    check-trace.py --csv FILE        CSV with a header (timing's format=csv)

Prints what it found; on a problem, prints each one and exits with 1.
The trace checks are what a viewer needs but speedscope cannot show:
every async "b" has its "e" on the same track, every flow that leaves a
slice enters another, X slices nest on each thread, every thread that has
slices is named, and per invocation: its segments' time fits in its wall
time (active <= wall), it has one segment more than resumes, and the
counts, active and suspended (= wall - active) times its "e" event
reports agree with its slices.
"""
import collections
import csv
import json
import sys

# ts and dur are microseconds with three decimals: half a nanosecond of slack.
EPSILON = 0.0005


def unique_keys(pairs):
    """A JSON object whose keys are all different: a parser keeps only the
    last of two equal keys, so a duplicate is data lost, and refused."""
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError("duplicate key %r in one object" % key)
        seen[key] = value
    return seen


def strict_load(f):
    return json.load(f, object_pairs_hook=unique_keys)


def strict_loads(text):
    return json.loads(text, object_pairs_hook=unique_keys)


def load_events(path):
    with open(path, encoding="utf-8") as f:
        doc = strict_load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def check_async(events, problems):
    """Each (cat, id) track: its b and e events pair up and nest."""
    tracks = collections.defaultdict(list)
    for e in events:
        if e["ph"] in "be":
            if "id" not in e or "pid" not in e:
                problems.append("async event without id or pid: %r" % e)
                continue
            tracks[(e.get("cat"), e["id"])].append(e)
    for key, evs in tracks.items():
        depth = 0
        # Events of one ts taken together: ends there close what was open
        # (an id the next invocation uses again) or what opens there too
        # (a zero-length span: an invocation cut short at the exit as soon
        # as it began).
        net = collections.Counter()
        for e in evs:
            net[e["ts"]] += 1 if e["ph"] == "b" else -1
        for ts in sorted(net):
            depth += net[ts]
            if depth < 0:
                problems.append("async track %r: e before its b at ts %s" % (key, ts))
                break
        if depth > 0:
            problems.append("async track %r: %d b without e" % (key, depth))
    return tracks


def check_flows(slices, problems):
    """bind_id flows: every flow_out is later taken by a flow_in."""
    by_id = collections.defaultdict(list)
    for s in slices:
        if s.get("flow_in") or s.get("flow_out"):
            if "bind_id" not in s:
                problems.append("flow flag without bind_id: %r" % s)
                continue
            by_id[s["bind_id"]].append(s)
    flows = 0
    for bind_id, ss in by_id.items():
        open_flow = None
        for s in sorted(ss, key=lambda s: s["ts"]):
            if s.get("flow_in"):
                if open_flow is None:
                    problems.append("flow %r: flow_in at ts %s with no flow_out before it"
                                    % (bind_id, s["ts"]))
                elif s["ts"] + EPSILON < open_flow["ts"] + open_flow["dur"]:
                    problems.append("flow %r: enters at %s before its slice ended"
                                    % (bind_id, s["ts"]))
                else:
                    flows += 1
                open_flow = None
            if s.get("flow_out"):
                if open_flow is not None:
                    problems.append("flow %r: two flow_out without a flow_in" % bind_id)
                open_flow = s
        if open_flow is not None:
            problems.append("flow %r: flow_out at ts %s never enters a slice"
                            % (bind_id, open_flow["ts"]))
    return flows


def check_nesting(slices, problems):
    """On each thread, two slices are disjoint or one contains the other."""
    by_thread = collections.defaultdict(list)
    for s in slices:
        by_thread[(s["pid"], s["tid"])].append(s)
    for thread, ss in by_thread.items():
        ends = []
        for s in sorted(ss, key=lambda s: (s["ts"], -s["dur"])):
            end = s["ts"] + s["dur"]
            while ends and ends[-1] <= s["ts"] + EPSILON:
                ends.pop()
            if ends and end > ends[-1] + EPSILON:
                problems.append("thread %r: slice %r at %s (dur %s) overlaps its parent's end %s"
                                % (thread, s["name"], s["ts"], s["dur"], ends[-1]))
            ends.append(end)
    return by_thread


def check_invocations(slices, tracks, problems):
    """Per invocation: its segments in its wall time, the counts in e."""
    active = collections.defaultdict(float)
    count = collections.defaultdict(int)
    resumes = collections.defaultdict(int)
    # an invocation id is its process's: ids may repeat in the trace
    for s in slices:
        inv = s.get("args", {}).get("invocation")
        if inv is not None:
            inv = (s["pid"], inv)
        if inv is not None and not s["args"].get("incomplete"):
            active[inv] += s["dur"]
            count[inv] += 1
            resumes[inv] += bool(s.get("flow_in"))
    for (cat, inv), evs in tracks.items():
        if cat != "invocation" or len(evs) != 2:
            continue
        b, e = sorted(evs, key=lambda e: e["ph"] != "b")
        wall = e["ts"] - b["ts"]
        args = e.get("args", {})
        inv = (e["pid"], args.get("invocation", inv))
        if active[inv] > wall + EPSILON * (count[inv] + 1):
            problems.append("invocation %r: active %.3f > wall %.3f" % (inv, active[inv], wall))
        if args.get("incomplete"):
            continue
        if count[inv] != args.get("segments"):
            problems.append("invocation %r: %d slices, its e says %r segments"
                            % (inv, count[inv], args.get("segments")))
        if abs(active[inv] - args.get("active_us", active[inv])) > EPSILON * (count[inv] + 1):
            problems.append("invocation %r: slices sum to %.3f us, its e says %r"
                            % (inv, active[inv], args.get("active_us")))
        if count[inv] != resumes[inv] + 1:
            problems.append("invocation %r: %d segments but %d resumes"
                            % (inv, count[inv], resumes[inv]))
        suspended = args.get("suspended_us")
        if suspended is not None and abs(suspended - (wall - args["active_us"])) > 3 * EPSILON:
            problems.append("invocation %r: suspended %.3f us, but wall - active = %.3f"
                            % (inv, suspended, wall - args["active_us"]))


def check_trace(path):
    problems = []
    events = load_events(path)
    for e in events:
        if "ph" not in e:
            problems.append("event without ph: %r" % e)
    events = [e for e in events if "ph" in e]
    slices = [e for e in events if e["ph"] == "X"]
    for s in slices:
        if "dur" not in s or s["dur"] < 0:
            problems.append("X slice without a duration: %r" % s)
    slices = [s for s in slices if s.get("dur", -1) >= 0]
    tracks = check_async(events, problems)
    flows = check_flows(slices, problems)
    threads = check_nesting(slices, problems)
    named = {(e["pid"], e["tid"]) for e in events
             if e["ph"] == "M" and e.get("name") == "thread_name"}
    for thread in threads:
        if thread not in named:
            problems.append("thread %r has slices but no thread_name" % (thread,))
    if not any(e["ph"] == "M" and e.get("name") == "process_name" for e in events):
        problems.append("no process_name metadata")
    check_invocations(slices, tracks, problems)
    print("%s: %d events, %d slices on %d threads, %d flows, %d async tracks"
          % (path, len(events), len(slices), len(threads), flows, len(tracks)))
    return problems


def check_jsonl(path):
    problems = []
    kinds = collections.Counter()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                record = strict_loads(line)
            except ValueError as err:
                problems.append("line %d does not parse: %s: %r" % (n, err, line[:200]))
                continue
            kinds[record.get("kind")] += 1
    print("%s: %s" % (path, ", ".join("%s %d" % kv for kv in sorted(kinds.items(), key=str))))
    return problems


def check_json(path):
    with open(path, encoding="utf-8") as f:
        try:
            strict_load(f)
        except ValueError as err:
            return ["%s: %s" % (path, err)]
    print("%s: one JSON document" % path)
    return []


def check_csv(path):
    problems = []
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return ["%s is empty" % path]
    for n, row in enumerate(rows[1:], 2):
        if len(row) != len(rows[0]):
            problems.append("row %d has %d fields, the header %d" % (n, len(row), len(rows[0])))
    print("%s: %d rows of %d fields" % (path, len(rows) - 1, len(rows[0])))
    return problems


def main(argv):
    modes = {"--trace": check_trace, "--jsonl": check_jsonl, "--json": check_json,
             "--csv": check_csv}
    if len(argv) == 2 and not argv[1].startswith("--"):
        check, path = check_trace, argv[1]
    elif len(argv) == 3 and argv[1] in modes:
        check, path = modes[argv[1]], argv[2]
    else:
        sys.stderr.write(__doc__)
        return 2
    try:
        problems = check(path)
    except (OSError, ValueError, KeyError, TypeError) as err:
        problems = ["%s: %s: %s" % (path, type(err).__name__, err)]
    for p in problems:
        print("problem: %s" % p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
