"""Each kind of Python code, as segments: plain functions, coroutines that
suspend or not, exceptions, generators, async generators, throw() and
close(), starting in the middle of a coroutine, builtins, bad options."""
import atexit
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402

# The interpreter the adapter was built for: this one (run-python-test.sh).
VERSION = sys.version_info[:2]

SCENARIO = r'''
import asyncio
import types

def plain(x):
    return x + 1

async def leaf(i):
    await asyncio.sleep(0)
    return i

async def no_suspend(i):
    return i

async def boom():
    await asyncio.sleep(0)
    raise ValueError("boom")

async def catcher():
    try:
        await boom()
    except ValueError:
        return 1

def gen(n):
    for i in range(n):
        yield i

async def agen(n):
    for i in range(n):
        await asyncio.sleep(0)
        yield i

def thrown():
    yield 1
    yield 2

def throw_caught():
    try:
        yield 1
    except KeyError:
        yield 2

def closed():
    yield 1
    yield 2

def never_started():
    yield 1

async def inner_wait(fut):
    await fut

async def outer_wait(fut):
    await inner_wait(fut)

async def swallows(fut):
    try:
        await fut
    except asyncio.CancelledError:
        return "fallback"

async def after_swallowed(fut):
    return await swallows(fut)

@types.coroutine
def bare_yield():
    yield

async def absorbs():
    try:
        await bare_yield()
    except KeyError:
        return 5

def in_unannounced():
    return 1

async def unannounced():
    v = await absorbs()
    in_unannounced()
    await bare_yield()
    return v

def absorbing():
    while True:
        try:
            yield 1
        except KeyError:
            pass

def chain_middle():
    yield from absorbing()

def chain_top():
    yield from chain_middle()

async def cleans_up(fut):
    try:
        await fut
    except asyncio.CancelledError:
        await asyncio.sleep(0)
        raise

async def awaits_cleanup(fut):
    await cleans_up(fut)

async def main():
    for i in range(5):
        plain(i)
    await asyncio.gather(*(leaf(i) for i in range(7)))
    for i in range(3):
        await no_suspend(i)
    await catcher()
    list(gen(4))
    [x async for x in agen(3)]
    t = thrown()
    next(t)
    try:
        t.throw(KeyError)
    except KeyError:
        pass
    c = throw_caught()
    next(c)
    c.throw(KeyError)
    c.close()
    g = closed()
    next(g)
    g.close()
    never_started().close()
    divmod(7, 2)
    # Cancelled: the CancelledError is thrown into inner_wait, and outer_wait
    # is re-entered back at the SEND of its await, not at a yield.
    fut = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(outer_wait(fut))
    await asyncio.sleep(0)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    # Cancelled, and swallows catches it and returns: CPython runs
    # after_swallowed on past its await with no event.
    fut = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(after_swallowed(fut))
    await asyncio.sleep(0)
    task.cancel()
    await task
    # A throw() down a chain, caught by the innermost frame, which then
    # waits again: CPython runs none of the frames above it.
    g = chain_top()
    next(g)
    g.throw(KeyError)
    next(g)
    g.close()
    fut = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(awaits_cleanup(fut))
    await asyncio.sleep(0)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    # The same by hand, and the coroutine then calls and suspends again.
    c = unannounced()
    c.send(None)
    c.throw(KeyError)
    try:
        c.send(None)
    except StopIteration:
        pass

asyncio.run(main())
'''

# Started inside a running coroutine, whose frames began before: their
# Leaves must not be reported, and a coroutine suspended before the start
# is first seen at a resume (reported as its call).
MID_RUN = r'''
import asyncio
import asyncelt

async def before():
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    return 1

async def inside(i):
    await asyncio.sleep(0)
    return i

async def main():
    early = asyncio.ensure_future(before())
    await asyncio.sleep(0)          # `before` is suspended now
    with asyncelt.profile():
        await asyncio.gather(*(inside(i) for i in range(4)))
        await early
    await inside(99)                 # after stop: not reported

asyncio.run(main())
'''

