"""``python -m svc_sandbox``: the ``svc-sandbox`` console script (launcher.py), for a checkout
without the script on PATH."""

import sys

from svc_sandbox.launcher import main

if __name__ == "__main__":  # importing the module (a walk over the package) runs nothing
    sys.exit(main())
