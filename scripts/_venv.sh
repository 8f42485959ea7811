# Sourced by scripts/serve and scripts/test: makes .venv and installs the project into it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
py="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$py" -m venv .venv
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
