# SPDX-License-Identifier: Apache-2.0
"""The build backend's one error, BuildError: a build that cannot go on.

Every module of build_backend/ raises it with the one message that says
what is missing and how to get it; rngtrk_build's PEP 517 hooks turn it
into that message alone on stderr and exit 1 (rngtrk_build._guarded).  It
sits in a module of its own so that every helper can raise it without
importing rngtrk_build: the imports go one way, hooks to helpers.
"""


class BuildError(Exception):
    """A build that cannot go on, with the one message that says why."""
