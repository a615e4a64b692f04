"""clinjudge: claim-by-claim judging of clinical text written by language models."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("clinjudge")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+source"

__all__ = ["__version__"]
