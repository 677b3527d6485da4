"""reflector_client: the Python client of Reflector's HTTP API, standard library only."""

from ._http import RETRY_STATUSES
from ._otlp import otlp_json_of_run
from .client import ReflectorClient
from .errors import ReflectorApiError, problem_of, retry_after_seconds
from .lessons import LESSONS_PREAMBLE, lessons_prompt

__version__ = "0.1.0"

__all__ = [
    "LESSONS_PREAMBLE",
    "RETRY_STATUSES",
    "ReflectorApiError",
    "ReflectorClient",
    "lessons_prompt",
    "otlp_json_of_run",
    "problem_of",
    "retry_after_seconds",
]
