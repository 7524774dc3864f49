"""The runtime guard: a pytest plugin that catches the leaks syntax cannot see.

``plugin`` is the ``pytest11`` entry point (options only, until the guard
is turned on); ``session`` holds the hooks of one process (a plain run, an
xdist worker or the controller); ``watches`` names what is watched, one
class per kind, defined over ``watchbase`` (the protocol) in ``residue``
(what is left on disk), ``procstate`` (the process state put back) and
``running`` (threads, children, sockets, asyncio tasks), with
``processes`` (child processes), ``sockets``, ``tasks``, ``helpers``
(process-wide helpers), ``dirwatch`` (which watched directories the
kernel saw change) and ``audit`` (what a snapshot would pay to see);
``monitor`` keeps the expected state and judges a test against it;
``stable`` makes a finding's ``what`` the same from run to run;
``locate`` finds the baseline and ``verdict`` decides against it and
writes the reports; ``codes`` holds the ``HRM6xx`` codes and their pages.
"""
