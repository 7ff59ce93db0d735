"""Drives `deepr mcp` with the official MCP Python SDK (PyPI `mcp`), a client deepr did
not write. Run by cli/tests/mcp.rs: `python3 mcp_client.py SCENARIO` with DEEPR_BIN,
WORK (a temp dir: HOME, state dir, config) and CORPUS set. Exits non-zero on the first
failed check, saying which."""

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

DEEPR = os.environ["DEEPR_BIN"]
WORK = os.environ["WORK"]
CORPUS = os.environ["CORPUS"]
STATE = os.path.join(WORK, "state")
CONFIG = os.path.join(WORK, "deepr.toml")
TOPIC = "How does write-ahead logging keep a database durable, and what does a checkpoint do?"
TOKEN = "test-token-0123456789abcdef"
TOOLS = {"research", "plan_research", "ask_followup", "refresh_run", "run_status", "list_runs", "get_report", "get_sources", "verify_report",
         "estimate_cost", "search_past_research", "resume_run", "cancel_run"}


def check(condition, what):
    if not condition:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}", flush=True)


def env():
    clean = {k: v for k, v in os.environ.items()
             if k not in ("DEEPR_STATE_DIR", "DEEPR_DB", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
                          "DEEPR_EMBED_MODEL", "HF_HOME", "HF_HUB_CACHE", "DEEPR_MCP_TOKEN")}
    clean.update({"HOME": WORK, "XDG_STATE_HOME": os.path.join(WORK, "xdg-state"),
                  "XDG_CONFIG_HOME": os.path.join(WORK, "xdg-config"), "NO_COLOR": "1"})
    return clean


def write_config(latency):
    with open(CONFIG, "w") as f:
        f.write(f'offline_latency = "{latency}"\n')


def server_params():
    return StdioServerParameters(
        command=DEEPR,
        args=["--state-dir", STATE, "--config", CONFIG, "mcp", "--root", WORK, "--root", CORPUS,
              "--max-tokens-per-run", "5000000"],
        env=env(), cwd=WORK)


async def call(session, tool, args, **kw):
    result = await session.call_tool(tool, args, **kw)
    text = result.content[0].text if result.content else ""
    return result, text


async def expect_ok(session, tool, args, what, **kw):
    result, text = await call(session, tool, args, **kw)
    check(not result.is_error, f"{what} ({text[:200]})")
    return result.structured_content


async def expect_error(session, tool, args, needle, what):
    result, text = await call(session, tool, args)
    check(result.is_error and needle in text and "\n" not in text.strip(), f"{what}: {text!r}")


def journal_live_requests(run_id):
    path = os.path.join(STATE, "runs", run_id, "calls.jsonl")
    rows = [json.loads(line) for line in open(path) if line.strip()]
    return [r["request"] for r in rows if r.get("cache_hit") is False]


def above_run_details(path):
    return open(path).read().split("\n## Run details")[0]


def cli_run(run_id):
    """The same research from the command line: the baseline an MCP run must match."""
    out = os.path.join(WORK, "cli", run_id, "report.md")
    # Its own state dir: the MCP runs' response cache must not serve it.
    done = subprocess.run([DEEPR, "--quiet", "--state-dir", os.path.join(WORK, "cli-state"), "--config", CONFIG, "run", TOPIC,
                           "--corpus", CORPUS, "--depth", "quick", "--run-id", run_id, "--out", out,
                           "--max-tokens", "5000000", "--max-cost", "5"],
                          env=env(), cwd=WORK, capture_output=True, text=True, timeout=600)
    check(done.returncode == 0, f"the CLI run finished ({done.stderr[-300:]})")
    return out


def usage_of(report_md):
    usage = json.load(open(report_md[:-3] + ".json"))["usage"]
    return usage["prompt_tokens"] + usage["completion_tokens"], usage["calls"]


async def wait_for_steps(session, run_id, steps, limit_s=120):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        status = await expect_ok(session, "run_status", {"run_id": run_id}, "run_status answers")
        if status["progress"]["steps_finished"] >= steps:
            return status
        await anyio.sleep(0.2)
    raise SystemExit(f"FAILED: run {run_id} did not reach {steps} steps in {limit_s}s")


