"""HRM110: a server listening on a fixed, non-zero port."""

from __future__ import annotations

import ast
import re
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


#: the words of a callee (or its receiver) that give the port to a client, a double or a record, not a listener
CLIENT_WORDS = frozenset({
    "connect", "connection", "client", "request", "requests", "session", "proxy", "get", "post", "put",
    "patch", "delete", "head", "options", "fetch", "open", "urlopen", "url", "uri", "urlparse", "urlsplit",
    "urlunsplit", "urljoin", "parse", "mock", "magicmock", "fake", "stub", "dummy", "double", "call", "assert",
    "format", "replace", "update", "setdefault", "dict", "namespace", "environ", "builder", "config", "settings",
    "address", "endpoint", "expected", "remote",
    # clients of a service already running (the standard library's and the common databases')
    "smtp", "lmtp", "ftp", "pop3", "imap4", "telnet", "redis", "mongo", "elasticsearch", "db", "database",
})
#: callee words that start a listener: a URL or a positional port they are given is listened on
SERVER_WORDS = frozenset({"server", "serve", "serving", "listen", "listener", "bind", "cluster", "daemon", "site"})
#: a ``*_port=`` keyword naming the far end: a client's
REMOTE_KEYWORDS = ("remote_", "dest_", "target_", "peer_", "proxy_", "upstream_")
#: a backlog is small; a port given to ``listen`` is above this
MAX_BACKLOG = 1024
SOCKET_WORDS = frozenset({"sock", "socket", "s", "conn", "connection"})
URL_PORT = re.compile(
    r"^(?:[a-z][a-z0-9+.-]*://)?(?P<host>localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]|)"
    r":(?P<port>[0-9]{1,5})(?:/.*)?$", re.IGNORECASE | re.DOTALL,
)


