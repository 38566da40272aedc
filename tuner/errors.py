"""Errors the command line reports as one line, without a traceback."""


class TunerError(Exception):
    """A user-facing failure: bad input, a missing file, a corrupt weights file.

    The message is one line and names the file and place where that is known.
    """