async def flow():
    """Initialize, list, research to the end with progress, read, verify, refuse."""
    write_config("0ms")
    async with stdio_client(server_params()) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(init.server_info.name == "deepr", "the server says it is deepr")
            tools = (await session.list_tools()).tools
            check({t.name for t in tools} == TOOLS, f"the tool list: {sorted(t.name for t in tools)}")
            check(all(t.description and t.input_schema.get("type") == "object" for t in tools),
                  "every tool has a description and a JSON schema")
            estimate = await expect_ok(session, "estimate_cost", {"depth": "quick"}, "estimate_cost")
            check(estimate["tokens"][0] > 0, f"the estimate counts tokens: {estimate['summary']}")
            progress = []

            async def on_progress(done, total, message):
                progress.append((done, total, message))

            started = time.monotonic()
            status = await expect_ok(session, "research", {
                "topic": TOPIC, "corpus": CORPUS, "depth": "quick", "run_id": "mcp-flow",
                "wait_s": 300}, "research runs", progress_callback=on_progress)
            seconds = time.monotonic() - started
            check(status["state"] == "finished", f"the research finished: {status['detail']}")
            check(len(progress) >= 1 and all("tokens so far" in (m or "") for _, _, m in progress),
                  f"progress notifications came ({len(progress)}; last: {progress[-1] if progress else None})")
            report = await expect_ok(session, "get_report", {"run_id": "mcp-flow"}, "get_report")
            check("## Run details" in report["text"] and "[^1]" in report["text"],
                  "the markdown report has footnoted quotes")
            sidecar = await expect_ok(session, "get_report", {"run_id": "mcp-flow", "format": "json"},
                                      "get_report json")
            check(json.loads(sidecar["text"])["schema"].startswith("deepr.report"), "the JSON sidecar")
            summary = await expect_ok(session, "get_report", {"run_id": "mcp-flow", "section": "Summary"},
                                      "get_report one section")
            check(summary["text"].startswith("## Summary") and "## Run details" not in summary["text"],
                  "a section alone")
            sources = await expect_ok(session, "get_sources", {"run_id": "mcp-flow"}, "get_sources")
            check(sources["sources"] and all(s["quotes"] for s in sources["sources"]),
                  f"cited sources with quotes ({len(sources['sources'])})")
            verified = await expect_ok(session, "verify_report", {"run_id": "mcp-flow"}, "verify_report")
            check(verified["outcome"] == "PASS", f"verify_report: {verified['summary']}")
            resources = (await session.list_resources()).resources
            uris = {str(r.uri) for r in resources}
            check("deepr://runs/mcp-flow/report.md" in uris and "deepr://runs/mcp-flow/report.json" in uris,
                  "the reports are resources")
            read = await session.read_resource("deepr://runs/mcp-flow/report.md")
            check(read.contents[0].text == open(report["path"]).read(), "the resource is the report")
            found = await expect_ok(session, "search_past_research", {"query": "write-ahead logging checkpoint"},
                                    "search_past_research")
            check(any(r["run_id"] == "mcp-flow" for r in found["runs"]), "research memory finds the run")
            await refusals(session)
            runs = await expect_ok(session, "list_runs", {}, "list_runs after the refusals")
            check([r["run_id"] for r in runs["runs"]] == ["mcp-flow"], "no refused call created a run")
    mcp_tokens = usage_of(report["path"])
    cli_tokens = usage_of(cli_run("cli-flow"))
    check(mcp_tokens == cli_tokens, f"MCP and CLI spend the same: {mcp_tokens} vs {cli_tokens}")
    check(above_run_details(report["path"]) == above_run_details(os.path.join(WORK, "cli", "cli-flow", "report.md")),
          "MCP and CLI write the same report")
    print(f"figures: research through MCP {seconds:.1f}s, tokens and calls {mcp_tokens}; CLI {cli_tokens}")


