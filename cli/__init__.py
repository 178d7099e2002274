"""The typer application behind the `matchlog` command."""

from .app import app, main

__all__ = ["app", "main"]
