"""One request to Reflector's HTTP API with the client's policies.

A time limit per attempt, retries with exponential backoff and full jitter on 429 and 503
(honouring ``Retry-After``, seconds or an HTTP date), and on network errors and timeouts for
idempotent calls only.
"""

import json
import random as _random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from .errors import ReflectorApiError, problem_of, retry_after_seconds

RETRY_STATUSES = frozenset({429, 503})


class Transport:
    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 10.0,
        retries: int = 3,
        base_delay: float = 0.2,
        max_delay: float = 10.0,
        max_retry_after: float = 60.0,
        headers: Optional[Mapping[str, str]] = None,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] = _random.random,
    ):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.retries = retries
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.max_retry_after = max_retry_after
        self.headers = dict(headers or {})
        self.sleep = sleep
        self.random = random

    def backoff(self, attempt: int) -> float:
        """The full-jitter backoff before retry ``attempt`` (0-based): uniform in [0, min(max, base * 2^attempt))."""
        return self.random() * min(self.max_delay, self.base_delay * 2**attempt)

    def _once(self, method: str, url: str, data: Optional[bytes], content_type: Optional[str], timeout: float) -> Any:
        req = urllib.request.Request(url, data=data, method=method)
        for name, value in self.headers.items():
            req.add_header(name, value)
        req.add_header("Accept", "application/json, application/problem+json")
        req.add_header("Authorization", f"Bearer {self.api_key}")
        if content_type is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as response:
                status, text = response.status, response.read().decode("utf-8")
        except urllib.error.HTTPError as err:
            raw = err.read().decode("utf-8", errors="replace")
            raise ReflectorApiError(
                err.code, problem_of(raw), raw, retry_after_seconds(err.headers.get("Retry-After"))
            ) from None
        return status, (json.loads(text) if text else None)

    def request(self, method: str, path: str, **options: Any) -> Any:
        """The JSON answer (see ``exchange``)."""
        return self.exchange(method, path, **options)[1]

    def exchange(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        json_body: Any = None,
        data: Optional[bytes] = None,
        content_type: Optional[str] = None,
        idempotent: bool,
        timeout: Optional[float] = None,
    ) -> Tuple[int, Any]:
        """The status and JSON answer, retried as the policy says; raises the last error when no retry is left."""
        params = {k: _text(v) for k, v in (query or {}).items() if v is not None}
        url = self.base_url + path + ("?" + urllib.parse.urlencode(params) if params else "")
        if json_body is not None:
            data, content_type = json.dumps(json_body).encode("utf-8"), "application/json"
        attempt = 0
        while True:
            try:
                return self._once(method, url, data, content_type, self.timeout if timeout is None else timeout)
            except ReflectorApiError as err:
                if attempt >= self.retries or err.status not in RETRY_STATUSES:
                    raise
                if err.retry_after is not None:
                    if err.retry_after > self.max_retry_after:
                        raise
                    # At least what the server asked for; a little more, so callers told the same do not return at once.
                    wait = err.retry_after + self.backoff(0)
                else:
                    wait = self.backoff(attempt)
            except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError):
                # A network error or this attempt's timeout: the server may or may not have acted.
                if not idempotent or attempt >= self.retries:
                    raise
                wait = self.backoff(attempt)
            self.sleep(wait)
            attempt += 1


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def drop_none(fields: Mapping[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}