def words_of(name: str) -> set[str]:
    """``create_tcp_listener`` -> {create, tcp, listener}; ``TestClient`` -> {test, client}."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name.replace(".", " ").replace("_", " "))
    return {word.lower() for word in spaced.split()}


def _server_like(last: str) -> bool:
    """A class named like a server (``SMTPServer``, ``TestServer``), not a double."""
    return last.endswith(SERVER_SUFFIXES) and not any(word in last for word in DOUBLE_WORDS)


def _a_port(value: object) -> int | None:
    if type(value) is int and 0 < value <= 65535:  # noqa: E721 (bool is no port)
        return value
    return None


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

    **Any framework's server, not only the standard library's.** A class
    named like a server (`SMTPServer`, `TestServer`, a `...Site`) given
    `(host, N)` first; `port=N` or `*_port=N` given to any call that is not
    a client's (`app.run(port=5000)`, `LocalCluster(scheduler_port=8448)`,
    `run(port=5557)`, `create_udp_socket(local_port=N)`); `app.listen(N)`
    with `N` above 1024 (a smaller number, or a receiver named like a
    socket, is a backlog); `(host, N)` after a host in a `run`, `serve`,
    `start`, `run_simple` or `make_server`-like call (`app.run("0.0.0.0",
    5000)`); a `host:N` URL (`"127.0.0.1:8000"`, `f"http://localhost:{PORT}"`)
    handed to a server-named call; Twisted's `listenTCP(N, ...)`. `N` is a
    literal, a module constant, a local variable or a `self.port` the class
    sets to one value (`49152 + 10000` counts): a name bound to more than
    one value, or a parameter, is not fixed. A client and a server that
    agree on a literal are one finding, at the server.

    A port given only to a client is left alone: a callee or receiver whose
    name says client, connection, request, session, proxy, URL or a verb of
    one (`connect`, `get`, `post`, `fetch`, `open`), a client of a service
    already running (`smtplib.SMTP(port=1025)`, `redis.Redis(port=6379)`, a
    `db`/`database` call), `remote_port=` and the like, `ServerProxy("http://host:8000")`, `HTTPConnection("localhost", 80)`.
    So is a port given to a double or a record (`Mock`, `dict(port=...)`,
    `mock.call(port=...)`, `assert_called_with(port=...)`), a call inside an
    `assert` or a comparison, a URL that is only parsed (`urlparse(...)`),
    and a server class that is patched around the call
    (`with patch("pkg.SMTPServer")`) or named as a double.

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

    ## Known problems
    It knows a server by its name: a listener named like none (`Thing(port=N)`
    that binds) is flagged, and one named like a client is missed, as is a port
    handed to a server through a helper's parameter or another module's
    constant, or in a command line (`["gunicorn", "-b", "127.0.0.1:8000"]`).
    A `bind()` on a fake socket that only records the address is flagged.

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
    principles = ("fixed-port-server",)
    message = "listening on fixed port {port} collides with parallel workers and running services; bind port 0 and read the port back"
    # every call: a ``port=`` keyword or a listening URL may be given to any framework's server
    calls = None
    methods = None

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
        self._module_values: dict[str, int | None] | None = None
        #: (id of the function, name) -> the values the function assigns it (None: bound another way)
        self._local_assignments: dict[tuple[int, str], list[ast.expr] | None] = {}

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
        if self._recorded(node) or self._mocked(node):
            return
        yield self.report(node, port=port)

    # -- the value: a literal, a module constant, a local variable, ``self.port`` ----------------
    def value(self, node: ast.AST | None, depth: int = 0) -> int | None:
        """The fixed port ``node`` always holds, or None."""
        if node is None or depth > 4:
            return None
        if isinstance(node, ast.Constant):
            return _a_port(node.value)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            left, right = self._int(node.left, depth), self._int(node.right, depth)
            if left is None or right is None:
                return None
            return _a_port(left + right if isinstance(node.op, ast.Add)
                           else left - right if isinstance(node.op, ast.Sub) else left * right)
        if isinstance(node, ast.Name):
            return self._name_value(node.id, depth)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            return self._attribute_value(node.attr, depth)
        return None

    def _int(self, node: ast.AST, depth: int) -> int | None:
        if isinstance(node, ast.Constant):
            return node.value if type(node.value) is int else None  # noqa: E721
        return self.value(node, depth + 1)

    def _name_value(self, name: str, depth: int) -> int | None:
        function = self.ctx.function
        if function is not None:
            arguments = function.args
            if any(a.arg == name for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)):
                return None  # a parameter: the caller (or a fixture) decides
            key = (id(function), name)
            if key not in self._local_assignments:
                self._local_assignments[key] = _assignments(ast.walk(function), name)
            assigned = self._local_assignments[key]
            if assigned is not None:
                return self._one_value(assigned, depth) if assigned else self._module_value(name, depth)
            return None
        return self._module_value(name, depth)

    def _module_value(self, name: str, depth: int) -> int | None:
        if self._module_values is None:
            self._module_values = {}
        if name not in self._module_values:
            self._module_values[name] = None  # a cycle reads as unknown
            body = [s for s in self.ctx.tree.body if not isinstance(s, (*DEF_TYPES, ast.ClassDef))]
            assigned = _assignments((n for stmt in body for n in ast.walk(stmt)), name)
            self._module_values[name] = self._one_value(assigned, depth) if assigned else None
        return self._module_values[name]

    def _attribute_value(self, attr: str, depth: int) -> int | None:
        """``self.port``: set to the same fixed value wherever the class sets it."""
        scope = self.ctx.class_scope
        if scope is None:
            return None
        values: list[ast.expr] = []
        for node in ast.walk(scope.node):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, (ast.AnnAssign, ast.AugAssign)) else []
            for target in targets:
                named = isinstance(target, ast.Attribute) and target.attr == attr and isinstance(
                    target.value, ast.Name) and target.value.id in ("self", "cls")
                if named or (isinstance(target, ast.Name) and target.id == attr and node in scope.node.body):
                    if not isinstance(node, ast.Assign) and not (isinstance(node, ast.AnnAssign) and node.value):
                        return None
                    values.append(node.value)  # type: ignore[arg-type]
        return self._one_value(values, depth) if values else None

    def _one_value(self, values: list[ast.expr], depth: int) -> int | None:
        found = {self.value(v, depth + 1) for v in values}
        return found.pop() if len(found) == 1 else None

    # -- the sinks ---------------------------------------------------------------------------------
    def _port(self, node: ast.Call) -> tuple[int, ast.expr | None] | None:
        """The fixed port ``node`` listens on and the host expression given with it."""
        name = self.ctx.call_name(node) or ""
        func = node.func
        method = func.attr if isinstance(func, ast.Attribute) else ""
        args = node.args
        if method == "bind" and len(args) == 1 and not node.keywords:
            return self._address_and_port(args[0])
        if name == "socket.create_server" or self.is_known_class(name):
            return self._address_and_port(args[0] if args else None)
        if name in PORT_POSITIONS or method == "create_server":
            return self._positional_port(node, PORT_POSITIONS.get(name, 2))
        last = name.rpartition(".")[2] or method
        if last in LISTEN_METHODS:
            found = self.value(args[0]) if args else None
            return self._keyword_port(node) if found is None else (found, None)
        if _server_like(last):
            found = (self._address_and_port(args[0]) if args else None) or self._keyword_port(node)
            return found or self._served_port(node, last, {"server"})
        if not args and not any(_port_keyword(k.arg) for k in node.keywords):
            return None  # the common case, decided without reading the callee's words
        words = words_of(name or dotted_name(func) or method)
        if words & CLIENT_WORDS:
            return None  # a client, a double, a record: nothing listens
        return self._keyword_port(node) or self._served_port(node, last, words)

    def _served_port(self, node: ast.Call, method: str, words: set[str]) -> tuple[int, ast.expr | None] | None:
        """A port given by position, or in a URL, to a call that starts serving
        (``method``: the callee's last name)."""
        args = node.args
        if method in ("listen", "serve") and args and isinstance(node.func, ast.Attribute):
            receiver = dotted_name(node.func.value)
            port = self.value(args[0])
            if port is not None and port > MAX_BACKLOG and not words_of(receiver or "") & SOCKET_WORDS:
                return port, None
        if not (method in SERVING_METHODS or words & SERVER_WORDS or words & {"run", "start"}):
            return None
        for index in range(1, len(args)):
            port = self.value(args[index]) if _host_like(args[index - 1]) else None
            if port is not None:
                return port, args[index - 1]
        if words & SERVER_WORDS or method in ("listen", "serve", "run_server", "start_server"):
            for given in (*args, *(k.value for k in node.keywords)):
                port = self._url_port(given)
                if port is not None:
                    return port, None
        return None

    def _url_port(self, node: ast.expr) -> int | None:
        """``"http://localhost:8080/"``, ``"127.0.0.1:8000"``, ``f"localhost:{PORT}"`` -> the port."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.JoinedStr):
            parts = []
            for part in node.values:
                if isinstance(part, ast.Constant):
                    parts.append(str(part.value))
                else:
                    port = self.value(part.value) if isinstance(part, ast.FormattedValue) else None
                    parts.append("x" if port is None else str(port))
            text = "".join(parts)
        else:
            return None
        match = URL_PORT.match(text)
        return _a_port(int(match.group("port"))) if match else None

    def _address_and_port(self, address: ast.expr | None) -> tuple[int, ast.expr | None] | None:
        """``(host, N)`` (or an IPv6 4-tuple) -> (N, host)."""
        if isinstance(address, ast.Tuple) and 2 <= len(address.elts) <= 4:
            port = self.value(address.elts[1])
            return None if port is None else (port, address.elts[0])
        return None

    def _keyword_port(self, node: ast.Call) -> tuple[int, ast.expr | None] | None:
        """``port=N`` or ``http_port=N`` (not ``remote_port=``), with the ``host=`` given."""
        for keyword in node.keywords:
            if _port_keyword(keyword.arg):
                port = self.value(keyword.value)
                if port is not None:
                    host = next((k.value for k in node.keywords if k.arg in ("host", "hostname", "interface")), None)
                    return port, host
        return None

    def _positional_port(self, node: ast.Call, position: int) -> tuple[int, ast.expr | None] | None:
        """The port at ``position`` with the host just before it, else by keyword."""
        args = node.args
        if len(args) > position:
            port = self.value(args[position])
            return None if port is None else (port, args[position - 1])
        return self._keyword_port(node)

    # -- what keeps the call from listening --------------------------------------------------------
    def _recorded(self, node: ast.Call) -> bool:
        """The call is a value checked or recorded, not run: inside an ``assert``
        or a comparison, or an argument of a mock's ``assert_called_with``."""
        for ancestor, _ in self.ctx.ancestors_in_function(node):
            if isinstance(ancestor, (ast.Assert, ast.Compare)):
                return True
            if isinstance(ancestor, ast.Call) and ancestor is not node:
                callee = dotted_name(ancestor.func) or ""
                if words_of(callee) & {"assert", "mock", "call", "patch"}:
                    return True
        return False

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


def _port_keyword(arg: str | None) -> bool:
    """``port=`` or ``http_port=``, not a far end's (``remote_port=``)."""
    return arg is not None and (arg == "port" or (arg.endswith("_port") and not arg.startswith(REMOTE_KEYWORDS)))


def _host_like(node: ast.expr) -> bool:
    """A host given just before a port: a local address literal, or a name that says it is one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value == "" or URL_PORT.match(node.value + ":1") is not None
    name = dotted_name(node) or ""
    return bool(words_of(name) & {"host", "hostname", "addr", "address", "interface", "ip"})


def _assignments(nodes: Iterator[ast.AST], name: str) -> list[ast.expr] | None:
    """The values ``name`` is assigned among ``nodes``; None when it is also
    bound another way (a loop, a ``with``, ``+=``): no one value."""
    values: list[ast.expr] = []
    stores = 0
    for node in nodes:
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            stores += 1
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            values.append(node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            if node.value is not None:
                values.append(node.value)
    return values if stores == len(values) else None
