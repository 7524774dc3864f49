"""HRM110: a server listening on a fixed, non-zero port."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.facts.mocks import mocked_here
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.nodes import DEF_TYPES
from flake8_hermetic.rules.leaks.flow import caught_errors, expects_failure
from flake8_hermetic.rules.leaks.function_facts import KnownClassesRule
from flake8_hermetic.rules.leaks.syntax import bool_keyword
from flake8_hermetic.violation import Violation


SERVER_CLASSES = frozenset({
    "socketserver.TCPServer", "socketserver.UDPServer", "socketserver.ThreadingTCPServer",
    "socketserver.ThreadingUDPServer", "socketserver.ForkingTCPServer", "socketserver.ForkingUDPServer",
    "http.server.HTTPServer", "http.server.ThreadingHTTPServer",
    "xmlrpc.server.SimpleXMLRPCServer", "xmlrpc.server.DocXMLRPCServer", "xmlrpc.server.MultiPathXMLRPCServer",
    "wsgiref.simple_server.WSGIServer",
})
#: callee -> the index of the positional port argument
PORT_POSITIONS = {
    "asyncio.start_server": 2,
    "aiohttp.web.TCPSite": 2,
    "wsgiref.simple_server.make_server": 1,
}
PORT_KEYWORD_CALLS = frozenset({"aiohttp.web.run_app", "uvicorn.run"})
#: methods that start serving: a literal ``port=``/``*_port=`` they are given is listened on
SERVING_METHODS = frozenset({"run", "listen", "serve", "serve_forever", "run_server", "start_server", "make_server"})
#: Twisted's reactor: the port is the first argument
LISTEN_METHODS = frozenset({"listenTCP", "listenSSL", "listenUDP"})
#: last words of a server-like class (``HTTPServer``, ``SMTPServer``, ``TestServer``, ``web.TCPSite``)
SERVER_SUFFIXES = ("Server", "Site")
#: a server subclass overriding one of these does not listen (a socket-less double)
NO_LISTEN_OVERRIDES = frozenset({"server_bind"})
DOUBLE_WORDS = ("Mock", "Fake", "Dummy", "Stub")
#: a handler catching one of these around a bind swallows "address already in use"
SWALLOWED_ERRORS = frozenset({"OSError", "socket.error", "Exception", "BaseException", "EnvironmentError"})


def _fixed_port(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value != 0:
        return node.value
    return None


def _address_port(node: ast.AST | None) -> int | None:
    """``(host, N)`` (or an IPv6 4-tuple) -> N."""
    if isinstance(node, ast.Tuple) and 2 <= len(node.elts) <= 4:
        return _fixed_port(node.elts[1])
    return None


def _address_and_port(address: ast.expr | None) -> tuple[int, ast.expr | None] | None:
    """``(host, N)`` -> (N, host)."""
    port = _address_port(address)
    return None if port is None else (port, address.elts[0])  # type: ignore[union-attr]


def _keyword_port(node: ast.Call, named: bool = False) -> tuple[int, ast.expr | None] | None:
    """``port=N`` (and ``host=``) given by keyword; ``named``: also ``http_port=N``."""
    ports = (k.value for k in node.keywords if k.arg == "port" or (named and (k.arg or "").endswith("_port")))
    port = next((found for found in map(_fixed_port, ports) if found is not None), None)
    host = next((k.value for k in node.keywords if k.arg in ("host", "interface")), None)
    return None if port is None else (port, host)


def _server_like(last: str) -> bool:
    """A class named like a server (``SMTPServer``, ``TestServer``), not a double."""
    return last.endswith(SERVER_SUFFIXES) and not any(word in last for word in DOUBLE_WORDS)


def _positional_port(node: ast.Call, position: int) -> tuple[int, ast.expr | None] | None:
    """The port at ``position`` with the host just before it, else by keyword."""
    args = node.args
    if len(args) > position:
        port = _fixed_port(args[position])
        return None if port is None else (port, args[position - 1])
    return _keyword_port(node)


class FixedPortRule(KnownClassesRule):
    """
    Flags a server that listens on a fixed, non-zero port number in a test file.

    ## Why is this bad?
    A port number is a machine-wide name. Two workers of the same run, two
    checkouts testing at once, or a service the developer has running
    already hold it, and the test fails with "address already in use", or
    worse, talks to the other process and passes for the wrong reason.
    Port 0 asks the kernel for a free port; the test reads the port it got
    and hands that to the client.

    Flagged: `.bind((host, N))`, `socket.create_server((host, N))`, the
    `socketserver`, `http.server`, `xmlrpc.server` and `wsgiref` server
    classes (and subclasses defined in the file) given `(host, N)`,
    `wsgiref.simple_server.make_server(host, N, app)`,
    `asyncio.start_server(cb, host, N)`, `loop.create_server(f, host, N)`,
    `aiohttp.web.TCPSite(runner, host, N)`, and `port=N` given to these or
    to `web.run_app`, `uvicorn.run` or an `app.run`.

    **Any server-like call, not only the standard library's.** A class
    named like a server (`SMTPServer`, `TestServer`, `MyServer`, a `...Site`)
    given `(host, N)` first or a literal `port=N` / `*_port=N`
    (`http_port=8080`); a `run`/`listen`/`serve`/`serve_forever`/`start_server`
    method given `port=N` or `*_port=N`; Twisted's `listenTCP(N, ...)`,
    `listenSSL(N, ...)`, `listenUDP(N, ...)`. A port literal given to a
    client (`Client(port=8080)`, `ServerProxy("http://host:8000")`,
    `HTTPConnection("localhost", 80)`, a URL string in a mocked request) is
    left alone: nothing binds it. So is a server class that is patched
    around the call (`with patch("pkg.SMTPServer")`) or named as a double.

    Left alone, because nothing listens on the port or the test does not
    depend on getting it: a call the test expects to raise (inside
    `with pytest.raises(...)` or `with self.assertRaises(...)`); a host
    that is a literal domain name (`"example.com"` cannot be bound here);
    a server class given `bind_and_activate=False`; a subclass defined in
    the file that overrides `server_bind` (a socket-less double), also as
    the `server_class` of `make_server`, and a `server_class` or
    `handler_class` whose name says it is a double (`Mock`, `Fake`,
    `Dummy`, `Stub`); a bind inside a `try` whose `except OSError` (or
    `Exception`) handler is only `pass`; and a server made while the
    `socket` module is patched (a patch decorator, a `with` patch, or a
    `monkeypatch.setattr` earlier in the function) or on a loop whose
    `_start_serving` was replaced by a mock.

    ## Example
    ```python
    def test_fetch():
        server = HTTPServer(("127.0.0.1", 8080), Handler)
        start(server)
        assert fetch("http://127.0.0.1:8080/").ok
    ```

    ## Use instead
    ```python
    def test_fetch():
        server = HTTPServer(("127.0.0.1", 0), Handler)
        host, port = server.server_address
        start(server)
        assert fetch(f"http://{host}:{port}/").ok
    ```

    ## Off by default
    Turn it on with `--extend-select=HRM110` (or `extend-select` in the
    config). On the suites held out from tuning (docs/precision.md), 1 of 3
    of its findings were hazards a maintainer would fix; a default-on rule
    must reach 80%, and the default set 90% overall: two were `bind()` on a
    fake socket that only records the address. It would need to know which
    objects really listen.

    ## Options
    None.
    """

    code = "HRM110"
    default_on = False
    message = "listening on fixed port {port} collides with parallel workers and running services; bind port 0 and read the port back"
    calls = (
        SERVER_CLASSES | frozenset(PORT_POSITIONS) | PORT_KEYWORD_CALLS | {"socket.create_server"}
        | {"*" + suffix for suffix in SERVER_SUFFIXES}
    )
    methods = frozenset({"bind", "create_server"}) | SERVING_METHODS | LISTEN_METHODS

    known_classes = SERVER_CLASSES

    def visit_ClassDef(self, node: ast.ClassDef) -> Iterator[Violation]:
        # a subclass that overrides server_bind (a socket-less test double) never listens
        if not any(isinstance(s, DEF_TYPES) and s.name in NO_LISTEN_OVERRIDES for s in node.body):
            yield from super().visit_ClassDef(node)
        else:
            self.doubles.add(node.name)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.doubles: set[str] = set()

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        found = self._port(node)
        if found is None:
            return
        port, host = found
        if not _local_host(host) or self._double_given(node):
            return
        # these climb the ancestors or read the function: only for the rare calls with a fixed port
        if expects_failure(self.ctx, node) or self.ctx.expected_to_raise(node) or self._failure_ignored(node):
            return
        if self._mocked(node):
            return
        yield self.report(node, port=port)

    def _port(self, node: ast.Call) -> tuple[int, ast.expr | None] | None:
        """The fixed port ``node`` listens on and the host expression given with it."""
        name = self.ctx.call_name(node) or ""
        func = node.func
        method = func.attr if isinstance(func, ast.Attribute) else ""
        args = node.args
        if method == "bind" and len(args) == 1 and not node.keywords:
            return _address_and_port(args[0])
        if name == "socket.create_server" or self.is_known_class(name):
            return _address_and_port(args[0] if args else None)
        if name in PORT_POSITIONS or method == "create_server":
            return _positional_port(node, PORT_POSITIONS.get(name, 2))
        if name in PORT_KEYWORD_CALLS:
            return _keyword_port(node)
        last = name.rpartition(".")[2] or method
        if last in LISTEN_METHODS:
            found = _fixed_port(args[0]) if args else None
            return _keyword_port(node) if found is None else (found, None)
        if _server_like(last):
            return (_address_and_port(args[0]) if args else None) or _keyword_port(node, named=True)
        if method in SERVING_METHODS:
            return _keyword_port(node, named=True)
        return None

    def _double_given(self, node: ast.Call) -> bool:
        """``make_server(host, port, app, MockServer, MockHandler)``, a server
        class given ``bind_and_activate=False``, or a server class that is a
        local double: nothing is bound."""
        name = self.ctx.call_name(node) or ""
        if bool_keyword(node, "bind_and_activate") is False:
            return True
        if self.is_known_class(name) and len(node.args) > 2:
            third = node.args[2]
            if isinstance(third, ast.Constant) and third.value is False:
                return True
        given = [*node.args[3:5], *(k.value for k in node.keywords if k.arg in ("server_class", "handler_class"))]
        if name == "wsgiref.simple_server.make_server":
            return any(self._is_double(g) for g in given)
        return False

    def _is_double(self, node: ast.expr) -> bool:
        text = dotted_name(node) or ""
        last = text.rpartition(".")[2]
        return last in self.doubles or any(word in last for word in DOUBLE_WORDS)

    def _failure_ignored(self, node: ast.Call) -> bool:
        """A bind inside ``try`` whose handler for OSError is only ``pass``:
        the test goes on the same way whether the port was free or not."""
        for ancestor, on_path in self.ctx.ancestors_in_function(node):
            if isinstance(ancestor, ast.Try) and any(on_path is stmt for stmt in ancestor.body):
                for handler in ancestor.handlers:
                    caught = {dotted_name(t) for t in caught_errors(handler)}
                    if caught & SWALLOWED_ERRORS and all(isinstance(stmt, ast.Pass) for stmt in handler.body):
                        return True
        return False

    def _mocked(self, node: ast.Call) -> bool:
        """The socket module or the server class itself is patched around
        the call, or the receiver's ``_start_serving`` is replaced
        (``loop._start_serving = Mock()``)."""
        func = node.func
        receiver = dotted_name(func.value) if isinstance(func, ast.Attribute) else None

        callee = (self.ctx.call_name(node) or dotted_name(func) or "").rpartition(".")[2]

        def wanted(target: str) -> bool:
            last = target.rpartition(".")[2]
            if last == "socket" or target.startswith("socket.socket") or last == callee:
                return True
            return receiver is not None and target == f"{receiver}._start_serving"

        return mocked_here(self.ctx, node, wanted)


def _local_host(host: ast.expr | None) -> bool:
    """Whether ``host`` may be this machine: anything but a literal domain
    name (``"example.com"`` cannot be bound here; the call is made to fail)."""
    if not isinstance(host, ast.Constant) or not isinstance(host.value, str):
        return True
    value = host.value.lower()
    if not value or value == "localhost" or value.endswith(".localhost") or ":" in value:
        return True
    return not ("." in value and any(c.isalpha() for c in value))
