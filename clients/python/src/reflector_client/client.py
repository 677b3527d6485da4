"""The Python client of Reflector's HTTP API (standard library only).

Send a run (OTLP over HTTP) or have it reflected on at once, wait for its loop's decision (by
polling the loops API: no Kafka client), fetch the lessons that apply to a task before it starts,
list and rate lessons. Requests and answers are snake_case, as the API is.
"""

import re
import time
import urllib.parse
import uuid
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ._http import Transport, drop_none
from ._otlp import otlp_json_of_run
from .errors import ReflectorApiError

_FOR_TASK_SNAKE_ONLY = ("agent_id", "project_id", "min_importance", "min_relevance", "loop_id")


def _snake(key: str) -> str:
    return re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), key)


def _camel(key: str) -> str:
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), key)


def snake_keys(value: Any) -> Any:
    """Every key of an answer, at every depth, in snake_case (older servers answered some in camelCase)."""
    if isinstance(value, list):
        return [snake_keys(v) for v in value]
    if isinstance(value, dict):
        return {_snake(k): snake_keys(v) for k, v in value.items()}
    return value


def _refuses_fields(err: Exception, fields: Sequence[str]) -> bool:
    """A 400 of a server that does not know these fields (an older spelling of the API)."""
    if not isinstance(err, ReflectorApiError) or err.status != 400:
        return False
    text = "\n".join([err.detail or "", *(str(i) for i in err.issues)])
    return bool(re.search(r"unrecognized|unknown", text, re.IGNORECASE)) and any(f in text for f in fields)