async def refusals(session):
    outside = os.path.dirname(os.path.dirname(DEEPR))
    await expect_error(session, "research", {"topic": TOPIC, "corpus": outside}, "outside the allowed roots",
                       "a corpus outside the roots is refused")
    link = os.path.join(WORK, "escape")
    if not os.path.islink(link):
        os.symlink(outside, link)
    await expect_error(session, "research", {"topic": TOPIC, "corpus": link}, "outside the allowed roots",
                       "a symlink out of the roots is refused")
    await expect_error(session, "research", {"topic": TOPIC, "corpus": CORPUS, "max_tokens": 9000000}, "cap",
                       "a budget above the cap is refused")
    await expect_error(session, "research", {"topic": TOPIC, "corpus": CORPUS, "max_cost": 1e9}, "cap",
                       "a cost above the cap is refused")
    await expect_error(session, "research", {"corpus": CORPUS}, "topic is required", "a research without a topic")
    await expect_error(session, "research", {"topic": TOPIC, "depth": "bottomless"}, "not one of",
                       "an unknown depth")
    await expect_error(session, "research", {"topic": TOPIC, "llm_base_url": "http://evil"}, "unknown argument",
                       "model settings do not cross the protocol")
    await expect_error(session, "run_status", {"run_id": "../../etc"}, "not a run id", "a path as run id")
    await expect_error(session, "get_report", {"run_id": "nope"}, "no run nope", "an unknown run")
    await expect_error(session, "verify_report", {"path": "/etc/passwd"}, "outside the allowed roots",
                       "verify_report reads only under the roots")
    await expect_error(session, "cancel_run", {"run_id": "mcp-flow"}, "not executing", "cancel of a finished run")
    await expect_error(session, "no_such_tool", {}, "unknown tool", "an unknown tool")


async def plan_review():
    """plan_research returns the plan without researching; research with the plan,
    edited, asks exactly its subquestions; a malformed plan is a one-line error."""
    write_config("0ms")
    async with stdio_client(server_params()) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            planned = await expect_ok(session, "plan_research", {"topic": TOPIC, "corpus": CORPUS, "depth": "quick",
                                                                 "run_id": "mcp-plan"}, "plan_research")
            check(planned["state"] == "planned", f"the plan-only run ended planned: {planned['detail']}")
            plan = planned.get("plan", "")
            check("[[subquestion]]" in plan and "estimate for depth quick" in plan, f"the plan came back: {plan[:300]!r}")
            check(not os.path.exists(os.path.join(STATE, "reports", "mcp-plan", "report.md")), "nothing was researched")
            # Edit: keep the first subquestion, replace the others with one of the agent's own.
            head, *questions = plan.split("\n[[subquestion]]\n")
            mine = 'question = "What does a checkpoint copy back into the database?"\nqueries = ["checkpoint copies wal frames"]\n'
            edited = head + "\n[[subquestion]]\n" + questions[0] + "\n[[subquestion]]\n" + mine
            first = [line for line in questions[0].splitlines() if line.startswith("question = ")][0]
            first = json.loads(first[len("question = "):])
            status = await expect_ok(session, "research", {"plan": edited, "corpus": CORPUS, "run_id": "mcp-planned",
                                                           "wait_s": 300}, "research with a reviewed plan")
            check(status["state"] == "finished", f"the planned research finished: {status['detail']}")
            report = json.load(open(os.path.join(STATE, "reports", "mcp-planned", "report.json")))
            asked = [q["text"] for q in report["subquestions"] if q["round"] == 0]
            check(asked == [first, "What does a checkpoint copy back into the database?"],
                  f"exactly the edited plan's subquestions were asked: {asked}")
            check(not any('"stage":"decompose"' in line for line in
                          open(os.path.join(STATE, "runs", "mcp-planned", "calls.jsonl"))), "no planning call")
            verified = await expect_ok(session, "verify_report", {"run_id": "mcp-planned"}, "verify_report")
            check(verified["outcome"] == "PASS", verified["summary"])
            await expect_error(session, "research", {"plan": 'topic = "t"\ndepth = "quick"\n[[subquestion]]\nquestoin = "a"\n',
                                                     "corpus": CORPUS}, "line 4", "a malformed plan names its line")


