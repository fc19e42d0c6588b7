"""What the API server's handlers answer: a whole response, or a chunked stream (a watch, a log).
Below both the server and the handlers it dispatches to (the pod proxy among them)."""


class Response:
    def __init__(self, code, body, content_type="application/json", headers=None):
        self.code = code
        self.body = body
        self.content_type = content_type
        self.headers = headers or {}


class Stream(Response):
    """A chunked response; ``chunks`` is an iterable of bytes."""

    def __init__(self, chunks, content_type="application/json"):
        super().__init__(200, None, content_type)
        self.chunks = chunks
