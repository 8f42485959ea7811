# Sourced by scripts/serve and scripts/test: makes .venv and installs the project into it.
# PYTHON picks the interpreter (default: python3); it must be Python 3.11 or newer.
set -euo pipefail
# The caller's folder: scripts/serve runs there, so relative paths in its arguments
# (--state, --export-on-exit, --triggers ...) mean what they mean to the user.
caller="$PWD"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
py="${PYTHON:-python3}"

# 0 when "$1" is a Python 3.11+ that can run pip (a venv cut short while it installed pip,
# or made by a python3 without Debian's python3-venv, has none).
usable() {
  "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null &&
    "$1" -m pip --version >/dev/null 2>&1
}

# A .venv made by another interpreter than the one asked for (PYTHON set), too old, or
# left half-made by an interrupted first run is made again.
if [ -e .venv ]; then
  stale=""
  if ! usable .venv/bin/python; then
    stale="it is not a working Python 3.11+ environment"
  elif [ -n "${PYTHON:-}" ] &&
    [ "$("$py" -c 'import sys; print(sys.version)' 2>/dev/null)" != "$(.venv/bin/python -c 'import sys; print(sys.version)')" ]; then
    stale="it was made with another Python than PYTHON=$PYTHON"
  fi
  if [ -n "$stale" ]; then
    echo "svc-sandbox: making .venv again: $stale" >&2
    rm -rf .venv
  fi
fi
if [ ! -e .venv ]; then
  if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    found="not found"
    if command -v "$py" >/dev/null; then
      # One line: a pyenv shim of a version not selected answers a paragraph on stderr.
      found="$("$py" --version 2>&1 | head -n 1 || true)"
      case "$found" in
        Python*) ;;
        *) found="not runnable here (${found:-no output})" ;;
      esac
    fi
    echo "svc-sandbox needs Python 3.11 or newer; '$py' is $found." >&2
    echo "Name one with PYTHON, e.g.: PYTHON=python3.12 bash scripts/${1}" >&2
    exit 1
  fi
  if ! "$py" -m venv .venv; then
    rm -rf .venv
    echo "svc-sandbox: '$py -m venv' failed (on Debian or Ubuntu: apt-get install python3-venv)." >&2
    exit 1
  fi
fi
stamp=.venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)-$1
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  if [ "$1" = test ]; then
    .venv/bin/python -m pip install --quiet -e ".[test]"
  else
    .venv/bin/python -m pip install --quiet -e .
  fi
  touch "$stamp"
fi
# Bytecode for the project's own modules, as a wheel install has (pip compiles site-packages
# but not an editable source tree; with PYTHONDONTWRITEBYTECODE set, as on some CI machines,
# every start would compile ~150 modules again). A no-op when they are up to date.
.venv/bin/python -m compileall -q src/svc_sandbox >/dev/null
