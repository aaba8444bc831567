"""The one exception the engine raises for bad input."""


class EngineError(ValueError):
    """Bad input to the attention engine, with a message a person can act on.

    Subclasses ``ValueError`` so that callers which only know the standard
    library still catch it.
    """