# A coroutine seen suspending ends while stopped, and another takes its
# address: after start() it is a coroutine of its own, seen from its
# resume.  `first` (and its `pause`) end at the stop.
STOP_START = r"""
import asyncelt, types

@types.coroutine
def pause():
    yield

async def first():
    await pause()
    return 1

async def second():
    await pause()
    await pause()
    return 2

asyncelt.start()
a = first()
a.send(None)
asyncelt.stop()
address = id(a)
try:
    a.send(None)
except StopIteration:
    pass
del a
b = second()
b.send(None)
asyncelt.start()
try:
    b.send(None)
    b.send(None)
except StopIteration:
    pass
asyncelt.stop()
print("same address:", id(b) == address)
"""

# Code compiled at every call, as eval() and exec() do: one function,
# however many code objects, and none kept once it is gone.
EVAL_LOOP = r'''
x = 0
for i in range(20000):
    x = eval("x + 1")
print(x)
'''

# A signal pending as the adapter first meets a code object: at a RESUME
# after an await CPython calls the profile hook before any handler, and
# nothing but C runs between the raise and the resume here.  A handler run
# inside the hook (where CPython pauses its events) would go unreported.
# Then a handler whose exception ends functions at their first RESUME,
# which runs handlers before CPython's CALL event.
SIGNALS = r"""
import ctypes, functools, signal, sys, types
import asyncelt

handled = 0
def on_usr1(signum, frame):
    global handled
    handled += 1

class Interrupt(BaseException):
    pass

def on_usr2(signum, frame):
    raise Interrupt()

def victim():
    return 1

async def coro_victim():
    return 2

@types.coroutine
def once():
    yield

async def first_seen_at_resume():
    await once()
    return 1

signal.signal(signal.SIGUSR1, on_usr1)
signal.signal(signal.SIGUSR2, on_usr2)
raise_in_c = functools.partial(ctypes.CDLL(None)["raise"], signal.SIGUSR1)
interrupt_in_c = functools.partial(ctypes.CDLL(None)["raise"], signal.SIGUSR2)
c = first_seen_at_resume()
c.send(None)
asyncelt.start()
try:
    list(map(functools.partial.__call__, [raise_in_c, functools.partial(c.send, None)]))
except StopIteration:
    pass
# The handler's exception ends each at its first instruction, before
# CPython's CALL event: nothing but C between the raise and the call.
interrupted = 0
for call in (functools.partial(victim), functools.partial(victim),
             functools.partial(coro_victim().send, None)):
    try:
        list(map(functools.partial.__call__, [interrupt_in_c, call]))
    except Interrupt:
        interrupted += 1
asyncelt.stop()
print("handled", handled, "interrupted", interrupted)
"""

# (calls, resumes, suspends, returns) each function must show.
EXPECTED = {
    "plain": (5, 0, 0, 5),
    "leaf": (7, 7, 7, 7),
    "no_suspend": (3, 0, 0, 3),
    "boom": (1, 1, 1, 1),               # the exception is its final return
    "catcher": (1, 1, 1, 1),            # suspended while boom was
    "gen": (1, 4, 4, 1),                # 4 yields, then the end
    "agen": (1, 6, 6, 1),               # per item: the await and the yield
    "thrown": (1, 1, 1, 1),             # thrown in at the yield, escapes
    "throw_caught": (1, 2, 2, 1),       # caught, yields again, then close()
    "closed": (1, 1, 1, 1),             # close() resumes it with GeneratorExit
    "inner_wait": (1, 1, 1, 1),         # cancelled: resumed by the throw
    "outer_wait": (1, 1, 1, 1),         # re-entered at its SEND: still a resume
    "swallows": (1, 1, 1, 1),           # resumed by the throw, returns
    "after_swallowed": (1, 1, 1, 1),    # goes on with no event: still a resume
    "absorbs": (1, 1, 1, 1),
    "unannounced": (1, 2, 2, 1),        # its unannounced resume, then a real one
    "in_unannounced": (1, 0, 0, 1),
    # the throw() into chain_top reaches absorbing alone, which yields again
    "absorbing": (1, 3, 3, 1),
    "chain_middle": (1, 2, 2, 1),
    "chain_top": (1, 2, 2, 1),
    "cleans_up": (1, 2, 2, 1),          # resumed by the throw, waits, re-raises
    "awaits_cleanup": (1, 1, 1, 1),     # runs again only to end
}


