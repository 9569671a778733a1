"""Subcommands of ``python -m pycore``, one module each (see :mod:`pycore.__main__`)."""