class ReflectorClient:
    """A client of one Reflector; every call raises ReflectorApiError when Reflector answers an error.

    ``timeout`` is each attempt's limit in seconds. 429 and 503 are retried ``retries`` times with
    exponential backoff and full jitter from ``base_delay`` up to ``max_delay`` seconds, honouring
    ``Retry-After`` up to ``max_retry_after`` (a longer one is raised at once); network errors and
    timeouts are retried for idempotent calls only (every call here is, but for none).
    """

    def __init__(self, base_url: str, api_key: str, **options: Any):
        self._http = Transport(base_url, api_key, **options)
        # What an older server taught this client: camelCase lessons for a task, `k` for page sizes.
        self._for_task_in_camel_case = False
        self._pages_with_k = False

    # --- runs, decisions -----------------------------------------------------------------------

    def send_otlp(self, export: Mapping[str, Any], *, timeout: Optional[float] = None) -> None:
        """Sends one OTLP/JSON trace export (POST /v1/traces); spans are stored by id, so a retry sends nothing twice."""
        self._http.request("POST", "/v1/traces", json_body=export, idempotent=True, timeout=timeout)

    def send_run(
        self,
        loop_id: str,
        agent: str,
        task: str,
        steps: Sequence[Mapping[str, Any]],
        error: Optional[Mapping[str, str]] = None,
        answer: Optional[str] = None,
        project_id: Optional[str] = None,
    ) -> str:
        """Sends a run as one OTLP trace under the GenAI conventions; returns its trace id."""
        export, trace_id = otlp_json_of_run(loop_id, agent, task, steps, error, answer, project_id)
        self.send_otlp(export)
        return trace_id

    def reflect(
        self, run: Mapping[str, Any], *, timeout: Optional[float] = None, wait: float = 120.0, interval: float = 1.0
    ) -> Dict[str, Any]:
        """Reflects on one run at once (POST /api/v1/reflect, a key with ``decide``).

        ``run`` is a task-completed event or an OTLP/JSON export; the answer holds the reflection,
        its verdict and the loop's decision. Idempotent by event id, so it is retried like a read.
        When the server's deadline passes first (202, ``status: "pending"``), the outcome is
        fetched until it is there or ``wait`` seconds passed; the pending answer is returned then.
        """
        status, answer = self._http.exchange(
            "POST", "/api/v1/reflect", json_body=run, idempotent=True, timeout=timeout
        )
        if status != 202 or not isinstance(answer, dict) or "event_id" not in answer:
            return answer
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            time.sleep(interval)
            outcome = self.reflect_outcome(answer["event_id"])
            if outcome is not None:
                return outcome
        return answer

    def reflect_outcome(self, event_id: str) -> Optional[Dict[str, Any]]:
        """The outcome of a run reflected before (over HTTP or from Kafka) by its event id; None while there is none."""
        try:
            return self._http.request(
                "GET", "/api/v1/reflect/" + urllib.parse.quote(event_id, safe=""), idempotent=True
            )
        except ReflectorApiError as err:
            if err.status == 404:
                return None
            raise

    def decision_of(self, loop_id: str) -> Optional[Dict[str, Any]]:
        """The loop's guardrails status once it has a decision (``decision``, ``new_loop_id``, ...), else None."""
        try:
            status = self._http.request(
                "GET", "/orchestrator/guardrails-status/" + urllib.parse.quote(loop_id, safe=""), idempotent=True
            )
        except ReflectorApiError as err:
            if err.status == 404:
                return None
            raise
        decided = snake_keys(status)["guardrails_status"]
        return decided if decided.get("decision") is not None else None

    def wait_for_decision(self, loop_id: str, timeout: float = 120.0, interval: float = 0.5) -> Dict[str, Any]:
        """Polls the loops API until the loop is decided; raises TimeoutError after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            decided = self.decision_of(loop_id)
            if decided is not None:
                return decided
            if time.monotonic() > deadline:
                raise TimeoutError(f"no decision for loop {loop_id} within {timeout} s")
            time.sleep(interval)

    def loop_complete(self, loop_id: str, **report: Any) -> Dict[str, Any]:
        """An orchestrator's end-of-loop report (POST /orchestrator/loop-complete); a repeat answers the stored decision."""
        body = drop_none({"loop_id": loop_id, **report})
        return self._http.request("POST", "/orchestrator/loop-complete", json_body=body, idempotent=True)

    # --- lessons -------------------------------------------------------------------------------

    def lessons_for_task(self, task: str, **query: Any) -> Dict[str, Any]:
        """The tenant's lessons that apply to a task, best first (POST /api/v1/lessons/for-task).

        ``query``: goal, agent_id, tools, project_id, tags, limit, min_importance, min_relevance,
        loop_id. The answer: ``lessons`` (each with ``reflection_id``, ``relevance``, ``prompt``, ...),
        ``floor``, ``recorded_for``, ``checked_by``. Sent in snake_case; a server from before that
        spelling is asked again in camelCase, and its answer read in snake_case all the same.
        """
        body = drop_none({"task": task, **query})
        send = lambda b: snake_keys(  # noqa: E731
            self._http.request("POST", "/api/v1/lessons/for-task", json_body=b, idempotent=True)
        )
        camel = {_camel(k): v for k, v in body.items()}
        if self._for_task_in_camel_case:
            return send(camel)
        try:
            return send(body)
        except ReflectorApiError as err:
            if not _refuses_fields(err, _FOR_TASK_SNAKE_ONLY):
                raise
            self._for_task_in_camel_case = True
            return send(camel)

    def lessons_for_rerun(self, decision: Mapping[str, Any], task: str, **query: Any) -> List[Dict[str, Any]]:
        """The lessons a rerun decision carries, else the lessons for the task."""
        carried = decision.get("lessons")
        if carried:
            return snake_keys(list(carried))
        return self.lessons_for_task(task, **query)["lessons"]

    def _get_paged(self, path: str, query: Dict[str, Any]) -> Any:
        limit = query.pop("limit", None)
        send = lambda size_key: self._http.request(  # noqa: E731
            "GET", path, query={**query, size_key: limit}, idempotent=True
        )
        if self._pages_with_k or limit is None:
            return send("k" if self._pages_with_k else "limit")
        try:
            return send("limit")
        except ReflectorApiError as err:
            if not _refuses_fields(err, ["limit"]):
                raise
            self._pages_with_k = True
            return send("k")

    def list_reflections(
        self,
        q: Optional[str] = None,
        project: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
        min_importance: Optional[float] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        include_withheld: Optional[bool] = None,
    ) -> Dict[str, Any]:
        """The tenant's stored lessons, searched and paged (GET /api/v1/reflections): ``items``, ``next_offset``."""
        query = {"q": q, "project": project, "tags": list(tags) if tags else None, "min_importance": min_importance,
                 "limit": limit, "offset": offset, "include_withheld": include_withheld}
        return self._get_paged("/api/v1/reflections", query)

    def reflection_by_signature(self, signature: str) -> Optional[Dict[str, Any]]:
        """"Have I seen this error before?": the lesson stored under a signature, or None when unknown."""
        try:
            return self._http.request(
                "GET", "/api/v1/reflections/signatures/" + urllib.parse.quote(signature, safe=""), idempotent=True
            )
        except ReflectorApiError as err:
            if err.status == 404:
                return None
            raise

    def reflection_sources(self, reflection_id: str, limit: Optional[int] = None) -> Dict[str, Any]:
        """The failures a stored lesson stands for, oldest first."""
        path = "/api/v1/reflections/" + urllib.parse.quote(reflection_id, safe="") + "/sources"
        return self._get_paged(path, {"limit": limit})

    def feedback(
        self,
        reflection_id: str,
        rating: str,
        comment: Optional[str] = None,
        feedback_id: Optional[str] = None,
        user_id: Optional[str] = None,
    ) -> Dict[str, Any]:
        """A thumbs up (``up``) or down (``down``) on a lesson (POST /api/v1/feedback, ``vote``).

        Without a ``feedback_id`` the client makes one, so a retry after a network error is counted once.
        """
        body = drop_none({"reflection_id": reflection_id, "rating": rating, "comment": comment,
                          "feedback_id": feedback_id or str(uuid.uuid4()), "user_id": user_id})
        return self._http.request("POST", "/api/v1/feedback", json_body=body, idempotent=True)

    def insights(self) -> Dict[str, Any]:
        """Issues common to the tenant's recent low-quality reflections (GET /api/v1/insights)."""
        return self._http.request("GET", "/api/v1/insights", idempotent=True)
