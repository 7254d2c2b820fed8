"""CPython 3.11's stall of a profiled thread (examples/cpython/gil-nudge.c),
made to happen every time:

    signal_stall.py [--python-profile | --python-monitoring] [--seconds S] [--fork]
    signal_stall.py --stop-race

The main thread blocks in a read() that a signal does not interrupt (the
handler is installed with SA_RESTART), having released the GIL.  A worker
thread sends the main thread a signal with a Python handler, whose C part
runs there and sets the eval breaker for the main thread; the worker then
calls a function for S seconds, time enough for the signal to arrive
however loaded the machine, and writes to the pipe the main thread reads.
Profiled, the worker spins at that function's RESUME once the breaker is
set, unless something recomputes it: the main thread, blocked, never will.

--python-profile installs a do-nothing profile function written in
Python (the stall is CPython's, whatever the profiler); without it the
program is meant to run under the adapter (python -m asyncelt).
--python-monitoring (3.12+) is the same as a sys.monitoring tool: do-nothing
Python callbacks for PY_START and PY_RETURN, every thread's.  --fork
runs it all in a child of fork(), the profiler started in the parent,
and kills the child if it has not ended after CHILD_DEADLINE seconds.
Prints "finished: N calls" when it ends, N the calls made.

--stop-race, under the adapter, stops it from four threads at once and
starts it again, twenty times: the adapter's thread is stopped once and
started anew each time, and nothing waits for it twice."""
import argparse
import os
import signal
import sys
import threading
import time


CHILD_DEADLINE = 60     # seconds


def tiny():
    pass


def stall(seconds):
    """The scenario; returns the calls the worker made."""
    signal.signal(signal.SIGUSR1, lambda *unused: None)
    signal.siginterrupt(signal.SIGUSR1, False)      # SA_RESTART
    # Blocked, as a test harness may leave it, it would never arrive.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})
    read_end, write_end = os.pipe()
    main_thread = threading.get_ident()
    calls = 0

    def worker():
        nonlocal calls
        time.sleep(0.2)                 # the main thread is in read() by now
        signal.pthread_kill(main_thread, signal.SIGUSR1)
        # Without releasing the GIL: taking it back would clear the breaker.
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            tiny()
            calls += 1
        os.write(write_end, b"x")

    thread = threading.Thread(target=worker)
    thread.start()
    os.read(read_end, 1)
    thread.join()
    return calls


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--python-profile", action="store_true")
    parser.add_argument("--python-monitoring", action="store_true")
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--fork", action="store_true")
    parser.add_argument("--stop-race", action="store_true")
    options = parser.parse_args()
    if options.stop_race:
        stop_race()
        return
    if options.python_profile:
        threading.setprofile(lambda frame, event, arg: None)
    if options.python_monitoring:
        tool, events = sys.monitoring.DEBUGGER_ID, sys.monitoring.events
        sys.monitoring.use_tool_id(tool, "signal_stall")
        for event in (events.PY_START, events.PY_RETURN):
            sys.monitoring.register_callback(tool, event, lambda *args: None)
        sys.monitoring.set_events(tool, events.PY_START | events.PY_RETURN)
    if not options.fork:
        print("finished: %d calls" % stall(options.seconds))
        return
    sys.stdout.flush()
    child = os.fork()
    if child == 0:
        print("finished in the child: %d calls" % stall(options.seconds))
        sys.stdout.flush()
        os._exit(0)
    # A stalled child is killed, not left spinning after the test.
    deadline = time.monotonic() + CHILD_DEADLINE
    while True:
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            sys.exit("the child still ran after %d s: killed" % CHILD_DEADLINE)
        time.sleep(0.05)
    if status:
        sys.exit("the child ended with status %#x" % status)


def stop_race():
    import asyncelt
    for _ in range(20):
        stoppers = [threading.Thread(target=asyncelt.stop) for _ in range(4)]
        for t in stoppers:
            t.start()
        for t in stoppers:
            t.join()
        asyncelt.start()
    print("stopped from 4 threads at once, 20 times")

if __name__ == "__main__":
    main()
