import pytest

pytest.importorskip("clang.cindex", reason="gpumemlab lint needs the lint extra (libclang)")