async def later():
    """ask_followup answers from what a finished run read; refresh_run with if_changed
    does nothing when nothing changed, and without it writes what changed."""
    write_config("0ms")
    async with stdio_client(server_params()) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            status = await expect_ok(session, "research", {"topic": TOPIC, "corpus": CORPUS, "depth": "quick",
                                                           "run_id": "mcp-parent", "wait_s": 300}, "research")
            check(status["state"] == "finished", f"the parent finished: {status['detail']}")
            asked = await expect_ok(session, "ask_followup", {"run_id": "mcp-parent", "wait_s": 300,
                                                             "question": "What does a checkpoint copy back into the database?"},
                                    "ask_followup")
            check(asked["state"] == "finished", f"the follow-up finished: {asked['detail']}")
            verified = await expect_ok(session, "verify_report", {"run_id": asked["run_id"]}, "verify the follow-up")
            check(verified["outcome"] == "PASS", verified["summary"])
            record = json.load(open(os.path.join(STATE, "runs", asked["run_id"], "run.json")))["record"]
            check(record["lineage"]["parent"] == "mcp-parent" and record["sources"] == ["earlier"],
                  f"the follow-up reads the parent's documents: {record['sources']}")
            idle = await expect_ok(session, "refresh_run", {"run_id": "mcp-parent", "if_changed": True}, "refresh_run if_changed")
            check(idle["state"] == "unchanged", f"nothing changed, nothing ran: {idle}")
            refreshed = await expect_ok(session, "refresh_run", {"run_id": "mcp-parent", "wait_s": 300}, "refresh_run")
            check(refreshed["state"] == "finished", f"the refresh finished: {refreshed['detail']}")
            report = await expect_ok(session, "get_report", {"run_id": refreshed["run_id"]}, "get_report of the refresh")
            text = json.dumps(report)
            check("What changed since" in text, "the refresh says what changed")
            await expect_error(session, "ask_followup", {"run_id": "mcp-parent", "question": "x", "search": "yes"},
                               "true or false", "a malformed flag")


async def cancel_resume():
    """cancel_run checkpoints and stops; resume_run finishes paying nothing twice."""
    write_config("150ms")
    async with stdio_client(server_params()) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            status = await expect_ok(session, "research", {"topic": TOPIC, "corpus": CORPUS, "depth": "quick",
                                                           "run_id": "mcp-cancel"}, "research starts")
            check(status["state"] == "running", "research returns at once with the run id")
            await wait_for_steps(session, "mcp-cancel", 3)
            await expect_error(session, "resume_run", {"run_id": "mcp-cancel"}, "executing in this server",
                               "a run executing here is not resumed twice")
            stopped = await expect_ok(session, "cancel_run", {"run_id": "mcp-cancel"}, "cancel_run")
            check(stopped["state"] == "interrupted" and stopped["resumable"], f"cancelled: {stopped['detail']}")
            finished = await expect_ok(session, "resume_run", {"run_id": "mcp-cancel", "wait_s": 300}, "resume_run")
            check(finished["state"] == "finished", f"resumed to the end: {finished['detail']}")
            verified = await expect_ok(session, "verify_report", {"run_id": "mcp-cancel"}, "verify_report")
            check(verified["outcome"] == "PASS", verified["summary"])
    requests = journal_live_requests("mcp-cancel")
    check(len(requests) == len(set(requests)), f"no model call paid twice ({len(requests)} calls)")


async def start_and_wait(steps):
    async with stdio_client(server_params()) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await expect_ok(session, "research", {"topic": TOPIC, "corpus": CORPUS, "depth": "quick",
                                                  "run_id": "mcp-killed"}, "research starts")
            await wait_for_steps(session, "mcp-killed", steps)
            pid = int(open(os.path.join(STATE, "runs", "mcp-killed", "owner.json")).read().split('"pid":')[1].split(",")[0])
            os.kill(pid, signal.SIGKILL)
            print(f"killed the server (pid {pid}) mid-run", flush=True)
            await anyio.sleep(0.5)


