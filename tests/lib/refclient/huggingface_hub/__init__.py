"""Stand-in for huggingface_hub (benchmark_serving.py imports its constants;
nothing is ever downloaded here)."""
from . import constants  # noqa: F401


def hf_hub_download(*args, **kwargs):
    raise OSError("huggingface_hub stand-in: downloads are disabled (tests/lib/refclient)")
