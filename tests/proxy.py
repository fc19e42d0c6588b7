"""A TCP proxy that can be cut in the middle of a transfer (a server 'killed' mid-request)."""

import socket
import threading


class Proxy:
    def __init__(self, target_port, target_host="127.0.0.1", cut_after_bytes=None):
        self.target = (target_host, target_port)
        self.cut_after_bytes = cut_after_bytes
        self.forwarded = 0
        self.port = None
        self._sockets = []
        self._lock = threading.Lock()
        self._listener = None

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def start(self):
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port or 0))
        listener.listen(16)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def _accept(self, listener):
        while True:
            try:
                client, _address = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, server]
            threading.Thread(target=self._pipe, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, False), daemon=True).start()

    def _pipe(self, source, destination, upstream):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if upstream and self.cut_after_bytes is not None:
                    with self._lock:
                        self.forwarded += len(data)
                        over = self.forwarded > self.cut_after_bytes
                    if over:
                        self.stop()
                        return
                destination.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, destination):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def stop(self):
        with self._lock:
            sockets, self._sockets = self._sockets, []
            listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            except OSError:
                pass
