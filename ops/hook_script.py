"""The file the installed hook command runs: ``<venv>/bin/python -S -P <this file> --state DIR``.

``ops.hook`` is the hook; this is only its fastest way in. ``-S`` leaves out ``site`` (its ``.pth`` files,
``sitecustomize``), and a file instead of ``-m`` leaves out ``runpy``: together about 3 ms of every tool
call. Without ``site`` the package this file belongs to is not on ``sys.path``, so the folder holding it is
appended (after the standard library: nothing there is shadowed); ``ops.hook`` and what it imports need
nothing else. A script is compiled on every run, a module's bytecode is cached: hence this file stays this
small.
"""

import os
import sys

if __name__ == "__main__":
    sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from ouroboros_gates.ops.hook import main

    raise SystemExit(main())
