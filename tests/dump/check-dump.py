#!/usr/bin/env python3
"""Checks of asyncelt-dump's outputs against its own JSON Lines.

    check-dump.py svg FILE.svg EVENTS.jsonl [ROWS]
        the SVG parses as XML; it has one row per invocation (or ROWS rows,
        for a limited selection), each invocation once; every row's
        segment bars hold as many segments as the recording has calls and
        resumes of that invocation.
    check-dump.py trace TRACE.json EVENTS.jsonl
        per invocation, as many X slices as calls and resumes.
    check-dump.py count EVENTS.jsonl KIND N
        N lines of kind KIND (e.g. call).
    check-dump.py same LIVE.json DUMP.json
        two Chrome traces of one run (timing:trace= live, asyncelt-dump
        --chrome from the recording) have the same slices (invocation,
        segment, thread, flows in and out) and async tracks (segments,
        hops); only times may differ.

Prints what it found; on a problem prints it and exits with 1.
"""
import collections
import json
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def segments_per_invocation(jsonl):
    """(pid, invocation) -> calls + resumes, from the reader's JSON Lines."""
    want = collections.Counter()
    with open(jsonl, encoding="utf-8") as f:
        for line in f:
            e = json.loads(line)
            if e["kind"] in ("call", "resume") and e["invocation"] is not None:
                want[(e.get("pid"), e["invocation"])] += 1
    return want


def check_svg(path, jsonl, rows_wanted, problems):
    root = ET.parse(path).getroot()
    want = segments_per_invocation(jsonl)
    by_id = {inv: n for (_, inv), n in want.items()}
    rows = [g for g in root.iter(SVG + "g") if g.get("class") == "row"]
    expected_rows = rows_wanted if rows_wanted is not None else len(want)
    if len(rows) != expected_rows:
        problems.append("%d rows, want %d" % (len(rows), expected_rows))
    seen = set()
    for g in rows:
        inv = int(g.get("data-invocation"))
        if inv in seen:
            problems.append("invocation %d has two rows" % inv)
        seen.add(inv)
        bars = sum(int(r.get("data-segments")) for r in g.iter(SVG + "rect")
                   if r.get("class") == "seg")
        if bars != by_id.get(inv):
            problems.append("row of invocation %d: %d segments in its bars, the "
                            "recording has %s" % (inv, bars, by_id.get(inv)))
        if not any(t.text and ("#%d" % inv) in t.text for t in g.iter(SVG + "text")):
            problems.append("row of invocation %d: no label naming it" % inv)
    print("%s: %d rows, %d segment bars checked" % (path, len(rows), len(seen)))


def check_trace(path, jsonl, problems):
    with open(path, encoding="utf-8") as f:
        events = json.load(f)
    want = segments_per_invocation(jsonl)
    got = collections.Counter()
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "segment" and not e["args"].get("incomplete"):
            got[(None, e["args"]["invocation"])] += 1
    want = collections.Counter({(None, inv): n for (_, inv), n in want.items()})
    if got != want:
        diff = [(k, got.get(k), want.get(k)) for k in set(got) | set(want)
                if got.get(k) != want.get(k)]
        problems.append("slices per invocation differ (invocation, trace, recording): %r"
                        % sorted(diff)[:10])
    print("%s: %d invocations, %d slices" % (path, len(got), sum(got.values())))


def check_count(jsonl, kind, n, problems):
    with open(jsonl, encoding="utf-8") as f:
        got = sum(1 for line in f if json.loads(line)["kind"] == kind)
    if got != n:
        problems.append("%d %s lines, want %d" % (got, kind, n))
    print("%s: %d %s lines" % (jsonl, got, kind))


def check_same(live, dumped, problems):
    def shape(path):
        with open(path, encoding="utf-8") as f:
            events = json.load(f)
        slices = collections.Counter(
            (e["args"]["invocation"], e["args"]["segment"], e["tid"],
             bool(e.get("flow_in")), bool(e.get("flow_out")))
            for e in events if e["ph"] == "X")
        tracks = {e["id"]: (e["args"]["segments"], e["args"]["hops"])
                  for e in events if e["ph"] == "e"}
        return slices, tracks
    a, b = shape(live), shape(dumped)
    if a[0] != b[0]:
        problems.append("slices differ: %r" % sorted((a[0] - b[0]).items())[:5]
                        + " live only, %r" % sorted((b[0] - a[0]).items())[:5] + " dump only")
    if a[1] != b[1]:
        problems.append("async tracks differ: %r" %
                        sorted(k for k in set(a[1]) | set(b[1]) if a[1].get(k) != b[1].get(k))[:10])
    print("%s and %s: %d slices, %d async tracks compared" % (live, dumped, sum(a[0].values()),
                                                            len(a[1])))


def main(argv):
    problems = []
    if argv[1] == "svg":
        check_svg(argv[2], argv[3], int(argv[4]) if len(argv) > 4 else None, problems)
    elif argv[1] == "trace":
        check_trace(argv[2], argv[3], problems)
    elif argv[1] == "same":
        check_same(argv[2], argv[3], problems)
    elif argv[1] == "count":
        check_count(argv[2], argv[3], int(argv[4]), problems)
    else:
        problems.append("unknown check %r" % argv[1])
    for p in problems:
        print("problem: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