def write(text):
    """A script of `text`, removed when the test exits."""
    fd, path = tempfile.mkstemp(suffix=".py")
    atexit.register(os.unlink, path)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def main():
    tap.plan(42)
    scenario = write(SCENARIO)
    run = tap.Run([scenario], logging=True, c_calls=True)
    tap.ok(run.status == 0, "the scenario runs under the adapter", run.output())
    for name, want in EXPECTED.items():
        got = tap.segments(run.row(name))
        tap.ok(got == want, "%s: calls, resumes, suspends, returns = %s" % (name, want),
               "got %s\n%s" % (got, run.report()))
    if VERSION < (3, 12):
        tap.ok(tap.segments(run.row("never_started")) == (1, 0, 0, 1),
               "3.11: a generator closed before it ran: one call, ended by GeneratorExit",
               run.report())
    else:
        tap.ok(run.row("never_started") is None,
               "3.12+: a generator closed before it ran runs no frame: nothing reported",
               run.report())
    tap.ok(tap.segments(run.row("divmod")) == (1, 0, 0, 1),
           "--c-calls reports a builtin (divmod) as a call and a return", run.report())
    problems = tap.balanced(run)
    tap.ok(not problems, "the checker finds every function balanced", "\n".join(problems))
    stats = run.stats()
    tap.ok(tap.clean(stats) and stats["live"] == 0,
           "no orphan resume, no unbalanced Leave, nothing refused or left live",
           json.dumps(stats))

    # Stitching, from the logging plugin: each leaf invocation is one id
    # over its two segments, and its resume names the continuation its
    # suspension returned.
    lines = [e for e in run.log() if e["function"] and e["function"].startswith("leaf (")]
    by_invocation = {}
    for e in lines:
        by_invocation.setdefault(e["invocation"], []).append(e)
    shapes = sorted(tuple(e["kind"] for e in seq) for seq in by_invocation.values())
    tap.ok(shapes == [("call", "suspend", "resume", "return")] * 7,
           "every leaf invocation is call, suspend, resume, return under one id",
           shapes)
    tap.ok(all(seq[1]["continuation"] == seq[2]["continuation"] != "0x0"
               and seq[2]["segment"] == 1 for seq in by_invocation.values()),
           "each resume gets the continuation its suspension returned, as segment 1",
           json.dumps(lines[:4]))
    # What a coroutine calls in a segment CPython gave no event for has the
    # coroutine for a parent, not whatever ran below it.
    called = [e for e in run.log() if e["kind"] == "call" and e["function"]
              and e["function"].startswith("in_unannounced (")]
    owner = [e["invocation"] for e in run.log() if e["kind"] == "call" and e["function"]
             and e["function"].startswith("unannounced (")]
    tap.ok(len(called) == 1 and owner and called[0]["parent"] == owner[0],
           "a call from an unannounced segment has that coroutine for its parent",
           json.dumps(called) + " " + json.dumps(owner))
    if VERSION < (3, 12):
        tap.ok(stats["unannounced"] >= 2,
               "3.11: the resumes CPython gave no event for are counted "
               "(after_swallowed, unannounced)", json.dumps(stats))
    else:
        tap.ok(stats["unannounced"] == 0,
               "3.12+: every resume has its event (PY_THROW for after_swallowed, "
               "unannounced): none inferred", json.dumps(stats))
    # 3.13's close() of a generator at a yield outside any try runs no frame:
    # `closed` and the asyncio generators so closed end as they die.
    if VERSION >= (3, 13):
        tap.ok(stats["closed_unseen"] >= 1 and stats["vanished"] == 0,
               "3.13: generators close()d with no event end as they die (closed_unseen)",
               json.dumps(stats))
    else:
        tap.ok(stats["closed_unseen"] == 0,
               "%d.%d: close() runs the generator's frame: nothing ended unseen" % VERSION,
               json.dumps(stats))

    mid = tap.Run([write(MID_RUN)], runner=False)
    mid_rows = {k: tap.segments(mid.row(k)) for k in ("inside", "before", "main")}
    tap.ok(mid.status == 0 and mid_rows["inside"] == (4, 4, 4, 4),
           "started inside a coroutine: only what ran inside the profile block",
           "%s\n%s" % (mid_rows, mid.output()))
    tap.ok(mid_rows["before"] == (1, 1, 1, 1),
           "a coroutine suspended before the start: its first resume is its call",
           "%s\n%s" % (mid_rows, mid.report()))
    problems = tap.balanced(mid)
    tap.ok(not problems and tap.clean(mid.stats()) and mid.stats()["live"] == 0,
           "started and stopped mid-run: balanced (what ran at stop is closed), "
           "no orphan, nothing live",
           "%s %s" % (problems, mid.stats()))

    stop_start = tap.Run([write(STOP_START)], runner=False)
    got = {k: tap.segments(stop_start.row(k)) for k in ("first", "second", "pause")}
    tap.ok(stop_start.status == 0 and "same address: True" in stop_start.stdout
           and got == {"first": (1, 1, 1, 1), "second": (1, 1, 1, 1), "pause": (3, 2, 2, 3)}
           and tap.clean(stop_start.stats()) and stop_start.stats()["live"] == 0
           and not tap.balanced(stop_start),
           "stop() ends what is suspended; a coroutine at a dead one's address "
           "after start() is its own",
           "%s\n%s\n%s" % (got, stop_start.output(), json.dumps(stop_start.stats())))

    evals = tap.Run([write(EVAL_LOOP)])
    rows = [r for name, r in evals.rows().items() if name.startswith("<module> (<string>:1)")]
    stats = evals.stats()
    tap.ok(evals.status == 0 and len(rows) == 1 and rows[0]["calls"] >= 20000,
           "20,000 eval()s: one function, called 20,000 times",
           "%s\n%s" % (rows, evals.output()))
    tap.ok(stats["functions"] < 1000 and stats["code_objects"] < 1000,
           "... and neither functions nor the code objects kept grow with them",
           json.dumps(stats))

    sig = tap.Run([write(SIGNALS)], runner=False, logging=True)
    tap.ok(sig.status == 0 and "handled 1 interrupted 3" in sig.stdout
           and tap.segments(sig.row("on_usr1")) == (1, 0, 0, 1),
           "a signal handler run as the adapter first meets a code object is reported",
           "%s\n%s" % (sig.output(), sig.report()))
    calls = {e["invocation"]: e for e in sig.log() if e["kind"] == "call"}
    handlers = [e for e in calls.values() if e["function"].startswith("on_usr2 (")]
    tap.ok(tap.segments(sig.row("victim")) == (2, 0, 0, 2)
           and tap.segments(sig.row("coro_victim")) == (1, 0, 0, 1)
           and len(handlers) == 3
           and all(calls.get(h["parent"], {}).get("function", "").split(" ")[0]
                   in ("victim", "coro_victim") for h in handlers)
           and not tap.balanced(sig) and tap.clean(sig.stats()),
           "a function a signal handler's exception ends at its first instruction: "
           "its call and return, the handler's parent",
           "%s\n%s\n%s" % (json.dumps(handlers), sig.report(), json.dumps(sig.stats())))

    bad_spec = tap.subprocess.run(
        [sys.executable, "-m", "asyncelt", "--plugins", "no-such-plugin", scenario],
        capture_output=True, text=True, timeout=60)
    tap.ok(bad_spec.returncode != 0 and "no-such-plugin" in bad_spec.stderr
           and "Traceback" not in bad_spec.stderr,
           "an unknown plugin: a clear error naming it, no traceback",
           bad_spec.stderr)
    missing = tap.subprocess.run(
        [sys.executable, "-m", "asyncelt", "/nonexistent/script.py"],
        capture_output=True, text=True, timeout=60)
    tap.ok(missing.returncode != 0 and "no such script: /nonexistent/script.py" in missing.stderr
           and "Traceback" not in missing.stderr,
           "a missing script: a clear error naming it, no traceback", missing.stderr)


if __name__ == "__main__":
    main()
