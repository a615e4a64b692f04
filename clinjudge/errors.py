"""Errors that carry a one-line reason for the user (the CLI prints them and exits with 2)."""


class ConfigError(ValueError):
    """A judge or run cannot be built from the given settings."""


class DatasetError(ValueError):
    """A dataset file that cannot be used; the message is one line naming file, row and column."""
