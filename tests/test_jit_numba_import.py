"""numba's BLAS probe is kept from importing scipy (``sim.kernels.jit._import_numba``): a kernel's
load in a fresh process leaves scipy.linalg unimported, scipy stays importable afterwards, and a
process that imported scipy's BLAS first keeps numba's own probe."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sim.kernels import jit

# Each check in a fresh interpreter: whether scipy.linalg is imported is a process's state.
HELD_BACK = """
import sys, threading
from sim.kernels import jit
jit._ScipyHeldBack.thread = threading.get_ident()
sys.meta_path.insert(0, jit._ScipyHeldBack)
try:
    try:
        import scipy.linalg
    except ModuleNotFoundError as exc:
        assert exc.name in ("scipy", "scipy.linalg"), exc.name
    else:
        raise AssertionError("scipy.linalg imported while held back")
    other = []  # another thread's import is not refused
    thread = threading.Thread(target=lambda: other.append(__import__("scipy.linalg")))
    thread.start()
    thread.join()
    assert other and "scipy.linalg" in sys.modules, other
finally:
    sys.meta_path.remove(jit._ScipyHeldBack)
    jit._ScipyHeldBack.thread = None
import scipy.linalg  # importable again once the finder is gone
print("ok")
"""

KERNEL_LOADED = """
import sys
import numpy as np
from sim.kernels import fluid, jit
assert fluid._block(np.arange(10.0), 0, 5) == 10.0, fluid._block(np.arange(10.0), 0, 5)
import numba.np.arraymath as arraymath
assert "scipy.linalg" not in sys.modules, "numba's probe imported scipy.linalg"
assert arraymath._HAVE_BLAS is False
assert jit._ScipyHeldBack not in sys.meta_path
import scipy.linalg  # a caller's own scipy is untouched
print("ok")
"""

BLAS_FIRST = """
import sys
import scipy.linalg.cython_blas
from sim.kernels import fluid
import numba.np.arraymath as arraymath
assert arraymath._HAVE_BLAS is True  # numba's own probe, which costs nothing here
print("ok")
"""

CHECKS = [pytest.param(HELD_BACK, id="the finder refuses scipy to its thread, then lets it be")]
if jit.COMPILED:  # the kernels compiled: numba is installed (the `fast` extra)
    CHECKS += [pytest.param(KERNEL_LOADED, id="a kernel loads without scipy.linalg"),
               pytest.param(BLAS_FIRST, id="scipy's BLAS imported first keeps numba's probe")]


@pytest.mark.parametrize("code", CHECKS)
def test_numba_loads_without_scipy(code: str) -> None:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={k: v for k, v in os.environ.items() if k != jit.PURE_ENV})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
