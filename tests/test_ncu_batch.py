"""The ncu children's batch loop (gpumemlab.ncu.child.run_batch) with a stand-in runtime: order, status file, the
first failure ending the batch."""

import json

from gpumemlab.ncu.child import run_batch


class _Runtime:
    def __init__(self):
        self.syncs = 0

    def synchronize(self):
        self.syncs += 1


def test_every_item_runs_in_order_and_the_status_ends_clean(tmp_path):
    rt, ran, path = _Runtime(), [], tmp_path / "status.json"
    status = dict(done=[], errors={}, fatal=None)
    assert run_batch(rt, path, status, [dict(name="a"), dict(name="b")], lambda item: ran.append(item["name"])) == 0
    assert ran == ["a", "b"] and rt.syncs == 2
    assert json.loads(path.read_text()) == dict(done=["a", "b"], errors={}, fatal=None)


def test_the_first_failure_ends_the_batch_and_names_the_kernel(tmp_path):
    rt, ran, path = _Runtime(), [], tmp_path / "status.json"

    def launch(item):
        ran.append(item["name"])
        if item["name"] == "b":
            raise RuntimeError("CUDA_ERROR_ILLEGAL_ADDRESS:\n  an illegal memory access")

    status = dict(done=[], errors={}, fatal=None)
    assert run_batch(rt, path, status, [dict(name=n) for n in "abc"], launch) == 3
    assert ran == ["a", "b"]
    saved = json.loads(path.read_text())
    assert saved["done"] == ["a"] and saved["fatal"] == "b" and saved["running"] == "b"
    assert saved["errors"] == {"b": "launch: RuntimeError: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access"}
