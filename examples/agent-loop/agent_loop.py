"""An agent's loop with Reflector over HTTP, in Python, with the reflector_client package.

The same loop as agent-loop.ts: run the task, send the run as an OTLP/JSON trace
(POST /v1/traces), wait for the loop's decision (polling the loops API), and on `rerun`
put the lessons into the prompt (as advice from past runs, given as data) and run again under
the new loop id.

    python3 -m venv .venv && .venv/bin/pip install clients/python
    REFLECTOR_URL=http://localhost:8080 REFLECTOR_API_KEY=... .venv/bin/python examples/agent-loop/agent_loop.py

The key needs the `decide` and `read` roles; Reflector needs OTLP_TOPIC set.
"""

import os
import re
import secrets
import sys

from reflector_client import ReflectorApiError, ReflectorClient, lessons_prompt

TASK = "Export last quarter's orders with their line items for the churn analysis"
TOOLS = ["postgres_query"]
TIMEOUT_S = float(os.environ.get("TIMEOUT_MS", "120000")) / 1000

client = ReflectorClient(
    os.environ.get("REFLECTOR_URL", "http://127.0.0.1:8080"),
    os.environ.get("REFLECTOR_API_KEY", ""),
)


def run_agent(prompt):
    """The stand-in model: it pages through the orders only when its prompt tells it to."""
    bounded = re.search(r"\b(LIMIT|paginat\w*|pages?|batch\w*|bounded)\b", prompt, re.IGNORECASE)
    if bounded:
        query = "SELECT o.id, li.sku FROM orders o JOIN order_line_items li ON li.order_id = o.id WHERE o.id > $1 ORDER BY o.id LIMIT 1000"
        steps = [{"kind": "llm", "name": "gpt-4o", "input": prompt, "output": query},
                 {"kind": "tool", "name": "postgres_query", "input": query, "output": "48 pages of 1000 rows"}]
        return steps, None, "Exported 47,812 orders in 48 pages."
    query = "SELECT * FROM orders o JOIN order_line_items li ON li.order_id = o.id WHERE o.created_at >= '2026-07-01'"
    failure = {"type": "query_timeout",
               "message": "canceling statement due to statement timeout after 30000 ms (Seq Scan on order_line_items)"}
    steps = [{"kind": "llm", "name": "gpt-4o", "input": prompt, "output": query},
             {"kind": "tool", "name": "postgres_query", "input": query, "error": failure}]
    return steps, {"type": "tool_error", "message": "the export query timed out"}, None


def lessons_for(decision):
    """The lessons the decision carries, else the lessons for the task."""
    try:
        # The rerun's loop id: the lessons served are remembered for it, and its outcome counts for them.
        return client.lessons_for_rerun(decision, TASK, tools=TOOLS, loop_id=decision["new_loop_id"])
    except ReflectorApiError as err:
        if err.status != 404:
            raise
        # A Reflector without lessons for a task: the stored lessons about the tool.
        items = client.list_reflections(q=TOOLS[0], limit=3)["items"]
        return [{"prompt": item["strategy_text"]} for item in items if item.get("strategy_text")]


def main():
    loop_id = os.environ.get("LOOP_ID") or f"orders-export-py-{secrets.token_hex(4)}"
    lessons = []
    for attempt in range(1, 4):
        guidance = lessons_prompt(lessons)
        prompt = (guidance + "\n\n" if guidance else "") + f"Task: {TASK}"
        steps, error, answer = run_agent(prompt)
        print(f"attempt {attempt} (loop {loop_id}): " + (f"failed — {error['message']}" if error else "succeeded"))
        client.send_run(loop_id, "orders-exporter", TASK, steps, error, answer)
        decision = client.wait_for_decision(loop_id, timeout=TIMEOUT_S)
        reason = f" ({decision['rerun_reason']})" if decision.get("rerun_reason") else ""
        print(f"decision: {decision['decision']}{reason}", flush=True)
        if decision["decision"] != "rerun" or not decision.get("new_loop_id"):
            return 1 if error else 0
        lessons = lessons_for(decision)
        if not lessons:
            print("no lesson to apply: stopping")
            return 1
        print("lessons for the rerun:\n" + "\n".join(f"  - {lesson['prompt']}" for lesson in lessons))
        loop_id = decision["new_loop_id"]
    return 1


if __name__ == "__main__":
    sys.exit(main())
