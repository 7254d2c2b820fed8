"""make demo-python: the aiohttp workload (workloads.py) profiled through
the Python API, with the timing plugin's report on stderr and its Chrome
trace written for Perfetto UI (ui.perfetto.dev) or speedscope.

    demo.py [TRACE.json] [REQUESTS]

aiohttp is imported before profiling starts (its import would fill the
trace), and only the workload's code and aiohttp's request handling
(web_protocol, web_app) are reported: a trace of the requests themselves,
each handler's segments linked across its suspensions.
"""
import asyncio
import os
import sys

import aiohttp
import aiohttp.web  # noqa: F401  (the workload imports it: before profiling too)

import asyncelt
import workloads

trace = sys.argv[1] if len(sys.argv) > 1 else "demo-python-trace.json"
requests = int(sys.argv[2]) if len(sys.argv) > 2 else 40
aiohttp_dir = os.path.dirname(aiohttp.__file__)
include = [workloads.__file__] + [os.path.join(aiohttp_dir, name)
                                  for name in ("web_protocol.py", "web_app.py")]

with asyncelt.profile("timing:trace=" + trace, include=include):
    asyncio.run(workloads.aiohttp_workload(requests, 4))
asyncelt.shutdown()
print("trace: %s (ui.perfetto.dev, or speedscope)" % trace)
