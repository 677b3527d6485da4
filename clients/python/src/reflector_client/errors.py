"""The error a call raises when Reflector answers with an error status.

It carries the RFC 9457 problem details (``type``, ``title``, ``status``, ``detail``,
``instance``) and the keys the API answered before them (``error``, ``message``, ``issues``),
whichever the server sent.
"""

import email.utils
import json
import re
import time
from typing import Any, Dict, List, Optional


class ReflectorApiError(Exception):
    """Reflector answered an error status; ``problem`` is the body's problem details."""

    def __init__(self, status: int, problem: Dict[str, Any], raw: str = "", retry_after: Optional[float] = None):
        self.status = status
        self.problem = problem
        self.retry_after = retry_after
        """What ``Retry-After`` asked for, in seconds (None when the answer had none)."""
        self.error = problem.get("error") or _last_segment(problem.get("type")) or "error"
        text = problem.get("detail") or problem.get("message") or problem.get("title") or raw
        super().__init__(f"reflector answered {status} {self.error}: {text}")

    @property
    def type(self) -> Optional[str]:
        return self.problem.get("type")

    @property
    def title(self) -> Optional[str]:
        return self.problem.get("title")

    @property
    def detail(self) -> Optional[str]:
        return self.problem.get("detail") or self.problem.get("message")

    @property
    def instance(self) -> Optional[str]:
        return self.problem.get("instance")

    @property
    def issues(self) -> List[Any]:
        issues = self.problem.get("issues")
        return issues if isinstance(issues, list) else []


def _last_segment(type_uri: Optional[str]) -> Optional[str]:
    if not type_uri or type_uri == "about:blank":
        return None
    parts = [p for p in re.split(r"[/#]", type_uri) if p]
    return parts[-1].replace("-", "_") if parts else None


def problem_of(text: str) -> Dict[str, Any]:
    """The problem details of an error body: JSON problem details or the old ``{error, message}``."""
    try:
        body = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(body, dict):
        return {}
    problem: Dict[str, Any] = {}
    for key in ("type", "title", "detail", "instance", "error", "message"):
        if isinstance(body.get(key), str):
            problem[key] = body[key]
    if isinstance(body.get("status"), int):
        problem["status"] = body["status"]
    if isinstance(body.get("issues"), list):
        problem["issues"] = body["issues"]
    return problem


def retry_after_seconds(header: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """``Retry-After`` in seconds: a number of seconds or an HTTP date; None when absent or unreadable."""
    if header is None:
        return None
    value = header.strip()
    if re.fullmatch(r"\d+(\.\d+)?", value):
        return float(value)
    try:
        at = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if at is None:
        return None
    return max(0.0, at.timestamp() - (time.time() if now is None else now))