async def kill9():
    """kill -9 of the server mid-run; a new server lists the run and resumes it."""
    write_config("150ms")
    try:
        await start_and_wait(4)
    except BaseException as e:  # the client's transport breaks when its server dies
        print(f"the first client ended with {type(e).__name__}", flush=True)
    async with stdio_client(server_params()) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            runs = await expect_ok(session, "list_runs", {}, "list_runs")
            killed = [r for r in runs["runs"] if r["run_id"] == "mcp-killed"]
            check(killed and killed[0]["state"] == "killed" and killed[0]["resumable"],
                  f"the new server lists the run as resumable: {killed}")
            finished = await expect_ok(session, "resume_run", {"run_id": "mcp-killed", "wait_s": 300}, "resume_run")
            check(finished["state"] == "finished", f"the run finished: {finished['detail']}")
    requests = journal_live_requests("mcp-killed")
    check(len(requests) == len(set(requests)), f"no model call paid twice ({len(requests)} calls)")
    write_config("0ms")
    baseline = cli_run("cli-uninterrupted")
    report = json.load(open(os.path.join(STATE, "runs", "mcp-killed", "run.json")))["record"]["out"]
    check(above_run_details(report) == above_run_details(baseline),
          "the resumed report equals an uninterrupted run's above ## Run details")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def http():
    """The HTTP transport: refused without the token, the research flow with it."""
    write_config("0ms")
    args = ["--state-dir", STATE, "--config", CONFIG, "mcp", "--root", WORK, "--root", CORPUS]
    refused = subprocess.run([DEEPR, *args, "--http", "127.0.0.1:1"], env=env(), capture_output=True, text=True,
                             timeout=30)
    check(refused.returncode == 2 and "DEEPR_MCP_TOKEN" in refused.stderr, "no token: HTTP does not start")
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = subprocess.Popen([DEEPR, *args, "--http", f"127.0.0.1:{port}"], env={**env(), "DEEPR_MCP_TOKEN": TOKEN},
                              cwd=WORK, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
        for header in (None, "Bearer wrong-token", f"Basic {TOKEN}"):
            request = urllib.request.Request(url, data=body, method="POST", headers={
                "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
            if header:
                request.add_header("Authorization", header)
            try:
                urllib.request.urlopen(request, timeout=10)
                check(False, f"Authorization {header!r} was let in")
            except urllib.error.HTTPError as e:
                check(e.code == 401, f"Authorization {header!r} is refused with 401")
        huge = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"pad": "x" * (8 << 20)}}).encode()
        request = urllib.request.Request(url, data=huge, method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {TOKEN}"})
        try:
            urllib.request.urlopen(request, timeout=30)
            check(False, "an 8 MiB request body was accepted")
        except urllib.error.HTTPError as e:
            check(e.code == 413, f"an 8 MiB request body is refused with 413 ({e.code})")
        except (urllib.error.URLError, ConnectionError) as e:
            check(True, f"an 8 MiB request body is cut off ({e})")
        check(server.poll() is None, "the HTTP server is alive after an oversized body")
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        async with client:
            async with streamable_http_client(url, http_client=client) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    status = await expect_ok(session, "research", {"topic": TOPIC, "corpus": CORPUS, "depth": "quick",
                                                                   "run_id": "mcp-http", "wait_s": 300}, "research over HTTP")
                    check(status["state"] == "finished", "the research finished over HTTP")
                    verified = await expect_ok(session, "verify_report", {"run_id": "mcp-http"}, "verify over HTTP")
                    check(verified["outcome"] == "PASS", verified["summary"])
        check(server.poll() is None, "the HTTP server is still serving")
    finally:
        server.terminate()
        server.wait(60)


def malformed():
    """Malformed JSON-RPC and random arguments on raw stdio: every line answered or
    ignored, no panic, no exit."""
    write_config("0ms")
    rng = random.Random(20261203)
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
    lines = [json.dumps(init), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    fixed = ["{not json", "[]", "null", '"str"', "{}", '{"jsonrpc":"2.0"}', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":5}',
             '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}',
             '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"research","arguments":"zz"}}',
             '{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"deepr://runs/../../etc/passwd"}}',
             '{"jsonrpc":"2.0","id":5,"method":"no/such/method"}', "\u0000\u0001\u0002", "{" * 5000]
    lines += fixed
    values = [None, True, -1, 0, 1e308, "", "x" * 3000, "../..", [], {}, [1, "a"], {"a": {"b": []}}, "quick"]
    keys = ["topic", "corpus", "run_id", "depth", "wait_s", "max_tokens", "max_cost", "format", "section",
            "query", "path", "formats", "max_time", "strategy", "sources"]
    for i in range(300):
        tool = rng.choice(sorted(TOOLS) + ["", "x"])
        arguments = {rng.choice(keys): rng.choice(values) for _ in range(rng.randint(0, 4))}
        if tool in ("research", "resume_run"):
            arguments["wait_s"] = 0
            arguments.pop("corpus", None)
            arguments["topic"] = arguments.get("topic") if rng.random() < 0.5 else TOPIC
            arguments["sources"] = "corpus"
        message = {"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        text = json.dumps(message)
        if rng.random() < 0.2:
            cut = rng.randint(1, len(text) - 1)
            text = text[:cut]
        lines.append(text)
    lines.append(json.dumps({"jsonrpc": "2.0", "id": 9999, "method": "ping"}))
    server = subprocess.Popen([DEEPR, *server_params().args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env(), cwd=WORK, text=True)
    for line in lines:
        server.stdin.write(line + "\n")
    server.stdin.flush()
    answered = set()
    deadline = time.monotonic() + 120
    while 9999 not in answered and time.monotonic() < deadline:
        reply = server.stdout.readline()
        if not reply:
            break
        try:
            answered.add(json.loads(reply).get("id"))
        except json.JSONDecodeError:
            check(False, f"the server wrote a line that is not JSON: {reply[:200]!r}")
    check(9999 in answered and server.poll() is None, f"alive after {len(lines)} hostile lines ({len(answered)} answers)")
    server.stdin.close()
    code = server.wait(90)
    stderr = server.stderr.read()
    check("panicked" not in stderr, "no panic")
    check(code == 0, f"a clean exit when stdin closes (exit {code})")


def psql(url, sql):
    done = subprocess.run(["psql", url, "-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True, text=True,
                          timeout=60)
    check(done.returncode == 0, f"psql: {sql} ({done.stderr.strip()})")


async def fleet():
    """With a fleet database, research queues the run, a worker runs it, and the run
    tools read the fleet: status, report, sources, verify (the stored bundle)."""
    write_config("0ms")
    admin = os.environ.get("DEEPR_TEST_PG", "postgres://postgres@127.0.0.1:5432/postgres")
    name = f"deepr_mcp_{os.getpid()}"
    psql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    psql(admin, f"CREATE DATABASE {name}")
    url = admin.rsplit("/", 1)[0] + "/" + name
    worker = None
    try:
        migrated = subprocess.run([DEEPR, "--db", url, "db", "migrate"], env=env(), capture_output=True, text=True,
                                  timeout=120)
        check(migrated.returncode == 0, f"the fleet database is migrated ({migrated.stderr.strip()})")
        worker = subprocess.Popen([DEEPR, "--db", url, "--state-dir", os.path.join(WORK, "worker-state"), "--quiet",
                                   "worker", "--concurrency", "2"], env=env(), cwd=WORK,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        params = server_params()
        params.args = ["--db", url, *params.args]
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                status = await expect_ok(session, "research", {"topic": TOPIC, "corpus": CORPUS, "depth": "quick",
                                                               "run_id": "mcp-fleet", "wait_s": 300},
                                         "research queues into the fleet")
                check(status["fleet"] and status["state"] == "finished", f"a worker ran it: {status['detail']}")
                runs = await expect_ok(session, "list_runs", {}, "list_runs on the fleet")
                check([r["run_id"] for r in runs["runs"]] == ["mcp-fleet"], "the fleet's runs")
                report = await expect_ok(session, "get_report", {"run_id": "mcp-fleet"}, "get_report from the fleet")
                check("## Run details" in report["text"], "the fleet's stored report")
                sources = await expect_ok(session, "get_sources", {"run_id": "mcp-fleet"}, "get_sources")
                check(sources["sources"], "cited sources from the fleet")
                verified = await expect_ok(session, "verify_report", {"run_id": "mcp-fleet"}, "verify_report")
                check(verified["outcome"] == "PASS", f"the stored bundle verifies: {verified['summary']}")
                read = await session.read_resource("deepr://runs/mcp-fleet/report.md")
                check(read.contents[0].text == report["text"], "the fleet report is a resource")
                await expect_error(session, "cancel_run", {"run_id": "mcp-fleet"}, "workers",
                                   "fleet runs are stopped by their workers")
                await expect_error(session, "run_status", {"run_id": "nope"}, "no run nope", "an unknown fleet run")
        check(worker.poll() is None, "the worker is still serving")
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(60)
        psql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


SCENARIOS = {"flow": flow, "plan": plan_review, "later": later, "cancel": cancel_resume, "kill9": kill9, "http": http, "fleet": fleet}

if __name__ == "__main__":
    name = sys.argv[1]
    if name == "malformed":
        malformed()
    else:
        anyio.run(SCENARIOS[name])
    print(f"PASS {name}")
