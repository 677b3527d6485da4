"""An agent's run as an OTLP/JSON trace export under the OpenTelemetry GenAI conventions.

What an instrumented agent's exporter would send, for agents that have no OpenTelemetry SDK at
hand. A step is a dict: ``kind`` (``llm`` or ``tool``), ``name``, and optionally ``input``,
``output`` and ``error`` (``{"type": ..., "message": ...}``).
"""

import json
import secrets
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple


def _attr(key: str, value: str) -> Dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def _failed(span: Dict[str, Any], error: Optional[Mapping[str, str]], at_ns: int) -> None:
    if not error:
        span["status"] = {"code": 1}
        return
    span["attributes"].append(_attr("error.type", error["type"]))
    span["status"] = {"code": 2, "message": error["message"]}
    span["events"] = [{
        "name": "exception",
        "timeUnixNano": str(at_ns),
        "attributes": [_attr("exception.type", error["type"]), _attr("exception.message", error["message"])],
    }]


def _step_span(trace_id: str, root_id: str, step: Mapping[str, Any], at: int) -> Dict[str, Any]:
    if step["kind"] == "llm":
        attributes = [_attr("gen_ai.operation.name", "chat"), _attr("gen_ai.request.model", step["name"])]
        if "input" in step:
            attributes.append(_attr("gen_ai.input.messages", _messages("user", step["input"])))
        if "output" in step:
            attributes.append(_attr("gen_ai.output.messages", _messages("assistant", step["output"])))
        name = f"chat {step['name']}"
    else:
        attributes = [_attr("gen_ai.operation.name", "execute_tool"), _attr("gen_ai.tool.name", step["name"])]
        if "input" in step:
            attributes.append(_attr("gen_ai.tool.call.arguments", step["input"]))
        if "output" in step:
            attributes.append(_attr("gen_ai.tool.call.result", step["output"]))
        name = f"execute_tool {step['name']}"
    span = {
        "traceId": trace_id, "spanId": secrets.token_hex(8), "parentSpanId": root_id, "name": name,
        "kind": 1, "startTimeUnixNano": str(at), "endTimeUnixNano": str(at + 1_000_000),
        "attributes": attributes, "events": [],
    }
    _failed(span, step.get("error"), at + 1_000_000)
    return span


def otlp_json_of_run(
    loop_id: str,
    agent: str,
    task: str,
    steps: Sequence[Mapping[str, Any]],
    error: Optional[Mapping[str, str]] = None,
    answer: Optional[str] = None,
    project_id: Optional[str] = None,
) -> Tuple[Dict[str, Any], str]:
    """One OTLP/JSON export request holding the run as one trace, and its trace id."""
    trace_id, root_id = secrets.token_hex(16), secrets.token_hex(8)
    start_ns = time.time_ns() - (2 * len(steps) + 2) * 1_000_000
    spans: List[Dict[str, Any]] = [
        _step_span(trace_id, root_id, step, start_ns + (1 + 2 * i) * 1_000_000) for i, step in enumerate(steps)
    ]
    root_attributes = [
        _attr("gen_ai.operation.name", "invoke_agent"), _attr("gen_ai.agent.name", agent),
        _attr("gen_ai.conversation.id", loop_id), _attr("gen_ai.input.messages", _messages("user", task)),
    ]
    if answer is not None:
        root_attributes.append(_attr("gen_ai.output.messages", _messages("assistant", answer)))
    end_ns = start_ns + (2 * len(steps) + 2) * 1_000_000
    root = {
        "traceId": trace_id, "spanId": root_id, "name": f"invoke_agent {agent}", "kind": 1,
        "startTimeUnixNano": str(start_ns), "endTimeUnixNano": str(end_ns),
        "attributes": root_attributes, "events": [],
    }
    if error:
        # The run's own failure: its type and status (the failing step carries the exception event).
        root["attributes"].append(_attr("error.type", error["type"]))
        root["status"] = {"code": 2, "message": error["message"]}
    else:
        root["status"] = {"code": 1}
    resource = [_attr("service.name", agent)]
    if project_id is not None:
        resource.append(_attr("reflector.project_id", project_id))
    export = {"resourceSpans": [{
        "resource": {"attributes": resource},
        "scopeSpans": [{"scope": {"name": "reflector_client"}, "spans": [root, *spans]}],
    }]}
    return export, trace_id
