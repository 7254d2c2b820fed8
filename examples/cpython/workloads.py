"""Async workloads for the adapter's tests, `make demo-python` and the
benchmark (bench.py), each with a known shape so that counts can be exact:

    workloads.py aiohttp [--requests N] [--concurrency C]
        an aiohttp server on 127.0.0.1 (an ephemeral port) and an aiohttp
        client in the same event loop; `hello` answers at once, `sleepy`
        suspends twice (asyncio.sleep(0), then `lookup`, which suspends once)
    workloads.py cpu [--tasks N]
        pure-CPU coroutines: a recursive coroutine (no suspension) inside
        tasks that yield to the loop 20 times each
    workloads.py threads [--calls N] [--loops K] [--coroutines M]
        asyncio.to_thread, a ThreadPoolExecutor, and K threads each running
        an event loop of its own with M coroutines

Each prints what it did ("answered: hello=N sleepy=M") and its own run time
("seconds: S", the workload alone, without the interpreter's start-up).
Every one stops by itself: a deadline bounds it.
"""
import argparse
import asyncio
import concurrent.futures
import threading
import time

DEADLINE = 120  # seconds: a hung workload fails instead of stalling

# --- aiohttp -------------------------------------------------------------


async def hello(request):
    from aiohttp import web
    return web.Response(text="hello")


async def lookup(n):
    await asyncio.sleep(0)
    return 2 * n


async def sleepy(request):
    from aiohttp import web
    await asyncio.sleep(0)
    n = await lookup(int(request.query["n"]))
    return web.Response(text=str(n))


async def aiohttp_workload(requests, concurrency):
    import aiohttp
    from aiohttp import web

    app = web.Application()
    app.router.add_get("/hello", hello)
    app.router.add_get("/sleepy", sleepy)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    answered = {"hello": 0, "sleepy": 0}

    async def client(session, first):
        for i in range(first, requests, concurrency):
            path = "hello" if i % 2 else "sleepy"
            async with session.get("http://127.0.0.1:%d/%s?n=%d" % (port, path, i)) as r:
                body = await r.text()
                if r.status == 200 and body == ("hello" if i % 2 else str(2 * i)):
                    answered[path] += 1

    try:
        async with aiohttp.ClientSession() as session:
            await asyncio.gather(*(client(session, k) for k in range(concurrency)))
    finally:
        await runner.cleanup()
    print("answered: hello=%d sleepy=%d" % (answered["hello"], answered["sleepy"]))


# --- pure CPU --------------------------------------------------------------


async def fib(n):
    return n if n < 2 else await fib(n - 1) + await fib(n - 2)


async def cpu_task(depth):
    total = 0
    for _ in range(20):
        total += await fib(depth)
        await asyncio.sleep(0)
    return total


async def cpu_workload(tasks):
    results = await asyncio.gather(*(cpu_task(12) for _ in range(tasks)))
    print("cpu: tasks=%d sum=%d" % (tasks, sum(results)))


# --- threads ---------------------------------------------------------------


def blocking(i):
    time.sleep(0.0005)
    return i * i


def pooled(i):
    return i + 1


async def thread_coroutine(k, j):
    await asyncio.sleep(0)
    await asyncio.sleep(0.001)
    return k * j


async def thread_main(k, coroutines):
    return sum(await asyncio.gather(*(thread_coroutine(k, j) for j in range(coroutines))))


def loop_thread(k, coroutines, sums):
    sums[k] = asyncio.run(thread_main(k, coroutines))


async def threads_workload(calls, loops, coroutines):
    squares = await asyncio.gather(*(asyncio.to_thread(blocking, i) for i in range(calls)))
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        incremented = list(pool.map(pooled, range(calls)))
    sums = [None] * loops
    threads = [threading.Thread(target=loop_thread, args=(k, coroutines, sums))
               for k in range(loops)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE)
    want = sum(k * j for k in range(loops) for j in range(coroutines))
    print("threads: to_thread=%d pool=%d loops=%d loop_sum=%s (want %d)" % (
        sum(1 for i, s in enumerate(squares) if s == i * i),
        sum(1 for i, v in enumerate(incremented) if v == i + 1),
        sum(1 for s in sums if s is not None), sum(s or 0 for s in sums), want))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="workload", required=True)
    p = sub.add_parser("aiohttp")
    p.add_argument("--requests", type=int, default=2000)
    p.add_argument("--concurrency", type=int, default=20)
    p = sub.add_parser("cpu")
    p.add_argument("--tasks", type=int, default=200)
    p = sub.add_parser("threads")
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--loops", type=int, default=4)
    p.add_argument("--coroutines", type=int, default=50)
    options = parser.parse_args()

    if options.workload == "aiohttp":
        work = aiohttp_workload(options.requests, options.concurrency)
    elif options.workload == "cpu":
        work = cpu_workload(options.tasks)
    else:
        work = threads_workload(options.calls, options.loops, options.coroutines)
    start = time.perf_counter()
    asyncio.run(asyncio.wait_for(work, DEADLINE))
    print("seconds: %.4f" % (time.perf_counter() - start))


if __name__ == "__main__":
    main()
