"""An agent's side of Reflector, in Python with confluent-kafka.

Publishes one ``agent.task.completed`` event (checked against the JSON Schema in schemas/ first)
and waits for the ``loop.decision`` Reflector publishes for it::

    pip install -r examples/producers/python/requirements.txt
    KAFKA_BROKERS=127.0.0.1:9092 python examples/producers/python/producer.py

Settings (environment): KAFKA_BROKERS, TOPIC_TASK_COMPLETED (agent.task.completed),
TOPIC_LOOP_DECISION (loop.decision), TENANT_ID (example-tenant), TIMEOUT_MS (60000).
Prints the decision as JSON on stdout; exits 1 when the event is invalid or no decision comes.
"""

import json
import os
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

from confluent_kafka import Consumer, KafkaException, Producer
from jsonschema import Draft7Validator, FormatChecker

BROKERS = os.environ.get("KAFKA_BROKERS", "127.0.0.1:9092")
INPUT_TOPIC = os.environ.get("TOPIC_TASK_COMPLETED", "agent.task.completed")
DECISION_TOPIC = os.environ.get("TOPIC_LOOP_DECISION", "loop.decision")
TENANT_ID = os.environ.get("TENANT_ID", "example-tenant")
TIMEOUT_S = int(os.environ.get("TIMEOUT_MS", "60000")) / 1000

# The contract: the JSON Schemas Reflector publishes (schemas/, also written by `npm run schemas`).
SCHEMAS = Path(__file__).resolve().parents[3] / "schemas"


def contract(name: str) -> Draft7Validator:
    schema = json.loads((SCHEMAS / f"{name}.json").read_text(encoding="utf-8"))
    return Draft7Validator(schema, format_checker=FormatChecker())


def iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def task_completed() -> dict:
    """One finished task: a database query that timed out, the kind of failure Reflector learns from."""
    run = str(uuid.uuid4())
    now = datetime.now(timezone.utc)
    return {
        "schemaVersion": 1,
        "eventId": f"evt-{run}",
        "tenantId": TENANT_ID,
        "projectId": "orders",
        "agentId": "order-analyst",
        "taskId": f"task-{run}",
        # Reflector keys its outputs by loopId: a rerun it asks for gets a new one (newLoopId).
        "loopId": f"loop-{run}",
        "occurredAt": iso(now),
        "task": {
            "description": "Fetch a customer's order history",
            "goal": "List every order of customer 4411",
        },
        "outcome": "timeout",
        "error": {
            "category": "timeout_error",
            "type": "query_timeout",
            "code": "QUERY_TIMEOUT",
            "message": "Query execution exceeded 30s limit",
        },
        "events": [
            {
                "eventId": "e1",
                "type": "tool_call",
                "timestamp": iso(now - timedelta(seconds=30)),
                "toolName": "postgres_query",
                "actor": "order-analyst",
                "content": "SELECT * FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.id = 4411",
                "metadata": {"timeout_ms": 30000},
            },
            {
                "eventId": "e2",
                "type": "error_event",
                "timestamp": iso(now),
                "toolName": "postgres_query",
                "actor": "order-analyst",
                "content": "Query timeout after 30 seconds",
                "error": {
                    "message": "canceling statement due to statement timeout",
                    "code": "QUERY_TIMEOUT",
                },
            },
        ],
    }


def decode(value: bytes) -> dict:
    """JSON, or with a schema registry the Confluent wire format (0, 4-byte id, JSON)."""
    return json.loads(value[5:] if value[:1] == b"\x00" else value)


def problems(validator: Draft7Validator, value: dict) -> list[str]:
    return [
        f"{'.'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}"
        for error in validator.iter_errors(value)
    ]


def main() -> int:
    event = task_completed()
    invalid = problems(contract("task-completed.v1"), event)
    if invalid:
        print("invalid event: " + "; ".join(invalid), file=sys.stderr)
        return 1

    assigned = []

    def start_at_end(c: Consumer, partitions: list) -> None:
        # Start at the current end of each partition, before the event goes out, so the decision
        # (published after it) cannot be missed.
        for partition in partitions:
            partition.offset = c.get_watermark_offsets(partition, timeout=10)[1]
        c.assign(partitions)
        assigned.extend(partitions)

    consumer = Consumer(
        {
            "bootstrap.servers": BROKERS,
            "group.id": f"example-producer-{uuid.uuid4()}",
            "auto.offset.reset": "latest",
            # Reflector commits its outputs in Kafka transactions: read only committed ones.
            "isolation.level": "read_committed",
        }
    )
    consumer.subscribe([DECISION_TOPIC], on_assign=start_at_end)
    deadline = time.monotonic() + TIMEOUT_S
    while not assigned and time.monotonic() < deadline:
        consumer.poll(0.2)

    producer = Producer({"bootstrap.servers": BROKERS, "enable.idempotence": True})
    # Key = loopId keeps one loop's events in order. A W3C `traceparent` header ties Reflector's
    # work to the agent's own trace when the agent is traced.
    producer.produce(INPUT_TOPIC, key=event["loopId"], value=json.dumps(event).encode("utf-8"))
    if producer.flush(10) > 0:
        print("the event could not be delivered", file=sys.stderr)
        return 1
    print(
        f"published {event['eventId']} (loop {event['loopId']}) to {INPUT_TOPIC}; waiting for its decision",
        file=sys.stderr,
    )

    decision = None
    try:
        while decision is None and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error():
                raise KafkaException(message.error())
            if message.value() is None:
                continue
            value = decode(message.value())
            if value.get("sourceEventId") == event["eventId"]:
                decision = value
    finally:
        consumer.close()

    if decision is None:
        print(f"no loop.decision for {event['eventId']} within {TIMEOUT_S:.0f} s", file=sys.stderr)
        return 1
    invalid = problems(contract("loop-decision.v1"), decision)
    if invalid:
        print("the decision does not match loop-decision.v1: " + "; ".join(invalid), file=sys.stderr)
        return 1
    # "rerun" (run the loop again as newLoopId), "finalize" or "halt", with the reason.
    print(json.dumps(decision, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
